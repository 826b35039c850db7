// Whether the native backend (the addon over libtorch and faiss) is there, for the layers above
// that choose a runtime (the CLI runs xling embed on xling/lite without it) or need it (a command
// says so before it starts its work). Loads it if it can.
import { native, nativeLoaded, nativeProblem } from '../native.js';

export { nativeAvailable, nativeLoaded, nativeProblem } from '../native.js';
export { NativeBackendMissing, NATIVE_INSTALL_HINT, nativeSkipped } from '../util/native-missing.js';

/** Throws NativeBackendMissing where the native backend is not there (a command that needs it, before its work). */
export function requireNative(): void {
  const p = nativeProblem();
  if (p) throw p;
}

/**
 * The threads that compute, for whichever runtime a command ends up on (--threads): libtorch's
 * intra-op threads (now where the addon is loaded, else when it loads: XLING_THREADS) and the
 * portable runtime's (src/embed/portable.ts). Loads nothing.
 */
export function setComputeThreads(n: number): void {
  process.env.XLING_THREADS = String(n);
  if (nativeLoaded()) native.torch.setNumThreads!(n);
}

/**
 * Whether work of about `flops` floating-point operations should run on the native backend rather
 * than in TypeScript: where the addon is loaded already, or the work is large enough to pay for
 * loading it (about a second: a billion operations in TypeScript) and it loads.
 */
export function nativePays(flops: number): boolean {
  return nativeLoaded() || (flops >= NATIVE_LOAD_FLOPS && nativeProblem() === null);
}

/** Floating-point operations that cost TypeScript about as long as loading the addon. */
export const NATIVE_LOAD_FLOPS = 1e9;

// Whether the native backend (the addon over libtorch and faiss) is there, for the layers above
// that choose a runtime (the CLI runs xling embed on xling/lite without it) or need it (a command
// says so before it starts its work). Loads it if it can.
import { nativeProblem } from '../native.js';

export { nativeAvailable, nativeProblem } from '../native.js';
export { NativeBackendMissing, NATIVE_INSTALL_HINT, nativeSkipped } from '../util/native-missing.js';

/** Throws NativeBackendMissing where the native backend is not there (a command that needs it, before its work). */
export function requireNative(): void {
  const p = nativeProblem();
  if (p) throw p;
}

// Loads the compiled N-API addon (build/Release/xling.node). All native calls go through here.
// The addon is optional (xling/lite and the commands that run on it need none of it): it is loaded
// on the first call of one of its functions, not at import; where it is missing (not built, not
// loadable, or XLING_SKIP_NATIVE=1) that call throws NativeBackendMissing.
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NativeBackendMissing, nativeSkipped } from './util/native-missing.js';

// biome-ignore lint/suspicious/noExplicitAny: the addon's functions take and return whatever each kernel does
export type NativeFn = (...args: any[]) => any;

export interface NativeAddon {
  torch: Record<string, NativeFn>;
  faiss: Record<string, NativeFn>;
  format: Record<string, NativeFn>;
  hamming: Record<string, NativeFn>;
}

function packageRoot(): string {
  // dist/src/native.js -> package root is two levels up from dist/src.
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'binding.gyp'))) return dir;
    dir = dirname(dir);
  }
  throw new Error('xling: cannot locate the package root (binding.gyp)');
}

function load(): NativeAddon {
  if (nativeSkipped()) throw new NativeBackendMissing('XLING_SKIP_NATIVE is set');
  const root = packageRoot();
  // XLING_ADDON: an addon built elsewhere (e.g. to test a rebuild while jobs use the installed one)
  const override = process.env.XLING_ADDON;
  if (override && !existsSync(override)) throw new Error(`xling: XLING_ADDON=${override} does not exist`);
  const candidates = override ? [override] : [join(root, 'build', 'Release', 'xling.node'), join(root, 'build', 'Debug', 'xling.node')];
  const path = candidates.find((p) => existsSync(p));
  if (!path) throw new NativeBackendMissing('the addon was not built: no build/Release/xling.node');
  // libtorch's OpenMP workers spin while idle by default; OpenBLAS runs GEMMs on threads of its
  // own, so the spinning workers take cores from them (measured: LASER training 17.8 → 28.8
  // pairs/s on 2 cores). libgomp reads this when the addon loads it; a user's setting wins.
  process.env.OMP_WAIT_POLICY ??= 'PASSIVE';
  // Likewise OpenBLAS's own workers poll (sched_yield) for 2^28 cycles after each GEMM, taking the
  // cores from the OpenMP threads of the LSTM recurrence; 2^4 lets them sleep at once (tiny LASER
  // training, 4 alternating runs: 232 → 271 pairs/s).
  process.env.OPENBLAS_THREAD_TIMEOUT ??= '4';
  const require = createRequire(import.meta.url);
  let addon: NativeAddon;
  try {
    addon = require(path) as NativeAddon;
  } catch (e) {
    // built, but a library it links is gone (libtorch removed since), or built for another Node
    const first = String((e as Error).message ?? e).split('\n')[0];
    throw new NativeBackendMissing(`${path} does not load: ${first}`);
  }
  // Default intra-op threads: all cores (libtorch's OpenMP default can be 1 on Debian).
  addon.torch.setNumThreads!(Number(process.env.XLING_THREADS ?? availableParallelism()));
  return addon;
}

let loaded: NativeAddon | null = null;
let failure: Error | null = null;

/** The addon, loaded on first use; throws NativeBackendMissing (every time) where it is not there. */
export function nativeAddon(): NativeAddon {
  if (loaded) return loaded;
  if (failure) throw failure;
  try {
    loaded = load();
  } catch (e) {
    failure = e as Error;
    throw e;
  }
  // the lazy parts take the addon's own functions: later calls find them directly, with no trap
  for (const k of PARTS) for (const name of Object.getOwnPropertyNames(loaded[k])) native[k][name] = loaded[k][name]!;
  return loaded;
}

/** Whether the addon is loaded already (never loads it). */
export function nativeLoaded(): boolean {
  return loaded !== null;
}

/** Why the addon is not there (null: it is, now loaded); never throws for a missing backend. */
export function nativeProblem(): NativeBackendMissing | null {
  try {
    nativeAddon();
    return null;
  } catch (e) {
    if (e instanceof NativeBackendMissing) return e;
    throw e;
  }
}

/** Whether the addon is there (loads it if not yet loaded). */
export function nativeAvailable(): boolean {
  return nativeProblem() === null;
}

const PARTS = ['torch', 'faiss', 'format', 'hamming'] as const;

/**
 * A part of the addon (native.torch…) that loads it when a property it does not have yet is read:
 * its prototype is a proxy whose trap runs only for a missing property, so after loading (when the
 * part holds the addon's functions as its own properties) calls cost what direct ones do.
 */
function lazyPart(part: keyof NativeAddon): Record<string, NativeFn> {
  const trap = new Proxy(Object.create(null) as object, {
    get(_t, prop) {
      if (typeof prop !== 'string' || loaded) return undefined;
      return nativeAddon()[part][prop];
    },
  });
  return Object.create(trap) as Record<string, NativeFn>;
}

export const native: NativeAddon = { torch: lazyPart('torch'), faiss: lazyPart('faiss'), format: lazyPart('format'), hamming: lazyPart('hamming') };

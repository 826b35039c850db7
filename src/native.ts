// Loads the compiled N-API addon (build/Release/xling.node). All native calls go through here.
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
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
  const root = packageRoot();
  // XLING_ADDON: an addon built elsewhere (e.g. to test a rebuild while jobs use the installed one)
  const override = process.env.XLING_ADDON;
  if (override && !existsSync(override)) throw new Error(`xling: XLING_ADDON=${override} does not exist`);
  const candidates = override ? [override] : [join(root, 'build', 'Release', 'xling.node'), join(root, 'build', 'Debug', 'xling.node')];
  const path = candidates.find((p) => existsSync(p));
  if (!path) throw new Error(`xling: native addon not built (looked for ${candidates[0]}); run "npm run build:native"`);
  // libtorch's OpenMP workers spin while idle by default; OpenBLAS runs GEMMs on threads of its
  // own, so the spinning workers take cores from them (measured: LASER training 17.8 → 28.8
  // pairs/s on 2 cores). libgomp reads this when the addon loads it; a user's setting wins.
  process.env.OMP_WAIT_POLICY ??= 'PASSIVE';
  // Likewise OpenBLAS's own workers poll (sched_yield) for 2^28 cycles after each GEMM, taking the
  // cores from the OpenMP threads of the LSTM recurrence; 2^4 lets them sleep at once (tiny LASER
  // training, 4 alternating runs: 232 → 271 pairs/s).
  process.env.OPENBLAS_THREAD_TIMEOUT ??= '4';
  const require = createRequire(import.meta.url);
  return require(path) as NativeAddon;
}

export const native: NativeAddon = load();

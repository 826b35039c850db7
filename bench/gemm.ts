// GEMM 2880×384 @ 384×2048 float32: xling (libtorch through the addon) vs PyTorch, same threads.
import { manualSeed, randn, setNumThreads, tidy } from '../src/tensor/index.js';
import { jsonMode, runPython, threadsArg } from './common.js';

export function benchGemm(threads = threadsArg(), M = 2880, K = 384, N = 2048, reps = 30) {
  setNumThreads(threads);
  manualSeed(0);
  const a = randn([M, K]),
    b = randn([K, N]);
  for (let i = 0; i < 3; i++)
    tidy(() => {
      a.matmul(b);
    });
  let best = Infinity;
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    tidy(() => {
      a.matmul(b);
    });
    best = Math.min(best, (performance.now() - t0) / 1000);
  }
  a.dispose();
  b.dispose();
  const xling = { seconds: best, gflops: (2 * M * K * N) / best / 1e9 };
  const torch = runPython('gemm.py', [M, K, N, threads, reps].map(String));
  return {
    name: 'gemm',
    shape: `${M}x${K} @ ${K}x${N}`,
    threads,
    xling_gflops: xling.gflops,
    torch_gflops: torch.gflops!,
    ratio: xling.gflops / torch.gflops!,
  };
}

if (process.argv[1]?.endsWith('gemm.js')) {
  const r = benchGemm();
  console.log(
    jsonMode()
      ? JSON.stringify(r)
      : `GEMM ${r.shape} (${r.threads} threads): xling ${r.xling_gflops.toFixed(1)} GFLOPS, PyTorch ${r.torch_gflops.toFixed(1)} GFLOPS, ratio ${r.ratio.toFixed(3)}`,
  );
}

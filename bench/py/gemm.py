#!/usr/bin/python3
"""PyTorch side of bench/gemm: float32 GEMM M×K @ K×N, best-of-repeats GFLOPS."""
import json, sys, time, torch
M, K, N, threads, reps = map(int, sys.argv[1:6])
torch.set_num_threads(threads); torch.manual_seed(0)
a = torch.randn(M, K); b = torch.randn(K, N)
for _ in range(3): a @ b
best = float('inf')
for _ in range(reps):
    t0 = time.perf_counter(); c = a @ b; best = min(best, time.perf_counter() - t0)
print(json.dumps({'seconds': best, 'gflops': 2 * M * K * N / best / 1e9}))

#!/usr/bin/python3
"""Python faiss side of the IVF-PQ search benchmarks (bench/ivfpq-1m, bench/ivfpq-search): reads
the index file xling wrote and the same queries, searches at each nprobe with the same threads,
prints queries/s per nprobe as JSON (the best of `reps` timed searches of all queries)."""
import json, sys, time
import numpy as np, faiss
index_path, q_path, k, threads, nprobes = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
reps = int(sys.argv[6]) if len(sys.argv) > 6 else 1
faiss.omp_set_num_threads(threads)
index = faiss.read_index(index_path); q = np.load(q_path)
ps = faiss.ParameterSpace(); out = {}
for nprobe in map(int, nprobes.split(',')):
    ps.set_index_parameter(index, 'nprobe', nprobe)
    index.search(q[:100], k)  # warm-up
    best = float('inf')
    for _ in range(reps):
        t0 = time.perf_counter(); index.search(q, k); best = min(best, time.perf_counter() - t0)
    out[str(nprobe)] = len(q) / best
print(json.dumps(out))

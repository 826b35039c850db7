#!/usr/bin/python3
"""Python faiss side of bench/faiss-flat and bench/mine-knn: reads float32 .npy files, runs the
same search with the same threads, prints JSON timings."""
import json, sys, time
import numpy as np, faiss
mode, q_path, b_path, k, threads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
faiss.omp_set_num_threads(threads)
q = np.load(q_path); b = np.load(b_path)
out = {}
if mode == 'flat':
    idx = faiss.IndexFlatIP(b.shape[1]); idx.add(b)
    t0 = time.perf_counter(); D, I = idx.search(q, k); out['seconds'] = time.perf_counter() - t0
    out['checksum'] = int(I[:, 0].astype(np.int64).sum())
else:  # both directions, exact, as LASER's mining does
    t0 = time.perf_counter()
    i1 = faiss.IndexFlatIP(b.shape[1]); i1.add(b); D1, I1 = i1.search(q, k)
    i2 = faiss.IndexFlatIP(q.shape[1]); i2.add(q); D2, I2 = i2.search(b, k)
    out['seconds'] = time.perf_counter() - t0
    out['checksum'] = int(I1[:, 0].astype(np.int64).sum() + I2[:, 0].astype(np.int64).sum())
print(json.dumps(out))

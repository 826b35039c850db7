#!/usr/bin/python3
"""Python faiss side of bench/binary-search: IndexBinaryFlat over packed uint8 codes (.npy), exact
Hamming k-NN with the given threads; prints JSON timings and checksums of the top-1 and of all k distances."""
import json, sys, time
import numpy as np, faiss
q_path, b_path, k, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
faiss.omp_set_num_threads(threads)
q = np.load(q_path); b = np.load(b_path)
idx = faiss.IndexBinaryFlat(b.shape[1] * 8); idx.add(b)
t0 = time.perf_counter(); D, I = idx.search(q, k); secs = time.perf_counter() - t0
print(json.dumps({'seconds': secs, 'checksum': int(D[:, 0].astype(np.int64).sum()), 'checksum_all': int(D.astype(np.int64).sum())}))

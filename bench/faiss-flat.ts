// faiss Flat inner-product search, 10k queries × 100k × 1024-d: xling vs Python faiss, same
// threads, same data (written as .npy for the Python side).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { indexFactory, knn, setFaissThreads } from '../src/index/faiss.js';
import { writeNpy } from '../src/io/npy.js';
import { Rng } from '../src/util/rng.js';
import { jsonMode, runPython, threadsArg } from './common.js';

export function randomUnit(n: number, d: number, seed: number): Float32Array {
  const rng = new Rng(seed);
  const x = new Float32Array(n * d);
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let j = 0; j < d; j++) {
      const v = rng.normal();
      x[i * d + j] = v;
      s += v * v;
    }
    const inv = 1 / Math.sqrt(s);
    for (let j = 0; j < d; j++) x[i * d + j]! *= inv;
  }
  return x;
}

export async function run(nq = 10000, nb = 100000, d = 1024, k = 10) {
  const threads = threadsArg();
  setFaissThreads(threads);
  const q = randomUnit(nq, d, 1),
    b = randomUnit(nb, d, 2);
  const dir = mkdtempSync(join(tmpdir(), 'xling-bench-'));
  try {
    writeNpy(join(dir, 'q.npy'), q, [nq, d]);
    writeNpy(join(dir, 'b.npy'), b, [nb, d]);
    const idx = indexFactory(d, 'Flat', 'ip');
    idx.add(b);
    const t0 = performance.now();
    const r = idx.search(q, k);
    const xs = (performance.now() - t0) / 1000;
    idx.dispose();
    const t1 = performance.now();
    knn(q, b, d, k, 'ip');
    const xk = (performance.now() - t1) / 1000;
    let checksum = 0;
    for (let i = 0; i < nq; i++) checksum += Number(r.labels[i * k]!);
    const py = runPython('faiss_knn.py', ['flat', join(dir, 'q.npy'), join(dir, 'b.npy'), String(k), String(threads)]);
    return {
      name: 'faiss_flat_ip',
      shape: `${nq} x ${nb} x ${d}, k=${k}`,
      threads,
      xling_seconds: xs,
      xling_knn_seconds: xk,
      python_seconds: py.seconds!,
      ratio: py.seconds! / xs,
      same_results: checksum === py.checksum,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith('faiss-flat.js')) {
  const r = await run();
  console.log(
    jsonMode()
      ? JSON.stringify(r)
      : `faiss Flat IP ${r.shape} (${r.threads} threads): xling ${r.xling_seconds.toFixed(2)}s (knn() ${r.xling_knn_seconds.toFixed(2)}s), Python faiss ${r.python_seconds.toFixed(2)}s, speed ratio ${r.ratio.toFixed(3)}, same results ${r.same_results}`,
  );
}

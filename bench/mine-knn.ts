// Exact k-NN for mining, 100k × 100k × 1024-d, both directions: xling vs Python faiss doing the
// same search; then the margin scoring + retrieval on top, which may add at most 10%.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFaissThreads } from '../src/index/faiss.js';
import { writeNpy } from '../src/io/npy.js';
import { mine } from '../src/mine/mine.js';
import { knnChunked } from '../src/index/exact.js';
import { jsonMode, runPython, threadsArg } from './common.js';
import { randomUnit } from './faiss-flat.js';

export async function run(n = Number(process.env.XLING_BENCH_MINE_N ?? 100000), d = 1024, k = 4) {
  const threads = threadsArg();
  setFaissThreads(threads);
  const x = randomUnit(n, d, 3),
    y = randomUnit(n, d, 4);
  const dir = mkdtempSync(join(tmpdir(), 'xling-bench-'));
  try {
    writeNpy(join(dir, 'x.npy'), x, [n, d]);
    writeNpy(join(dir, 'y.npy'), y, [n, d]);
    const t0 = performance.now();
    knnChunked(x, y, d, k);
    knnChunked(y, x, d, k);
    const search = (performance.now() - t0) / 1000;
    const t1 = performance.now();
    const cands = mine(x, y, d, { k, margin: 'ratio', retrieval: 'max' });
    const full = (performance.now() - t1) / 1000;
    const py = runPython('faiss_knn.py', ['both', join(dir, 'x.npy'), join(dir, 'y.npy'), String(k), String(threads)]);
    return {
      name: 'mine_knn',
      shape: `${n} x ${n} x ${d}, k=${k}, both directions`,
      threads,
      xling_search_seconds: search,
      python_search_seconds: py.seconds!,
      ratio: py.seconds! / search,
      mine_total_seconds: full,
      margin_overhead: full / search - 1,
      pairs: cands.length,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith('mine-knn.js')) {
  const r = await run();
  console.log(
    jsonMode()
      ? JSON.stringify(r)
      : `mining k-NN ${r.shape} (${r.threads} threads): xling ${r.xling_search_seconds.toFixed(1)}s vs Python faiss ${r.python_search_seconds.toFixed(1)}s → ratio ${r.ratio.toFixed(3)}; full mine() ${r.mine_total_seconds.toFixed(1)}s (margin+retrieval overhead ${(100 * r.margin_overhead).toFixed(1)}%)`,
  );
}

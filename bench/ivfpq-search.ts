// IVF-PQ search side by side with Python faiss, small enough for `npm run bench`: 200k × 512-d
// clustered unit vectors (the generator of bench/ivfpq-1m), factory OPQ16,IVF1024,PQ16 (the graph
// builder's factory for collections of this size), 4,000 queries, nprobe 4/16/64. Both sides
// search the same index file with the same queries and threads; each figure is the best of
// `--reps` timed searches of all queries (xling: the async entry point, as servers and jobs use
// it; the sync one is reported too). Ratio = xling queries/s ÷ Python faiss queries/s. xling's IVF
// indexes search with parallel_mode 3 (native/faiss_binding.cc: all queries assigned by one BLAS
// call); qps_parallel_mode_0 is xling with faiss's default split, for comparison.
//   node dist/bench/ivfpq-search.js [--n 200000] [--queries 4000] [--reps 5] [--dir /tmp/xling-ivfpq-search] [--json]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { indexFactory, readIndex, setFaissThreads } from '../src/index/faiss.js';
import { addRows, createIndex, trainIndex } from '../src/index/build.js';
import { NpyRowReader } from '../src/io/npy.js';
import { setNumThreads } from '../src/tensor/index.js';
import { benchRoot, jsonMode, python, threadsArg } from './common.js';
import { generate, recall } from './ivfpq-1m.js';

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : dflt;
};
const log = (s: string) => process.stderr.write(`[ivfpq-search] ${s}\n`);

export async function run() {
  const threads = threadsArg();
  setNumThreads(threads);
  setFaissThreads(threads);
  const n = Number(arg('n', '200000')),
    nq = Number(arg('queries', '4000')),
    reps = Number(arg('reps', '5')),
    d = 512,
    k = 10;
  const factory = 'OPQ16,IVF1024,PQ16',
    nprobes = [4, 16, 64];
  const dir = arg('dir', '/tmp/xling-ivfpq-search');
  mkdirSync(dir, { recursive: true });
  const base = join(dir, 'base.npy'),
    queries = join(dir, 'queries.npy'),
    indexFile = join(dir, `index-${n}.faiss`);
  if (!existsSync(base) || NpyRowReader.open(base).rows !== n) generate(dir, n, nq, d);
  const q = NpyRowReader.open(queries);
  const xq = q.readRows(0, q.rows);
  q.close();
  if (!existsSync(indexFile)) {
    const t = performance.now();
    const idx = createIndex(d, { factory, metric: 'ip' }, false);
    const r = NpyRowReader.open(base);
    await trainIndex(idx, r, base, { factory, metric: 'ip', trainSample: 100000, seed: 1, opqIters: 20, polysemous: false, normalize: false });
    await addRows(idx, r, base, 0, n, { normalize: false, chunk: 50000 });
    r.close();
    idx.write(indexFile);
    idx.dispose();
    log(`built ${factory} over ${n} vectors in ${((performance.now() - t) / 1000).toFixed(0)}s`);
  }
  // exact top-10 for the recall column
  const flat = indexFactory(d, 'Flat', 'ip');
  const r = NpyRowReader.open(base);
  flat.add(r.readRows(0, n));
  r.close();
  const truth = await flat.searchAsync(xq, k);
  flat.dispose();

  const idx = readIndex(indexFile);
  const rows: Record<string, number>[] = [];
  for (const nprobe of nprobes) {
    idx.setNprobe(nprobe);
    await idx.searchAsync(xq.subarray(0, 100 * d), k); // warm-up
    let bestAsync = Infinity,
      bestSync = Infinity,
      res = null;
    for (let i = 0; i < reps; i++) {
      let t0 = performance.now();
      res = await idx.searchAsync(xq, k);
      bestAsync = Math.min(bestAsync, performance.now() - t0);
      t0 = performance.now();
      idx.search(xq, k);
      bestSync = Math.min(bestSync, performance.now() - t0);
    }
    // faiss's own split of the queries (parallel_mode 0: a coarse-quantizer BLAS call per thread), for comparison
    idx.setParams('parallel_mode=0');
    let bestSplit = Infinity;
    for (let i = 0; i < reps; i++) {
      const t0 = performance.now();
      await idx.searchAsync(xq, k);
      bestSplit = Math.min(bestSplit, performance.now() - t0);
    }
    idx.setParams('parallel_mode=3');
    rows.push({
      nprobe,
      qps: nq / (bestAsync / 1000),
      qps_sync: nq / (bestSync / 1000),
      qps_parallel_mode_0: nq / (bestSplit / 1000),
      recall_10at10: recall(truth, res!, k).tenAt10,
    });
  }
  idx.dispose();
  const py = spawnSync(python, [join(benchRoot, 'py', 'ivfpq_search.py'), indexFile, queries, String(k), String(threads), nprobes.join(','), String(reps)], {
    encoding: 'utf8',
  });
  if (py.status !== 0) throw new Error(`python side failed: ${py.stderr.slice(-2000)}`);
  const pyQps = JSON.parse(py.stdout.trim().split('\n').pop()!) as Record<string, number>;
  for (const row of rows) {
    row.python_qps = pyQps[String(row.nprobe)]!;
    row.ratio = row.qps! / row.python_qps;
  }
  // one figure for the run: the geometric mean over the nprobe settings
  const ratio = Math.exp(rows.reduce((a, x) => a + Math.log(x.ratio!), 0) / rows.length);
  return { name: 'ivfpq_search', factory, n, d, queries: nq, threads, reps, search: rows, ratio };
}

if (process.argv[1]?.endsWith('ivfpq-search.js')) {
  const res = await run();
  if (jsonMode()) console.log(JSON.stringify(res));
  else {
    for (const x of res.search)
      console.log(
        `${res.factory}, ${res.n} × ${res.d}, nprobe ${x.nprobe}: xling ${x.qps!.toFixed(0)} q/s (sync ${x.qps_sync!.toFixed(0)}, faiss's split ${x.qps_parallel_mode_0!.toFixed(0)}), Python faiss ${x.python_qps!.toFixed(0)} q/s → ${x.ratio!.toFixed(3)}×, 10-recall@10 ${x.recall_10at10!.toFixed(3)}`,
      );
    console.log(`geometric mean ratio ${res.ratio.toFixed(3)}`);
  }
}

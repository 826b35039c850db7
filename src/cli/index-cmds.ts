// xling index build / merge, xling search: faiss indexes over .npy vectors, in chunks, with
// sharding (ids = global row numbers) for corpora that outgrow one machine.
import { FaissIndex, indexFactory, Metric, readIndex } from '../index/faiss.js';
import { NpyRowReader } from '../io/npy.js';
import { writeFileAtomicSync } from '../util/atomic.js';
import { Progress } from '../util/progress.js';
import { Rng } from '../util/rng.js';
import { knnChunked, mergeTopK } from '../mine/mine.js';
import { command, usage } from './command.js';
import { normalizeRows, readVectors } from './vectors.js';

function parseShard(s: string | undefined): [number, number] {
  if (!s) return [0, 1];
  const m = /^(\d+)\/(\d+)$/.exec(s);
  if (!m || Number(m[2]) < 1 || Number(m[1]) >= Number(m[2])) usage(`--shard must be i/n with 0 <= i < n, got '${s}'`);
  return [Number(m![1]), Number(m![2])];
}

/** Rows [lo, hi) of a .npy as normalised float32 (when asked), read through the row reader. */
function readRows(r: NpyRowReader, lo: number, hi: number, normalize: boolean, path: string): Float32Array {
  const x = new Float32Array(r.readRows(lo, hi));
  if (normalize) normalizeRows(x, r.cols, `${path} rows ${lo}..${hi}`);
  return x;
}

export const indexBuildCommand = command(['index', 'build'], {
  name: 'xling index build',
  summary: 'train and fill a faiss index from a .npy of vectors',
  positionals: [{ name: 'vectors', required: true, help: '.npy matrix [n, d] (read in chunks, never whole)' }],
  options: {
    factory: { type: 'string', default: 'Flat', help: 'faiss index_factory string: Flat, IVFn,Flat, IVFn,PQm, OPQm,IVFn,PQm, HNSWm, SQ8, SQfp16' },
    metric: { type: 'string', default: 'ip', choices: ['ip', 'l2'] },
    trainSample: { type: 'number', default: 200000, range: { int: true, min: 1 }, help: 'rows sampled (seeded) to train the index' },
    trained: { type: 'string', metavar: 'FAISS', help: 'start from this trained empty index instead of training' },
    trainOnly: { type: 'boolean', default: false, help: 'write the trained empty index and stop (for sharded builds)' },
    shard: { type: 'string', metavar: 'i/n', help: 'add only rows of shard i of n (ids stay global row numbers)' },
    chunk: { type: 'number', default: 100000, range: { int: true, min: 1 }, help: 'rows added per call' },
    normalize: { type: 'boolean', default: true, help: 'L2-normalise rows (cosine via inner product)' },
    seed: { type: 'number', default: 1, range: { int: true, min: 0 } },
    opqIters: { type: 'number', default: 20, range: { int: true, min: 1 }, help: 'OPQ optimisation iterations (faiss default 50; each costs a d×d SVD)' },
    polysemous: { type: 'boolean', default: false, help: 'polysemous PQ training (only for Hamming filtering; slow)' },
    output: { type: 'string', alias: 'o', required: true, metavar: 'FAISS' },
  },
}, async (a) => {
  const path = a._[0]!;
  const r = NpyRowReader.open(path);
  if (r.shape.length !== 2) throw new Error(`${path}: expected a 2-D matrix`);
  const n = r.rows, d = r.cols;
  let index: FaissIndex;
  if (a.trained) {
    index = readIndex(a.trained);
    if (index.d !== d) throw new Error(`${a.trained}: dimension ${index.d}, vectors have ${d}`);
    if (!index.isTrained) throw new Error(`${a.trained}: index is not trained`);
  } else {
    index = indexFactory(d, a.factory, a.metric as Metric);
    if (!(a.opqIters >= 1)) usage('--opq-iters must be >= 1');
    index.setTrainingParams({ polysemous: a.polysemous, opqIters: a.opqIters });
    if (!index.isTrained) {
      const m = Math.min(n, a.trainSample);
      const rows = new Rng(a.seed).sample(n, m).sort((x, y) => x - y);
      const sample = new Float32Array(m * d);
      rows.forEach((row, i) => sample.set(readRows(r, row, row + 1, a.normalize, path), i * d));
      const t0 = performance.now();
      await index.trainAsync(sample);
      process.stderr.write(`[index] trained ${a.factory} on ${m} rows in ${((performance.now() - t0) / 1000).toFixed(1)}s\n`);
    }
  }
  if (a.trainOnly) { index.write(a.output); index.dispose(); return; }
  const [si, sn] = parseShard(a.shard);
  const lo = Math.floor((si * n) / sn), hi = Math.floor(((si + 1) * n) / sn);
  const prog = new Progress({ label: 'index add', unit: 'vecs', total: hi - lo });
  for (let i = lo; i < hi; i += a.chunk) {
    const j = Math.min(hi, i + a.chunk);
    const x = readRows(r, i, j, a.normalize, path);
    await index.addAsync(x, BigInt64Array.from({ length: j - i }, (_, t) => BigInt(i + t)));
    prog.tick(j - i);
  }
  prog.done();
  r.close();
  index.write(a.output);
  process.stderr.write(`[index] ${a.output}: ${index.ntotal} vectors (rows ${lo}..${hi - 1})\n`);
  index.dispose();
});

export const indexMergeCommand = command(['index', 'merge'], {
  name: 'xling index merge',
  summary: 'merge index shards (built from the same trained index) into one',
  positionals: [{ name: 'shards', required: true, variadic: true }],
  options: { output: { type: 'string', alias: 'o', required: true, metavar: 'FAISS' } },
}, async (a) => {
  if (a._.length < 2) usage('give at least two shard files');
  const base = readIndex(a._[0]!);
  for (const f of a._.slice(1)) { const s = readIndex(f); base.mergeFrom(s); s.dispose(); }
  base.write(a.output);
  process.stderr.write(`[index] merged ${a._.length} shards: ${base.ntotal} vectors → ${a.output}\n`);
  base.dispose();
});

export const searchCommand = command(['search'], {
  name: 'xling search',
  summary: 'k nearest neighbours of query vectors (through an index, or exactly against a .npy)',
  options: {
    index: { type: 'string', metavar: 'FAISS', help: 'search through this index' },
    base: { type: 'string', metavar: 'NPY', help: 'or: exact search against these vectors (chunked)' },
    queries: { type: 'string', required: true, metavar: 'NPY' },
    k: { type: 'number', alias: 'k', default: 10, range: { int: true, min: 1 } },
    nprobe: { type: 'number', range: { int: true, min: 1 } },
    baseBlock: { type: 'number', default: 262144, range: { int: true, min: 1 }, help: 'exact search: base rows read per block' },
    output: { type: 'string', alias: 'o', required: true, metavar: 'TSV', help: 'query_row<TAB>rank<TAB>id<TAB>score' },
  },
}, async (a) => {
  if (!a.index === !a.base) usage('give exactly one of --index or --base');
  if (!(a.k >= 1)) usage('-k must be >= 1');
  const q = readVectors(a.queries);
  let res;
  if (a.index) {
    const idx = readIndex(a.index);
    if (idx.d !== q.d) throw new Error(`dimension mismatch: ${a.index} has ${idx.d}, ${a.queries} has ${q.d}`);
    if (a.nprobe) idx.setNprobe(a.nprobe);
    res = await idx.searchAsync(q.data, a.k);
    idx.dispose();
  } else {
    // exact: the base is read in blocks of rows (any size), each block's top k merged in
    const r = NpyRowReader.open(a.base!);
    if (r.shape.length !== 2) throw new Error(`${a.base}: expected a 2-D matrix`);
    if (r.rows === 0) throw new Error(`${a.base}: no vectors`);
    if (r.cols !== q.d) throw new Error(`dimension mismatch: ${a.base} has ${r.cols}, ${a.queries} has ${q.d}`);
    const prog = new Progress({ label: 'exact search', unit: 'base rows', total: r.rows });
    const block = Math.max(1, Math.floor(a.baseBlock));
    let acc: ReturnType<typeof knnChunked> | null = null;
    for (let i = 0; i < r.rows; i += block) {
      const j = Math.min(r.rows, i + block);
      const part = knnChunked(q.data, readRows(r, i, j, true, a.base!), q.d, a.k);
      acc = mergeTopK(acc, part, i, Math.min(a.k, j));
      prog.tick(j - i);
    }
    prog.done();
    r.close();
    res = acc!;
  }
  const lines: string[] = [];
  for (let i = 0; i < res.n; i++) for (let j = 0; j < res.k; j++) {
    const l = res.labels[i * res.k + j]!;
    if (l >= 0n) lines.push(`${i}\t${j + 1}\t${l}\t${res.distances[i * res.k + j]!.toFixed(6)}`);
  }
  writeFileAtomicSync(a.output, lines.join('\n') + '\n');
});

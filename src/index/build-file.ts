// xling index build: one index file from a .npy of vectors — a faiss index trained on a seeded
// sample and filled in chunks (all rows, or one shard of them with their global row numbers as
// ids, into a trained index of --train-only), or a binary flat index of packed sign bits.
import { NpyRowReader } from '../io/npy.js';
import { openVectors } from '../io/vectors.js';
import { UsageError } from '../util/args.js';
import { Progress } from '../util/progress.js';
import { buildBinaryIndex, isBinaryVectors } from './binary-search.js';
import { addRows, createIndex, IndexTraining, shardRows, trainIndex } from './build.js';
import { inContext } from './context.js';
import { FaissIndex, openIndex } from './faiss.js';
import { writeIndexMeta } from './meta.js';

/** faiss cannot merge HNSW graphs (said by index build --shard and index merge). */
export const HNSW_MERGE = 'faiss cannot merge HNSW graphs';

export interface IndexFileBuild extends IndexTraining {
  /** The .npy of vectors (float rows, or packed sign bits for a binary flat index). */
  vectors: string;
  output: string;
  /** Start from this trained empty index instead of training. */
  trained?: string;
  /** Write the trained empty index and stop. */
  trainOnly: boolean;
  /** i/n: add only the rows of shard i of n. */
  shard?: string;
  /** Rows added per call. */
  chunk: number;
  allowDuplicateIds: boolean;
  /** The model that made the vectors, recorded beside the index; `dim` gives its vectors' width. */
  model?: { dir: string; dim: () => number };
}

/** --shard i/n (0 <= i < n); [0, 1] without. */
export function parseShard(s: string | undefined): [number, number] {
  if (!s) return [0, 1];
  const m = /^(\d+)\/(\d+)$/.exec(s);
  if (!m || Number(m[2]) < 1 || Number(m[1]) >= Number(m[2])) throw new UsageError(`--shard must be i/n with 0 <= i < n, got '${s}'`);
  return [Number(m[1]), Number(m[2])];
}

/** Builds the index file of `o` (and FAISS.json beside it with the model); progress and a summary on standard error. */
export async function buildIndexFile(o: IndexFileBuild): Promise<void> {
  // packed sign bits (embed --dtype ubinary|binary): a faiss binary flat index
  if (isBinaryVectors(o.vectors)) return buildBinaryIndex(o.vectors, o.output, o);
  const shard = parseShard(o.shard);
  const r = openVectors(o.vectors);
  try {
    const d = r.cols;
    if (o.model && o.model.dim() !== d) throw new Error(`--model ${o.model.dir} gives ${o.model.dim()}-d vectors, ${o.vectors} holds ${d}-d ones`);
    const index = startingIndex(o, d);
    try {
      if (shard[1] > 1 && index.info.hnsw)
        throw new UsageError(`--shard ${o.shard}: ${HNSW_MERGE}, so HNSW shards could never be combined; build the index in one piece`);
      if (!o.trained) await trainOnSample(index, r, o);
      if (!o.trainOnly) return await fillIndex(index, r, o, shard);
      r.close();
      inContext(`--output ${o.output}`, () => index.write(o.output));
    } finally {
      index.dispose();
    }
  } finally {
    r.close();
  }
}

/** The index rows are added to: --trained's (checked against the vectors), else a new one of the factory. */
function startingIndex(o: IndexFileBuild, d: number): FaissIndex {
  if (!o.trained)
    return inContext(`--factory '${o.factory}'`, () => createIndex(d, { factory: o.factory, metric: o.metric }, o.shard !== undefined || o.trainOnly));
  const index = openIndex('--trained', o.trained);
  if (index.d !== d) throw new Error(`--trained ${o.trained}: dimension ${index.d}, but ${o.vectors} has ${d}`);
  if (!index.isTrained) throw new Error(`--trained ${o.trained}: the index is not trained`);
  return index;
}

/** Trains the index on a seeded sample of the rows (said with its time when it needed training). */
async function trainOnSample(index: FaissIndex, r: NpyRowReader, o: IndexFileBuild): Promise<void> {
  const t0 = performance.now();
  const rows = await inContext(`training ${o.factory} on ${Math.min(r.rows, o.trainSample)} rows of ${o.vectors} (--train-sample)`, () =>
    trainIndex(index, r, o.vectors, o, { label: 'index train' }),
  );
  if (rows) process.stderr.write(`[index] trained ${o.factory} on ${rows} rows in ${((performance.now() - t0) / 1000).toFixed(1)}s\n`);
}

/** Whether any of ids lies in [lo, hi). */
function anyIdIn(ids: BigInt64Array, lo: number, hi: number): boolean {
  const a = BigInt(lo),
    b = BigInt(hi);
  for (const id of ids) if (id >= a && id < b) return true;
  return false;
}

/** Adds the shard's rows (their row numbers as ids) and writes the index and its model record. */
async function fillIndex(index: FaissIndex, r: NpyRowReader, o: IndexFileBuild, shard: [number, number]): Promise<void> {
  const [lo, hi] = shardRows(r.rows, shard);
  const before = index.ntotal;
  if (before > 0 && hi > lo && !o.allowDuplicateIds) {
    const stored = index.storedIds();
    if (stored ? anyIdIn(stored, lo, hi) : lo < before)
      throw new Error(
        `--trained ${o.trained} already holds ${before} vectors, some with the ids of rows ${lo}..${hi - 1} of ${o.vectors}: they would be stored twice (start from the empty index of --train-only, or pass --allow-duplicate-ids)`,
      );
  }
  // an index that numbers its vectors itself can only take rows that continue its numbering
  if (!index.takesIds && lo !== before)
    throw new Error(
      `--trained ${o.trained}: this index numbers its vectors itself (no IVF lists, no ID map), so it cannot give rows ${lo}..${hi - 1} their row numbers as ids; make the trained index with --train-only, which adds an ID map`,
    );
  const prog = new Progress({ label: 'index add', unit: 'vecs', total: hi - lo });
  await inContext(`adding rows ${lo}..${hi - 1} of ${o.vectors}`, () =>
    addRows(index, r, o.vectors, lo, hi, { normalize: o.normalize, chunk: o.chunk, onChunk: (k) => prog.tick(k) }),
  );
  prog.done();
  r.close();
  inContext(`--output ${o.output}`, () => index.write(o.output));
  writeIndexMeta(o.output, o.model ? { model: o.model.dir, dim: r.cols } : null);
  process.stderr.write(`[index] ${o.output}: ${index.ntotal} vectors (rows ${lo}..${hi - 1})\n`);
}

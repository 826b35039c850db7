// Building a faiss index from a .npy of vectors without loading it: train on a seeded sample of
// rows, then add rows in chunks with their global row numbers as ids (so shards built from the
// same trained index merge into the index one process would build). Used by xling index build
// and by the staged job of xling cluster index.
import { NpyRowReader } from '../io/npy.js';
import { Rng } from '../util/rng.js';
import { normalizeRows } from '../util/vectors.js';
import { FaissIndex, indexFactory, Metric } from './faiss.js';
import { TrainingLog, TrainingLogOptions } from './train-log.js';

export interface IndexTraining {
  factory: string;
  metric: Metric;
  /** Rows sampled (seeded) to train the index. */
  trainSample: number;
  seed: number;
  opqIters: number;
  polysemous: boolean;
  normalize: boolean;
}

/** Rows [lo, hi) of a .npy as float32, L2-normalised on request (a NaN/inf row is an error naming it). */
export function readVectorRows(r: NpyRowReader, lo: number, hi: number, normalize: boolean, path: string): Float32Array {
  const x = r.readRows(lo, hi);
  if (normalize) normalizeRows(x, r.cols, `${path} rows ${lo}..${hi}`);
  return x;
}

/**
 * A new index of the factory; with `forShards`, an index that numbers its vectors itself (Flat,
 * PQ, …) gets an ID map so that shards can add their global row numbers.
 */
export function createIndex(d: number, o: Pick<IndexTraining, 'factory' | 'metric'>, forShards: boolean): FaissIndex {
  const index = indexFactory(d, o.factory, o.metric);
  if (!forShards || index.takesIds) return index;
  index.dispose();
  return indexFactory(d, `IDMap2,${o.factory}`, o.metric);
}

/**
 * Trains the index (when its kind needs training) on a seeded sample of the rows; returns the rows
 * used, 0 if none. With `progress`, faiss's OPQ and k-means iterations become progress lines (and
 * its repeated small-training-set warnings one line) with that label.
 */
export async function trainIndex(
  index: FaissIndex,
  r: NpyRowReader,
  path: string,
  o: IndexTraining,
  progress?: Omit<TrainingLogOptions, 'opqIters'>,
): Promise<number> {
  const set = index.setTrainingParams({ polysemous: o.polysemous, opqIters: o.opqIters });
  if (index.isTrained) return 0;
  const n = r.rows,
    d = r.cols,
    m = Math.min(n, o.trainSample);
  const rows = new Rng(o.seed).sample(n, m).sort((x, y) => x - y);
  const sample = new Float32Array(m * d);
  rows.forEach((row, i) => sample.set(readVectorRows(r, row, row + 1, o.normalize, path), i * d));
  if (!progress) {
    await index.trainAsync(sample);
    return m;
  }
  const tl = new TrainingLog({ ...progress, opqIters: set.opqIters });
  await index.trainAsync(sample, (l) => tl.line(l));
  tl.done();
  return m;
}

/** Adds rows [lo, hi) in chunks, with their row numbers as ids when the index takes ids. */
export async function addRows(
  index: FaissIndex,
  r: NpyRowReader,
  path: string,
  lo: number,
  hi: number,
  o: { normalize: boolean; chunk: number; onChunk?: (rows: number) => void },
): Promise<void> {
  const withIds = index.takesIds;
  for (let i = lo; i < hi; i += o.chunk) {
    const j = Math.min(hi, i + o.chunk);
    const x = readVectorRows(r, i, j, o.normalize, path);
    await index.addAsync(x, withIds ? BigInt64Array.from({ length: j - i }, (_, t) => BigInt(i + t)) : undefined);
    o.onChunk?.(j - i);
  }
}

export { shardRows } from '../util/shards.js';

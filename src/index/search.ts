// xling search: the k nearest neighbours of query vectors (read from a .npy, or text queries
// embedded by the caller) through a faiss index (nprobe tuned to a recall target, efSearch set) or
// exactly against a .npy read in blocks, or by Hamming distance over binary codes; written as TSV,
// JSON lines with the store's sentences, and/or faiss's D and I arrays.
import { writeNpy } from '../io/npy.js';
import { loadStore } from '../io/sentence-store.js';
import { openVectors, readVectors, Vectors } from '../io/vectors.js';
import { UsageError } from '../util/args.js';
import { Progress } from '../util/progress.js';
import { Rng } from '../util/rng.js';
import { isBinaryIndexFile } from './binary.js';
import { binarySearch, isBinaryVectors } from './binary-search.js';
import { readVectorRows } from './build.js';
import { inContext } from './context.js';
import { knnChunked, mergeTopK } from './exact.js';
import { FaissIndex, knn, openIndex, SearchResult } from './faiss.js';
import { hitsJsonLines, hitsTsv, SearchHits } from './hits.js';
import { writeTextOutput } from '../util/atomic.js';

/** Text queries, embedded: their sentences, their vectors (L2-normalised) and the model that made them. */
export interface TextQueries {
  texts: string[];
  vectors: Vectors;
  model: string;
}

export interface SearchRun {
  /** Search through this index, or exactly against the vectors of `base`. */
  index?: string;
  base?: string;
  /** Vector queries (.npy); or `textQueries`, read and embedded once the store is loaded. */
  queries?: string;
  textQueries?: () => Promise<TextQueries>;
  /** The index's sentences, line i for row i. */
  store?: string;
  k: number;
  metric?: 'ip' | 'l2' | 'cosine';
  nprobe?: number;
  recallTarget: number;
  efSearch?: number;
  /** Exact search: base rows read per block. */
  baseBlock: number;
  /** Binary codes with float queries: re-rank the k·R nearest by Hamming distance. */
  rescore?: number;
  /** The outputs: TSV, JSON lines (- for standard output), faiss's D and I (.npy). */
  tsv?: string;
  jsonl?: string;
  distances?: string;
  ids?: string;
}

/** Runs the search of `o` and writes its outputs. */
export async function searchToFiles(o: SearchRun): Promise<void> {
  if ((o.index && isBinaryIndexFile(o.index)) || (o.base && isBinaryVectors(o.base))) return searchBinary(o);
  if (o.rescore !== undefined) throw new UsageError('--rescore applies to binary codes (an --index of a binary flat index, or a --base of uint8/int8 codes)');
  const store = o.store ? { store: await loadStore(o.store), path: o.store } : undefined;
  // text queries are embedded (normalised); vector queries are L2-normalised unless --metric ip or l2 asks for the raw vectors
  const text = o.textQueries ? await o.textQueries() : null;
  const q = text ? text.vectors : o.metric === 'ip' || o.metric === 'l2' ? rawVectors(o.queries!) : readVectors(o.queries!);
  const queriesAre = text ? `the queries' vectors (of the model ${text.model}; --model for another)` : `--queries ${o.queries}`;
  const { res, l2 } = o.index
    ? await searchIndex(o, o.index, q, queriesAre)
    : { res: exactSearchFile(q, o.base!, o.metric ?? 'cosine', o.k, o.baseBlock, queriesAre), l2: o.metric === 'l2' };
  const hits = faissArrays(res, o.k, l2);
  if (o.distances) writeNpy(o.distances, hits.D, [hits.n, hits.k]);
  if (o.ids) writeNpy(o.ids, hits.I, [hits.n, hits.k]);
  if (o.tsv) writeTextOutput(o.tsv, hitsTsv(hits, store));
  if (o.jsonl) writeTextOutput(o.jsonl, hitsJsonLines(hits, text?.texts ?? Array.from({ length: hits.n }, (_, i) => i), store));
}

/** Binary codes (a binary flat index, or a .npy of codes): searched exactly by Hamming distance, into TSV, D and I. */
function searchBinary(o: SearchRun): void {
  const where = o.index ? `--index ${o.index}` : `--base ${o.base}`;
  if (o.metric || o.nprobe !== undefined || o.efSearch !== undefined)
    throw new UsageError(`--metric/--nprobe/--ef-search: ${where} holds binary codes, searched exactly by Hamming distance`);
  if (o.textQueries || o.store || o.jsonl)
    throw new UsageError(
      `${where} holds binary codes: it is searched with .npy queries, into TSV, --distances and --ids (no text queries, --store or JSON lines)`,
    );
  binarySearch({ index: o.index, base: o.base, queries: o.queries!, k: o.k, rescore: o.rescore, output: o.tsv, distances: o.distances, ids: o.ids });
}

/** The search through --index (its metric, efSearch and nprobe checked and set); whether its scores are L2 distances. */
async function searchIndex(o: SearchRun, path: string, q: Vectors, queriesAre: string): Promise<{ res: SearchResult; l2: boolean }> {
  const idx = openIndex('--index', path, o.nprobe);
  try {
    if (idx.d !== q.d) throw new Error(`dimension mismatch: --index ${path} has ${idx.d}, ${queriesAre} ${q.d}`);
    if (o.metric && (o.metric === 'l2') !== (idx.metric === 'l2'))
      throw new Error(
        `--metric ${o.metric}: --index ${path} is built for ${idx.metric === 'l2' ? 'L2 distances' : 'inner products'}${idx.metric === 'ip' ? ' (ip, or cosine: the queries normalised)' : ' (l2)'}`,
      );
    if (o.efSearch !== undefined) {
      if (!idx.info.hnsw) throw new Error(`--ef-search: --index ${path} is not an HNSW index (efSearch is how many candidates an HNSW search keeps)`);
      idx.setParams(`efSearch=${o.efSearch}`);
    }
    if (idx.info.ivf && o.nprobe === undefined && idx.ntotal > 0) {
      const t = await tuneNprobe(idx, q.data, q.d, o.k, o.recallTarget, (l) => process.stderr.write(`${l}\n`));
      idx.setNprobe(t.nprobe);
    }
    const res = await inContext(`searching --index ${path}`, () => idx.searchAsync(q.data, o.k));
    return { res, l2: idx.metric === 'l2' };
  } finally {
    idx.dispose();
  }
}

/** Of the sampled queries' true neighbours (`ref`, searching every list), the share `r` found. */
function recallOf(ref: SearchResult, r: SearchResult, m: number): number {
  let hit = 0,
    all = 0;
  for (let i = 0; i < m; i++) {
    const truth = new Set<bigint>();
    for (let j = 0; j < ref.k; j++) {
      const l = ref.labels[i * ref.k + j]!;
      if (l >= 0n) truth.add(l);
    }
    all += truth.size;
    for (let j = 0; j < r.k; j++) if (truth.has(r.labels[i * r.k + j]!)) hit++;
  }
  return all ? hit / all : 1;
}

/**
 * The smallest nprobe (powers of two, then every list) whose recall@k, against a search of every
 * list of the same index, reaches the target on a seeded sample of the queries: what the probing
 * loses, measured on this index and these queries (the index's codes set the rest).
 */
export async function tuneNprobe(
  index: FaissIndex,
  q: Float32Array,
  d: number,
  k: number,
  target: number,
  log: (l: string) => void,
): Promise<{ nprobe: number; recall: number }> {
  const nlist = index.info.nlist,
    n = q.length / d;
  // the reference scans every list for each sampled query: keep it to ~2·10⁸ codes
  const m = Math.max(1, Math.min(n, 256, Math.ceil(2e8 / Math.max(1, index.ntotal))));
  const rows = new Rng(3).sample(n, m).sort((a, b) => a - b);
  const sample = new Float32Array(m * d);
  rows.forEach((r, i) => sample.set(q.subarray(r * d, (r + 1) * d), i * d));
  index.setNprobe(nlist);
  const ref = await index.searchAsync(sample, k);
  let p = Math.min(nlist, 1),
    recall = 1;
  for (; ; p = Math.min(nlist, p * 2)) {
    index.setNprobe(p);
    recall = recallOf(ref, await index.searchAsync(sample, k), m);
    if (recall >= target || p >= nlist) break;
  }
  log(
    `[search] nprobe ${p} of ${nlist} lists: recall@${k} ${recall.toFixed(3)} against searching every list, on ${m} sampled queries (--recall-target ${target}; --nprobe to set it)`,
  );
  return { nprobe: p, recall };
}

/** A .npy of vectors as float32, as stored (not normalised). */
function rawVectors(path: string): Vectors {
  const r = openVectors(path);
  try {
    return { data: r.readRows(0, r.rows), n: r.rows, d: r.cols };
  } finally {
    r.close();
  }
}

/** Exact search of the queries against a .npy: the base read in blocks of rows (any size), each block's top k merged in. */
function exactSearchFile(q: Vectors, base: string, m: 'ip' | 'l2' | 'cosine', k: number, block: number, queriesAre: string): SearchResult {
  const r = openVectors(base);
  if (r.cols !== q.d) throw new Error(`dimension mismatch: --base ${base} has ${r.cols}, ${queriesAre} ${q.d}`);
  const fn = (x: Float32Array, b: Float32Array, dd: number, kk: number) => knn(x, b, dd, kk, m === 'l2' ? 'l2' : 'ip');
  const prog = new Progress({ label: 'exact search', unit: 'base rows', total: r.rows });
  let acc: SearchResult | null = null;
  for (let i = 0; i < r.rows; i += block) {
    const j = Math.min(r.rows, i + block);
    const part = knnChunked(q.data, readVectorRows(r, i, j, m === 'cosine', base), q.d, k, 65536, fn);
    // mergeTopK keeps the largest scores: L2 distances are merged negated
    if (m === 'l2') for (let t = 0; t < part.distances.length; t++) part.distances[t] = -part.distances[t]!;
    acc = mergeTopK(acc, part, i, Math.min(k, j));
    prog.tick(j - i);
  }
  prog.done();
  r.close();
  const res = acc ?? { n: q.n, k: 0, labels: new BigInt64Array(0), distances: new Float32Array(0) };
  if (m === 'l2') for (let t = 0; t < res.distances.length; t++) res.distances[t] = -res.distances[t]!;
  return res;
}

/** faiss's D and I of a search: [queries, K], -1 ids (and the worst scores) where fewer than K were found. */
function faissArrays(res: SearchResult, K: number, l2: boolean): SearchHits {
  const D = new Float32Array(res.n * K).fill(l2 ? Infinity : -Infinity),
    I = new BigInt64Array(res.n * K).fill(-1n);
  for (let i = 0; i < res.n; i++)
    for (let j = 0; j < Math.min(K, res.k); j++) {
      D[i * K + j] = res.distances[i * res.k + j]!;
      I[i * K + j] = res.labels[i * res.k + j]!;
    }
  return { D, I, n: res.n, k: K };
}

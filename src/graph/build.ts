// Building the k-nearest-neighbour graph of a whole multilingual collection (Schwenk, Kiela &
// Douze 2019): store the sentences → embed them (float16 on disk) → train a compressed faiss index
// on a sample → add every vector → query every sentence for its k neighbours (self excluded),
// the index's candidates re-ranked with the exact vectors → graph files (CSR: neighbour ids int32
// + distances float16) and statistics. Each step writes its outputs atomically and is skipped when
// they exist (a killed build resumes at its step); embed, add and query take --shard i/n, and
// `graph merge` joins the shards' outputs.
import { existsSync, mkdirSync, readdirSync, realpathSync, rmSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { SentenceSource, sourcePath } from '../data/sources.js';
import { loadSentenceEncoder } from '../embed/model-dir.js';
import { SentenceEncoderModel } from '../embed/model.js';
import { cutLinesWarning } from '../embed/input.js';
import { npySink, streamEmbeddings } from '../embed/stream.js';
import { FaissIndex, readIndex, SearchResult } from '../index/faiss.js';
import { float32ToFloat16 } from '../io/half.js';
import { NpyRowReader, NpyWriter, readNpyHeader } from '../io/npy.js';
import { readJson, writeJson } from '../nn/serialize.js';
import { cat, empty, gatherDot } from '../tensor/ops.js';
import { readInto } from '../tensor/kernels.js';
import { callOpAsync, fromArray, keep, noGrad, opId, Tensor, tidy } from '../tensor/tensor.js';
import { TrainingLog } from '../index/train-log.js';
import { Progress } from '../util/progress.js';
import { Rng } from '../util/rng.js';
import { buildStore, GraphStore, StoreFilter, StoreInfo } from './store.js';
import { pause } from '../util/pause.js';

export const GRAPH_STEPS = ['store', 'embed', 'train', 'add', 'query', 'stats'] as const;
export type GraphStep = (typeof GRAPH_STEPS)[number];

export interface GraphMeta {
  format: 'xling-graph';
  version: 1;
  /** dir: the model directory, relative to the graph directory (dir_base 'graph'; graphs built before recorded it as given, relative to where the build ran). */
  model: { dir: string; dir_base?: 'graph'; kind: string | null; dim: number };
  /** The settings the graph was built with (a resume with others is refused). */
  settings?: GraphSettings;
  k: number;
  factory: string;
  /** IVF lists visited per query (chosen on a sample to reach the recall target unless given). */
  nprobe: number | null;
  /** Index candidates per query re-ranked with the exact vectors. */
  candidates: number;
  filter: StoreFilter;
  sentences: number;
  langs: string[];
  steps: Partial<Record<GraphStep, { seconds: number; shards?: number }>>;
  recall_at_10?: number;
  /** The same by ids alone: a tied neighbour exact search did not list counts as missed. */
  recall_at_10_by_ids?: number;
  bytes?: { index: number; graph: number; store: number; vectors: number };
  bytes_per_sentence?: number;
  build_seconds?: number;
}

/** What decides a graph's content besides its model: a build resumes only with the same ones. */
export interface GraphSettings {
  k: number;
  /** The factory as given (null: the default for the collection's size). */
  factory: string | null;
  candidates: number;
  /** As given (null: tuned to the recall target). */
  nprobe: number | null;
  recall_target: number;
  train_sample: number;
  filter: StoreFilter;
  /** The sentence sources: paths relative to the graph directory, with their columns or language. */
  data: string[];
}

export interface GraphBuildOptions {
  model: string;
  sources: SentenceSource[];
  out: string;
  k: number;
  factory?: string;
  nprobe?: number;
  candidates: number;
  trainSample: number;
  /** Recall@10 (vs exact search) the automatic nprobe aims for. */
  recallTarget: number;
  filter: StoreFilter;
  shard?: [number, number];
  steps?: GraphStep[];
  quiet?: boolean;
  log?: (line: string) => void;
}

/**
 * The factory of a graph that is searched exactly: no faiss index; every sentence's neighbours come
 * from blocked inner products with the float16 vectors (recall 1), and texts are searched against
 * those vectors too.
 */
export const EXACT = 'exact';

/**
 * Below this many d-dimensional sentences (N² · d ≤ EXACT_CROSSOVER_N² · 512), exact blocked search
 * costs less than training, filling and querying OPQ16,IVF√N,PQ16 at the default recall target;
 * measured on this kind of machine (bench/graph-crossover.ts, bench/RESULTS.md). The exact cost
 * grows as N² · d, the compressed one roughly as N (training on at most --train-sample vectors).
 */
export const EXACT_CROSSOVER_N = 150000;

/**
 * Rows the index is trained on: --train-sample, but at least 40 a list of an IVF index (k-means
 * wants ~39 points a centroid; faiss warns below), at most every row.
 */
export function trainRows(n: number, trainSample: number, factory: string): number {
  const nlist = Number(/IVF(\d+)/.exec(factory)?.[1] ?? 0);
  return Math.min(n, Math.max(trainSample, 40 * nlist));
}

/**
 * The factory for a collection of n d-dimensional sentences: exact below the measured crossover,
 * the research's OPQ16,IVF√N,PQ16 above (≤ ~30 bytes a sentence). Measured at 1M–10M vectors
 * (bench/RESULTS.md, "The k-nn graph at scale, measured"), it costs a query the same as an HNSW
 * coarse quantizer over 8√N lists, and 4× less on real 512-d sentence vectors at ~1M, but at 3M
 * × 128 its 16-byte codes of coarse residuals cap recall@10 at 0.85, where the HNSW layout's finer
 * lists reach 0.92 probing 4: the build's warning names that layout (hnswFactory) when the target
 * is not reached.
 */
export function defaultFactory(n: number, d = 512): string {
  if (n * n * d <= EXACT_CROSSOVER_N * EXACT_CROSSOVER_N * 512) return EXACT;
  return `OPQ16,IVF${pow2(Math.sqrt(n))},PQ16`;
}

/** The layout with an HNSW coarse quantizer over 8√N lists and the default's codes, for collections whose default index cannot reach the recall target. */
export function hnswFactory(n: number): string {
  return `OPQ16,IVF${pow2(8 * Math.sqrt(n))}_HNSW32,PQ16`;
}

function pow2(x: number): number {
  return 2 ** Math.round(Math.log2(x));
}

/**
 * PQ fast-scan (a factory with PQ…x4fs): the graph stores the IVF-PQ with the same 4-bit codes
 * (PQ…x4), which shards add to and merge like any IVF-PQ (faiss 1.7.3 cannot merge fast-scan
 * lists), and its query step searches the fast-scan layout converted from it (openQueryIndex).
 */
export const isFastScanFactory = (f: string): boolean => /PQ\d+x4fs(?![\w])/.test(f);
/** The factory of the index the graph trains, adds to and merges (fast-scan as plain 4-bit IVF-PQ). */
export const storedFactory = (f: string): string => f.replace(/(PQ\d+x4)fs(?![\w])/, '$1');

/** The graph's merged index as its query step searches it (fast-scan graphs converted). */
export function openQueryIndex(g: string, factory: string): FaissIndex {
  const index = readIndex(join(g, 'index.faiss'));
  if (!isFastScanFactory(factory)) return index;
  try {
    return index.toFastScan();
  } finally {
    index.dispose();
  }
}

/** Query rows per exact block; blocks start at multiples of it, so a row's products never depend on how the rows are sharded. */
export const EXACT_QUERY_BLOCK = 1024;
const EXACT_BASE_BLOCK = 32768;

/**
 * Exact k nearest (self excluded) of rows [lo, hi) among all N vectors, with cosine distances:
 * float32 products of the float16 vectors, the aligned query block against base blocks of fixed
 * size (matrix products on a worker thread), the best k of each merged (ties by id).
 */
export async function exactGraphRows(vectors: Tensor, lo: number, hi: number, k: number): Promise<{ ids: Int32Array; dist: Float32Array }> {
  const N = vectors.size(0),
    n = hi - lo;
  const ids = new Int32Array(n * k).fill(-1),
    dist = new Float32Array(n * k).fill(Infinity);
  const matmul = opId('matmul');
  for (let a = Math.floor(lo / EXACT_QUERY_BLOCK) * EXACT_QUERY_BLOCK; a < hi; a += EXACT_QUERY_BLOCK) {
    const b = Math.min(N, a + EXACT_QUERY_BLOCK);
    const cand: [number, number][][] = Array.from({ length: b - a }, () => []);
    const q = noGrad(() => tidy(() => vectors.narrow(0, a, b - a).float()));
    try {
      for (let c = 0; c < N; c += EXACT_BASE_BLOCK) {
        const e = Math.min(N, c + EXACT_BASE_BLOCK);
        const bt = noGrad(() =>
          tidy(() =>
            vectors
              .narrow(0, c, e - c)
              .float()
              .t(),
          ),
        );
        let sc: Tensor;
        try {
          sc = (await callOpAsync(matmul, [q, bt])) as Tensor;
        } finally {
          bt.dispose();
        }
        try {
          const kk = Math.min(k + 1, e - c);
          const { v, i } = noGrad(() =>
            tidy(() => {
              // the query itself never counts
              for (let r = Math.max(a, c); r < Math.min(b, e); r++)
                sc.select(0, r - a)
                  .select(0, r - c)
                  .fill_(-Infinity);
              const [vs, is] = sc.topk(kk, 1) as [Tensor, Tensor];
              return { v: vs.toFloat32Array(), i: is.toArray() };
            }),
          );
          for (let r = 0; r < b - a; r++)
            for (let j = 0; j < kk; j++) {
              const score = v[r * kk + j]!;
              if (score !== -Infinity) cand[r]!.push([c + Number(i[r * kk + j]), score]);
            }
        } finally {
          sc.dispose();
        }
      }
    } finally {
      q.dispose();
    }
    for (let r = Math.max(a, lo); r < Math.min(b, hi); r++) {
      const list = cand[r - a]!.filter(([id]) => id !== r).sort((x, y) => y[1] - x[1] || x[0] - y[0]);
      for (let j = 0; j < Math.min(k, list.length); j++) {
        ids[(r - lo) * k + j] = list[j]![0];
        dist[(r - lo) * k + j] = 1 - list[j]![1];
      }
    }
  }
  return { ids, dist };
}

const metaFile = (g: string) => join(g, 'graph.json');
const shardSuffix = (s?: [number, number]) => (s && s[1] > 1 ? `.shard-${s[0]}-of-${s[1]}` : '');
const rowsOf = (n: number, s?: [number, number]): [number, number] => (s ? [Math.floor((s[0] * n) / s[1]), Math.floor(((s[0] + 1) * n) / s[1])] : [0, n]);

/** A path as the graph records it: relative to the graph directory (so the graph can be used, and moved with its model, from anywhere). */
function relativeToGraph(g: string, path: string): string {
  return relative(resolve(g), resolve(path)).split(sep).join('/') || '.';
}

function describeSource(g: string, s: SentenceSource): string {
  const f = relativeToGraph(g, sourcePath(s));
  return 'text' in s ? `${s.lang}=${f}` : s.langs?.length ? `${f}:${s.langs.join(',')}` : f;
}

function settingsOf(o: GraphBuildOptions, factory: string | null): GraphSettings {
  return {
    k: o.k,
    factory,
    candidates: o.candidates,
    nprobe: o.nprobe ?? null,
    recall_target: o.recallTarget,
    train_sample: o.trainSample,
    filter: { minWords: o.filter.minWords, maxWords: o.filter.maxWords, dedup: o.filter.dedup },
    data: o.sources.map((s) => describeSource(o.out, s)),
  };
}

/**
 * The model directory a graph was built with, resolved: relative to the graph directory (or, for
 * graphs built before that was recorded, as given where the build ran, tried relative to the graph
 * directory and then to the working directory). `how` says which.
 */
export function graphModelDir(g: string, meta: GraphMeta = readGraphMeta(g)): { path: string; how: string } {
  const dir = meta.model.dir;
  if (isAbsolute(dir)) return { path: dir, how: 'recorded in graph.json' };
  const fromGraph = resolve(g, dir);
  if (meta.model.dir_base === 'graph' || existsSync(join(fromGraph, 'config.json')))
    return { path: fromGraph, how: `recorded in graph.json as ${dir}, relative to the graph directory` };
  return { path: resolve(dir), how: `recorded in graph.json as ${dir} (an older graph: relative to the working directory)` };
}

/**
 * Refuses to resume a graph with settings other than those it was built with (k, factory, model,
 * sentences, filters, …): its finished steps would be kept and mixed with the new settings. Names
 * every difference. Call before any work.
 */
export function checkGraphSettings(g: string, o: GraphBuildOptions): void {
  if (!existsSync(metaFile(g))) return;
  const meta = readGraphMeta(g);
  const diffs: string[] = [];
  const differ = (what: string, was: unknown, now: unknown) => {
    if (JSON.stringify(was) !== JSON.stringify(now)) diffs.push(`${what} ${JSON.stringify(was)} (given: ${JSON.stringify(now)})`);
  };
  differ('k', meta.k, o.k);
  if (o.factory !== undefined || meta.settings?.factory) differ('factory', meta.settings?.factory ?? meta.factory, o.factory ?? null);
  const model = graphModelDir(g, meta).path;
  if (resolve(o.model) !== model && !(existsSync(model) && existsSync(o.model) && realpathSync(model) === realpathSync(o.model)))
    diffs.push(`model ${model} (given: ${resolve(o.model)})`);
  const s = meta.settings;
  if (s) {
    const now = settingsOf(o, o.factory ?? null);
    differ('candidates', s.candidates, now.candidates);
    differ('nprobe', s.nprobe, now.nprobe);
    differ('recall target', s.recall_target, now.recall_target);
    differ('train sample', s.train_sample, now.train_sample);
    differ('filter', s.filter, now.filter);
    if (o.sources.length) differ('data', s.data, now.data);
  }
  if (diffs.length)
    throw new Error(`${g}: a graph built with other settings — ${diffs.join('; ')}. Resume with the same settings, or build into another directory`);
}

export function readGraphMeta(g: string): GraphMeta {
  if (!existsSync(metaFile(g))) throw new Error(`${g}: not a graph directory (no graph.json)`);
  const m = readJson<GraphMeta>(metaFile(g));
  if (m.format !== 'xling-graph') throw new Error(`${metaFile(g)}: not an xling graph`);
  return m;
}

/** Embeds store rows [lo, hi) (each sentence centred with its language) into a float16 .npy. */
async function embedRows(model: SentenceEncoderModel, store: GraphStore, lo: number, hi: number, file: string, quiet: boolean): Promise<void> {
  const d = model.dim;
  const prog = new Progress({ label: 'graph embed', unit: 'sentences', total: hi - lo, silent: quiet });
  const cutBefore = model.tokenizer.truncated ?? 0;
  async function* ranges(): AsyncGenerator<[number, number]> {
    for (let a = lo; a < hi; a += 50000) yield [a, Math.min(hi, a + 50000)];
  }
  await streamEmbeddings(
    ranges(),
    d,
    async ([a, b]) => {
      const { text, lang } = store.range(a, b);
      const out = new Float32Array((b - a) * d);
      const groups = new Map<string, number[]>();
      lang.forEach((l, i) => {
        const g = groups.get(l);
        if (g) g.push(i);
        else groups.set(l, [i]);
      });
      for (const [l, idx] of groups) {
        const v = await model.embedAsync(
          idx.map((i) => text[i]!),
          { lang: l },
        );
        idx.forEach((i, k) => out.set(v.subarray(k * d, (k + 1) * d), i * d));
      }
      return out;
    },
    npySink(file, d, 'float16'),
    async (rows) => {
      prog.tick(rows);
      await pause();
    },
  );
  prog.done();
  const cut = (model.tokenizer.truncated ?? 0) - cutBefore;
  if (cut) process.stderr.write(cutLinesWarning('graph', `the store's rows ${lo}..${hi - 1}`, cut, hi - lo));
}

/** All vectors of the graph as one float16 tensor [N, d] (read straight into its storage). */
export function loadVectors(g: string): Tensor {
  const file = join(g, 'vectors.npy');
  const h = readNpyHeader(file);
  if (h.dtype !== 'float16' || h.shape.length !== 2) throw new Error(`${file}: expected a 2-D float16 matrix`);
  const t = keep(empty(h.shape, 'float16'));
  readInto(file, [[t, h.headerBytes]]);
  return t;
}

/**
 * For queries [lo, hi): the index's `candidates` nearest, re-ranked by the exact inner product with
 * the float16 vectors, the best k other than the query itself. Returns ids and cosine distances.
 */
export function queryRows(index: FaissIndex, vectors: Tensor, lo: number, hi: number, k: number, candidates: number): { ids: Int32Array; dist: Float32Array } {
  const q = queryVectors(vectors, lo, hi);
  return rerankCandidates(vectors, lo, q, index.search(q, Math.min(candidates + 1, index.ntotal)), k);
}

/** queryRows with the index search on faiss's worker threads (the event loop stays free: a worker renews its job lock). */
export async function queryRowsAsync(
  index: FaissIndex,
  vectors: Tensor,
  lo: number,
  hi: number,
  k: number,
  candidates: number,
): Promise<{ ids: Int32Array; dist: Float32Array }> {
  const q = queryVectors(vectors, lo, hi);
  return rerankCandidates(vectors, lo, q, await index.searchAsync(q, Math.min(candidates + 1, index.ntotal)), k);
}

const queryVectors = (vectors: Tensor, lo: number, hi: number) =>
  noGrad(() =>
    tidy(() =>
      vectors
        .narrow(0, lo, hi - lo)
        .float()
        .toFloat32Array(),
    ),
  );

/**
 * The index's candidates r of queries q re-ranked by the exact inner product with `vectors` (the
 * graph's float16 rows, scored in the addon's gatherDot): the best k of each, other than the
 * query itself (query i is row `lo + i` of the collection; lo < 0: queries from outside it), as ids
 * and cosine distances (1 − score). Ties keep the index's order. Also the graph-query bench's
 * re-ranking, so its figures price the product's.
 */
export function rerankCandidates(vectors: Tensor, lo: number, q: Float32Array, r: SearchResult, k: number): { ids: Int32Array; dist: Float32Array } {
  const d = vectors.size(1),
    n = q.length / d;
  const K = r.k;
  const ids = new Int32Array(n * k).fill(-1),
    dist = new Float32Array(n * k).fill(Infinity);
  const scores = noGrad(() => tidy(() => gatherDot(vectors, fromArray(r.labels, [n, K]), fromArray(q, [n, d])).toFloat32Array()));
  // the best k by insertion (k ≪ K): a candidate enters after every kept one scoring at least as
  // much, so equal scores keep the index's order, as a stable sort would
  const topI = new Int32Array(k),
    topS = new Float32Array(k);
  for (let i = 0; i < n; i++) {
    const self = lo < 0 ? -1 : lo + i;
    let m = 0;
    for (let j = 0; j < K; j++) {
      const l = Number(r.labels[i * K + j]);
      if (l < 0 || l === self) continue;
      const s = scores[i * K + j]!;
      if (m === k && !(s > topS[k - 1]!)) continue;
      let dup = false;
      for (let t = 0; t < m; t++)
        if (topI[t] === l) {
          dup = true;
          break;
        }
      if (dup) continue;
      let p = m < k ? m++ : k - 1;
      while (p > 0 && s > topS[p - 1]!) {
        topI[p] = topI[p - 1]!;
        topS[p] = topS[p - 1]!;
        p--;
      }
      topI[p] = l;
      topS[p] = s;
    }
    for (let j = 0; j < m; j++) {
      ids[i * k + j] = topI[j]!;
      dist[i * k + j] = 1 - topS[j]!;
    }
  }
  return { ids, dist };
}

/**
 * Exact k nearest (self excluded) of sample rows among all vectors, in blocks of the base: their
 * ids and each row's k-th best score (the bar a tied neighbour must reach, see TIE_TOLERANCE).
 */
function exactNeighbours(vectors: Tensor, sample: number[], k: number): { ids: Int32Array[]; kth: Float32Array } {
  const N = vectors.size(0);
  return noGrad(() =>
    tidy(() => {
      const q = vectors.indexSelect(0, fromArray(BigInt64Array.from(sample, BigInt))).float();
      let best: { s: Tensor; i: Tensor } | null = null;
      for (let a = 0; a < N; a += 200000) {
        const b = Math.min(N, a + 200000),
          prev: { s: Tensor; i: Tensor } | null = best;
        // each block's scores (sample × 200k floats) and float copy are freed before the next one:
        // only the best k so far are kept
        best = tidy(() => {
          const s = q.matmul(
            vectors
              .narrow(0, a, b - a)
              .float()
              .t(),
          );
          // the query itself never counts
          sample.forEach((r, qi) => {
            if (r >= a && r < b)
              s.select(0, qi)
                .select(0, r - a)
                .fill_(-Infinity);
          });
          const [vs, is] = s.topk(Math.min(k, b - a), 1) as [Tensor, Tensor];
          const idx = is.add(a);
          if (!prev) return { s: vs, i: idx };
          // the best k of the blocks so far and this one
          const allS = cat([prev.s, vs], 1),
            allI = cat([prev.i, idx], 1);
          const [s2, p] = allS.topk(k, 1) as [Tensor, Tensor];
          return { s: s2, i: allI.gather(1, p) };
        });
      }
      const ids = best!.i.toArray(),
        scores = best!.s.toFloat32Array(),
        kk = best!.s.size(1);
      return {
        ids: sample.map((_, qi) => Int32Array.from(ids.slice(qi * kk, (qi + 1) * kk))),
        kth: Float32Array.from(sample, (_, qi) => scores[qi * kk + kk - 1]!),
      };
    }),
  );
}

/**
 * Recall counts a returned neighbour whose exact score reaches the k-th exact neighbour's (less
 * this tolerance) as found, as ann-benchmarks' k-nn recall does: a collection of many languages
 * holds the same string in several of them (names, "%s", "OK"), whose vectors are equal, and
 * which k of such tied rows exact search lists is arbitrary; by ids alone, a graph listing
 * another k of them would count as wrong.
 */
export const TIE_TOLERANCE = 1e-5;

/** How many of a row's neighbours (ids, with their exact scores) count as found against its exact ones. */
function hits(ids: ArrayLike<number>, scores: ArrayLike<number>, k: number, truth: Set<number>, kth: number): number {
  let hit = 0;
  for (let j = 0; j < k; j++) if (truth.has(ids[j]!) || scores[j]! >= kth - TIE_TOLERANCE) hit++;
  return hit;
}

/**
 * Recall@10 of graph rows against exact search on a sample of the sentences (ties counted as
 * found: TIE_TOLERANCE), and by ids alone (a tied row exact search did not list counts as missed).
 */
export function graphRecall(g: string, vectors: Tensor, sampleSize: number, seed = 1): { recall: number; byIds: number } {
  const meta = readGraphMeta(g);
  const N = vectors.size(0),
    k = Math.min(10, meta.k);
  const sample = new Rng(seed).sample(N, Math.min(sampleSize, N)).sort((a, b) => a - b);
  const exact = exactNeighbours(vectors, sample, k);
  const nb = NpyRowReader.open(join(g, 'neighbours.npy'));
  let hit = 0,
    byIds = 0;
  try {
    sample.forEach((r, i) => {
      const row = (nb.readRowsRaw(r, r + 1) as Int32Array).subarray(0, k);
      const truth = new Set(exact.ids[i]!);
      for (const id of row) if (truth.has(id)) byIds++;
      hit += hits(row, exactScores(vectors, r, row), k, truth, exact.kth[i]!);
    });
  } finally {
    nb.close();
  }
  return { recall: hit / (sample.length * k), byIds: byIds / (sample.length * k) };
}

/** The exact scores (float32 products of the stored vectors) of row r with each of ids. */
function exactScores(vectors: Tensor, r: number, ids: Int32Array): Float32Array {
  return noGrad(() =>
    tidy(() => {
      const q = vectors.narrow(0, r, 1).float();
      const v = vectors.indexSelect(0, fromArray(BigInt64Array.from(ids, (x) => BigInt(Math.max(0, x))))).float();
      const s = v.matmul(q.t()).toFloat32Array();
      return Float32Array.from(s, (x, j) => (ids[j]! < 0 ? -Infinity : x));
    }),
  );
}

export async function buildGraph(o: GraphBuildOptions): Promise<GraphMeta> {
  return new GraphBuild(o).run();
}

/** What the steps after the store work on: the graph's metadata as they began, its store, and this process's rows [lo, hi). */
interface BuildPart {
  meta: GraphMeta;
  store: GraphStore;
  N: number;
  lo: number;
  hi: number;
  exact: boolean;
}

/** One buildGraph call: the steps asked for, each skipped when its outputs exist. */
class GraphBuild {
  private readonly log: (line: string) => void;
  private readonly g: string;
  private readonly steps: Set<GraphStep>;
  private readonly sfx: string;
  // the model is loaded only by the steps that embed (a large one takes seconds and gigabytes; a
  // cluster worker runs the train, add and query jobs without it)
  private loaded: SentenceEncoderModel | undefined;
  private readonly t0: number;
  /** Steps run by this call. */
  private ran = 0;

  constructor(private readonly o: GraphBuildOptions) {
    this.log = o.log ?? ((l: string) => process.stderr.write(`[graph] ${l}\n`));
    this.g = o.out;
    this.steps = new Set(o.steps ?? GRAPH_STEPS);
    this.sfx = shardSuffix(o.shard);
    this.t0 = performance.now();
  }

  private model(): SentenceEncoderModel {
    return (this.loaded ??= loadSentenceEncoder(this.o.model));
  }

  async run(): Promise<GraphMeta> {
    const { o, g, log } = this;
    // a graph built with other settings is refused (its finished steps would be kept), and a
    // factory faiss cannot build, before any work
    const resumed = existsSync(metaFile(g));
    checkGraphSettings(g, o);
    if (o.factory && o.factory !== EXACT) FaissIndex.create(existsSync(metaFile(g)) ? readGraphMeta(g).model.dim : this.model().dim, o.factory, 'ip').dispose();

    if (this.steps.has('store') && !existsSync(metaFile(g))) await this.storeStep();
    const meta = readGraphMeta(g);
    const store = new GraphStore(g);
    const N = store.size;
    const [lo, hi] = rowsOf(N, o.shard);
    try {
      // a shard whose next step needs every shard's output stops here
      if (!(await this.shardSteps({ meta, store, N, lo, hi, exact: meta.factory === EXACT }))) return readGraphMeta(g);
    } finally {
      store.close();
    }
    if (resumed && !this.ran) log(`nothing to do: every step asked for was already done with these settings → ${g}`);
    else log(`done in ${((performance.now() - this.t0) / 1000).toFixed(0)}s → ${g}`);
    return readGraphMeta(g);
  }

  /** Runs fn as a step, recording its time: in graph.json, or (a shard) in its own file that mergeGraphShards adds up. */
  private async timed(step: GraphStep, fn: () => Promise<void> | void): Promise<void> {
    const { g, sfx } = this;
    this.ran++;
    const s0 = performance.now();
    await fn();
    const seconds = +((performance.now() - s0) / 1000).toFixed(1);
    // shards run side by side (other processes, other machines): each writes its own time, and
    // mergeGraphShards adds them into graph.json, so no shard's write can undo another's
    if (sfx) {
      writeJson(join(g, `steps.${step}${sfx}.json`), { seconds });
      return;
    }
    const m = readGraphMeta(g);
    m.steps[step] = { seconds };
    writeJson(metaFile(g), m);
  }

  /** The store step: the sentence store and graph.json (with the factory for the collection's size when none is given). */
  private async storeStep(): Promise<void> {
    const { o, g, log } = this;
    if (existsSync(g) && !statSync(g).isDirectory()) throw new Error(`${g}: exists and is not a directory`);
    const created = !existsSync(g);
    const encoder = this.model(); // the metadata records its kind and dimension: a model that cannot load fails before any output
    mkdirSync(g, { recursive: true });
    const s0 = performance.now();
    let info: StoreInfo;
    try {
      info = await buildStore(g, o.sources, o.filter, o.quiet);
    } catch (e) {
      if (created) rmSync(g, { recursive: true, force: true }); // a failed first step leaves nothing behind
      throw e;
    }
    const meta: GraphMeta = {
      format: 'xling-graph',
      version: 1,
      model: { dir: relativeToGraph(g, o.model), dir_base: 'graph', kind: (encoder.config as { kind?: string } | null)?.kind ?? null, dim: encoder.dim },
      k: o.k,
      factory: o.factory ?? defaultFactory(info.sentences, encoder.dim),
      nprobe: o.nprobe ?? null,
      candidates: o.candidates,
      filter: o.filter,
      settings: settingsOf(o, o.factory ?? null),
      sentences: info.sentences,
      langs: info.langs,
      steps: { store: { seconds: +((performance.now() - s0) / 1000).toFixed(1) } },
    };
    writeJson(metaFile(g), meta);
    log(
      `store: ${info.sentences} sentences in ${info.langs.length} languages (${info.dropped.length} outside the length bounds, ${info.dropped.duplicates} duplicates left out)`,
    );
    if (!o.factory)
      log(
        meta.factory === EXACT
          ? `exact search: ${info.sentences} sentences are below the crossover (${EXACT_CROSSOVER_N} at 512 dimensions) where a compressed index would cost less`
          : `index ${meta.factory}: ${info.sentences} sentences are above the crossover of exact search (${EXACT_CROSSOVER_N} at 512 dimensions)`,
      );
  }

  /** The steps after the store, in order; false when a shard must wait for 'graph merge' before the next one. */
  private async shardSteps(p: BuildPart): Promise<boolean> {
    const { o, g, steps, sfx, log } = this;
    const sharded = !!o.shard && o.shard[1] > 1;
    if (steps.has('embed') && !existsSync(join(g, 'vectors.npy')) && !existsSync(join(g, `vectors${sfx}.npy`))) await this.embedStep(p);
    if (sharded && (steps.has('add') || steps.has('query')) && !existsSync(join(g, 'vectors.npy'))) {
      log(`shard ${o.shard!.join('/')}: embedded; run 'xling graph merge' once every shard has, then the next steps`);
      return false;
    }
    if (steps.has('train') && !p.exact && !existsSync(join(g, 'index.trained.faiss'))) await this.trainStep(p);
    if (steps.has('add') && !p.exact && !existsSync(join(g, 'index.faiss')) && !existsSync(join(g, `index${sfx}.faiss`))) await this.addStep(p);
    if ((steps.has('query') || steps.has('stats')) && !p.exact && !existsSync(join(g, 'index.faiss')) && sharded) {
      log(`shard ${o.shard!.join('/')}: added; run 'xling graph merge' once every shard has, then query`);
      return false;
    }
    const queryDue = steps.has('query') && !existsSync(join(g, 'neighbours.npy')) && !existsSync(join(g, `neighbours${sfx}.npy`));
    if (queryDue && p.exact) await this.exactQueryStep(p);
    if (queryDue && !p.exact) await this.indexQueryStep(p);
    if (steps.has('stats') && existsSync(join(g, 'neighbours.npy')) && readGraphMeta(g).recall_at_10 === undefined) this.statsStep(p);
    return true;
  }

  /** The embed step: this process's rows into vectors.npy (a shard: its own vectors file). */
  private async embedStep({ meta, store, lo, hi }: BuildPart): Promise<void> {
    const { o, g, sfx } = this;
    const dim = meta.model.dim;
    if (this.model().dim !== dim) throw new Error(`${g}: built with ${dim}-d vectors, --model gives ${this.model().dim}-d`);
    await this.timed('embed', () => embedRows(this.model(), store, lo, hi, join(g, `vectors${sfx}.npy`), o.quiet ?? false));
    this.log(`embed: rows ${lo}..${hi - 1} → vectors${sfx}.npy`);
  }

  /** The train step: the index (ids taken with the vectors) trained on a sample of the vectors, as index.trained.faiss. */
  private async trainStep({ meta, N }: BuildPart): Promise<void> {
    const { o, g } = this;
    const dim = meta.model.dim;
    if (!existsSync(join(g, 'vectors.npy')))
      throw new Error(`${g}: the index is trained on the vectors (run the embed step first, and 'graph merge' after sharded embeds)`);
    await this.timed('train', async () => {
      const factory = storedFactory(meta.factory);
      let index = FaissIndex.create(dim, factory, 'ip');
      // node ids go in with the vectors (shards add their own rows): indexes that number their
      // vectors themselves (Flat, HNSW, PQ) are wrapped in an id map
      if (!index.takesIds) {
        index.dispose();
        index = FaissIndex.create(dim, `IDMap,${factory}`, 'ip');
      }
      const set = index.setTrainingParams({ polysemous: false, opqIters: 20 });
      if (!index.isTrained) {
        const r = NpyRowReader.open(join(g, 'vectors.npy'));
        const m = trainRows(N, o.trainSample, factory);
        const rows = new Rng(1).sample(N, m).sort((a, b) => a - b);
        const x = new Float32Array(m * dim);
        rows.forEach((row, i) => x.set(r.readRows(row, row + 1), i * dim));
        r.close();
        // faiss's OPQ and k-means iterations as progress lines
        const tl = new TrainingLog({ label: 'graph train', opqIters: set.opqIters, silent: o.quiet });
        await index.trainAsync(x, (l) => tl.line(l));
        tl.done();
      }
      index.write(join(g, 'index.trained.faiss'));
      index.dispose();
    });
    this.log(`train: ${meta.factory} on ${trainRows(N, o.trainSample, storedFactory(meta.factory))} vectors`);
  }

  /** The add step: this process's rows added to the trained index, as index.faiss (a shard: its own index file). */
  private async addStep({ lo, hi }: BuildPart): Promise<void> {
    const { g, sfx } = this;
    await this.timed('add', async () => {
      const index = readIndex(join(g, 'index.trained.faiss'));
      const r = NpyRowReader.open(join(g, 'vectors.npy'));
      for (let a = lo; a < hi; a += 100000) {
        const b = Math.min(hi, a + 100000);
        await index.addAsync(
          r.readRows(a, b),
          BigInt64Array.from({ length: b - a }, (_, t) => BigInt(a + t)),
        );
      }
      r.close();
      index.write(join(g, `index${sfx}.faiss`));
      index.dispose();
    });
    this.log(`add: rows ${lo}..${hi - 1} → index${sfx}.faiss`);
  }

  /** The query step of an exact graph: blocked exact search over the float16 vectors. */
  private async exactQueryStep({ meta, lo, hi }: BuildPart): Promise<void> {
    const { g } = this;
    if (!existsSync(join(g, 'vectors.npy')))
      throw new Error(`${g}: the query step reads every vector (run the embed step first, and 'graph merge' after sharded embeds)`);
    const vectors = loadVectors(g);
    try {
      await this.timed('query', () =>
        this.writeNeighbours(
          'graph query (exact)',
          meta.k,
          lo,
          hi,
          (a) => Math.min(hi, (Math.floor(a / EXACT_QUERY_BLOCK) + 1) * EXACT_QUERY_BLOCK),
          (a, b) => exactGraphRows(vectors, a, b, meta.k),
        ),
      );
      this.log(`query: ${meta.k} neighbours of rows ${lo}..${hi - 1} by exact search over the float16 vectors`);
    } finally {
      vectors.dispose();
    }
  }

  /** The query step of an indexed graph: nprobe tuned (once for all shards), the index's candidates re-ranked with the exact vectors. */
  private async indexQueryStep({ meta, lo, hi }: BuildPart): Promise<void> {
    const { g } = this;
    const vectors = loadVectors(g);
    const index = openQueryIndex(g, meta.factory);
    try {
      meta.nprobe = tuneGraphNprobe(g, index, vectors, this.o.recallTarget, this.log);
      meta.candidates = readGraphMeta(g).candidates;
      if (meta.nprobe) index.setNprobe(meta.nprobe);
      await this.timed('query', () =>
        this.writeNeighbours(
          'graph query',
          meta.k,
          lo,
          hi,
          (a) => Math.min(hi, a + 512),
          (a, b) => queryRowsAsync(index, vectors, a, b, meta.k, meta.candidates),
        ),
      );
      this.log(`query: ${meta.k} neighbours of rows ${lo}..${hi - 1} (nprobe ${meta.nprobe ?? '-'}, ${meta.candidates} candidates re-ranked)`);
    } finally {
      index.dispose();
      vectors.dispose();
    }
  }

  /**
   * The k neighbours and distances of rows [lo, hi), block by block (blockEnd: where the block
   * starting at a row ends), into this process's neighbours and distances files; neither is left
   * behind on an error.
   */
  private async writeNeighbours(
    label: string,
    k: number,
    lo: number,
    hi: number,
    blockEnd: (a: number) => number,
    rows: (a: number, b: number) => Promise<{ ids: Int32Array; dist: Float32Array }>,
  ): Promise<void> {
    const { g, sfx } = this;
    const nb = NpyWriter.open(join(g, `neighbours${sfx}.npy`), k, 'int32');
    const ds = NpyWriter.open(join(g, `distances${sfx}.npy`), k, 'float16');
    const prog = new Progress({ label, unit: 'sentences', total: hi - lo, silent: this.o.quiet });
    try {
      for (let a = lo; a < hi; ) {
        const b = blockEnd(a);
        const r = await rows(a, b);
        nb.append(r.ids);
        ds.append(float32ToFloat16(r.dist));
        prog.tick(b - a);
        a = b;
      }
      nb.close();
      ds.close();
      prog.done();
    } catch (e) {
      nb.abort();
      ds.abort();
      throw e;
    }
  }

  /** The stats step: recall@10 against exact search on a sample, the sizes and the build time, into graph.json. */
  private statsStep({ N, exact }: BuildPart): void {
    const { o, g, log } = this;
    const vectors = loadVectors(g);
    try {
      const s0 = performance.now();
      const sampled = Math.min(2000, N);
      const { recall, byIds } = graphRecall(g, vectors, sampled);
      const m = readGraphMeta(g);
      const size = (f: string) => (existsSync(join(g, f)) ? statSync(join(g, f)).size : 0);
      m.recall_at_10 = +recall.toFixed(4);
      m.recall_at_10_by_ids = +byIds.toFixed(4);
      m.bytes = {
        index: exact ? 0 : size('index.faiss'),
        graph: size('neighbours.npy') + size('distances.npy'),
        store: size('sentences.txt') + size('sentences.offsets.npy') + size('sentences.langs.npy'),
        vectors: size('vectors.npy'),
      };
      m.bytes_per_sentence = +((m.bytes.index + m.bytes.graph) / N).toFixed(2);
      m.steps.stats = { seconds: +((performance.now() - s0) / 1000).toFixed(1) };
      m.build_seconds = +Object.entries(m.steps)
        .filter(([k]) => k !== 'store' && k !== 'embed' && k !== 'stats')
        .reduce((a, [, v]) => a + (v?.seconds ?? 0), 0)
        .toFixed(1);
      writeJson(metaFile(g), m);
      this.ran++;
      log(
        `recall@10 vs exact search (${sampled === N ? `all ${N} sentences` : `${sampled} of ${N} sentences`}, tied neighbours counted as found): ${recall.toFixed(3)} (by ids alone ${byIds.toFixed(3)}); index ${(m.bytes.index / N).toFixed(1)} bytes/sentence, graph ${(m.bytes.graph / N).toFixed(1)}`,
      );
      const target = m.settings?.recall_target ?? o.recallTarget;
      if (recall < target)
        log(
          `warning: recall@10 ${recall.toFixed(3)} is below the recall target ${target}${m.nprobe ? ` (nprobe ${m.nprobe})` : ''}: more --candidates, a larger --nprobe or a finer --factory would raise it`,
        );
    } finally {
      vectors.dispose();
    }
  }
}

/**
 * The graph's nprobe: the one recorded, or (IVF indexes) chosen now on a sample and recorded, so
 * that every shard of the query step uses the same one; where more lists stop raising the recall,
 * the candidates re-ranked are raised too (recorded as the graph's `candidates`; its settings keep
 * the number given). Null for indexes without lists.
 */
export function tuneGraphNprobe(g: string, index: FaissIndex, vectors: Tensor, recallTarget: number, log: (l: string) => void): number | null {
  const meta = readGraphMeta(g);
  if (meta.nprobe || !/IVF/.test(meta.factory)) return meta.nprobe;
  const { nprobe, candidates } = chooseNprobe(index, vectors, meta, recallTarget, log);
  const m = readGraphMeta(g);
  m.nprobe = nprobe;
  m.candidates = candidates;
  writeJson(metaFile(g), m);
  return nprobe;
}

/** tuneGraphNprobe with the graph's own merged index and vectors (after the add step). */
export function tuneGraph(g: string, recallTarget: number, log: (l: string) => void): number | null {
  const m = readGraphMeta(g);
  if (m.nprobe || !/IVF/.test(m.factory)) return m.nprobe;
  const vectors = loadVectors(g),
    index = openQueryIndex(g, m.factory);
  try {
    return tuneGraphNprobe(g, index, vectors, recallTarget, log);
  } finally {
    index.dispose();
    vectors.dispose();
  }
}

/** Candidates re-ranked are raised to at most this many times the number given. */
export const MAX_CANDIDATE_FACTOR = 8;

/**
 * The smallest nprobe (powers of two from 4, from 1 with an HNSW coarse quantizer) whose recall@10
 * on 500 sampled queries reaches the target. Where doubling nprobe gains less than 0.005 (the
 * codes do not rank the true neighbours among the candidates: bench/RESULTS.md, 10M × 128), the
 * candidates double instead (up to MAX_CANDIDATE_FACTOR × the number given) at the same nprobe.
 */
function chooseNprobe(index: FaissIndex, vectors: Tensor, meta: GraphMeta, target: number, log: (l: string) => void): { nprobe: number; candidates: number } {
  const N = vectors.size(0);
  const sample = new Rng(7).sample(N, Math.min(500, N)).sort((a, b) => a - b);
  const exact = exactNeighbours(vectors, sample, 10);
  const nlist = Number(/IVF(\d+)/.exec(meta.factory)?.[1] ?? 1);
  const maxCandidates = Math.min(N - 1, meta.candidates * MAX_CANDIDATE_FACTOR);
  let candidates = meta.candidates,
    prev = -1,
    best = 0;
  // an HNSW coarse quantizer serves many small lists, of which one or two often reach the target
  let p = Math.min(/IVF\d+_HNSW/.test(meta.factory) ? 1 : 4, nlist);
  for (;;) {
    index.setNprobe(p);
    let hit = 0;
    for (let i = 0; i < sample.length; i++) {
      const r = queryRows(index, vectors, sample[i]!, sample[i]! + 1, 10, candidates);
      // dist is 1 − the exact (re-ranked) score
      hit += hits(
        r.ids,
        Float32Array.from(r.dist, (x) => 1 - x),
        r.ids.length,
        new Set(exact.ids[i]!),
        exact.kth[i]!,
      );
    }
    best = hit / (sample.length * 10);
    log(`nprobe ${p}, ${candidates} candidates: recall@10 ${best.toFixed(3)} on ${sample.length} sampled sentences`);
    if (best >= target) break;
    const stalled = prev >= 0 && best - prev < 0.005;
    if ((stalled || p === nlist) && candidates < maxCandidates) {
      candidates = Math.min(maxCandidates, candidates * 2);
      prev = -1;
      continue;
    }
    if (p === nlist) break;
    prev = best;
    p = Math.min(nlist, p * 2);
  }
  if (best < target)
    log(
      `warning: recall@10 ${best.toFixed(3)} at nprobe ${p}${p === nlist ? ' (every list)' : ''} and ${candidates} candidates is below the recall target ${target}: the index's codes limit it; more --candidates or a finer --factory would raise it${/_HNSW/.test(meta.factory) ? '' : ` (e.g. --factory "${hnswFactory(N)}": finer lists, so finer residual codes; bench/RESULTS.md)`}`,
    );
  return { nprobe: p, candidates };
}

/** Joins the shards' outputs of a step: vectors (concatenated), index (merged), neighbours/distances (concatenated). */
export function mergeGraphShards(g: string, log: (l: string) => void = (l) => process.stderr.write(`[graph] ${l}\n`)): void {
  const files = readdirSync(g);
  // the shards' finished files only: a killed shard leaves its temporary (NAME.tmp-PID-…), which
  // shares the prefix and must never be read
  const shardsOf = (base: string) =>
    files.filter((f) => new RegExp(`^${base}\\.shard-\\d+-of-\\d+\\.(npy|faiss)$`).test(f)).sort((a, b) => shardIndex(a) - shardIndex(b));
  const leftovers = (base: string) => {
    for (const f of files) if (f.startsWith(`${base}.shard-`) && f.includes('.tmp-')) rmSync(join(g, f), { force: true });
  };
  for (const base of ['vectors', 'neighbours', 'distances']) {
    const parts = shardsOf(base);
    if (!parts.length || existsSync(join(g, `${base}.npy`))) continue;
    checkComplete(parts, base);
    const readers = parts.map((p) => NpyRowReader.open(join(g, p)));
    const w = NpyWriter.open(join(g, `${base}.npy`), readers[0]!.cols, readers[0]!.dtype);
    try {
      for (const r of readers) for (let a = 0; a < r.rows; a += 100000) w.append(r.readRowsRaw(a, Math.min(r.rows, a + 100000)));
      w.close();
    } catch (e) {
      w.abort();
      throw e;
    } finally {
      readers.forEach((r) => r.close());
    }
    for (const p of parts) rmSync(join(g, p));
    leftovers(base);
    log(`merged ${parts.length} shards → ${base}.npy`);
  }
  const timings = files.filter((f) => /^steps\.\w+\.shard-\d+-of-\d+\.json$/.test(f));
  if (timings.length) {
    const m = readGraphMeta(g);
    for (const f of timings) {
      const step = f.split('.')[1] as GraphStep,
        n = Number(/-of-(\d+)/.exec(f)![1]);
      const prev = m.steps[step];
      m.steps[step] = { seconds: +((prev?.shards ? prev.seconds : 0) + readJson<{ seconds: number }>(join(g, f)).seconds).toFixed(1), shards: n };
    }
    writeJson(metaFile(g), m);
    for (const f of timings) rmSync(join(g, f));
  }
  const ix = shardsOf('index');
  if (ix.length && !existsSync(join(g, 'index.faiss'))) {
    checkComplete(ix, 'index');
    const base = readIndex(join(g, ix[0]!));
    for (const p of ix.slice(1)) {
      const s = readIndex(join(g, p));
      base.mergeFrom(s);
      s.dispose();
    }
    base.write(join(g, 'index.faiss'));
    base.dispose();
    for (const p of ix) rmSync(join(g, p));
    leftovers('index');
    log(`merged ${ix.length} index shards → index.faiss`);
  }
}

function shardIndex(f: string): number {
  return Number(/\.shard-(\d+)-of-/.exec(f)![1]);
}
function checkComplete(parts: string[], base: string): void {
  const n = Number(/-of-(\d+)/.exec(parts[0]!)![1]);
  const have = new Set(parts.map(shardIndex));
  const missing = Array.from({ length: n }, (_, i) => i).filter((i) => !have.has(i));
  if (missing.length) throw new Error(`${base}: shards ${missing.join(', ')} of ${n} are not done yet`);
}

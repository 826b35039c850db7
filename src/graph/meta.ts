// A graph directory's metadata (graph.json): the steps, the settings a graph is built with (a
// resume with others is refused), the index factory chosen for the collection's size, and the
// names of the files the steps write (a shard's with its suffix).
import { existsSync, realpathSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { SentenceSource, sourcePath } from '../train-data/sources.js';
import { readJson } from '../nn/serialize.js';
import { StoreFilter } from './store.js';

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

export const metaFile = (g: string) => join(g, 'graph.json');
export const shardSuffix = (s?: [number, number]) => (s && s[1] > 1 ? `.shard-${s[0]}-of-${s[1]}` : '');
export const rowsOf = (n: number, s?: [number, number]): [number, number] =>
  s ? [Math.floor((s[0] * n) / s[1]), Math.floor(((s[0] + 1) * n) / s[1])] : [0, n];

/** A path as the graph records it: relative to the graph directory (so the graph can be used, and moved with its model, from anywhere). */
export function relativeToGraph(g: string, path: string): string {
  return relative(resolve(g), resolve(path)).split(sep).join('/') || '.';
}

function describeSource(g: string, s: SentenceSource): string {
  const f = relativeToGraph(g, sourcePath(s));
  return 'text' in s ? `${s.lang}=${f}` : s.langs?.length ? `${f}:${s.langs.join(',')}` : f;
}

export function settingsOf(o: GraphBuildOptions, factory: string | null): GraphSettings {
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

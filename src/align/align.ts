// Sentence alignment of a document and its translation with sentence embeddings, after vecalign
// (Thompson & Koehn 2019, "Vecalign: Improved Sentence Alignment in Linear Time and Space",
// EMNLP; the facts below follow the paper and its public implementation):
// - every run of 1..K consecutive sentences of each document (an "overlap", joined by a space)
//   is embedded once;
// - a group of x source and y target sentences costs (1 − cos(x, y)) · nSents(x) · nSents(y),
//   normalised by the average (1 − cos) of x and of y against sentences sampled at random from
//   the other document (2(1 − cos) / (norm(x) + norm(y)));
// - a deletion (1:0 or 0:1) costs a percentile (`delPercentile`, vecalign's del_percentile_frac)
//   of the costs of random 1:1 pairs of the two documents;
// - the groups allowed are x:y with x, y ≥ 1 and x + y ≤ maxGroup (4: 1:1, 1:2, 2:1, 2:2, 1:3,
//   3:1), and the deletions;
// - documents with at most maxFullDp² cells are aligned by the exact DP over the whole matrix;
//   longer ones as vecalign does: the sentence vectors are halved (consecutive pairs summed, the
//   mean removed, normalised) until they fit, aligned 1:1 there, and the path is carried down a
//   level at a time, the DP searched exactly inside a band of ± (⌈maxGroup/2⌉ + searchBuffer)
//   rows and columns around it (memory and time linear in the documents' lengths).
// Random samples come from a seeded generator: the same input gives the same alignment.
import type { SentenceEncoderModel } from '../embed/model.js';
import { AUTO, resolveLangOption } from '../embed/language.js';
import { linesCut } from '../embed/input.js';
import { Rng } from '../util/rng.js';
import { alignDp, Band, bandAround, bandCells, CostModel, DpGroup, fullBand, pathRanges, upsampleRanges } from './dp.js';

/** One aligned group: sentence indices (0-based) of each side; one side empty: a deletion (insertion). */
export interface AlignedGroup {
  src: number[];
  trg: number[];
  cost: number;
}

/** What alignSentences embeds with: unit rows (dim floats each), one per text, in order. */
export interface SentenceEmbedder {
  embed(texts: string[], lang: string | undefined): Promise<Float32Array>;
  dim: number;
  /** How many of the texts the model cuts to its maximum input length (for one warning per document). */
  cutOf?(texts: readonly string[]): number;
}

export interface AlignOptions {
  /** Groups x:y with x + y ≤ maxGroup (vecalign's --alignment_max_size; default 4, at least 2). */
  maxGroup?: number;
  /** The deletion cost: this quantile of random 1:1 costs (vecalign's --del_percentile_frac; default 0.2). */
  delPercentile?: number;
  /** Exact DP over the whole matrix up to maxFullDp² cells (vecalign's --max_size_full_dp; default 300). */
  maxFullDp?: number;
  /** Band half-width beyond ⌈maxGroup/2⌉ for the coarse-to-fine search (vecalign's --search_buffer_size; default 5). */
  searchBuffer?: number;
  /** Sentences of the other document sampled for the normalisation (default 100). */
  normSamples?: number;
  /** Random 1:1 pairs sampled for the deletion cost (default 20000). */
  costSamples?: number;
  /** Seed of the random samples (default 42). */
  seed?: number;
}

const DEFAULTS: Required<AlignOptions> = { maxGroup: 4, delPercentile: 0.2, maxFullDp: 300, searchBuffer: 5, normSamples: 100, costSamples: 20000, seed: 42 };

/** The options with defaults, checked (an error names the option). */
export function alignOptions(o: AlignOptions = {}): Required<AlignOptions> {
  const r = { ...DEFAULTS, ...Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) } as Required<AlignOptions>;
  const int = (k: keyof AlignOptions, min: number, max = Infinity) => {
    const v = r[k];
    if (!Number.isInteger(v) || v < min || v > max) throw new Error(`align: ${k} must be an integer in [${min}, ${max === Infinity ? '∞' : max}], got ${v}`);
  };
  int('maxGroup', 2, 12);
  int('maxFullDp', 2);
  int('searchBuffer', 0);
  int('normSamples', 0);
  int('costSamples', 1);
  int('seed', 0);
  if (!(r.delPercentile >= 0 && r.delPercentile <= 1)) throw new Error(`align: delPercentile must be in [0, 1], got ${r.delPercentile}`);
  return r;
}

/** The non-deletion groups [x, y] with x, y ≥ 1 and x + y ≤ maxGroup, 1:1 first (vecalign's make_alignment_types). */
export function alignmentTypes(maxGroup: number): [number, number][] {
  const out: [number, number][] = [];
  for (let s = 2; s <= maxGroup; s++) for (let x = 1; x < s; x++) out.push([x, s - x]);
  return out;
}

/**
 * The sentence vectors of one document at one resolution: `vecs` rows (unit or zero), and for
 * each overlap size k = 1..K the row of the run of k sentences starting at each position.
 */
interface Side {
  count: number;
  d: number;
  vecs: Float32Array;
  idx: Int32Array[];
  norms: Float32Array[];
}

function dot(a: Float32Array, ao: number, b: Float32Array, bo: number, d: number): number {
  let s = 0;
  for (let t = 0; t < d; t++) s += a[ao + t]! * b[bo + t]!;
  return s;
}

function normalizeRows(v: Float32Array, d: number): void {
  for (let o = 0; o < v.length; o += d) {
    const n = Math.sqrt(dot(v, o, v, o, d));
    if (n > 0 && Number.isFinite(n)) for (let t = 0; t < d; t++) v[o + t]! /= n;
    else v.fill(0, o, o + d);
  }
}

/** The overlap texts of a document (runs of 1..K sentences joined by a space), each embedded once. */
async function embedOverlaps(sents: string[], K: number, embedder: SentenceEmbedder, lang: string | undefined, what: string): Promise<Side> {
  const unique = new Map<string, number>(),
    texts: string[] = [];
  const idx: Int32Array[] = [];
  for (let k = 1; k <= K; k++) {
    const rows = new Int32Array(Math.max(0, sents.length - k + 1));
    for (let s = 0; s + k <= sents.length; s++) {
      const t = k === 1 ? sents[s]! : sents.slice(s, s + k).join(' ');
      let u = unique.get(t);
      if (u === undefined) {
        u = texts.length;
        unique.set(t, u);
        texts.push(t);
      }
      rows[s] = u;
    }
    idx.push(rows);
  }
  const d = embedder.dim;
  let vecs: Float32Array;
  try {
    vecs = await embedder.embed(texts, lang);
  } catch (e) {
    throw new Error(`${what}: ${(e as Error).message}`);
  }
  if (vecs.length !== texts.length * d) throw new Error(`${what}: the embedder gave ${vecs.length} floats for ${texts.length} texts of dimension ${d}`);
  vecs = Float32Array.from(vecs);
  normalizeRows(vecs, d);
  return { count: sents.length, d, vecs, idx, norms: [] };
}

/** vecalign's downsample_vectors on the single sentences: consecutive pairs summed, their mean removed, normalised. */
function halve(s: Side): Side {
  const d = s.d,
    h = s.count >> 1,
    out = new Float32Array(h * d),
    one = s.idx[0]!;
  for (let i = 0; i < h; i++) {
    const a = one[2 * i]! * d,
      b = one[2 * i + 1]! * d;
    for (let t = 0; t < d; t++) out[i * d + t] = s.vecs[a + t]! + s.vecs[b + t]!;
  }
  const mean = new Float64Array(d);
  for (let i = 0; i < h; i++) for (let t = 0; t < d; t++) mean[t]! += out[i * d + t]!;
  for (let i = 0; i < h; i++) for (let t = 0; t < d; t++) out[i * d + t]! -= mean[t]! / h;
  normalizeRows(out, d);
  return { count: h, d, vecs: out, idx: [Int32Array.from({ length: h }, (_, i) => i)], norms: [] };
}

/**
 * vecalign's compute_norms: each overlap vector's 1 − mean cosine against vectors sampled from
 * the other document (ceil(samples / levels) from each of its overlap sizes). The mean cosine is
 * the cosine with the sample's summed vector over its size, so this is one dot product a row.
 */
function setNorms(a: Side, b: Side, samples: number, rng: Rng): void {
  const d = a.d,
    levels = b.idx.filter((r) => r.length > 0);
  const per = levels.length ? Math.ceil(samples / levels.length) : 0;
  const sum = new Float32Array(d);
  let drawn = 0;
  for (const rows of levels) {
    for (let s = 0; s < per; s++) {
      const r = rows[rng.int(rows.length)]! * d;
      for (let t = 0; t < d; t++) sum[t]! += b.vecs[r + t]!;
      drawn++;
    }
  }
  a.norms = a.idx.map((rows) => {
    const out = new Float32Array(rows.length);
    for (let s = 0; s < rows.length; s++) out[s] = drawn ? 1 - dot(a.vecs, rows[s]! * d, sum, 0, d) / drawn : 1;
    return out;
  });
}

function groupCost(a: Side, b: Side, i: number, j: number, dx: number, dy: number): number {
  const ra = a.idx[dx - 1]![i - dx]!,
    rb = b.idx[dy - 1]![j - dy]!;
  const c = dot(a.vecs, ra * a.d, b.vecs, rb * b.d, a.d);
  return (2 * dx * dy * (1 - c)) / (1e-6 + a.norms[dx - 1]![i - dx]! + b.norms[dy - 1]![j - dy]!);
}

/** The deletion cost: the `frac` quantile of the 1:1 costs of random (or, for small documents, all) sentence pairs. */
function deletionPenalty(a: Side, b: Side, samples: number, frac: number, rng: Rng): number {
  const n = a.count,
    m = b.count;
  const costs: number[] = [];
  if (n * m <= samples) {
    for (let i = 1; i <= n; i++) for (let j = 1; j <= m; j++) costs.push(groupCost(a, b, i, j, 1, 1));
  } else for (let s = 0; s < samples; s++) costs.push(groupCost(a, b, 1 + rng.int(n), 1 + rng.int(m), 1, 1));
  costs.sort((x, y) => x - y);
  const pos = frac * (costs.length - 1),
    lo = Math.floor(pos),
    hi = Math.ceil(pos);
  return costs[lo]! + (costs[hi]! - costs[lo]!) * (pos - lo);
}

function costModel(a: Side, b: Side, types: [number, number][], del: number): CostModel {
  const usable = types.filter(([x, y]) => x <= a.idx.length && y <= b.idx.length);
  return { n: a.count, m: b.count, types: usable, cost: (i, j, dx, dy) => groupCost(a, b, i, j, dx, dy), delSrc: () => del, delTrg: () => del };
}

/** What alignVectors did at each resolution (for tests and logs): sizes, cells searched, the deletion cost. */
export interface LevelInfo {
  n: number;
  m: number;
  cells: number;
  deletionCost: number;
  exact: boolean;
}

/**
 * Aligns two documents given as overlap vectors (see alignSentences); `levels` (when given)
 * receives what was done at each resolution, coarsest first.
 */
function alignSides(S: Side, T: Side, o: Required<AlignOptions>, levels?: LevelInfo[]): AlignedGroup[] {
  const types = alignmentTypes(o.maxGroup);
  const rng = new Rng(o.seed);
  const stack: { S: Side; T: Side }[] = [{ S, T }];
  for (;;) {
    const top = stack[stack.length - 1]!;
    if (top.S.count * top.T.count <= o.maxFullDp * o.maxFullDp || Math.min(top.S.count, top.T.count) < 4) break;
    stack.push({ S: halve(top.S), T: halve(top.T) });
  }
  const w = Math.ceil(o.maxGroup / 2) + o.searchBuffer;
  let groups: DpGroup[] = [];
  let prev: { S: Side; T: Side } | null = null;
  for (let k = stack.length - 1; k >= 0; k--) {
    const { S: a, T: b } = stack[k]!;
    setNorms(a, b, o.normSamples, rng);
    setNorms(b, a, o.normSamples, rng);
    const del = deletionPenalty(a, b, o.costSamples, o.delPercentile, rng);
    const model = costModel(a, b, k === 0 ? types : [[1, 1]], del);
    let band: Band;
    if (!prev) band = fullBand(a.count, b.count);
    else band = bandAround(upsampleRanges(pathRanges(groups, prev.S.count, prev.T.count), prev.T.count, a.count, b.count), a.count, b.count, w);
    groups = alignDp(model, band);
    levels?.push({ n: a.count, m: b.count, cells: bandCells(band), deletionCost: del, exact: !prev });
    prev = { S: a, T: b };
    if (k === 0) {
      return groups.map((g) => {
        const nx = g.srcEnd - g.srcStart,
          ny = g.trgEnd - g.trgStart;
        return { src: range(g.srcStart, g.srcEnd), trg: range(g.trgStart, g.trgEnd), cost: nx && ny ? Math.max(0, g.cost / (nx * ny)) : del };
      });
    }
  }
  return [];
}

function range(a: number, b: number): number[] {
  return Array.from({ length: b - a }, (_, i) => a + i);
}

/**
 * Aligns the sentences of a document (src) with those of its translation (trg): groups in
 * document order covering every sentence of both once, each with its cost — the normalised
 * 1 − cos of the group (per sentence pair: vecalign's score) or, for a deletion, the deletion
 * cost. An empty document gives deletions (insertions) of the other one's sentences, cost 0.
 */
export async function alignSentences(
  src: string[],
  trg: string[],
  embedder: SentenceEmbedder,
  opts: AlignOptions & { srcLang?: string; trgLang?: string; levels?: LevelInfo[] } = {},
): Promise<AlignedGroup[]> {
  const o = alignOptions(opts);
  if (!src.length || !trg.length) return [...src.map((_, i) => ({ src: [i], trg: [], cost: 0 })), ...trg.map((_, j) => ({ src: [], trg: [j], cost: 0 }))];
  const types = alignmentTypes(o.maxGroup);
  const kx = Math.max(...types.map((t) => t[0])),
    ky = Math.max(...types.map((t) => t[1]));
  const S = await embedOverlaps(src, kx, embedder, opts.srcLang, 'source document');
  const T = await embedOverlaps(trg, ky, embedder, opts.trgLang, 'target document');
  return alignSides(S, T, o, opts.levels);
}

/**
 * alignSentences over vectors already made: `srcOverlaps[k − 1]` holds the rows of the runs of k
 * source sentences ((n − k + 1) × d, unit rows), the same for the target. For tests and callers
 * with their own embeddings.
 */
export function alignOverlapVectors(
  srcOverlaps: Float32Array[],
  trgOverlaps: Float32Array[],
  d: number,
  opts: AlignOptions & { levels?: LevelInfo[] } = {},
): AlignedGroup[] {
  const o = alignOptions(opts);
  const side = (ov: Float32Array[], what: string): Side => {
    if (!ov.length) throw new Error(`align: no ${what} vectors`);
    const count = ov[0]!.length / d;
    let total = 0;
    ov.forEach((v, k) => {
      if (v.length !== Math.max(0, count - k) * d)
        throw new Error(`align: ${what} overlaps of ${k + 1} sentences: ${v.length / d} rows, expected ${Math.max(0, count - k)}`);
      total += v.length;
    });
    const vecs = new Float32Array(total);
    const idx: Int32Array[] = [];
    let at = 0;
    for (const v of ov) {
      vecs.set(v, at * d);
      idx.push(Int32Array.from({ length: v.length / d }, (_, i) => at + i));
      at += v.length / d;
    }
    normalizeRows(vecs, d);
    return { count, d, vecs, idx, norms: [] };
  };
  const S = side(srcOverlaps, 'source'),
    T = side(trgOverlaps, 'target');
  if (!S.count || !T.count)
    return [...range(0, S.count).map((i) => ({ src: [i], trg: [], cost: 0 })), ...range(0, T.count).map((j) => ({ src: [], trg: [j], cost: 0 }))];
  return alignSides(S, T, o, opts.levels);
}

/** Embedding options of embedderOf (as xling embed's). */
export interface EmbedderOptions {
  center?: boolean | 'force';
  batchTokens?: number;
  batchSentences?: number;
}

/**
 * A SentenceEmbedder over a loaded model (loadSentenceEncoder): texts embedded as xling embed
 * embeds them; a language code centres with the model's mean vector of it (xling embed --lang),
 * undefined identifies it from all the texts of the call ('auto', as xling embed identifies a
 * file's language), 'none' centres nothing. An unknown code is an error naming it. The texts are
 * embedded `chunk` at a time (memory bounded by the chunk, not the document).
 */
export function embedderOf(model: SentenceEncoderModel, o: EmbedderOptions & { chunk?: number } = {}): SentenceEmbedder {
  const center = o.center ?? true,
    chunk = o.chunk ?? 8192;
  return {
    dim: model.dim,
    cutOf: (texts) => linesCut(model.tokenizer, texts),
    async embed(texts, lang) {
      let l = resolveLangOption(lang, model.languages, 'language');
      // 'auto' decided once over all the texts, so that every chunk is centred alike
      if (l === AUTO) l = center === false ? null : model.chooseCenter(AUTO, center, model.identifyLanguage(texts)).lang;
      const out = new Float32Array(texts.length * model.dim);
      for (let at = 0; at < texts.length; at += chunk) {
        const part = texts.slice(at, at + chunk);
        out.set(model.embed(part, { lang: l ?? undefined, center, maxTokens: o.batchTokens, maxSentences: o.batchSentences }), at * model.dim);
        await new Promise((r) => setImmediate(r));
      }
      return out;
    },
  };
}

// The second-stage scorer of mining (Yang et al. 2019, §5): the margin retrieves candidates, a
// small learned classifier re-scores them from what the margin cannot see — both directions'
// margins and ranks, how far a candidate is ahead of its competitors, and the surface agreement
// of the two sentences (src/mine/features.ts), the word alignment (align-features.ts) and,
// optionally, a learned pair model's verdict (pair-model.ts). Logistic regression on standardised
// features, fitted by Newton's method (deterministic, a few iterations); saved as scorer.json (and
// the pair model's pair-model.safetensors beside it).
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isLangCode, matchLangCode } from '../embed/language.js';
import { FaissIndex, SearchResult } from '../index/faiss.js';
import { writeFileAtomicSync } from '../util/atomic.js';
import { pause } from '../util/pause.js';
import { ALIGN_FEATURES, NO_ALIGNMENT, trainWordTables, WordAligner, WordTables } from './align-features.js';
import { SURFACE_FEATURES, surfaceFeatures } from './features.js';
import { marginScore, mineTables, pairProducts, rowMeans } from './mine.js';
import { loadPairModel, PAIR_FEATURES, PairModel, PairModelConfig } from './pair-model.js';

export const KNN_FEATURES = [
  'cos', 'ratio_margin', 'distance_margin', 'src_mean_sim', 'trg_mean_sim',
  'fwd_rank', 'bwd_rank', 'fwd_top1', 'bwd_top1', 'fwd_gap', 'bwd_gap',
] as const;

/**
 * How a candidate's word-level agreement compares with its competitors': the content score
 * (mean of both directions' alignment coverage and best-translation hits) and the alignment
 * log-probability (mean of both directions), each minus the best of the other candidates of the
 * same source (…_gap_src) and of the same target (…_gap_trg). A sentence without a translation
 * whose nearest neighbour is a near-translation of a sibling string loses here to the sibling's
 * own source.
 */
export const COMPETITOR_FEATURES = ['content_gap_src', 'content_gap_trg', 'logprob_gap_src', 'logprob_gap_trg'] as const;

export const FEATURES: readonly string[] = [...KNN_FEATURES, ...SURFACE_FEATURES, ...ALIGN_FEATURES, ...COMPETITOR_FEATURES];

/** The features of a scorer: FEATURES, then PAIR_FEATURES when it has a pair model. */
export function scorerFeatures(withPair: boolean): string[] { return [...FEATURES, ...(withPair ? PAIR_FEATURES : [])]; }

/**
 * Appends PAIR_FEATURES to each candidate's features: the pair model's logit, and that logit
 * minus the best logit of the other candidates of the same source (…_gap_src) and target
 * (…_gap_trg); a candidate without competitors has the gap to -5.
 */
export function addPairFeatures(cands: { src: number; trg: number; features: number[] }[], logits: ArrayLike<number>): void {
  const g = pairColumns(Int32Array.from(cands, (c) => c.src), Int32Array.from(cands, (c) => c.trg), logits);
  // a new array of exactly the new length (push would grow each one by half)
  cands.forEach((c, i) => { c.features = c.features.concat([g[0]![i]!, g[1]![i]!, g[2]![i]!]); });
}

/** PAIR_FEATURES' three columns, in their order, from each candidate's source, target and pair-model logit. */
function pairColumns(src: Int32Array, trg: Int32Array, logits: ArrayLike<number>): ArrayLike<number>[] {
  return [logits, gapsByKey(src, logits, -5), gapsByKey(trg, logits, -5)];
}

const AL0 = KNN_FEATURES.length + SURFACE_FEATURES.length;
const at = (name: (typeof ALIGN_FEATURES)[number]) => AL0 + ALIGN_FEATURES.indexOf(name);
const CONTENT = (['align_fwd_coverage', 'align_bwd_coverage', 'align_fwd_best_hit', 'align_bwd_best_hit'] as const).map(at);
const LOGPROB = (['align_fwd_logprob', 'align_bwd_logprob'] as const).map(at);
const meanOf = (f: number[], idx: number[]) => idx.reduce((a, j) => a + f[j]!, 0) / idx.length;

/**
 * Appends COMPETITOR_FEATURES to each candidate's features (the others in place): a value minus
 * the best value among the other candidates of the same source / target; with no other
 * candidate, minus the value of an empty match (0 content, log 1e-4).
 */
export function addCompetitorFeatures(cands: { src: number; trg: number; features: number[] }[]): void {
  const g = competitorGaps(Int32Array.from(cands, (c) => c.src), Int32Array.from(cands, (c) => c.trg), cands.map((c) => meanOf(c.features, CONTENT)), cands.map((c) => meanOf(c.features, LOGPROB)));
  // a new array of exactly the new length (push would grow each one by half)
  cands.forEach((c, i) => { c.features = c.features.concat([g[0]![i]!, g[1]![i]!, g[2]![i]!, g[3]![i]!]); });
}

/** COMPETITOR_FEATURES' four columns, in their order, from each candidate's source, target, content score and alignment log-probability. */
function competitorGaps(src: Int32Array, trg: Int32Array, content: ArrayLike<number>, logprob: ArrayLike<number>): Float64Array[] {
  return [gapsByKey(src, content, 0), gapsByKey(trg, content, 0), gapsByKey(src, logprob, Math.log(1e-4)), gapsByKey(trg, logprob, Math.log(1e-4))];
}

/**
 * Each candidate's value minus the best value among the other candidates of the same key (its
 * source or its target row); with no other candidate, minus `empty`.
 */
function gapsByKey(keys: Int32Array, values: ArrayLike<number>, empty: number): Float64Array {
  // per key: the best two values (to exclude the candidate itself)
  let nk = 0;
  for (const k of keys) if (k >= nk) nk = k + 1;
  const b0 = new Float64Array(nk).fill(-Infinity), b1 = new Float64Array(nk).fill(-Infinity);
  for (let i = 0; i < keys.length; i++) {
    const v = values[i]!, k = keys[i]!;
    if (v > b0[k]!) { b1[k] = b0[k]!; b0[k] = v; } else if (v > b1[k]!) b1[k] = v;
  }
  const out = new Float64Array(keys.length);
  for (let i = 0; i < keys.length; i++) {
    const v = values[i]!, k = keys[i]!;
    const other = v === b0[k] ? b1[k]! : b0[k]!;
    out[i] = v - (other === -Infinity ? empty : other);
  }
  return out;
}

/** A candidate pair of rows with its margin score (ratio) and cosine. */
export interface ScoredCandidate { src: number; trg: number; cos: number; margin: number; features: number[] }

/** Candidate pairs in columns (row indices and cosine), ordered by source, then target. */
export interface CandidateList { n: number; src: Int32Array; trg: Int32Array; cos: Float32Array }

/**
 * The candidate pairs of two k-NN tables (src→trg and trg→src, best first, exact scores): every
 * source's and every target's neighbours, each pair once (a pair in both tables with the cosine of
 * src→trg), ordered by source and target.
 */
export function enumerateCandidates(fwd: SearchResult, bwd: SearchResult): CandidateList {
  const inFwd = (s: number, t: bigint) => { for (let i = 0; i < fwd.k; i++) if (fwd.labels[s * fwd.k + i]! === t) return true; return false; };
  // the pairs only the backward table has, grouped by source (counting sort)
  const start = new Int32Array(fwd.n + 1);
  const backOnly = (t: number, j: number) => { const l = bwd.labels[t * bwd.k + j]!; return l >= 0n && !inFwd(Number(l), BigInt(t)) ? Number(l) : -1; };
  for (let t = 0; t < bwd.n; t++) for (let j = 0; j < bwd.k; j++) { const s = backOnly(t, j); if (s >= 0) start[s + 1]!++; }
  for (let s = 0; s < fwd.n; s++) start[s + 1]! += start[s]!;
  const bt = new Int32Array(start[fwd.n]!), bc = new Float32Array(start[fwd.n]!), fill = start.slice(0, fwd.n);
  for (let t = 0; t < bwd.n; t++) for (let j = 0; j < bwd.k; j++) { const s = backOnly(t, j); if (s >= 0) { bt[fill[s]!] = t; bc[fill[s]!++] = bwd.distances[t * bwd.k + j]!; } }
  let n = bt.length;
  for (let s = 0; s < fwd.n; s++) for (let j = 0; j < fwd.k; j++) if (fwd.labels[s * fwd.k + j]! >= 0n) n++;
  const out: CandidateList = { n, src: new Int32Array(n), trg: new Int32Array(n), cos: new Float32Array(n) };
  let o = 0;
  const row: { t: number; cos: number }[] = [];
  for (let s = 0; s < fwd.n; s++) {
    row.length = 0;
    for (let j = 0; j < fwd.k; j++) { const l = fwd.labels[s * fwd.k + j]!; if (l >= 0n) row.push({ t: Number(l), cos: fwd.distances[s * fwd.k + j]! }); }
    for (let i = start[s]!; i < start[s + 1]!; i++) row.push({ t: bt[i]!, cos: bc[i]! });
    row.sort((a, b) => a.t - b.t);
    for (const { t, cos } of row) { out.src[o] = s; out.trg[o] = t; out.cos[o++] = cos; }
  }
  return out;
}

/**
 * What a candidate's features before COMPETITOR_FEATURES are computed from: the k-NN tables,
 * their neighbourhood means and every neighbour's ratio margin (for ranks and gaps to the best
 * competitor), the texts and the word aligner.
 */
/** The word aligner of candidates: one for all, one by source row (cross-fitted tables), or none. */
export type Aligners = ((s: number) => WordAligner | null) | WordAligner | null;
const alignerBySource = (a: Aligners): ((s: number) => WordAligner | null) => (typeof a === 'function' ? a : () => a);

function candidateContext(fwd: SearchResult, bwd: SearchResult, srcText: string[], trgText: string[], aligner: Aligners) {
  const alignerOf = alignerBySource(aligner);
  // the neighbourhood means of margin mining: a candidate's ratio_margin is the score xling mine gives it
  const mx = rowMeans(fwd), my = rowMeans(bwd);
  const K = Math.max(fwd.k, bwd.k);
  const ratio = (s: number, t: number, cos: number) => marginScore('ratio', cos, mx[s]!, my[t]!);
  // each table's neighbours' margins, beside their labels
  const margins = (r: SearchResult, fromSrc: boolean) => {
    const m = new Float64Array(r.n * r.k);
    for (let i = 0; i < r.n; i++) for (let j = 0; j < r.k; j++) { const l = r.labels[i * r.k + j]!; if (l >= 0n) m[i * r.k + j] = fromSrc ? ratio(i, Number(l), r.distances[i * r.k + j]!) : ratio(Number(l), i, r.distances[i * r.k + j]!); }
    return m;
  };
  const fm = margins(fwd, true), bm = margins(bwd, false);
  // a candidate's rank among its sentence's other neighbours by margin (K when it is not one of them), and its lead over the best of them
  const rankAndGap = (r: SearchResult, rm: Float64Array, i: number, partner: number, m: number): [number, number] => {
    let rank = 0, best = -Infinity, listed = false;
    for (let j = 0; j < r.k; j++) {
      const l = r.labels[i * r.k + j]!;
      if (l < 0n) continue;
      if (Number(l) === partner) { listed = true; continue; }
      const x = rm[i * r.k + j]!;
      if (x > m) rank++;
      if (x > best) best = x;
    }
    if (!listed) rank = Math.max(rank, K);
    return [rank, best === -Infinity ? 1 : m - best];
  };
  /** KNN_FEATURES, SURFACE_FEATURES and ALIGN_FEATURES of the pair (s, t) of cosine `cos`. */
  return (s: number, t: number, cos: number): number[] => {
    const m = ratio(s, t, cos);
    const [fr, fg] = rankAndGap(fwd, fm, s, t, m);
    const [br, bg] = rankAndGap(bwd, bm, t, s, m);
    const knn = [cos, m, cos - (mx[s]! + my[t]!) / 2, mx[s]!, my[t]!, fr / K, br / K, fr === 0 ? 1 : 0, br === 0 ? 1 : 0, fg, bg];
    const al = alignerOf(s);
    // concat, not spread: an array of exactly its length (a spread one keeps room to grow, in every candidate)
    return knn.concat(surfaceFeatures(srcText[s]!, trgText[t]!), al ? al.features(srcText[s]!, trgText[t]!) : NO_ALIGNMENT);
  };
}

/**
 * The candidate pairs of two k-NN tables (see enumerateCandidates) with their features (FEATURES),
 * ordered by source and target. For training a scorer; mining scores them without keeping their
 * features (scoreCandidates).
 */
export function candidatePairs(fwd: SearchResult, bwd: SearchResult, srcText: string[], trgText: string[], aligner: Aligners = null, onProgress?: (done: number, total: number) => void): ScoredCandidate[] {
  const c = enumerateCandidates(fwd, bwd), featuresOf = candidateContext(fwd, bwd, srcText, trgText, aligner);
  const out: ScoredCandidate[] = [];
  for (let i = 0; i < c.n; i++) {
    if (onProgress && i % 4096 === 0) onProgress(i, c.n);
    const f = featuresOf(c.src[i]!, c.trg[i]!, c.cos[i]!);
    out.push({ src: c.src[i]!, trg: c.trg[i]!, cos: c.cos[i]!, margin: f[1]!, features: f });
  }
  addCompetitorFeatures(out);
  onProgress?.(c.n, c.n);
  return out;
}

/**
 * The candidates of two k-NN tables (enumerateCandidates) scored by the scorer, without keeping
 * their features (`logits`: the pair model's, when it has one): each
 * candidate's logit is summed feature by feature as scoreCandidate sums it (the same probability to
 * the bit), with what the competitor and pair features need kept aside — about 60 bytes a candidate
 * instead of its 48 features' half a kilobyte. (This relies on the scorer being linear in its
 * features, which it is: logistic regression.)
 */
export async function scoreCandidates(fwd: SearchResult, bwd: SearchResult, c: CandidateList, srcText: string[], trgText: string[], m: ScorerModel, o: { aligner?: Aligners; logits?: ArrayLike<number>; onProgress?: (done: number, total: number) => void } = {}): Promise<{ margin: Float64Array; prob: Float64Array }> {
  const featuresOf = candidateContext(fwd, bwd, srcText, trgText, o.aligner ?? null);
  if (m.pair && !o.logits) throw new Error('scoreCandidates: the scorer has a pair model; give its logits');
  const z = new Float64Array(c.n), margin = new Float64Array(c.n), content = new Float64Array(c.n), logprob = new Float64Array(c.n);
  // one term of the logit, in scoreCandidate's order
  const term = (j: number, x: number) => m.weights[j]! * ((x - m.mean[j]!) / m.std[j]!);
  for (let i = 0; i < c.n; i++) {
    if (i % 4096 === 0) { o.onProgress?.(i, c.n); if (i) await pause(); }
    const f = featuresOf(c.src[i]!, c.trg[i]!, c.cos[i]!);
    let s = m.bias;
    for (let j = 0; j < f.length; j++) s += term(j, f[j]!);
    z[i] = s; margin[i] = f[1]!; content[i] = meanOf(f, CONTENT); logprob[i] = meanOf(f, LOGPROB);
  }
  o.onProgress?.(c.n, c.n);
  const add = (j0: number, cols: ArrayLike<number>[]) => { for (let i = 0; i < c.n; i++) { let s = z[i]!; cols.forEach((col, j) => { s += term(j0 + j, col[i]!); }); z[i] = s; } };
  add(FEATURES.length - COMPETITOR_FEATURES.length, competitorGaps(c.src, c.trg, content, logprob));
  if (m.pair) add(FEATURES.length, pairColumns(c.src, c.trg, o.logits!));
  return { margin, prob: z.map(sigmoid) };
}

export interface ScorerModel {
  format: 'xling-scorer';
  version: 1;
  features: string[];
  mean: number[];
  std: number[];
  weights: number[];
  bias: number;
  /** Neighbours per direction the candidates were retrieved with (mining with the scorer uses the same). */
  k: number;
  /** How it was trained: data, pairs, positives, held-out accuracy. */
  trained: Record<string, unknown>;
  /** Word translation tables by language pair ("de-en"), for the alignment features. */
  tables: Record<string, WordTables>;
  /** The pair model (src/mine/pair-model.ts) whose logits are PAIR_FEATURES: its file beside scorer.json, config and training. */
  pair?: { file: string; config: PairModelConfig; trained: Record<string, unknown> };
  /** The pair model itself, when loaded (in memory only). */
  pairModel?: PairModel;
  /**
   * The regression for a run's second pass with word tables trained on its own pairs (SelfTables):
   * the same features, fitted on the training sets' candidates with such tables (selfTablesFeatures),
   * which a run with it then cross-fits by source (crossFittedTables). Tables a run trains on its
   * pairs are not the tables the first regression was fitted with; scored by the first regression its
   * probabilities on such pairs are far too high (bench/RESULTS.md, "The self-tables regression").
   * Fitted by xling scorer train with the setting selfHead (opt-in: better calibrated in its training domain,
   * worse ranking off it); absent, a run keeps tables from all the pairs and the first regression.
   */
  self?: SelfHead;
}

/** A second logistic regression over the scorer's features (ScorerModel.self). */
export interface SelfHead { mean: number[]; std: number[]; weights: number[]; bias: number; trained: Record<string, unknown> }

/** The scorer with its self-tables regression in place of the first, where it has one. */
export function withSelfHead(m: ScorerModel): ScorerModel {
  return m.self ? { ...m, mean: m.self.mean, std: m.self.std, weights: m.self.weights, bias: m.self.bias } : m;
}

/**
 * Candidates with their ALIGN_FEATURES recomputed by another aligner (null: NO_ALIGNMENT, as
 * without tables) and their COMPETITOR_FEATURES after them; the other features are kept.
 */
export function realign(cands: ScoredCandidate[], srcText: string[], trgText: string[], aligner: Aligners): ScoredCandidate[] {
  const alignerOf = alignerBySource(aligner);
  const out = cands.map((c) => { const al = alignerOf(c.src); return { ...c, features: c.features.slice(0, AL0).concat(al ? al.features(srcText[c.src]!, trgText[c.trg]!) : NO_ALIGNMENT) }; });
  addCompetitorFeatures(out);
  // the features after the competitor ones (the pair model's) as they were
  const tail = FEATURES.length;
  out.forEach((c, i) => { c.features = c.features.concat(cands[i]!.features.slice(tail)); });
  return out;
}

/**
 * What a mining run with self-trained tables (mineWithScorer's selfTables) makes of one set's
 * candidates: scored by `m` without tables, word tables trained on the one-to-one pairs scored at
 * least the threshold, cross-fitted by source (crossFittedTables, as mining does for a scorer with
 * this regression), and the candidates realigned with them — the features the self-tables
 * regression is fitted on. Null when fewer than minPairs pairs (mining then keeps its first pass).
 */
export function selfTablesFeatures(cands: ScoredCandidate[], srcText: string[], trgText: string[], m: ScorerModel, o: SelfTables = {}): { cands: ScoredCandidate[]; pairs: number } | null {
  const bare = realign(cands, srcText, trgText, null);
  const scored = bare.map((c) => ({ src: c.src, trg: c.trg, margin: c.margin, prob: scoreCandidate(m, c.features) }));
  const pairs = tablePairs(assignOneToOne(scored).filter((x) => x.prob >= (o.threshold ?? SELF_TABLES.threshold)), o);
  if (!pairs) return null;
  return { cands: realign(cands, srcText, trgText, crossFittedTables(pairs.map((x) => [x.src, x.trg]), srcText, trgText)), pairs: pairs.length };
}

/** Candidate pairs' logits by the scorer's pair model (see pairLogits; the words are embedded by the caller's sentence encoder). */
export type PairLogitsFn = (src: number[], trg: number[]) => Promise<Float32Array>;

/**
 * The word aligner of a scorer for a language pair, and why there is none: the languages were not
 * named (or named as 'auto'), or the scorer has no tables for that pair. Codes are matched as the
 * model's language options are (matchLangCode: `pt-BR` finds a `pt_br-en` table, `de_at` finds
 * `de-en`). Without tables the alignment features keep their empty values (NO_ALIGNMENT) and the
 * scorer ranks on the others — worse, so callers say so.
 */
export function scorerTables(m: ScorerModel, srcLang: string | undefined, trgLang: string | undefined, o: { selfTables?: boolean } = {}): { aligner: WordAligner | null; missing: string | null } {
  const have = Object.keys(m.tables).sort();
  const list = have.length ? `it has ${have.length > 12 ? `${have.slice(0, 12).join(' ')} … (${have.length})` : have.join(' ')}` : 'it has none';
  const off = o.selfTables
    ? "word tables are trained on this run's own pairs instead (the settings' selfTables; false leaves its word-alignment features empty)"
    : 'its word-alignment features are left empty and it ranks on the others (lower precision)';
  if (!srcLang || !trgLang || !isLangCode(srcLang) || !isLangCode(trgLang)) return { aligner: null, missing: `the scorer's word tables are by language pair (${list}): give --src-lang and --trg-lang as language codes to use them; without them ${off}` };
  // "src-trg" keys: the source language among the keys' sources, then the target among its targets
  const split = have.map((k) => { const i = k.indexOf('-'); return { key: k, src: k.slice(0, i), trg: k.slice(i + 1) }; });
  const src = matchLangCode(srcLang, split.map((x) => x.src));
  const trg = src === null ? null : matchLangCode(trgLang, split.filter((x) => x.src === src).map((x) => x.trg));
  const found = split.find((x) => x.src === src && x.trg === trg);
  if (!found) return { aligner: null, missing: `the scorer has no word tables for ${srcLang}-${trgLang} (${list}): ${off}; train it with that pair (xling scorer train --parallel TSV --pairs ${srcLang}-${trgLang})` };
  return { aligner: new WordAligner(m.tables[found.key]!), missing: null };
}

/**
 * How a scorer scores one language pair: its word aligner for the pair, or, where it has none and
 * `selfTables` is on, the settings of the tables a run trains on its own pairs; `say` gets what is
 * missing and what the self-trained tables learnt from; wordTables() says, once scoring is done,
 * whose tables were used: 'scorer', 'self (N pairs)' or 'none'. What xling mine, eval bucc, scorer
 * score and the merge of cluster mine score with.
 */
export function scoringOfPair(m: ScorerModel, srcLang: string | undefined, trgLang: string | undefined, o: { selfTables?: boolean; say: (line: string) => void; onProgress?: SelfTables['onProgress'] }): { aligner: WordAligner | null; selfTables: SelfTables | null; wordTables: () => string } {
  const tables = scorerTables(m, srcLang, trgLang, o);
  if (tables.missing) o.say(`${o.selfTables ? 'note' : 'warning'}: ${tables.missing}`);
  const { threshold, minPairs } = SELF_TABLES;
  let selfPairs: number | null = null;
  const selfTables: SelfTables | null = !tables.aligner && o.selfTables ? {
    onProgress: o.onProgress,
    onTables: (n, found) => { selfPairs = n; o.say(n === null
      ? `${found} pairs scored ≥ ${threshold} without word tables, fewer than ${minPairs}: too few to train them on; scored without`
      : `training word tables on ${n === found ? `the ${n}` : `the ${n} most probable of the ${found}`} pairs scored ≥ ${threshold} without them, then scoring again with them${m.self ? " (cross-fitted by source: each half of the sources aligned by the other half's tables; the scorer's self-tables regression)" : ''}`); },
  } : null;
  return { aligner: tables.aligner, selfTables, wordTables: () => (tables.aligner ? 'scorer' : selfPairs ? `self (${selfPairs} pairs)` : 'none') };
}

const sigmoid = (z: number) => (z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z)));

/**
 * Logistic regression by Newton's method (IRLS) with an L2 penalty `l2` on the weights (not the
 * bias), on features standardised by their mean and deviation. Deterministic.
 */
export function fitLogistic(x: number[][], y: number[], o: { l2?: number; iterations?: number } = {}): { mean: number[]; std: number[]; weights: number[]; bias: number } {
  const n = x.length;
  if (!n) throw new Error('scorer: no training pairs');
  const d = x[0]!.length;
  const l2 = o.l2 ?? 1e-2;
  const mean = Array.from({ length: d }, (_, j) => x.reduce((a, r) => a + r[j]!, 0) / n);
  const std = Array.from({ length: d }, (_, j) => { const v = x.reduce((a, r) => a + (r[j]! - mean[j]!) ** 2, 0) / n; return v > 1e-12 ? Math.sqrt(v) : 1; });
  const z = x.map((r) => [1, ...r.map((v, j) => (v - mean[j]!) / std[j]!)]);
  const D = d + 1;
  let w = new Array<number>(D).fill(0);
  for (let it = 0; it < (o.iterations ?? 30); it++) {
    const g = new Array<number>(D).fill(0);
    const H = Array.from({ length: D }, () => new Array<number>(D).fill(0));
    for (let i = 0; i < n; i++) {
      const zi = z[i]!;
      let s = 0;
      for (let j = 0; j < D; j++) s += w[j]! * zi[j]!;
      const p = sigmoid(s), r = p - y[i]!, q = Math.max(p * (1 - p), 1e-9);
      for (let j = 0; j < D; j++) {
        g[j]! += r * zi[j]!;
        const qz = q * zi[j]!;
        const Hj = H[j]!;
        for (let k = j; k < D; k++) Hj[k]! += qz * zi[k]!;
      }
    }
    for (let j = 1; j < D; j++) { g[j]! += l2 * n * w[j]!; H[j]![j]! += l2 * n; }
    for (let j = 0; j < D; j++) for (let k = 0; k < j; k++) H[j]![k] = H[k]![j]!;
    const step = solve(H, g);
    let change = 0;
    w = w.map((v, j) => { change = Math.max(change, Math.abs(step[j]!)); return v - step[j]!; });
    if (change < 1e-8) break;
  }
  return { mean, std, weights: w.slice(1), bias: w[0]! };
}

/** Solves A x = b (A symmetric positive definite) by Gaussian elimination with partial pivoting. */
function solve(A: number[][], b: number[]): number[] {
  const n = b.length;
  const M = A.map((r, i) => [...r, b[i]!]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(M[r]![c]!) > Math.abs(M[p]![c]!)) p = r;
    [M[c], M[p]] = [M[p]!, M[c]!];
    const piv = M[c]![c]!;
    if (Math.abs(piv) < 1e-300) continue;
    for (let r = c + 1; r < n; r++) {
      const f = M[r]![c]! / piv;
      if (f === 0) continue;
      for (let k = c; k <= n; k++) M[r]![k]! -= f * M[c]![k]!;
    }
  }
  const x = new Array<number>(n).fill(0);
  for (let r = n - 1; r >= 0; r--) {
    let s = M[r]![n]!;
    for (let k = r + 1; k < n; k++) s -= M[r]![k]! * x[k]!;
    x[r] = Math.abs(M[r]![r]!) < 1e-300 ? 0 : s / M[r]![r]!;
  }
  return x;
}

/** The probability that a candidate is a translation pair. */
export function scoreCandidate(m: ScorerModel, features: number[]): number {
  let s = m.bias;
  for (let j = 0; j < m.weights.length; j++) s += m.weights[j]! * ((features[j]! - m.mean[j]!) / m.std[j]!);
  return sigmoid(s);
}

/** How mined pairs are assigned one to one: greedily by probability, or greedily and then improved by exchanges (see improveAssignment). */
export type Assignment = 'greedy' | 'exchange';

export type Picked = { src: number; trg: number; prob: number; margin: number; cos: number };

/**
 * Mined pairs by the scorer: every candidate scored, then a one-to-one assignment (each sentence
 * used at most once, as the BUCC task and the 'max' retrieval of margin mining assume): greedy by
 * probability, or ('exchange') greedy then improved by exchanges that raise the summed
 * probability; the pairs at or above threshold, best first.
 */
export function selectByScorer(cands: ScoredCandidate[], m: ScorerModel, threshold = 0, assignment: Assignment = 'greedy'): Picked[] {
  const scored = cands.map((c) => ({ src: c.src, trg: c.trg, prob: scoreCandidate(m, c.features), margin: c.margin, cos: c.cos }));
  return assignOneToOne(scored, assignment).filter((c) => c.prob >= threshold);
}

/** One-to-one pairs of scored candidates (see selectByScorer), best first. */
export function assignOneToOne<T extends { src: number; trg: number; prob: number; margin: number }>(scored: T[], assignment: Assignment = 'greedy'): T[] {
  const col = { src: Int32Array.from(scored, (x) => x.src), trg: Int32Array.from(scored, (x) => x.trg), prob: Float64Array.from(scored, (x) => x.prob), margin: Float64Array.from(scored, (x) => x.margin) };
  const order = bestFirst(col);
  const picked = greedyOneToOne(order, col, -Infinity).map((i) => scored[i]!);
  if (assignment === 'greedy') return picked;
  const bySrc = new Map(picked.map((c) => [c.src, c])), byTrg = new Map(picked.map((c) => [c.trg, c]));
  improveAssignment(Array.from(order, (i) => scored[i]!), bySrc, byTrg);
  // best first again: the exchanges changed which pairs there are, not their order
  const rank = new Map(Array.from(order, (i, r) => [scored[i]!, r]));
  return [...bySrc.values()].sort((a, b) => rank.get(a)! - rank.get(b)!);
}

/** Candidates in columns with their probability and margin: what the one-to-one assignment ranks by. */
interface RankedColumns { src: ArrayLike<number>; trg: ArrayLike<number>; prob: ArrayLike<number>; margin: ArrayLike<number> }

/** The candidates' indices best first: by probability, then margin, then source and target (a total order on distinct pairs). */
function bestFirst(c: RankedColumns): Uint32Array {
  const { src, trg, prob, margin } = c;
  return Uint32Array.from({ length: prob.length }, (_, i) => i).sort((a, b) => prob[b]! - prob[a]! || margin[b]! - margin[a]! || src[a]! - src[b]! || trg[a]! - trg[b]!);
}

/** Greedy one-to-one in `order` (best first): each source and target taken once; stops at the first candidate below `threshold`. */
function greedyOneToOne(order: Uint32Array, c: RankedColumns, threshold: number): number[] {
  const rows = (x: ArrayLike<number>) => { let n = 0; for (let i = 0; i < x.length; i++) if (x[i]! >= n) n = x[i]! + 1; return n; };
  const usedS = new Uint8Array(rows(c.src)), usedT = new Uint8Array(rows(c.trg)), out: number[] = [];
  for (const i of order) {
    // the rest are below the threshold, and cannot take a sentence from a pair above it
    if (c.prob[i]! < threshold) break;
    if (usedS[c.src[i]!] || usedT[c.trg[i]!]) continue;
    usedS[c.src[i]!] = 1; usedT[c.trg[i]!] = 1;
    out.push(i);
  }
  return out;
}

/**
 * Improves a one-to-one assignment in place by exchanges along short alternating paths, each
 * taken when it raises the summed probability: for an assigned pair (s, t) and another candidate
 * (s, t') of its source, t' free or assigned to s', the exchange gives s the target t' and t to
 * s' (when (s', t) is a candidate; s' loses its pair otherwise) or to a free source of t. This
 * undoes the greedy choice that gives a sentence without a translation the target of a sibling
 * string when that target's own source has nowhere else to go.
 */
function improveAssignment<T extends { src: number; trg: number; prob: number }>(cands: T[], bySrc: Map<number, T>, byTrg: Map<number, T>): void {
  const ofSrc = new Map<number, T[]>(), ofTrg = new Map<number, T[]>();
  for (const c of cands) {
    (ofSrc.get(c.src) ?? ofSrc.set(c.src, []).get(c.src)!).push(c);
    (ofTrg.get(c.trg) ?? ofTrg.set(c.trg, []).get(c.trg)!).push(c);
  }
  const assign = (c: T) => { bySrc.set(c.src, c); byTrg.set(c.trg, c); };
  // the best candidate giving target t to a source other than `not` that is free or, if taken, would be left without: [candidate, gain]
  const bestTaker = (t: number, not: number): [T | null, number] => {
    let best: T | null = null, gain = 0;
    for (const c of ofTrg.get(t) ?? []) {
      if (c.src === not) continue;
      const cur = bySrc.get(c.src);
      const g = c.prob - (cur ? cur.prob : 0);
      if (!cur && g > gain) { best = c; gain = g; }
    }
    return [best, gain];
  };
  for (let round = 0, changed = true; changed && round < 20; round++) {
    changed = false;
    for (const c of cands) {
      const cur = bySrc.get(c.src);
      if (!cur || cur === c) continue;
      // move s from t to t' = c.trg
      const other = byTrg.get(c.trg);
      if (other) {
        // exchange: s takes t', s' = other.src takes t (if a candidate) or goes free
        const back = (ofSrc.get(other.src) ?? []).find((x) => x.trg === cur.trg);
        const before = cur.prob + other.prob, after = c.prob + (back ? back.prob : 0);
        if (after > before + 1e-12) {
          bySrc.delete(other.src); byTrg.delete(cur.trg);
          assign(c);
          if (back) assign(back);
          changed = true;
        }
      } else {
        // t' is free: s moves there and t goes to a free source, if that raises the sum
        const [taker, gain] = bestTaker(cur.trg, c.src);
        if (c.prob - cur.prob + gain > 1e-12) {
          byTrg.delete(cur.trg);
          assign(c);
          if (taker) assign(taker);
          changed = true;
        }
      }
    }
  }
}

/**
 * Word tables cross-fitted by source: IBM Model 1 tables (both directions) trained on the pairs whose
 * source row is even and on those whose source is odd; a source's candidates are aligned by the other
 * half's tables, so that no pair is scored by tables that learnt from it (tables trained on a run's
 * own pairs otherwise vouch for the wrong pairs among them too). onProgress: both halves' EM
 * iterations, one after the other.
 */
export function crossFittedTables(pairs: [number, number][], srcText: string[], trgText: string[], onProgress?: (done: number, total: number) => void): (s: number) => WordAligner | null {
  const own = [0, 1].map((f) => pairs.filter(([q]) => q % 2 === f));
  const halves = own.filter((x) => x.length).length;
  let before = 0;
  const folds = own.map((x) => {
    if (!x.length) return null;
    const at = before++;
    return selfTrainedTables(x, srcText, trgText, onProgress && ((d, t) => onProgress(d + at * t, halves * t)));
  });
  return (q) => folds[1 - (q % 2)]!;
}

/** Word tables (both directions, IBM Model 1, entries ≥ SELF_TABLES.minProb) trained on pairs of rows of a run's own sentences. */
function selfTrainedTables(pairs: [number, number][], srcText: string[], trgText: string[], onProgress?: (done: number, total: number) => void): WordAligner {
  return new WordAligner(trainWordTables(pairs.map(([q, t]) => [srcText[q]!, trgText[t]!]), { minProb: SELF_TABLES.minProb, onProgress }));
}

/** Of the first pass's pairs (best first, at or above the threshold), those the tables learn from: at most maxPairs; null when fewer than minPairs. */
function tablePairs<T>(found: T[], o: SelfTables): T[] | null {
  const pairs = found.slice(0, o.maxPairs ?? SELF_TABLES.maxPairs);
  return pairs.length >= (o.minPairs ?? SELF_TABLES.minPairs) ? pairs : null;
}

/** SelfTables' defaults. */
export const SELF_TABLES = { threshold: 0.5, minPairs: 100, maxPairs: 200_000, minProb: 0.05 } as const;

/** Word tables trained on what a corpus's own mining finds, for a scorer that has none for the language pair. */
export interface SelfTables {
  /** Pairs scored at least this without word tables are what the tables learn from (default 0.5). */
  threshold?: number;
  /** Fewer such pairs than this: no tables (default 100). */
  minPairs?: number;
  /** At most this many of them, the most probable (default 200,000: IBM Model 1 learns about 5,000 pairs a second, and its tables are saturated long before). */
  maxPairs?: number;
  /** Said before the tables are trained (pairs: how many they learn from, of `found` scored at least the threshold), or when they are given up (null). */
  onTables?: (pairs: number | null, found: number) => void;
  /** The tables' training: EM iterations done of all. */
  onProgress?: (done: number, total: number) => void;
}

/**
 * Mining with a scorer: both directions' k-NN (the scorer's k; src→trg through `trgIndex` when
 * given, its neighbours rescored exactly; progress by onProgress), the pair
 * model's logits, every candidate scored (scoreCandidates; progress by onCandidates, each pass from
 * 0), then the one-to-one assignment and
 * threshold of selectByScorer — the same pairs, kept in columns rather than as objects. What xling
 * mine --scorer and xling eval bucc --scorer run.
 *
 * `selfTables` (without `aligner`): the candidates are scored twice — first without word tables,
 * then with tables trained (trainWordTables, as `xling scorer train --table-min-prob` keeps them) on
 * the one-to-one pairs that the first pass scores at least selfTables.threshold. A scorer with a
 * self-tables regression (ScorerModel.self) cross-fits them by source and scores the second pass by
 * that regression, as it was fitted; an older one trains them on all the pairs (better than
 * cross-fitting for its first regression, on game dialogue) and keeps its first regression. See
 * bench/RESULTS.md ("Word tables from the run's own pairs", "The self-tables regression").
 */
export async function mineWithScorer(src: Float32Array, trg: Float32Array, d: number, srcText: string[], trgText: string[], m: ScorerModel, o: ScoringOptions & { k?: number; threshold?: number; assignment?: Assignment; trgIndex?: FaissIndex; chunk?: number; onProgress?: (done: number, total: number) => void } = {}): Promise<Picked[]> {
  const { fwd, bwd } = mineTables(src, trg, d, { k: o.k ?? m.k, trgIndex: o.trgIndex, chunk: o.chunk, onProgress: o.onProgress });
  return mineTablesWithScorer(fwd, bwd, srcText, trgText, m, o);
}

/** mineWithScorer from both directions' k-NN tables already searched (the merge of xling cluster mine, whose shards search them). */
export async function mineTablesWithScorer(fwd: SearchResult, bwd: SearchResult, srcText: string[], trgText: string[], m: ScorerModel, o: ScoringOptions & { threshold?: number; assignment?: Assignment } = {}): Promise<Picked[]> {
  const c = enumerateCandidates(fwd, bwd);
  const r = await scoreWithScorer(fwd, bwd, c, srcText, trgText, m, o);
  return greedyPairs(c, r.prob, r.margin, o.threshold ?? 0, o.assignment).map((i) => pickOf(c, r, i));
}

/** How candidates are scored: the word tables (or self-trained ones), the pair model's logits, progress of each pass over the candidates. */
export interface ScoringOptions { aligner?: WordAligner | null; selfTables?: SelfTables | null; pairLogits?: PairLogitsFn; onCandidates?: (done: number, total: number, pass: number) => void }

/**
 * The candidates `c` of two k-NN tables scored by the scorer (see mineWithScorer): the pair
 * model's logits, then one pass over the candidates' features — or two with self-trained word tables.
 */
async function scoreWithScorer(fwd: SearchResult, bwd: SearchResult, c: CandidateList, srcText: string[], trgText: string[], m: ScorerModel, o: ScoringOptions): Promise<{ margin: Float64Array; prob: Float64Array }> {
  if (m.pair && !o.pairLogits) throw new Error('the scorer has a pair model: give pairLogits');
  const logits = m.pair ? await o.pairLogits!(Array.from(c.src), Array.from(c.trg)) : undefined;
  const self = !o.aligner && o.selfTables ? o.selfTables : null;
  const progress = (pass: number) => (o.onCandidates ? (done: number, total: number) => o.onCandidates!(done, total, pass) : undefined);
  let aligner: Aligners = o.aligner ?? null;
  if (self) {
    const first = await scoreCandidates(fwd, bwd, c, srcText, trgText, m, { logits, onProgress: progress(0) });
    const found = greedyPairs(c, first.prob, first.margin, self.threshold ?? SELF_TABLES.threshold), pairs = tablePairs(found, self);
    if (!pairs) { self.onTables?.(null, found.length); return first; }
    self.onTables?.(pairs.length, found.length);
    // a scorer with a self-tables regression was fitted on tables cross-fitted by source (selfTablesFeatures)
    aligner = (m.self ? crossFittedTables : selfTrainedTables)(pairs.map((i) => [c.src[i]!, c.trg[i]!]), srcText, trgText, self.onProgress);
  }
  // the second pass with self-trained tables: the scorer's regression for them, where it has one
  return scoreCandidates(fwd, bwd, c, srcText, trgText, self ? withSelfHead(m) : m, { aligner, logits, onProgress: progress(self ? 1 : 0) });
}

/**
 * Given pairs scored as mining would score them were they its candidates (a parallel corpus to
 * clean, as Bicleaner and LASER's score mode do): both directions' k-NN over the corpus's own
 * sentences give every given pair its margins, ranks and competitors (the sentences' k nearest; a
 * given pair that is not among them ranks k), then scoreWithScorer. Pair i is src row gSrc[i] ↔ trg
 * row gTrg[i]; its cosine is the vectors' inner product, as the k-NN's.
 */
export async function scoreGivenPairs(src: Float32Array, trg: Float32Array, d: number, srcText: string[], trgText: string[], gSrc: Int32Array, gTrg: Int32Array, m: ScorerModel, o: ScoringOptions & { k?: number; chunk?: number; onProgress?: (done: number, total: number) => void } = {}): Promise<{ prob: Float64Array; margin: Float64Array; cos: Float32Array }> {
  const { fwd, bwd } = mineTables(src, trg, d, { k: o.k ?? m.k, chunk: o.chunk, onProgress: o.onProgress });
  const knn = enumerateCandidates(fwd, bwd);
  const at = new Map<number, number>();
  const key = (s: number, t: number) => s * trgText.length + t;
  for (let i = 0; i < knn.n; i++) at.set(key(knn.src[i]!, knn.trg[i]!), i);
  // the given pairs not among the candidates are appended to them (each once; the list is then not
  // in source order, which scoring does not need)
  const extra: number[] = [];
  const index = new Int32Array(gSrc.length);
  for (let i = 0; i < gSrc.length; i++) {
    const kk = key(gSrc[i]!, gTrg[i]!);
    let j = at.get(kk);
    if (j === undefined) { j = knn.n + extra.length; at.set(kk, j); extra.push(i); }
    index[i] = j;
  }
  const n = knn.n + extra.length;
  const c: CandidateList = { n, src: new Int32Array(n), trg: new Int32Array(n), cos: new Float32Array(n) };
  c.src.set(knn.src); c.trg.set(knn.trg); c.cos.set(knn.cos);
  const cos = pairProducts(src, trg, d, extra.map((i) => gSrc[i]!), extra.map((i) => gTrg[i]!));
  extra.forEach((i, e) => { c.src[knn.n + e] = gSrc[i]!; c.trg[knn.n + e] = gTrg[i]!; c.cos[knn.n + e] = cos[e]!; });
  const r = await scoreWithScorer(fwd, bwd, c, srcText, trgText, m, o);
  return { prob: Float64Array.from(index, (j) => r.prob[j]!), margin: Float64Array.from(index, (j) => r.margin[j]!), cos: Float32Array.from(index, (j) => c.cos[j]!) };
}

const pickOf = (c: CandidateList, r: { prob: Float64Array; margin: Float64Array }, i: number): Picked => ({ src: c.src[i]!, trg: c.trg[i]!, prob: r.prob[i]!, margin: r.margin[i]!, cos: c.cos[i]! });

/** The candidates (indices) that assignOneToOne keeps at or above `threshold`, best first, without an object per candidate for the greedy assignment. */
function greedyPairs(c: CandidateList, prob: Float64Array, margin: Float64Array, threshold: number, assignment: Assignment = 'greedy'): number[] {
  if (assignment === 'exchange') {
    const scored = Array.from({ length: c.n }, (_, i) => ({ i, src: c.src[i]!, trg: c.trg[i]!, prob: prob[i]!, margin: margin[i]! }));
    return assignOneToOne(scored, 'exchange').filter((x) => x.prob >= threshold).map((x) => x.i);
  }
  const col = { src: c.src, trg: c.trg, prob, margin };
  return greedyOneToOne(bestFirst(col), col, threshold);
}

/** Fits a scorer on labelled candidates (label 1: a gold pair). */
export function trainScorer(cands: ScoredCandidate[], labels: number[], k: number, trained: Record<string, unknown>, o: { l2?: number; tables?: Record<string, WordTables>; pair?: ScorerModel['pair']; pairModel?: PairModel } = {}): ScorerModel {
  const pos = labels.reduce((a, b) => a + b, 0);
  if (!pos || pos === labels.length) throw new Error(`scorer: the training candidates need both gold pairs and wrong ones (got ${pos} of ${labels.length} gold)`);
  const features = scorerFeatures(!!o.pair);
  if (cands.some((c) => c.features.length !== features.length)) throw new Error(`scorer: every candidate needs ${features.length} features${o.pair ? ' (with the pair model\'s)' : ''}`);
  const f = fitLogistic(cands.map((c) => c.features), labels, o);
  return { format: 'xling-scorer', version: 1, features, ...f, k, trained: { ...trained, candidates: cands.length, positives: pos }, tables: o.tables ?? {}, ...(o.pair ? { pair: o.pair, pairModel: o.pairModel } : {}) };
}

export function saveScorer(dir: string, m: ScorerModel): void {
  mkdirSync(dir, { recursive: true });
  // the word tables on one line (indented, their number triples would be most of the file)
  const { tables, pairModel: _, ...rest } = m;
  const head = JSON.stringify(rest, null, 1);
  writeFileAtomicSync(join(dir, 'scorer.json'), `${head.slice(0, -2)},\n "tables": ${JSON.stringify(tables)}\n}\n`);
}

/** Reads a scorer directory (or its scorer.json); refuses another format or other features. */
export function loadScorer(path: string): ScorerModel {
  const f = existsSync(path) && statSync(path).isDirectory() ? join(path, 'scorer.json') : path;
  if (!existsSync(f)) throw new Error(`${path}: not a scorer (no scorer.json; make one with xling scorer train)`);
  let m: ScorerModel;
  try { m = JSON.parse(readFileSync(f, 'utf8')) as ScorerModel; } catch (e) { throw new Error(`${f}: invalid JSON: ${(e as Error).message}`); }
  if (m.format !== 'xling-scorer' || m.version !== 1) throw new Error(`${f}: not an xling scorer (format ${JSON.stringify(m.format)}, version ${JSON.stringify(m.version)})`);
  if (m.pair !== undefined && (typeof m.pair !== 'object' || m.pair === null || typeof m.pair.file !== 'string' || !/^[\w.-]+$/.test(m.pair.file))) throw new Error(`${f}: 'pair' must name its pair model's file beside scorer.json`);
  const want = scorerFeatures(!!m.pair);
  const same = Array.isArray(m.features) && m.features.length === want.length && m.features.every((x, i) => x === want[i]);
  if (!same) throw new Error(`${f}: made with other features (${String(m.features?.length)}; this xling computes ${want.length}); train it again`);
  // a regression: its standardisation and weights, one per feature, and its bias
  const checkRegression = (r: Record<string, unknown>, at: string) => {
    for (const key of ['mean', 'std', 'weights'] as const) {
      const v = r[key];
      if (!Array.isArray(v) || v.length !== want.length || !v.every((x) => typeof x === 'number' && Number.isFinite(x))) throw new Error(`${f}: '${at}${key}' must hold ${want.length} finite numbers`);
    }
    if (typeof r.bias !== 'number' || !Number.isFinite(r.bias)) throw new Error(`${f}: '${at}bias' must be a finite number`);
  };
  checkRegression(m as unknown as Record<string, unknown>, '');
  if (m.self !== undefined) {
    if (typeof m.self !== 'object' || m.self === null) throw new Error(`${f}: 'self' must be an object (the self-tables regression)`);
    checkRegression(m.self as unknown as Record<string, unknown>, 'self.');
  }
  if (!Number.isInteger(m.k) || m.k < 1) throw new Error(`${f}: 'k' must be a positive integer`);
  if (typeof m.tables !== 'object' || m.tables === null || Array.isArray(m.tables)) throw new Error(`${f}: 'tables' must be an object of word translation tables by language pair`);
  for (const [pair, t] of Object.entries(m.tables)) if (!Array.isArray(t?.src_words) || !Array.isArray(t?.trg_words) || !Array.isArray(t?.fwd) || !Array.isArray(t?.bwd)) throw new Error(`${f}: tables['${pair}'] is not a word translation table (src_words, trg_words, fwd, bwd)`);
  if (m.pair) {
    const pf = join(dirname(f), m.pair.file);
    if (!existsSync(pf)) throw new Error(`${f}: its pair model ${pf} is missing (a scorer directory is scorer.json and ${m.pair.file} together)`);
    m.pairModel = loadPairModel(pf);
    m.pair.config = m.pairModel.config;
  }
  return m;
}

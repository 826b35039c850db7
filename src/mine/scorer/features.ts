// The second-stage scorer's features (Yang et al. 2019, §5): what the margin cannot see — both
// directions' margins and ranks, how far a candidate is ahead of its competitors, the surface
// agreement of the two sentences (src/mine/features.ts), the word alignment (word-align/features.ts) and,
// optionally, the pair model's verdict (pair-model.ts) — and the candidate pairs of two k-NN tables.
import { SearchResult } from '../../index/faiss.js';
import { ALIGN_FEATURES, NO_ALIGNMENT, WordAligner } from './word-align/features.js';
import { SURFACE_FEATURES, surfaceFeatures } from '../features.js';
import { marginScore, rowMeans } from '../mine.js';
import { PAIR_FEATURES } from './pair-model.js';

export const KNN_FEATURES = [
  'cos',
  'ratio_margin',
  'distance_margin',
  'src_mean_sim',
  'trg_mean_sim',
  'fwd_rank',
  'bwd_rank',
  'fwd_top1',
  'bwd_top1',
  'fwd_gap',
  'bwd_gap',
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
export function scorerFeatures(withPair: boolean): string[] {
  return [...FEATURES, ...(withPair ? PAIR_FEATURES : [])];
}

/**
 * Appends PAIR_FEATURES to each candidate's features: the pair model's logit, and that logit
 * minus the best logit of the other candidates of the same source (…_gap_src) and target
 * (…_gap_trg); a candidate without competitors has the gap to -5.
 */
export function addPairFeatures(cands: { src: number; trg: number; features: number[] }[], logits: ArrayLike<number>): void {
  const g = pairColumns(
    Int32Array.from(cands, (c) => c.src),
    Int32Array.from(cands, (c) => c.trg),
    logits,
  );
  // a new array of exactly the new length (push would grow each one by half)
  cands.forEach((c, i) => {
    c.features = c.features.concat([g[0]![i]!, g[1]![i]!, g[2]![i]!]);
  });
}

/** PAIR_FEATURES' three columns, in their order, from each candidate's source, target and pair-model logit. */
export function pairColumns(src: Int32Array, trg: Int32Array, logits: ArrayLike<number>): ArrayLike<number>[] {
  return [logits, gapsByKey(src, logits, -5), gapsByKey(trg, logits, -5)];
}

export const AL0 = KNN_FEATURES.length + SURFACE_FEATURES.length;
const at = (name: (typeof ALIGN_FEATURES)[number]) => AL0 + ALIGN_FEATURES.indexOf(name);
export const CONTENT = (['align_fwd_coverage', 'align_bwd_coverage', 'align_fwd_best_hit', 'align_bwd_best_hit'] as const).map(at);
export const LOGPROB = (['align_fwd_logprob', 'align_bwd_logprob'] as const).map(at);
export const meanOf = (f: number[], idx: number[]) => idx.reduce((a, j) => a + f[j]!, 0) / idx.length;

/**
 * Appends COMPETITOR_FEATURES to each candidate's features (the others in place): a value minus
 * the best value among the other candidates of the same source / target; with no other
 * candidate, minus the value of an empty match (0 content, log 1e-4).
 */
export function addCompetitorFeatures(cands: { src: number; trg: number; features: number[] }[]): void {
  const g = competitorGaps(
    Int32Array.from(cands, (c) => c.src),
    Int32Array.from(cands, (c) => c.trg),
    cands.map((c) => meanOf(c.features, CONTENT)),
    cands.map((c) => meanOf(c.features, LOGPROB)),
  );
  // a new array of exactly the new length (push would grow each one by half)
  cands.forEach((c, i) => {
    c.features = c.features.concat([g[0]![i]!, g[1]![i]!, g[2]![i]!, g[3]![i]!]);
  });
}

/** COMPETITOR_FEATURES' four columns, in their order, from each candidate's source, target, content score and alignment log-probability. */
export function competitorGaps(src: Int32Array, trg: Int32Array, content: ArrayLike<number>, logprob: ArrayLike<number>): Float64Array[] {
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
  const b0 = new Float64Array(nk).fill(-Infinity),
    b1 = new Float64Array(nk).fill(-Infinity);
  for (let i = 0; i < keys.length; i++) {
    const v = values[i]!,
      k = keys[i]!;
    if (v > b0[k]!) {
      b1[k] = b0[k]!;
      b0[k] = v;
    } else if (v > b1[k]!) b1[k] = v;
  }
  const out = new Float64Array(keys.length);
  for (let i = 0; i < keys.length; i++) {
    const v = values[i]!,
      k = keys[i]!;
    const other = v === b0[k] ? b1[k]! : b0[k]!;
    out[i] = v - (other === -Infinity ? empty : other);
  }
  return out;
}

/** A candidate pair of rows with its margin score (ratio) and cosine. */
export interface ScoredCandidate {
  src: number;
  trg: number;
  cos: number;
  margin: number;
  features: number[];
}

/** Candidate pairs in columns (row indices and cosine), ordered by source, then target. */
export interface CandidateList {
  n: number;
  src: Int32Array;
  trg: Int32Array;
  cos: Float32Array;
}

/**
 * The candidate pairs of two k-NN tables (src→trg and trg→src, best first, exact scores): every
 * source's and every target's neighbours, each pair once (a pair in both tables with the cosine of
 * src→trg), ordered by source and target.
 */
export function enumerateCandidates(fwd: SearchResult, bwd: SearchResult): CandidateList {
  const inFwd = (s: number, t: bigint) => {
    for (let i = 0; i < fwd.k; i++) if (fwd.labels[s * fwd.k + i]! === t) return true;
    return false;
  };
  // the pairs only the backward table has, grouped by source (counting sort)
  const start = new Int32Array(fwd.n + 1);
  const backOnly = (t: number, j: number) => {
    const l = bwd.labels[t * bwd.k + j]!;
    return l >= 0n && !inFwd(Number(l), BigInt(t)) ? Number(l) : -1;
  };
  for (let t = 0; t < bwd.n; t++)
    for (let j = 0; j < bwd.k; j++) {
      const s = backOnly(t, j);
      if (s >= 0) start[s + 1]!++;
    }
  for (let s = 0; s < fwd.n; s++) start[s + 1]! += start[s]!;
  const bt = new Int32Array(start[fwd.n]!),
    bc = new Float32Array(start[fwd.n]!),
    fill = start.slice(0, fwd.n);
  for (let t = 0; t < bwd.n; t++)
    for (let j = 0; j < bwd.k; j++) {
      const s = backOnly(t, j);
      if (s >= 0) {
        bt[fill[s]!] = t;
        bc[fill[s]!++] = bwd.distances[t * bwd.k + j]!;
      }
    }
  let n = bt.length;
  for (let s = 0; s < fwd.n; s++) for (let j = 0; j < fwd.k; j++) if (fwd.labels[s * fwd.k + j]! >= 0n) n++;
  const out: CandidateList = { n, src: new Int32Array(n), trg: new Int32Array(n), cos: new Float32Array(n) };
  let o = 0;
  const row: { t: number; cos: number }[] = [];
  for (let s = 0; s < fwd.n; s++) {
    row.length = 0;
    for (let j = 0; j < fwd.k; j++) {
      const l = fwd.labels[s * fwd.k + j]!;
      if (l >= 0n) row.push({ t: Number(l), cos: fwd.distances[s * fwd.k + j]! });
    }
    for (let i = start[s]!; i < start[s + 1]!; i++) row.push({ t: bt[i]!, cos: bc[i]! });
    row.sort((a, b) => a.t - b.t);
    for (const { t, cos } of row) {
      out.src[o] = s;
      out.trg[o] = t;
      out.cos[o++] = cos;
    }
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
export const alignerBySource = (a: Aligners): ((s: number) => WordAligner | null) => (typeof a === 'function' ? a : () => a);

export function candidateContext(fwd: SearchResult, bwd: SearchResult, srcText: string[], trgText: string[], aligner: Aligners) {
  const alignerOf = alignerBySource(aligner);
  // the neighbourhood means of margin mining: a candidate's ratio_margin is the score xling mine gives it
  const mx = rowMeans(fwd),
    my = rowMeans(bwd);
  const K = Math.max(fwd.k, bwd.k);
  const ratio = (s: number, t: number, cos: number) => marginScore('ratio', cos, mx[s]!, my[t]!);
  // each table's neighbours' margins, beside their labels
  const margins = (r: SearchResult, fromSrc: boolean) => {
    const m = new Float64Array(r.n * r.k);
    for (let i = 0; i < r.n; i++)
      for (let j = 0; j < r.k; j++) {
        const l = r.labels[i * r.k + j]!;
        if (l >= 0n) m[i * r.k + j] = fromSrc ? ratio(i, Number(l), r.distances[i * r.k + j]!) : ratio(Number(l), i, r.distances[i * r.k + j]!);
      }
    return m;
  };
  const fm = margins(fwd, true),
    bm = margins(bwd, false);
  // a candidate's rank among its sentence's other neighbours by margin (K when it is not one of them), and its lead over the best of them
  const rankAndGap = (r: SearchResult, rm: Float64Array, i: number, partner: number, m: number): [number, number] => {
    let rank = 0,
      best = -Infinity,
      listed = false;
    for (let j = 0; j < r.k; j++) {
      const l = r.labels[i * r.k + j]!;
      if (l < 0n) continue;
      if (Number(l) === partner) {
        listed = true;
        continue;
      }
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
export function candidatePairs(
  fwd: SearchResult,
  bwd: SearchResult,
  srcText: string[],
  trgText: string[],
  aligner: Aligners = null,
  onProgress?: (done: number, total: number) => void,
): ScoredCandidate[] {
  const c = enumerateCandidates(fwd, bwd),
    featuresOf = candidateContext(fwd, bwd, srcText, trgText, aligner);
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
 * Candidates with their ALIGN_FEATURES recomputed by another aligner (null: NO_ALIGNMENT, as
 * without tables) and their COMPETITOR_FEATURES after them; the other features are kept.
 */
export function realign(cands: ScoredCandidate[], srcText: string[], trgText: string[], aligner: Aligners): ScoredCandidate[] {
  const alignerOf = alignerBySource(aligner);
  const out = cands.map((c) => {
    const al = alignerOf(c.src);
    return { ...c, features: c.features.slice(0, AL0).concat(al ? al.features(srcText[c.src]!, trgText[c.trg]!) : NO_ALIGNMENT) };
  });
  addCompetitorFeatures(out);
  // the features after the competitor ones (the pair model's) as they were
  const tail = FEATURES.length;
  out.forEach((c, i) => {
    c.features = c.features.concat(cands[i]!.features.slice(tail));
  });
  return out;
}

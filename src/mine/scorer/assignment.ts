// Mined pairs one to one (each sentence at most once, as the BUCC task and the 'max' retrieval of
// margin mining assume): greedy by probability, or greedy then improved by exchanges.
import { scoreCandidate } from './logistic.js';
import type { CandidateList, ScoredCandidate } from './features.js';
import type { ScorerModel } from './files.js';

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
  const col = {
    src: Int32Array.from(scored, (x) => x.src),
    trg: Int32Array.from(scored, (x) => x.trg),
    prob: Float64Array.from(scored, (x) => x.prob),
    margin: Float64Array.from(scored, (x) => x.margin),
  };
  const order = bestFirst(col);
  const picked = greedyOneToOne(order, col, -Infinity).map((i) => scored[i]!);
  if (assignment === 'greedy') return picked;
  const bySrc = new Map(picked.map((c) => [c.src, c])),
    byTrg = new Map(picked.map((c) => [c.trg, c]));
  improveAssignment(
    Array.from(order, (i) => scored[i]!),
    bySrc,
    byTrg,
  );
  // best first again: the exchanges changed which pairs there are, not their order
  const rank = new Map(Array.from(order, (i, r) => [scored[i]!, r]));
  return [...bySrc.values()].sort((a, b) => rank.get(a)! - rank.get(b)!);
}

/** Candidates in columns with their probability and margin: what the one-to-one assignment ranks by. */
interface RankedColumns {
  src: ArrayLike<number>;
  trg: ArrayLike<number>;
  prob: ArrayLike<number>;
  margin: ArrayLike<number>;
}

/** The candidates' indices best first: by probability, then margin, then source and target (a total order on distinct pairs). */
export function bestFirst(c: RankedColumns): Uint32Array {
  const { src, trg, prob, margin } = c;
  return Uint32Array.from({ length: prob.length }, (_, i) => i).sort(
    (a, b) => prob[b]! - prob[a]! || margin[b]! - margin[a]! || src[a]! - src[b]! || trg[a]! - trg[b]!,
  );
}

/** Greedy one-to-one in `order` (best first): each source and target taken once; stops at the first candidate below `threshold`. */
export function greedyOneToOne(order: Uint32Array, c: RankedColumns, threshold: number): number[] {
  const rows = (x: ArrayLike<number>) => {
    let n = 0;
    for (let i = 0; i < x.length; i++) if (x[i]! >= n) n = x[i]! + 1;
    return n;
  };
  const usedS = new Uint8Array(rows(c.src)),
    usedT = new Uint8Array(rows(c.trg)),
    out: number[] = [];
  for (const i of order) {
    // the rest are below the threshold, and cannot take a sentence from a pair above it
    if (c.prob[i]! < threshold) break;
    if (usedS[c.src[i]!] || usedT[c.trg[i]!]) continue;
    usedS[c.src[i]!] = 1;
    usedT[c.trg[i]!] = 1;
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
  const ofSrc = new Map<number, T[]>(),
    ofTrg = new Map<number, T[]>();
  for (const c of cands) {
    (ofSrc.get(c.src) ?? ofSrc.set(c.src, []).get(c.src)!).push(c);
    (ofTrg.get(c.trg) ?? ofTrg.set(c.trg, []).get(c.trg)!).push(c);
  }
  const assign = (c: T) => {
    bySrc.set(c.src, c);
    byTrg.set(c.trg, c);
  };
  // the best candidate giving target t to a source other than `not` that is free or, if taken, would be left without: [candidate, gain]
  const bestTaker = (t: number, not: number): [T | null, number] => {
    let best: T | null = null,
      gain = 0;
    for (const c of ofTrg.get(t) ?? []) {
      if (c.src === not) continue;
      const cur = bySrc.get(c.src);
      const g = c.prob - (cur ? cur.prob : 0);
      if (!cur && g > gain) {
        best = c;
        gain = g;
      }
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
        const before = cur.prob + other.prob,
          after = c.prob + (back ? back.prob : 0);
        if (after > before + 1e-12) {
          bySrc.delete(other.src);
          byTrg.delete(cur.trg);
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

/** The candidates (indices) that assignOneToOne keeps at or above `threshold`, best first, without an object per candidate for the greedy assignment. */
export function greedyPairs(c: CandidateList, prob: Float64Array, margin: Float64Array, threshold: number, assignment: Assignment = 'greedy'): number[] {
  if (assignment === 'exchange') {
    const scored = Array.from({ length: c.n }, (_, i) => ({ i, src: c.src[i]!, trg: c.trg[i]!, prob: prob[i]!, margin: margin[i]! }));
    return assignOneToOne(scored, 'exchange')
      .filter((x) => x.prob >= threshold)
      .map((x) => x.i);
  }
  const col = { src: c.src, trg: c.trg, prob, margin };
  return greedyOneToOne(bestFirst(col), col, threshold);
}

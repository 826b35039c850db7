// Scored pairs against gold pairs, as BUCC 2018 evaluates mined candidates (xling eval bucc, the
// scorer's training and its label evaluation): precision/recall/F1 at the F1-optimal threshold
// (the midpoint between the last accepted and the first rejected score), at a given threshold
// (tuned on another split), average precision and the precision–recall curve.
import { prCurve } from './svg.js';

export interface Scored {
  src: string;
  trg: string;
  score: number;
}

export interface PRF {
  precision: number;
  recall: number;
  f1: number;
  threshold: number;
  tp: number;
  predicted: number;
  gold: number;
}

export interface BuccResult extends PRF {
  averagePrecision: number;
  /** [recall, precision] after each candidate in score order. */
  curve: [number, number][];
  /** At each distinct score, best first: P and R of the candidates scoring at least it (for thresholds by target precision). */
  cuts: { threshold: number; precision: number; recall: number }[];
}

function prf(tp: number, predicted: number, gold: number, threshold: number): PRF {
  const precision = predicted ? tp / predicted : 0,
    recall = gold ? tp / gold : 0;
  const f1 = precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
  return { precision, recall, f1, threshold, tp, predicted, gold };
}

/** Gold as a set of "src\ttrg" keys; every gold id must exist among the sentences. */
export function goldSet(gold: [string, string][], srcIds: Set<string>, trgIds: Set<string>, goldName = 'gold'): Set<string> {
  if (!gold.length) throw new Error(`${goldName}: no gold pairs (expected src_id<TAB>trg_id lines)`);
  for (const [s, t] of gold) {
    if (!srcIds.has(s)) throw new Error(`${goldName}: source id '${s}' is not in the source file`);
    if (!trgIds.has(t)) throw new Error(`${goldName}: target id '${t}' is not in the target file`);
  }
  return new Set(gold.map(([s, t]) => `${s}\t${t}`));
}

/** Sweeps all thresholds; returns the F1-optimal point, AP and the PR curve. */
export function evaluateBucc(cands: Scored[], gold: Set<string>): BuccResult {
  if (!gold.size) throw new Error('BUCC evaluation: the gold standard is empty');
  const sorted = [...cands].sort((a, b) => b.score - a.score);
  let tp = 0,
    apSum = 0;
  let bestI = -1,
    best = prf(0, 0, gold.size, Infinity);
  const curve: [number, number][] = [];
  const cuts: BuccResult['cuts'] = [];
  for (let i = 0; i < sorted.length; i++) {
    const c = sorted[i]!;
    // ties: the threshold can only fall between different scores
    if (gold.has(`${c.src}\t${c.trg}`)) {
      tp++;
      apSum += tp / (i + 1);
    }
    curve.push([tp / gold.size, tp / (i + 1)]);
    if (i + 1 < sorted.length && sorted[i + 1]!.score === c.score) continue;
    const r = prf(tp, i + 1, gold.size, NaN);
    cuts.push({ threshold: c.score, precision: r.precision, recall: r.recall });
    if (r.f1 > best.f1) {
      best = r;
      bestI = i;
    }
  }
  const threshold = bestI < 0 ? Infinity : bestI + 1 < sorted.length ? (sorted[bestI]!.score + sorted[bestI + 1]!.score) / 2 : sorted[bestI]!.score;
  return { ...best, threshold, averagePrecision: apSum / gold.size, curve, cuts };
}

/** P/R/F1 of the candidates scoring at least `threshold`. */
export function evaluateAtThreshold(cands: Scored[], gold: Set<string>, threshold: number): PRF {
  let tp = 0,
    n = 0;
  for (const c of cands)
    if (c.score >= threshold) {
      n++;
      if (gold.has(`${c.src}\t${c.trg}`)) tp++;
    }
  return prf(tp, n, gold.size, threshold);
}

/** P, R and F1 in % as the commands say them: "P 93.67  R 95.28  F1 94.47". */
export function prfText(r: { precision: number; recall: number; f1: number }): string {
  return `P ${(100 * r.precision).toFixed(2)}  R ${(100 * r.recall).toFixed(2)}  F1 ${(100 * r.f1).toFixed(2)}`;
}

/** The --json fields of the F1-optimal point of an evaluation, in the order every report writes them. */
export function bestPointReport(r: BuccResult): Record<string, number> {
  return {
    precision: r.precision,
    recall: r.recall,
    f1: r.f1,
    threshold: r.threshold,
    averagePrecision: r.averagePrecision,
    tp: r.tp,
    predicted: r.predicted,
    gold: r.gold,
  };
}

/** P and R at every distinct score as [threshold, precision, recall] (the --json 'cuts' that --threshold-from --target-precision reads). */
export function cutRows(r: BuccResult): [number, number, number][] {
  return r.cuts.map((c) => [c.threshold, c.precision, c.recall]);
}

/** The precision–recall curve as SVG (about 400 points at most), its F1-optimal point marked. */
export function prCurveSvg(r: BuccResult, title: string): string {
  const step = Math.max(1, Math.floor(r.curve.length / 400));
  return prCurve({
    points: r.curve.filter((_, i) => i % step === 0 || i === r.curve.length - 1),
    ap: r.averagePrecision,
    title,
    mark: { recall: r.recall, precision: r.precision, label: 'best F1' },
  });
}

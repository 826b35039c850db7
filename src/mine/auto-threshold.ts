// A threshold for a scorer's mined pairs chosen without gold pairs (xling mine --scorer S
// --threshold auto): the cut of the run's own one-to-one pairs that maximises the F1 their
// probabilities expect — E[TP] = Σ_{kept} p, E[pairs to find] = Σ_{all} p — the plug-in rule for F1
// over calibrated probabilities (Lipton, Elkan and Narayanaswamy 2014: the F1-optimal threshold of
// a calibrated classifier is half the F1 it reaches, so it moves below 0.5 as a set gets harder).
// On the scorer's own domain it keeps what 0.5 keeps; on another domain, where fewer pairs are
// sure, it keeps more (bench/RESULTS.md, "Thresholds without gold"). The expected figures are the
// probabilities' own: off a domain they are optimistic.

export interface AutoThreshold {
  /** Keep pairs whose probability is at least this. */
  threshold: number;
  /** What the probabilities expect of the pairs kept: precision, recall, F1, and the pairs kept / to find. */
  expected: { precision: number; recall: number; f1: number; kept: number; toFind: number };
}

/** The fewest pairs the rule is applied to. */
export const AUTO_THRESHOLD_MIN = 10;

/**
 * The threshold that maximises the F1 the probabilities expect; null when there are fewer than
 * AUTO_THRESHOLD_MIN of them or none is above 0. It falls midway between the last kept and the first
 * dropped probability (a cut only between different values).
 */
export function autoThreshold(probabilities: ArrayLike<number>): AutoThreshold | null {
  const n = probabilities.length;
  if (n < AUTO_THRESHOLD_MIN) return null;
  const p = Float64Array.from(probabilities).sort().reverse();
  let toFind = 0;
  for (let i = 0; i < n; i++) {
    if (!(p[i]! >= 0 && p[i]! <= 1)) throw new Error(`automatic threshold: ${p[i]} is not a probability`);
    toFind += p[i]!;
  }
  if (!(toFind > 0)) return null;
  let tp = 0,
    best = -1,
    bestF1 = -1,
    bestTp = 0;
  for (let i = 0; i < n; i++) {
    tp += p[i]!;
    if (i + 1 < n && p[i + 1] === p[i]) continue;
    const f1 = (2 * tp) / (i + 1 + toFind);
    if (f1 > bestF1) {
      bestF1 = f1;
      best = i;
      bestTp = tp;
    }
  }
  const threshold = best + 1 < n ? (p[best]! + p[best + 1]!) / 2 : p[best]!;
  return { threshold, expected: { precision: bestTp / (best + 1), recall: bestTp / toFind, f1: bestF1, kept: best + 1, toFind } };
}

/** --threshold auto: autoThreshold, or an error saying why there is none; `say` gets the line reporting it with what the probabilities expect. */
export function chooseThreshold(probabilities: number[], say: (line: string) => void): AutoThreshold {
  const t = autoThreshold(probabilities);
  if (!t)
    throw new Error(
      `--threshold auto: ${probabilities.length} candidate pairs${probabilities.length >= AUTO_THRESHOLD_MIN ? ', all of probability 0' : `, fewer than the ${AUTO_THRESHOLD_MIN} it needs`}; give a number`,
    );
  const e = t.expected,
    pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  say(
    `automatic threshold ${t.threshold.toPrecision(4)}: keeps ${e.kept} of ${probabilities.length} pairs; were the probabilities calibrated for this data, precision ${pct(e.precision)} and recall ${pct(e.recall)} of ${Math.round(e.toFind)} pairs to find (on another domain than the scorer's they are optimistic)`,
  );
  return t;
}

/** What --stats / --json record of an automatic threshold. */
export function autoSummary(t: AutoThreshold): Record<string, unknown> {
  return {
    threshold: t.threshold,
    expected_precision: t.expected.precision,
    expected_recall: t.expected.recall,
    expected_f1: t.expected.f1,
    kept: t.expected.kept,
    to_find: t.expected.toFind,
  };
}

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { autoThreshold, AUTO_THRESHOLD_MIN } from '../../src/mine/auto-threshold.js';
import { Rng } from '../../src/util/rng.js';

/** n calibrated probabilities (sigmoid of N(mean, sd)) and labels drawn from them. */
function calibrated(seed: number, n: number, mean: number, sd: number): { p: number[]; y: boolean[] } {
  const rng = new Rng(seed),
    p: number[] = [],
    y: boolean[] = [];
  for (let i = 0; i < n; i++) {
    const q = 1 / (1 + Math.exp(-rng.normal(mean, sd)));
    p.push(q);
    y.push(rng.next() < q);
  }
  return { p, y };
}

/** F1 against the labels of keeping the probabilities ≥ t, and the best F1 of any threshold. */
function f1At(p: number[], y: boolean[], t: number): number {
  let tp = 0,
    kept = 0;
  const pos = y.filter(Boolean).length;
  p.forEach((v, i) => {
    if (v >= t) {
      kept++;
      if (y[i]) tp++;
    }
  });
  return tp ? (2 * tp) / (kept + pos) : 0;
}
function oracle(p: number[], y: boolean[]): { f1: number; t: number } {
  const o = p.map((v, i) => [v, y[i]] as const).sort((a, b) => b[0] - a[0]);
  const pos = y.filter(Boolean).length;
  let tp = 0,
    best = { f1: 0, t: 1 };
  o.forEach(([v, l], i) => {
    if (l) tp++;
    const f = (2 * tp) / (i + 1 + pos);
    if (f > best.f1) best = { f1: f, t: v };
  });
  return best;
}

describe("automatic threshold of a scorer's probabilities", () => {
  it('cuts where the labels would when the probabilities are calibrated, near half the F1 reached', () => {
    for (const [seed, mean, sd] of [
      [1, -1, 3],
      [2, 0.5, 2.5],
      [3, -2, 2],
    ] as const) {
      const { p, y } = calibrated(seed, 6000, mean, sd);
      const a = autoThreshold(p)!;
      const best = oracle(p, y),
        got = f1At(p, y, a.threshold);
      assert.ok(best.f1 - got < 0.01, `seed ${seed}: ${got} against the best ${best.f1}`);
      assert.ok(Math.abs(a.expected.f1 - got) < 0.02, `seed ${seed}: expected ${a.expected.f1}, got ${got}`);
      // Lipton et al. 2014: the F1-optimal threshold of calibrated probabilities is half the F1
      assert.ok(Math.abs(a.threshold - a.expected.f1 / 2) < 0.03, `seed ${seed}: threshold ${a.threshold}, F1 ${a.expected.f1}`);
    }
  });

  it('goes below 0.5 on a set where few pairs are sure, and keeps more of them than 0.5 does', () => {
    const { p, y } = calibrated(4, 6000, -1.5, 1.5);
    const a = autoThreshold(p)!;
    assert.ok(a.threshold < 0.4, `${a.threshold}`);
    assert.ok(f1At(p, y, a.threshold) > f1At(p, y, 0.5) + 0.05, `${f1At(p, y, a.threshold)} against ${f1At(p, y, 0.5)} at 0.5`);
  });

  it('cuts only between different probabilities; too few, all zero or not probabilities are said', () => {
    const p = [...Array(20).fill(0.9), ...Array(20).fill(0.1), 0.4];
    const a = autoThreshold(p)!;
    assert.equal(a.expected.kept, 20);
    assert.ok(a.threshold > 0.4 && a.threshold < 0.9, `${a.threshold}`);
    assert.ok(Math.abs(a.expected.toFind - 20.4) < 1e-9);
    assert.equal(autoThreshold(p.slice(0, AUTO_THRESHOLD_MIN - 1)), null);
    assert.equal(autoThreshold(Array(30).fill(0)), null);
    assert.throws(() => autoThreshold([...p, 1.5]), /not a probability/);
    assert.throws(() => autoThreshold([...p, NaN]), /not a probability/);
  });
});

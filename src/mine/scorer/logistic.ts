// The scorer's classifier: logistic regression on standardised features, fitted by Newton's method
// (IRLS; deterministic, a few iterations), and the probability it gives a candidate.

/** A fitted regression: the features' standardisation, one weight per feature, and the bias. */
export interface Regression {
  mean: number[];
  std: number[];
  weights: number[];
  bias: number;
}

export const sigmoid = (z: number) => (z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z)));

/**
 * Logistic regression by Newton's method (IRLS) with an L2 penalty `l2` on the weights (not the
 * bias), on features standardised by their mean and deviation. Deterministic.
 */
export function fitLogistic(x: number[][], y: number[], o: { l2?: number; iterations?: number } = {}): Regression {
  const n = x.length;
  if (!n) throw new Error('scorer: no training pairs');
  const d = x[0]!.length;
  const l2 = o.l2 ?? 1e-2;
  const mean = Array.from({ length: d }, (_, j) => x.reduce((a, r) => a + r[j]!, 0) / n);
  const std = Array.from({ length: d }, (_, j) => {
    const v = x.reduce((a, r) => a + (r[j]! - mean[j]!) ** 2, 0) / n;
    return v > 1e-12 ? Math.sqrt(v) : 1;
  });
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
      const p = sigmoid(s),
        r = p - y[i]!,
        q = Math.max(p * (1 - p), 1e-9);
      for (let j = 0; j < D; j++) {
        g[j]! += r * zi[j]!;
        const qz = q * zi[j]!;
        const Hj = H[j]!;
        for (let k = j; k < D; k++) Hj[k]! += qz * zi[k]!;
      }
    }
    for (let j = 1; j < D; j++) {
      g[j]! += l2 * n * w[j]!;
      H[j]![j]! += l2 * n;
    }
    for (let j = 0; j < D; j++) for (let k = 0; k < j; k++) H[j]![k] = H[k]![j]!;
    const step = solve(H, g);
    let change = 0;
    w = w.map((v, j) => {
      change = Math.max(change, Math.abs(step[j]!));
      return v - step[j]!;
    });
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
export function scoreCandidate(m: Regression, features: number[]): number {
  let s = m.bias;
  for (let j = 0; j < m.weights.length; j++) s += m.weights[j]! * ((features[j]! - m.mean[j]!) / m.std[j]!);
  return sigmoid(s);
}

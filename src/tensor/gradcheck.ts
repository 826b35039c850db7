// Finite-difference gradient checking (use float64 tensors for meaningful tolerances).
import { noGrad, Tensor, tidy } from './tensor.js';

export interface GradCheckOptions {
  eps?: number;
  atol?: number;
  rtol?: number;
  samples?: number;
  seed?: number;
}
export interface GradCheckResult {
  checked: number;
  maxAbsErr: number;
  maxRelErr: number;
  worst: string;
}

/**
 * Compares autograd gradients of the scalar f() w.r.t. each tensor in wrt (leaves with
 * requiresGrad) against central differences at up to `samples` sampled elements per tensor.
 * Throws if any element is off by more than atol + rtol * |numeric|.
 */
export function gradCheck(f: () => Tensor, wrt: Tensor[], o: GradCheckOptions = {}): GradCheckResult {
  const eps = o.eps ?? 1e-6,
    atol = o.atol ?? 1e-5,
    rtol = o.rtol ?? 1e-3,
    samples = o.samples ?? 12;
  let seed = o.seed ?? 1;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  for (const t of wrt) t.zeroGrad();
  tidy(() => f().backward());
  const analytic = wrt.map((t) => {
    const g = t.grad;
    if (!g) throw new Error('gradCheck: a tensor received no gradient');
    const d = g.toArray();
    g.dispose();
    return d;
  });
  const value = () => noGrad(() => tidy(() => f().item()));
  let checked = 0,
    maxAbsErr = 0,
    maxRelErr = 0,
    worst = '';
  wrt.forEach((t, ti) => {
    const n = t.numel;
    const idx = n <= samples ? [...Array(n).keys()] : Array.from({ length: samples }, () => Math.floor(rnd() * n));
    for (const j of idx) {
      const bump = (delta: number) =>
        noGrad(() =>
          tidy(() => {
            t.view([-1]).narrow(0, j, 1).add_(delta);
          }),
        );
      bump(eps);
      const fp = value();
      bump(-2 * eps);
      const fm = value();
      bump(eps);
      const num = (fp - fm) / (2 * eps);
      const ana = analytic[ti]![j]!;
      const err = Math.abs(num - ana);
      const rel = err / Math.max(Math.abs(num), 1e-12);
      checked++;
      if (err > maxAbsErr) {
        maxAbsErr = err;
        worst = `tensor ${ti} element ${j}: analytic ${ana}, numeric ${num}`;
      }
      if (err > atol) maxRelErr = Math.max(maxRelErr, rel);
      if (err > atol + rtol * Math.abs(num)) throw new Error(`gradCheck failed at tensor ${ti} element ${j}: analytic ${ana}, numeric ${num}`);
    }
  });
  for (const t of wrt) t.zeroGrad();
  return { checked, maxAbsErr, maxRelErr, worst };
}

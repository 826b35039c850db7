// When per-language centring applies by default (plain TypeScript: the native embed path and xling/lite share it).

/**
 * The smallest mean norm (the average of |μ_l| over the model's languages, vectors L2-normalised)
 * at which per-language centring is applied by default. Below it the means are too small to
 * matter: on the gettext dev set the dual encoder's means (|μ| ≈ 0.05) change the
 * similarity-search error by ≤ 0.03 points either way, while LASER-style models (|μ| well above)
 * gain ~1 point (bench/RESULTS.md, "Language identification").
 */
export const CENTER_MIN_NORM = 0.1;

/** The average norm of the mean vectors (0 when there are none). */
export function meanNorm(centers: Map<string, Float32Array>): number {
  if (!centers.size) return 0;
  let s = 0;
  for (const m of centers.values()) { let n = 0; for (const x of m) n += x * x; s += Math.sqrt(n); }
  return s / centers.size;
}

/** Whether the model's mean vectors are too small for centring to matter (see CENTER_MIN_NORM). */
export function meansNegligible(centers: Map<string, Float32Array>): boolean {
  return centers.size > 0 && meanNorm(centers) < CENTER_MIN_NORM;
}

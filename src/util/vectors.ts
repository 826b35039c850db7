// Plain-array helpers for rows of vectors.

/**
 * L2-normalises rows of d values in place (a zero row stays zero): the one row normaliser of
 * xling (the server, xling embed's documents and centring, evaluation, vectors read from files).
 * The sum of squares is accumulated in float64. With `name`, a NaN or infinite value is an error
 * naming it and the row.
 */
export function normalizeRows(x: Float32Array, d: number, name?: string): void {
  for (let i = 0; i < x.length / d; i++) {
    let s = 0;
    for (let j = 0; j < d; j++) {
      const v = x[i * d + j]!;
      if (name !== undefined && !Number.isFinite(v)) throw new Error(`${name}: row ${i} has a NaN or infinite value`);
      s += v * v;
    }
    const inv = s > 0 ? 1 / Math.sqrt(s) : 0;
    for (let j = 0; j < d; j++) x[i * d + j]! *= inv;
  }
}

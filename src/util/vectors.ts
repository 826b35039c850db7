// Plain-array helpers for rows of vectors.

/**
 * L2-normalises rows of d values in place (a zero row stays zero), the sum of squares accumulated
 * in float64: the row normaliser of vectors read from files (mining, indexes, searches) and of
 * the portable runtime. The embed path (src/embed/vectors.ts l2normalizeRows) runs this formula in
 * torch's float32 arithmetic when the addon is there: the bits an encoder's rows always had. With
 * `name`, a NaN or infinite value is an error naming it and the row.
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

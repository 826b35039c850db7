// Quantised sentence vectors with sentence-transformers' quantize_embeddings semantics
// (sentence_transformers/quantization.py): per-dimension int8/uint8 buckets over [min, max] ranges
// (taken from calibration vectors, or from the vectors themselves), step = (max − min) / 255,
// int8 = (x − min) / step − 128 cast toward zero; binary: one bit per dimension (x > 0), packed
// 8 to a byte, most significant bit first (numpy.packbits); 'binary' is that byte − 128 as int8.
// Plain TypeScript (no tensors), also usable from xling/lite.

export type VectorPrecision = 'float32' | 'int8' | 'uint8' | 'binary' | 'ubinary';

/** Per-dimension [min…, max…] of rows (n × dim): a [2, dim] table as quantize_embeddings' `ranges`. */
export function embeddingRanges(rows: Float32Array, dim: number): Float32Array {
  const r = new Float32Array(2 * dim).fill(Infinity);
  for (let j = 0; j < dim; j++) r[dim + j] = -Infinity;
  const n = rows.length / dim;
  for (let i = 0; i < n; i++)
    for (let j = 0; j < dim; j++) {
      const x = rows[i * dim + j]!;
      if (x < r[j]!) r[j] = x;
      if (x > r[dim + j]!) r[dim + j] = x;
    }
  if (!n) r.fill(0);
  return r;
}

/**
 * Quantises rows (n × dim). int8/uint8 need `ranges` ([2, dim]: mins then maxes); values outside
 * the ranges are clipped (quantize_embeddings wraps them in the integer cast), an empty range
 * (max = min) gets step 1. The arithmetic is float32, as numpy's on float32 embeddings.
 */
export function quantizeEmbeddings(
  rows: Float32Array,
  dim: number,
  precision: Exclude<VectorPrecision, 'float32'>,
  ranges?: Float32Array,
): Int8Array | Uint8Array {
  const n = rows.length / dim;
  if (precision === 'binary' || precision === 'ubinary') {
    const bytes = Math.ceil(dim / 8);
    const out = new Uint8Array(n * bytes);
    for (let i = 0; i < n; i++) for (let j = 0; j < dim; j++) if (rows[i * dim + j]! > 0) out[i * bytes + (j >> 3)]! |= 0x80 >> (j & 7);
    if (precision === 'ubinary') return out;
    return Int8Array.from(out, (b) => b - 128);
  }
  if (!ranges || ranges.length !== 2 * dim) throw new Error(`${precision} quantisation needs ranges of [2, ${dim}] (mins, maxes)`);
  const f = Math.fround;
  const steps = new Float32Array(dim);
  for (let j = 0; j < dim; j++) {
    const s = f(f(ranges[dim + j]! - ranges[j]!) / 255);
    steps[j] = s === 0 ? 1 : s;
  }
  const lo = precision === 'int8' ? -128 : 0,
    hi = precision === 'int8' ? 127 : 255,
    shift = precision === 'int8' ? 128 : 0;
  const out = precision === 'int8' ? new Int8Array(n * dim) : new Uint8Array(n * dim);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < dim; j++) {
      const level = f(f(f(rows[i * dim + j]! - ranges[j]!) / steps[j]!) - shift);
      out[i * dim + j] = Math.max(lo, Math.min(hi, Math.trunc(level)));
    }
  return out;
}

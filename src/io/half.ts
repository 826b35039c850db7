// IEEE 754 binary16 (float16) and bfloat16 conversions. Raw 16-bit values live in Uint16Array.

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** float → IEEE binary16 bits, round-to-nearest-even (through float32), overflow → ±Inf, NaN preserved. */
export function floatToHalfBits(v: number): number {
  f32[0] = v;
  const x = u32[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant !== 0 ? 0x200 | (mant >>> 13) : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (rem > halfway || (rem === halfway && (h & 1) !== 0)) h++;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1) !== 0)) h++; // a carry rolls correctly into the exponent / Inf
  return sign | h;
}

/** IEEE binary16 bits → number (exact). */
export function halfBitsToFloat(h: number): number {
  const s = (h & 0x8000) !== 0 ? -1 : 1;
  const e = (h >>> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 0x1f) return m !== 0 ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

/** float → bfloat16 bits (upper half of float32, round-to-nearest-even, NaN preserved). */
export function floatToBf16Bits(v: number): number {
  f32[0] = v;
  const x = u32[0]!;
  if ((x & 0x7f800000) === 0x7f800000 && (x & 0x7fffff) !== 0) return ((x >>> 16) | 0x40) & 0xffff;
  const rounded = x + 0x7fff + ((x >>> 16) & 1);
  return (rounded >>> 16) & 0xffff;
}

/** bfloat16 bits → number (exact). */
export function bf16BitsToFloat(b: number): number {
  u32[0] = (b & 0xffff) << 16;
  return f32[0]!;
}

export function float32ToFloat16(src: ArrayLike<number>, out?: Uint16Array): Uint16Array {
  const dst = out ?? new Uint16Array(src.length);
  for (let i = 0; i < src.length; i++) dst[i] = floatToHalfBits(src[i]!);
  return dst;
}

export function float16ToFloat32(src: Uint16Array, out?: Float32Array): Float32Array {
  const dst = out ?? new Float32Array(src.length);
  for (let i = 0; i < src.length; i++) dst[i] = halfBitsToFloat(src[i]!);
  return dst;
}

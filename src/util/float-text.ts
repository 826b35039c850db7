// Float32 values as JSON text without the addon, byte for byte what its formatter writes (C++'s
// std::to_chars of a float, as serde_json writes f32 for TEI): the shortest decimal that reads
// back as the same float32 (the closest to it among those), in fixed or scientific notation,
// whichever is shorter (fixed on a tie; an exponent of at least two digits: 1e-05); -0 as "-0",
// NaN and ±inf as null (as JSON.stringify). JavaScript's own number text would widen a float32 to a
// double's 17 digits. Used by the server's responses and the vectors written as JSON lines where the
// addon is not loaded.
import { Buffer } from 'node:buffer';

const F32 = new Float32Array(1),
  U32 = new Uint32Array(F32.buffer);

/** The rounding interval of a positive float32 a: the decimals that read back as a lie in [lo, hi] (bounds included when `even`). */
interface Interval {
  lo: number;
  hi: number;
  even: boolean;
  /** a's significand is a power of two: the gap below is half the gap above. */
  edge: boolean;
}

/** 2^(b − 150) for each biased exponent b of a float32: its ulp. */
const ULP: number[] = Array.from({ length: 256 }, (_, b) => 2 ** (Math.max(b, 1) - 150));

function intervalOf(a: number): Interval {
  F32[0] = a;
  const bits = U32[0]!,
    be = bits >>> 23;
  const ulp = ULP[be]!;
  const edge = (bits & 0x7fffff) === 0 && be > 1;
  // exact in float64: a has 24 significant bits, the bounds 26
  return { lo: a - (edge ? ulp / 4 : ulp / 2), hi: a + ulp / 2, even: (bits & 1) === 0, edge };
}

/** m · 2^e of a finite double, m an integer (exact). */
function dyadic(x: number): [bigint, number] {
  let e = 0;
  while (!Number.isInteger(x)) {
    x *= 2;
    e--;
  }
  return [BigInt(x), e];
}

/** The sign of D · 10^k − b, exactly (b a finite double). */
function compareExact(D: number, k: number, b: number): number {
  let left = BigInt(D),
    [right, e2] = dyadic(b);
  if (k >= 0) left *= 10n ** BigInt(k);
  else right *= 10n ** BigInt(-k);
  if (e2 >= 0) right <<= BigInt(e2);
  else left <<= BigInt(-e2);
  return left < right ? -1 : left > right ? 1 : 0;
}

/** 10^k for k in 0 … 22, exact doubles. */
const POW10: number[] = [1];
for (let k = 1; k <= 22; k++) POW10.push(POW10[k - 1]! * 10);

/** D · 10^k as the nearest double (one exactly rounded operation on exact operands where it can be; D < 10^9). */
function decimalValue(D: number, k: number): number {
  if (k >= 0 && k <= 22) return D * POW10[k]!;
  if (k < 0 && k >= -22) return D / POW10[-k]!;
  return Number(`${D}e${k}`);
}

/** Whether the decimal D · 10^k reads back as the float32 of interval iv (a double landing on a bound settled exactly). */
function inside(D: number, k: number, iv: Interval): boolean {
  const x = decimalValue(D, k);
  if (x > iv.lo && x < iv.hi) return true;
  if (x < iv.lo || x > iv.hi) return false;
  const c = compareExact(D, k, x === iv.lo ? iv.lo : iv.hi);
  return c === 0 ? iv.even : x === iv.lo ? c > 0 : c < 0;
}

/** a to 9 significant digits (toExponential's correct rounding) as D9 · 10^(e9 − 8), and the sign of a − that decimal. */
interface Nine {
  D9: number;
  e9: number;
  /** sign of a − D9 · 10^(e9 − 8): settles ties at fewer digits. */
  side: number;
}

function nine(a: number): Nine {
  // "d.dddddddde±x"
  const r = a.toExponential(8);
  let D9 = r.charCodeAt(0) - 48;
  for (let i = 2; i < 10; i++) D9 = D9 * 10 + r.charCodeAt(i) - 48;
  let e9 = 0;
  for (let i = 12; i < r.length; i++) e9 = e9 * 10 + r.charCodeAt(i) - 48;
  if (r.charCodeAt(11) === 45) e9 = -e9;
  const x = decimalValue(D9, e9 - 8);
  // a exactly halfway between two 9-digit decimals (toExponential took the upper one): the even one
  // instead, as the addon rounds, a half above it
  if (D9 % 2 === 1 && a < x) {
    const half = decimalValue(5, e9 - 9);
    if (Math.abs(x - a - half) <= half * 1e-6 && compareExact(D9 * 10 - 5, e9 - 9, a) === 0) return { D9: D9 - 1, e9, side: 1 };
  }
  return { D9, e9, side: a > x ? 1 : a < x ? -1 : -compareExact(D9, e9 - 8, a) };
}

/**
 * The p-digit decimal (D, k: D · 10^k) closest to a that reads back as a, or null: a rounded to p
 * digits (from its 9-digit rounding, exact: a tail of exactly one half is settled by `side`), an
 * exact tie going to the even last digit as the addon's; next to a power of two the decimal above
 * may read back where the closest one, below, does not.
 */
function candidate(n: Nine, p: number, iv: Interval): [number, number] | null {
  const q = POW10[9 - p]!;
  let D = Math.floor(n.D9 / q);
  const twice = 2 * (n.D9 - D * q);
  // the nearest p-digit decimal, and the other one around a (a tie: both as near)
  const tie = twice === q && n.side === 0;
  const up = tie ? D % 2 === 1 : twice > q || (twice === q && n.side > 0);
  const k = n.e9 - p + 1;
  const first = up ? D + 1 : D,
    other = up ? D : D + 1;
  for (const c of tie || iv.edge ? [first, other] : [first]) {
    D = c;
    let kk = k;
    if (D === POW10[p]) {
      D = POW10[p - 1]!;
      kk++;
    }
    if (inside(D, kk, iv)) return [D, kk];
  }
  return null;
}

/** The shortest decimal D · 10^k of a positive float32 a that reads back as a, closest to a among those. */
function shortest(a: number): [number, number] {
  const iv = intervalOf(a),
    n = nine(a);
  if (iv.edge) {
    // a power of two: the interval is lopsided, the shortest length found by trying each
    for (let p = 1; ; p++) {
      const c = candidate(n, p, iv);
      if (c) return c;
    }
  }
  // a symmetric interval: if p digits read back, so do p + 1 (9 always do)
  let best = candidate(n, 8, iv);
  if (!best) return candidate(n, 9, iv)!;
  for (let p = 7; p >= 1; p--) {
    const c = candidate(n, p, iv);
    if (!c) break;
    best = c;
  }
  return best;
}

/** Decimal digits of a positive integer below 10^22. */
function digitCount(v: number): number {
  let n = 1;
  while (n < 22 && v >= POW10[n]!) n++;
  return n;
}

/** Writes the n digits of the integer v (below 2^53) at buf[at …]. */
function putDigits(buf: Uint8Array, at: number, v: number, n: number): void {
  for (let i = n - 1; i >= 0; i--) {
    const q = Math.floor(v / 10);
    buf[at + i] = 48 + v - q * 10;
    v = q;
  }
}

/** The bytes of "null", "0" and "-0". */
const NULL = [110, 117, 108, 108];

/** Writes float32Text(x) as ASCII at buf[at …] (room for 16 bytes); returns the end. */
export function writeFloat32(buf: Uint8Array, at: number, x: number): number {
  x = Math.fround(x);
  if (!Number.isFinite(x)) {
    buf.set(NULL, at);
    return at + 4;
  }
  if (x < 0 || Object.is(x, -0)) buf[at++] = 45;
  if (x === 0) {
    buf[at] = 48;
    return at + 1;
  }
  const a = Math.abs(x);
  let [D, k] = shortest(a);
  while (D % 10 === 0) {
    D /= 10;
    k++;
  }
  const n = digitCount(D),
    e = k + n - 1;
  // scientific d.ddde±XX against fixed: 0.000ddd, dd.ddd, or an integer as its exact value (a float32 that large is one; past 10^22 far longer)
  const sciLength = n + (n > 1 ? 1 : 0) + 2 + (Math.abs(e) >= 100 ? 3 : 2);
  const whole = k >= 0 ? (a < 1e22 ? digitCount(a) : 99) : 0;
  const fixedLength = k >= 0 ? whole : e >= 0 ? n + 1 : n + 1 - e;
  if (fixedLength <= sciLength) {
    if (k >= 0) putDigits(buf, at, a, whole);
    else if (e >= 0) {
      // dd.ddd: the integer part's digits, the point, the rest
      putDigits(buf, at, Math.floor(D / POW10[n - e - 1]!), e + 1);
      buf[at + e + 1] = 46;
      putDigits(buf, at + e + 2, D % POW10[n - e - 1]!, n - e - 1);
    } else {
      buf[at] = 48;
      buf[at + 1] = 46;
      buf.fill(48, at + 2, at + 1 - e);
      putDigits(buf, at + 1 - e, D, n);
    }
    return at + fixedLength;
  }
  putDigits(buf, at, Math.floor(D / POW10[n - 1]!), 1);
  let p = at + 1;
  if (n > 1) {
    buf[p++] = 46;
    putDigits(buf, p, D % POW10[n - 1]!, n - 1);
    p += n - 1;
  }
  buf[p++] = 101;
  buf[p++] = e < 0 ? 45 : 43;
  const m = Math.abs(e) >= 100 ? 3 : 2;
  putDigits(buf, p, Math.abs(e), m);
  return p + m;
}

const scratch = new Uint8Array(32);

/** A value (rounded to float32) as the addon's JSON text (see the head of this file). */
export function float32Text(x: number): string {
  const end = writeFloat32(scratch, 0, x);
  return String.fromCharCode(...scratch.subarray(0, end));
}

/**
 * parts[0] row₀ parts[1] row₁ … parts[n] as UTF-8, each row "[x,y,…]" of d values (float32Text):
 * the addon's joinRows in TypeScript, with its errors.
 */
export function joinRowsText(v: Float32Array, d: number, parts: string[]): Buffer {
  if (!(v instanceof Float32Array)) throw new Error('joinRows: expected a Float32Array');
  if (!(Number.isInteger(d) && d > 0) || v.length % d !== 0) throw new Error('joinRows: the array is not whole rows of d values');
  const n = v.length / d;
  if (!Array.isArray(parts) || parts.length !== n + 1) throw new Error('joinRows: parts must be an array of rows + 1 strings');
  let room = 0;
  parts.forEach((p, i) => {
    if (typeof p !== 'string') throw new Error(`joinRows: parts[${i}] is not a string`);
    room += Buffer.byteLength(p, 'utf8');
  });
  // at most 15 bytes a number (-1.2345678e-45), its comma, the brackets
  const out = Buffer.allocUnsafe(room + v.length * 16 + 2 * n);
  let at = out.write(parts[0]!, 0, 'utf8');
  for (let i = 0; i < n; i++) {
    out[at++] = 91;
    for (let j = 0; j < d; j++) {
      if (j) out[at++] = 44;
      at = writeFloat32(out, at, v[i * d + j]!);
    }
    out[at++] = 93;
    at += out.write(parts[i + 1]!, at, 'utf8');
  }
  return out.subarray(0, at);
}

// Vectors as JSON text, formatted natively: the shortest decimal of each float32 that reads back
// as the same float32 (what serde_json writes for TEI), NaN/inf as null (as JSON.stringify).
import { formatJoinRows } from '../kernels.js';

/**
 * A whole JSON text around the rows, as UTF-8 bytes: parts[0] row₀ parts[1] row₁ … parts[n]
 * (n + 1 parts for n rows). For response bodies: no JavaScript string is made for the numbers.
 */
export function joinRows(v: Float32Array, d: number, parts: string[]): Buffer {
  return formatJoinRows(v, d, parts);
}

/** joinRows as a JSON array of the rows: "[[…],[…]]". */
export function jsonArrayOfRows(v: Float32Array, d: number): Buffer {
  const n = v.length / d;
  return joinRows(v, d, n ? ['[', ...Array<string>(n - 1).fill(','), ']'] : ['[]']);
}

/**
 * A float32 value as JSON text without the addon: the shortest decimal that reads back as the
 * same float32 (as the native formatter writes it; JavaScript's own would widen it to 17 digits),
 * null for NaN and ±inf (as JSON.stringify).
 */
export function float32Json(x: number): string {
  if (!Number.isFinite(x)) return 'null';
  if (x === 0) return '0';
  let s = x.toPrecision(6);
  if (Math.fround(+s) === x) {
    for (let p = 5; p >= 1; p--) {
      const t = x.toPrecision(p);
      if (Math.fround(+t) !== x) break;
      s = t;
    }
  } else {
    for (let p = 7; p <= 9; p++) {
      s = x.toPrecision(p);
      if (Math.fround(+s) === x) break;
    }
  }
  return String(+s);
}

/** Rows as JSON lines: one array of d numbers (float32Json) a line. */
export function jsonLinesOfRows(v: Float32Array, d: number): string {
  let out = '';
  for (let i = 0; i < v.length; i += d) {
    let line = '[';
    for (let j = 0; j < d; j++) line += (j ? ',' : '') + float32Json(v[i + j]!);
    out += line + ']\n';
  }
  return out;
}

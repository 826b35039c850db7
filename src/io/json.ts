// Vectors as JSON text: the shortest decimal of each float32 that reads back as the same float32
// (what serde_json writes for TEI), NaN/inf as null (as JSON.stringify); by the addon where it is
// loaded, else the same bytes in TypeScript (src/util/float-text.ts).
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

/** Rows as JSON lines: one array of d numbers (the shortest float32 decimals, as joinRows) a line. */
export function jsonLinesOfRows(v: Float32Array, d: number): Buffer {
  const n = v.length / d;
  return joinRows(v, d, n ? ['', ...Array<string>(n).fill('\n')] : ['']);
}

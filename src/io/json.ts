// Vectors as JSON text, formatted natively: the shortest decimal of each float32 that reads back
// as the same float32 (what serde_json writes for TEI), NaN/inf as null (as JSON.stringify).
import { native } from '../native.js';

/** One JSON array per row of d values: "[0.1,-0.25,…]". */
export function jsonRows(v: Float32Array, d: number): string[] {
  return native.format.formatRows!(v, d) as string[];
}

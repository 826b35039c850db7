// The one row normaliser of the embed path (xling embed, the server, the cluster worker, the graph
// builder, centring, document averaging): plain Float32Array rows in and out, the arithmetic behind
// this one function. It runs torch's normalize (x / max(‖x‖, 1e-12), float32), the arithmetic the
// vectors of every model have always been written with (on a copy of the rows it gives the
// same bits as on the encoder's output tensor) where the addon is loaded; where it is not (the
// portable runtime, src/embed/portable.ts) the same formula in TypeScript, loading nothing.
// Vectors read from files are normalised by src/util/vectors.ts (io and index sit below tensor/).
import { nativeLoaded } from '../tensor/backend.js';
import { normalize } from '../tensor/ops.js';
import { fromArray, noGrad, tidy } from '../tensor/tensor.js';
import { normalizeRows } from '../util/vectors.js';
import { centerEachRow as centerRowsWith } from '../util/embed-policy.js';

/** L2-normalises rows of d values in place (a zero row stays zero). */
export function l2normalizeRows(rows: Float32Array, d: number): void {
  if (!rows.length) return;
  // the addon not loaded (the portable runtime, src/embed/portable.ts): the same formula in
  // TypeScript, sums in float64 (within a float32 rounding of torch's)
  if (!nativeLoaded()) {
    normalizeRows(rows, d);
    return;
  }
  const out = noGrad(() => tidy(() => normalize(fromArray(rows.slice(), [rows.length / d, d]), 1).toFloat32Array()));
  rows.set(out);
}

/**
 * In place: each row with a mean (mus[r], null: left as it is) minus it, then (optionally) those
 * rows L2-normalised (src/util/embed-policy.ts's centring with this normaliser). Rows are L2-normalised on entry.
 */
export function centerEachRow(rows: Float32Array, d: number, mus: (Float32Array | null)[], normalize: boolean): void {
  centerRowsWith(rows, d, mus, normalize, l2normalizeRows);
}

/** In place: every row minus mu, then (optionally) L2-normalised. Rows are L2-normalised on entry. */
export function centerRows(rows: Float32Array, d: number, mu: Float32Array, normalize: boolean): void {
  centerEachRow(
    rows,
    d,
    Array.from({ length: rows.length / d }, () => mu),
    normalize,
  );
}

/**
 * Document vectors from their sentences' vectors (xling embed --docs, document retrieval): each
 * document's rows summed in the order they come, then L2-normalised (the direction of their mean).
 */
export class DocumentVectors {
  private readonly sums: Float32Array[] = [];
  private readonly numbers = new Map<string, number>();
  /** The documents' ids given to numberOf, in their numbers' order. */
  readonly ids: string[] = [];

  /** `docs`: documents known from the start (a document without sentences keeps a zero row). */
  constructor(
    readonly d: number,
    docs = 0,
  ) {
    for (let i = 0; i < docs; i++) this.sums.push(new Float32Array(d));
  }

  /** How many documents (the highest numbered + 1). */
  get count(): number {
    return this.sums.length;
  }

  /** The number of the document with this id (a new id: the next number). */
  numberOf(id: string): number {
    let k = this.numbers.get(id);
    if (k === undefined) {
      k = this.ids.length;
      this.numbers.set(id, k);
      this.ids.push(id);
    }
    return k;
  }

  /** Adds sentence vectors: row i of `rows` ([docs.length, d]) to document docs[i]. */
  add(rows: Float32Array, docs: ArrayLike<number>): void {
    const { d } = this;
    for (let i = 0; i < docs.length; i++) {
      const doc = docs[i]!;
      while (this.sums.length <= doc) this.sums.push(new Float32Array(d));
      const acc = this.sums[doc]!;
      for (let j = 0; j < d; j++) acc[j]! += rows[i * d + j]!;
    }
  }

  /** The documents' vectors [count, d]: L2-normalised, or (normalize false) the plain sums. */
  matrix(normalize = true): Float32Array {
    const out = new Float32Array(this.sums.length * this.d);
    this.sums.forEach((s, i) => out.set(s, i * this.d));
    if (normalize) l2normalizeRows(out, this.d);
    return out;
  }
}

// The layout of a product-quantised embedding table in model.safetensors (xling export --dtype pq;
// written by src/embed/table-pq.ts, read there and by xling/lite). Plain TypeScript, no tensors.
// - `pq.codes`     U8  [rows, M]   the bytes of each row;
// - `pq.codebooks` F32 [256, K]    centroid c of subspace j in columns [offset_j, offset_j + width_j);
// - `pq.widths`    I32 [M]         the width of each subspace (they sum to K);
// - `pq.basis`     F32 [dim, K]    the principal directions (columns);
// - `pq.mean`      F32 [dim]       the mean row.
// Row r reads back as mean + basis · z, z = for each subspace j the centroid codes[r, j] names.

export const PQ_KEYS = ['pq.codes', 'pq.codebooks', 'pq.widths', 'pq.basis', 'pq.mean'] as const;
/** Each byte names one of this many centroids. */
export const PQ_CENTROIDS = 256;
/** The dtype and rank of each tensor. */
const PQ_DTYPES: Record<(typeof PQ_KEYS)[number], [string, number]> = {
  'pq.codes': ['U8', 2],
  'pq.codebooks': ['F32', 2],
  'pq.widths': ['I32', 1],
  'pq.basis': ['F32', 2],
  'pq.mean': ['F32', 1],
};

/**
 * Checks that every tensor of a product-quantised table is stored with its dtype and rank
 * (entry(k): how tensor k is stored, undefined when it is not): null when they all are, else a
 * message naming the first that is not.
 */
export function checkPqEntries(entry: (k: (typeof PQ_KEYS)[number]) => { dtype: string; shape: readonly number[] } | undefined): string | null {
  for (const k of PQ_KEYS) {
    const e = entry(k),
      [dtype, rank] = PQ_DTYPES[k];
    if (!e) return `'${k}' is missing (a product-quantised table has ${PQ_KEYS.join(', ')})`;
    if (e.dtype !== dtype || e.shape.length !== rank) return `'${k}' is ${e.dtype} [${e.shape.join(', ')}]; ${dtype} of rank ${rank} expected`;
  }
  return null;
}

/** M subspace widths over K coordinates, as equal as possible, the narrower ones first. */
export function pqWidths(dims: number, bytes: number): Int32Array {
  if (!(Number.isInteger(bytes) && bytes >= 1 && Number.isInteger(dims) && dims >= bytes))
    throw new Error(`product quantisation: ${bytes} bytes over ${dims} coordinates (need 1 ≤ bytes ≤ coordinates)`);
  const w = new Int32Array(bytes),
    base = Math.floor(dims / bytes),
    extra = dims % bytes;
  for (let j = 0; j < bytes; j++) w[j] = base + (j >= bytes - extra ? 1 : 0);
  return w;
}

/** The offsets of the subspaces in the K coordinates. */
export function pqOffsets(widths: Int32Array): Int32Array {
  const o = new Int32Array(widths.length);
  for (let j = 1; j < widths.length; j++) o[j] = o[j - 1]! + widths[j - 1]!;
  return o;
}

/**
 * Checks a product-quantised table's parts against each other (sizes in elements; dims = K, the
 * codebooks' columns): null when they fit, else a message naming what does not. Codes need no
 * range check: a byte names one of the 256 centroids.
 */
export function checkPqShapes(p: {
  rows: number;
  dim: number;
  dims: number;
  codes: number;
  widths: Int32Array;
  codebooks: number;
  basis: number;
  mean: number;
}): string | null {
  const M = p.widths.length;
  if (M < 1 || p.codes !== p.rows * M) return `pq.codes holds ${p.codes} bytes, ${p.rows} rows × ${M} subspaces need ${p.rows * M}`;
  let sum = 0;
  for (const w of p.widths) {
    if (!(w >= 1)) return `pq.widths has a width ${w} (must be ≥ 1)`;
    sum += w;
  }
  if (sum !== p.dims) return `pq.widths sum to ${sum}, the codebooks have ${p.dims} columns`;
  if (p.codebooks !== PQ_CENTROIDS * p.dims) return `pq.codebooks must be [${PQ_CENTROIDS}, ${p.dims}]`;
  if (p.dims > p.dim) return `${p.dims} coordinates exceed the row width ${p.dim}`;
  if (p.basis !== p.dim * p.dims) return `pq.basis must be [${p.dim}, ${p.dims}]`;
  if (p.mean !== p.dim) return `pq.mean must be [${p.dim}]`;
  return null;
}

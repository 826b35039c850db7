// Sentence vectors on disk: one .npy reader with one dtype rule for every command and job.
import { normalizeRows } from '../util/vectors.js';
import { NpyRowReader } from './npy.js';

export interface Vectors {
  data: Float32Array;
  n: number;
  d: number;
}

/** The element types accepted for vectors (converted to float32 on reading). */
const VECTOR_DTYPES = ['float32', 'float16', 'float64'];

/** Opens a 2-D .npy of vectors (float32/float16/float64, at least one row) for reading rows. */
export function openVectors(path: string): NpyRowReader {
  const r = NpyRowReader.open(path);
  const bad = !VECTOR_DTYPES.includes(r.dtype)
    ? `vectors must be ${VECTOR_DTYPES.join('/')}, got ${r.dtype}`
    : r.shape.length !== 2
      ? `expected a 2-D matrix of vectors, got shape [${r.shape.join(', ')}]`
      : r.rows === 0 || r.cols === 0
        ? `no vectors (shape [${r.shape.join(', ')}])`
        : null;
  if (bad) {
    r.close();
    throw new Error(`${path}: ${bad}`);
  }
  return r;
}

/** Reads a 2-D .npy of vectors (openVectors) and L2-normalises its rows; NaN/inf values are an error naming the row. */
export function readVectors(path: string): Vectors {
  const r = openVectors(path);
  try {
    const data = r.readRows(0, r.rows);
    normalizeRows(data, r.cols, path);
    return { data, n: r.rows, d: r.cols };
  } finally {
    r.close();
  }
}

// Loading sentence vectors for the CLI: one .npy reader with one dtype rule for every command, or an
// embedding model.
import { NpyRowReader } from '../io/npy.js';
import { loadSentenceEncoder } from '../embed/model-dir.js';
import { SentenceEncoderModel } from '../embed/model.js';

export interface Vectors { data: Float32Array; n: number; d: number }

/** The element types accepted for vectors (converted to float32 on reading). */
const VECTOR_DTYPES = ['float32', 'float16', 'float64'];

/** Opens a 2-D .npy of vectors (float32/float16/float64, at least one row) for reading rows. */
export function openVectors(path: string): NpyRowReader {
  const r = NpyRowReader.open(path);
  const bad = !VECTOR_DTYPES.includes(r.dtype) ? `vectors must be ${VECTOR_DTYPES.join('/')}, got ${r.dtype}`
    : r.shape.length !== 2 ? `expected a 2-D matrix of vectors, got shape [${r.shape.join(', ')}]`
      : r.rows === 0 || r.cols === 0 ? `no vectors (shape [${r.shape.join(', ')}])` : null;
  if (bad) { r.close(); throw new Error(`${path}: ${bad}`); }
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

export function normalizeRows(x: Float32Array, d: number, name: string): void {
  for (let i = 0; i < x.length / d; i++) {
    let s = 0;
    for (let j = 0; j < d; j++) { const v = x[i * d + j]!; if (!Number.isFinite(v)) throw new Error(`${name}: row ${i} has a NaN or infinite value`); s += v * v; }
    const inv = s > 0 ? 1 / Math.sqrt(s) : 0;
    for (let j = 0; j < d; j++) x[i * d + j]! *= inv;
  }
}

/** Vectors for sentences: from a .npy (row count must match) or by embedding with a model. */
export function vectorsFor(sentences: string[], file: string | undefined, modelDir: string | undefined, what: string): Vectors {
  if (file) {
    const v = readVectors(file);
    if (v.n !== sentences.length) throw new Error(`${file}: ${v.n} vectors but ${what} has ${sentences.length} lines`);
    return v;
  }
  if (!modelDir) throw new Error(`${what}: give vectors or --model`);
  const m = cachedModel(modelDir);
  return { data: m.embed(sentences), n: sentences.length, d: m.dim };
}

let cache: { dir: string; model: SentenceEncoderModel } | null = null;
function cachedModel(dir: string): SentenceEncoderModel {
  if (!cache || cache.dir !== dir) cache = { dir, model: loadSentenceEncoder(dir) };
  return cache.model;
}

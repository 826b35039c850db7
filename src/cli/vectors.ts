// Loading sentence vectors for the CLI: .npy (float32/float16/float64) or an embedding model.
import { readNpy, NpyArray } from '../io/npy.js';
import { float16ToFloat32 } from '../io/half.js';
import { loadSentenceEncoder } from '../embed/model-dir.js';

export interface Vectors { data: Float32Array; n: number; d: number }

function toF32(a: NpyArray, dtype: string, path: string): Float32Array {
  if (dtype === 'float32') return a as Float32Array;
  if (dtype === 'float16') return float16ToFloat32(a as Uint16Array);
  if (dtype === 'float64') return Float32Array.from(a as Float64Array);
  throw new Error(`${path}: vectors must be float32/float16/float64, got ${dtype}`);
}

/** Reads a 2-D .npy and L2-normalises its rows; NaN/inf values are an error naming the row. */
export function readVectors(path: string): Vectors {
  const npy = readNpy(path);
  if (npy.shape.length !== 2) throw new Error(`${path}: expected a 2-D matrix, got shape [${npy.shape.join(', ')}]`);
  const [n, d] = npy.shape as [number, number];
  if (!n) throw new Error(`${path}: no vectors`);
  const data = new Float32Array(toF32(npy.data, npy.dtype, path));
  normalizeRows(data, d, path);
  return { data, n, d };
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

let cache: { dir: string; model: ReturnType<typeof loadSentenceEncoder> } | null = null;
function cachedModel(dir: string) {
  if (!cache || cache.dir !== dir) cache = { dir, model: loadSentenceEncoder(dir) };
  return cache.model;
}

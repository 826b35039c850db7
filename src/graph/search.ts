// The query step's search: each row's k nearest neighbours (self excluded), by blocked exact search
// over the float16 vectors or by the index's candidates re-ranked with them.
import { join } from 'node:path';
import { FaissIndex, readIndex, SearchResult } from '../index/faiss.js';
import { readNpyHeader } from '../io/npy.js';
import { empty, gatherDot } from '../tensor/ops.js';
import { readInto } from '../tensor/kernels.js';
import { callOpAsync, fromArray, keep, noGrad, opId, Tensor, tidy } from '../tensor/tensor.js';
import { isFastScanFactory } from './meta.js';

/** The graph's merged index as its query step searches it (fast-scan graphs converted). */
export function openQueryIndex(g: string, factory: string): FaissIndex {
  const index = readIndex(join(g, 'index.faiss'));
  if (!isFastScanFactory(factory)) return index;
  try {
    return index.toFastScan();
  } finally {
    index.dispose();
  }
}

/** Query rows per exact block; blocks start at multiples of it, so a row's products never depend on how the rows are sharded. */
export const EXACT_QUERY_BLOCK = 1024;
const EXACT_BASE_BLOCK = 32768;

/**
 * Exact k nearest (self excluded) of rows [lo, hi) among all N vectors, with cosine distances:
 * float32 products of the float16 vectors, the aligned query block against base blocks of fixed
 * size (matrix products on a worker thread), the best k of each merged (ties by id).
 */
export async function exactGraphRows(vectors: Tensor, lo: number, hi: number, k: number): Promise<{ ids: Int32Array; dist: Float32Array }> {
  const N = vectors.size(0),
    n = hi - lo;
  const ids = new Int32Array(n * k).fill(-1),
    dist = new Float32Array(n * k).fill(Infinity);
  const matmul = opId('matmul');
  for (let a = Math.floor(lo / EXACT_QUERY_BLOCK) * EXACT_QUERY_BLOCK; a < hi; a += EXACT_QUERY_BLOCK) {
    const b = Math.min(N, a + EXACT_QUERY_BLOCK);
    const cand: [number, number][][] = Array.from({ length: b - a }, () => []);
    const q = noGrad(() => tidy(() => vectors.narrow(0, a, b - a).float()));
    try {
      for (let c = 0; c < N; c += EXACT_BASE_BLOCK) {
        const e = Math.min(N, c + EXACT_BASE_BLOCK);
        const bt = noGrad(() =>
          tidy(() =>
            vectors
              .narrow(0, c, e - c)
              .float()
              .t(),
          ),
        );
        let sc: Tensor;
        try {
          sc = (await callOpAsync(matmul, [q, bt])) as Tensor;
        } finally {
          bt.dispose();
        }
        try {
          const kk = Math.min(k + 1, e - c);
          const { v, i } = noGrad(() =>
            tidy(() => {
              // the query itself never counts
              for (let r = Math.max(a, c); r < Math.min(b, e); r++)
                sc.select(0, r - a)
                  .select(0, r - c)
                  .fill_(-Infinity);
              const [vs, is] = sc.topk(kk, 1) as [Tensor, Tensor];
              return { v: vs.toFloat32Array(), i: is.toArray() };
            }),
          );
          for (let r = 0; r < b - a; r++)
            for (let j = 0; j < kk; j++) {
              const score = v[r * kk + j]!;
              if (score !== -Infinity) cand[r]!.push([c + Number(i[r * kk + j]), score]);
            }
        } finally {
          sc.dispose();
        }
      }
    } finally {
      q.dispose();
    }
    for (let r = Math.max(a, lo); r < Math.min(b, hi); r++) {
      const list = cand[r - a]!.filter(([id]) => id !== r).sort((x, y) => y[1] - x[1] || x[0] - y[0]);
      for (let j = 0; j < Math.min(k, list.length); j++) {
        ids[(r - lo) * k + j] = list[j]![0];
        dist[(r - lo) * k + j] = 1 - list[j]![1];
      }
    }
  }
  return { ids, dist };
}

/** All vectors of the graph as one float16 tensor [N, d] (read straight into its storage). */
export function loadVectors(g: string): Tensor {
  const file = join(g, 'vectors.npy');
  const h = readNpyHeader(file);
  if (h.dtype !== 'float16' || h.shape.length !== 2) throw new Error(`${file}: expected a 2-D float16 matrix`);
  const t = keep(empty(h.shape, 'float16'));
  readInto(file, [[t, h.headerBytes]]);
  return t;
}

/**
 * For queries [lo, hi): the index's `candidates` nearest, re-ranked by the exact inner product with
 * the float16 vectors, the best k other than the query itself. Returns ids and cosine distances.
 */
export function queryRows(index: FaissIndex, vectors: Tensor, lo: number, hi: number, k: number, candidates: number): { ids: Int32Array; dist: Float32Array } {
  const q = queryVectors(vectors, lo, hi);
  return rerankCandidates(vectors, lo, q, index.search(q, Math.min(candidates + 1, index.ntotal)), k);
}

/** queryRows with the index search on faiss's worker threads (the event loop stays free: a worker renews its job lock). */
export async function queryRowsAsync(
  index: FaissIndex,
  vectors: Tensor,
  lo: number,
  hi: number,
  k: number,
  candidates: number,
): Promise<{ ids: Int32Array; dist: Float32Array }> {
  const q = queryVectors(vectors, lo, hi);
  return rerankCandidates(vectors, lo, q, await index.searchAsync(q, Math.min(candidates + 1, index.ntotal)), k);
}

const queryVectors = (vectors: Tensor, lo: number, hi: number) =>
  noGrad(() =>
    tidy(() =>
      vectors
        .narrow(0, lo, hi - lo)
        .float()
        .toFloat32Array(),
    ),
  );

/**
 * The index's candidates r of queries q re-ranked by the exact inner product with `vectors` (the
 * graph's float16 rows, scored in the addon's gatherDot): the best k of each, other than the
 * query itself (query i is row `lo + i` of the collection; lo < 0: queries from outside it), as ids
 * and cosine distances (1 − score). Ties keep the index's order. Also the graph-query bench's
 * re-ranking, so its figures price the product's.
 */
export function rerankCandidates(vectors: Tensor, lo: number, q: Float32Array, r: SearchResult, k: number): { ids: Int32Array; dist: Float32Array } {
  const d = vectors.size(1),
    n = q.length / d;
  const K = r.k;
  const ids = new Int32Array(n * k).fill(-1),
    dist = new Float32Array(n * k).fill(Infinity);
  const scores = noGrad(() => tidy(() => gatherDot(vectors, fromArray(r.labels, [n, K]), fromArray(q, [n, d])).toFloat32Array()));
  // the best k by insertion (k ≪ K): a candidate enters after every kept one scoring at least as
  // much, so equal scores keep the index's order, as a stable sort would
  const topI = new Int32Array(k),
    topS = new Float32Array(k);
  for (let i = 0; i < n; i++) {
    const self = lo < 0 ? -1 : lo + i;
    let m = 0;
    for (let j = 0; j < K; j++) {
      const l = Number(r.labels[i * K + j]);
      if (l < 0 || l === self) continue;
      const s = scores[i * K + j]!;
      if (m === k && !(s > topS[k - 1]!)) continue;
      let dup = false;
      for (let t = 0; t < m; t++)
        if (topI[t] === l) {
          dup = true;
          break;
        }
      if (dup) continue;
      let p = m < k ? m++ : k - 1;
      while (p > 0 && s > topS[p - 1]!) {
        topI[p] = topI[p - 1]!;
        topS[p] = topS[p - 1]!;
        p--;
      }
      topI[p] = l;
      topS[p] = s;
    }
    for (let j = 0; j < m; j++) {
      ids[i * k + j] = topI[j]!;
      dist[i * k + j] = 1 - topS[j]!;
    }
  }
  return { ids, dist };
}

// Exact (brute-force inner-product) search over plain float32 rows and what goes with it, in one
// place for mining, evaluation and the cluster's mining shards: k-NN chunked over the queries
// (bounded result memory; on faiss's worker threads for servers and workers), the merge of top-k
// lists of base blocks, exact re-scoring of found neighbours (bit-stable scores whatever the
// batching), and recall of an approximate search against the exact one. Faiss indexes live in
// ./faiss.ts; the graph builder's float16 re-ranking stays with its tensors in src/graph/search.ts.
import { nativePays } from '../tensor/backend.js';
import { knn as faissKnn, knnAsync, SearchResult } from './faiss.js';

export type KnnFn = (queries: Float32Array, base: Float32Array, d: number, k: number) => SearchResult;

/**
 * Whether an exact search of q against base runs in TypeScript (knnPortable) rather than on faiss:
 * where loading the native backend would cost more than the search (nativePays).
 */
function searchesPortably(q: Float32Array, base: Float32Array, d: number): boolean {
  return !nativePays((2 * q.length * base.length) / d);
}

/**
 * The k best base rows of every query by inner product, in TypeScript (a search too small to pay
 * for loading faiss): each score as rescoreExact computes it (rowProduct), best first, ties to the
 * lower id.
 */
export function knnPortable(q: Float32Array, base: Float32Array, d: number, k: number): SearchResult {
  const n = q.length / d,
    nb = base.length / d,
    kk = Math.min(k, nb);
  const distances = new Float32Array(n * kk).fill(-Infinity),
    labels = new BigInt64Array(n * kk).fill(-1n);
  const best = new Float64Array(kk),
    ids = new Int32Array(kk);
  for (let i = 0; i < n; i++) {
    let have = 0;
    for (let j = 0; j < nb; j++) {
      const s = rowProduct(q, i, base, j, d);
      if (have === kk && s <= best[kk - 1]!) continue;
      // insert in order (equal scores keep the earlier, lower id first)
      let at = have < kk ? have++ : kk - 1;
      while (at > 0 && best[at - 1]! < s) {
        best[at] = best[at - 1]!;
        ids[at] = ids[at - 1]!;
        at--;
      }
      best[at] = s;
      ids[at] = j;
    }
    for (let t = 0; t < have; t++) {
      distances[i * kk + t] = best[t]!;
      labels[i * kk + t] = BigInt(ids[t]!);
    }
  }
  return { distances, labels, n, k: kk };
}

/** k-NN of every query row, chunked over queries (by default exact: faiss, or knnPortable for a small search). */
export function knnChunked(
  q: Float32Array,
  base: Float32Array,
  d: number,
  k: number,
  chunk = 65536,
  fn: KnnFn = searchesPortably(q, base, d) ? knnPortable : (a, b, dd, kk) => faissKnn(a, b, dd, kk, 'ip'),
  onChunk?: (rows: number) => void,
): SearchResult {
  const n = q.length / d;
  const kk = Math.min(k, base.length / d);
  const distances = new Float32Array(n * kk),
    labels = new BigInt64Array(n * kk);
  for (let i = 0; i < n; i += chunk) {
    const j = Math.min(n, i + chunk);
    const r = fn(q.subarray(i * d, j * d), base, d, kk);
    distances.set(r.distances, i * kk);
    labels.set(r.labels, i * kk);
    onChunk?.(j - i);
  }
  return { distances, labels, n, k: kk };
}

/** knnChunked on faiss's worker threads: the event loop stays free between and during chunks (job locks, HTTP); a small search (knnPortable) runs here. */
export async function knnChunkedAsync(
  q: Float32Array,
  base: Float32Array,
  d: number,
  k: number,
  chunk = 16384,
  onChunk?: (rows: number) => void,
): Promise<SearchResult> {
  const n = q.length / d;
  const kk = Math.min(k, base.length / d);
  const distances = new Float32Array(n * kk),
    labels = new BigInt64Array(n * kk);
  const portable = searchesPortably(q, base, d);
  for (let i = 0; i < n; i += chunk) {
    const j = Math.min(n, i + chunk);
    const r = portable ? knnPortable(q.subarray(i * d, j * d), base, d, kk) : await knnAsync(q.subarray(i * d, j * d), base, d, kk, 'ip');
    distances.set(r.distances, i * kk);
    labels.set(r.labels, i * kk);
    onChunk?.(j - i);
  }
  return { distances, labels, n, k: kk };
}

/**
 * Merges the k-NN of the same queries against a further block of the base (labels offset by the
 * block's first row) into acc: the best k by score (higher is better: inner product).
 */
export function mergeTopK(acc: SearchResult | null, part: SearchResult, offset: number, k: number): SearchResult {
  const n = part.n;
  const distances = new Float32Array(n * k).fill(-Infinity),
    labels = new BigInt64Array(n * k).fill(-1n);
  const off = BigInt(offset);
  for (let i = 0; i < n; i++) {
    // both lists are sorted best-first: a two-way merge
    let a = 0,
      b = 0;
    const na = acc ? acc.k : 0;
    for (let j = 0; j < k; j++) {
      const da = acc && a < na && acc.labels[i * na + a]! >= 0n ? acc.distances[i * na + a]! : -Infinity;
      const db = b < part.k && part.labels[i * part.k + b]! >= 0n ? part.distances[i * part.k + b]! : -Infinity;
      if (da === -Infinity && db === -Infinity) break;
      if (da >= db) {
        distances[i * k + j] = da;
        labels[i * k + j] = acc!.labels[i * na + a]!;
        a++;
      } else {
        distances[i * k + j] = db;
        labels[i * k + j] = part.labels[i * part.k + b]! + off;
        b++;
      }
    }
  }
  return { distances, labels, n, k };
}

/**
 * Recomputes every found neighbour's similarity as one dot product summed in a fixed order
 * (float64, rounded to float32) and re-sorts each row best first (ties: lower id). Why: BLAS
 * blocks a search differently for different query counts, so the same query scored in another
 * call (a shard, a chunk) could differ in the last bit, and a mined pair's printed score with it;
 * approximate indexes (PQ) give approximate scores. Costs rows × k dot products.
 */
export function rescoreExact(r: SearchResult, q: Float32Array, base: Float32Array, d: number): SearchResult {
  const { n, k } = r;
  const row: { s: number; l: bigint }[] = [];
  for (let i = 0; i < n; i++) {
    row.length = 0;
    for (let j = 0; j < k; j++) {
      const l = r.labels[i * k + j]!;
      if (l < 0n) continue;
      row.push({ s: rowProduct(q, i, base, Number(l), d), l });
    }
    row.sort((x, y) => y.s - x.s || (x.l < y.l ? -1 : x.l > y.l ? 1 : 0));
    for (let j = 0; j < k; j++) {
      r.distances[i * k + j] = j < row.length ? row[j]!.s : -Infinity;
      r.labels[i * k + j] = j < row.length ? row[j]!.l : -1n;
    }
  }
  return r;
}

/** Row a of q · row b of base, summed in float64 in index order and rounded to float32: every exact score of rescoreExact. */
export function rowProduct(q: Float32Array, a: number, base: Float32Array, b: number, d: number): number {
  const x = a * d,
    y = b * d;
  let s = 0;
  for (let t = 0; t < d; t++) s += q[x + t]! * base[y + t]!;
  return Math.fround(s);
}

/** Recall@k of approximate labels against exact labels. */
export function recallVsExact(exact: SearchResult, approx: SearchResult): number {
  let hit = 0;
  for (let i = 0; i < exact.n; i++) {
    const truth = new Set(Array.from(exact.labels.subarray(i * exact.k, (i + 1) * exact.k)));
    for (let j = 0; j < approx.k; j++) if (truth.has(approx.labels[i * approx.k + j]!)) hit++;
  }
  return hit / (exact.n * exact.k);
}

/** The k nearest base rows of every query by inner product (exact; k capped at the base size). */
export function exactSearch(q: Float32Array, base: Float32Array, d: number, k: number): SearchResult {
  return faissKnn(q, base, d, Math.min(k, base.length / d), 'ip');
}

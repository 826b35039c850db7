// The graph's recall against exact search on a sample (tied neighbours counted as found), and the
// nprobe (and candidates re-ranked) chosen on a sample to reach the recall target.
import { join } from 'node:path';
import { FaissIndex } from '../index/faiss.js';
import { NpyRowReader } from '../io/npy.js';
import { writeJson } from '../nn/serialize.js';
import { cat } from '../tensor/ops.js';
import { fromArray, noGrad, Tensor, tidy } from '../tensor/tensor.js';
import { Rng } from '../util/rng.js';
import { GraphMeta, hnswFactory, metaFile, readGraphMeta } from './meta.js';
import { loadVectors, openQueryIndex, queryRows } from './search.js';

/**
 * Exact k nearest (self excluded) of sample rows among all vectors, in blocks of the base: their
 * ids and each row's k-th best score (the bar a tied neighbour must reach, see TIE_TOLERANCE).
 */
function exactNeighbours(vectors: Tensor, sample: number[], k: number): { ids: Int32Array[]; kth: Float32Array } {
  const N = vectors.size(0);
  return noGrad(() =>
    tidy(() => {
      const q = vectors.indexSelect(0, fromArray(BigInt64Array.from(sample, BigInt))).float();
      let best: { s: Tensor; i: Tensor } | null = null;
      for (let a = 0; a < N; a += 200000) {
        const b = Math.min(N, a + 200000),
          prev: { s: Tensor; i: Tensor } | null = best;
        // each block's scores (sample × 200k floats) and float copy are freed before the next one:
        // only the best k so far are kept
        best = tidy(() => {
          const s = q.matmul(
            vectors
              .narrow(0, a, b - a)
              .float()
              .t(),
          );
          // the query itself never counts
          sample.forEach((r, qi) => {
            if (r >= a && r < b)
              s.select(0, qi)
                .select(0, r - a)
                .fill_(-Infinity);
          });
          const [vs, is] = s.topk(Math.min(k, b - a), 1) as [Tensor, Tensor];
          const idx = is.add(a);
          if (!prev) return { s: vs, i: idx };
          // the best k of the blocks so far and this one
          const allS = cat([prev.s, vs], 1),
            allI = cat([prev.i, idx], 1);
          const [s2, p] = allS.topk(k, 1) as [Tensor, Tensor];
          return { s: s2, i: allI.gather(1, p) };
        });
      }
      const ids = best!.i.toArray(),
        scores = best!.s.toFloat32Array(),
        kk = best!.s.size(1);
      return {
        ids: sample.map((_, qi) => Int32Array.from(ids.slice(qi * kk, (qi + 1) * kk))),
        kth: Float32Array.from(sample, (_, qi) => scores[qi * kk + kk - 1]!),
      };
    }),
  );
}

/**
 * Recall counts a returned neighbour whose exact score reaches the k-th exact neighbour's (less
 * this tolerance) as found, as ann-benchmarks' k-nn recall does: a collection of many languages
 * holds the same string in several of them (names, "%s", "OK"), whose vectors are equal, and
 * which k of such tied rows exact search lists is arbitrary; by ids alone, a graph listing
 * another k of them would count as wrong.
 */
export const TIE_TOLERANCE = 1e-5;

/** How many of a row's neighbours (ids, with their exact scores) count as found against its exact ones. */
function hits(ids: ArrayLike<number>, scores: ArrayLike<number>, k: number, truth: Set<number>, kth: number): number {
  let hit = 0;
  for (let j = 0; j < k; j++) if (truth.has(ids[j]!) || scores[j]! >= kth - TIE_TOLERANCE) hit++;
  return hit;
}

/**
 * Recall@10 of graph rows against exact search on a sample of the sentences (ties counted as
 * found: TIE_TOLERANCE), and by ids alone (a tied row exact search did not list counts as missed).
 */
export function graphRecall(g: string, vectors: Tensor, sampleSize: number, seed = 1): { recall: number; byIds: number } {
  const meta = readGraphMeta(g);
  const N = vectors.size(0),
    k = Math.min(10, meta.k);
  const sample = new Rng(seed).sample(N, Math.min(sampleSize, N)).sort((a, b) => a - b);
  const exact = exactNeighbours(vectors, sample, k);
  const nb = NpyRowReader.open(join(g, 'neighbours.npy'));
  let hit = 0,
    byIds = 0;
  try {
    sample.forEach((r, i) => {
      const row = (nb.readRowsRaw(r, r + 1) as Int32Array).subarray(0, k);
      const truth = new Set(exact.ids[i]!);
      for (const id of row) if (truth.has(id)) byIds++;
      hit += hits(row, exactScores(vectors, r, row), k, truth, exact.kth[i]!);
    });
  } finally {
    nb.close();
  }
  return { recall: hit / (sample.length * k), byIds: byIds / (sample.length * k) };
}

/** The exact scores (float32 products of the stored vectors) of row r with each of ids. */
function exactScores(vectors: Tensor, r: number, ids: Int32Array): Float32Array {
  return noGrad(() =>
    tidy(() => {
      const q = vectors.narrow(0, r, 1).float();
      const v = vectors.indexSelect(0, fromArray(BigInt64Array.from(ids, (x) => BigInt(Math.max(0, x))))).float();
      const s = v.matmul(q.t()).toFloat32Array();
      return Float32Array.from(s, (x, j) => (ids[j]! < 0 ? -Infinity : x));
    }),
  );
}

/**
 * The graph's nprobe: the one recorded, or (IVF indexes) chosen now on a sample and recorded, so
 * that every shard of the query step uses the same one; where more lists stop raising the recall,
 * the candidates re-ranked are raised too (recorded as the graph's `candidates`; its settings keep
 * the number given). Null for indexes without lists.
 */
export function tuneGraphNprobe(g: string, index: FaissIndex, vectors: Tensor, recallTarget: number, log: (l: string) => void): number | null {
  const meta = readGraphMeta(g);
  if (meta.nprobe || !/IVF/.test(meta.factory)) return meta.nprobe;
  const { nprobe, candidates } = chooseNprobe(index, vectors, meta, recallTarget, log);
  const m = readGraphMeta(g);
  m.nprobe = nprobe;
  m.candidates = candidates;
  writeJson(metaFile(g), m);
  return nprobe;
}

/** tuneGraphNprobe with the graph's own merged index and vectors (after the add step). */
export function tuneGraph(g: string, recallTarget: number, log: (l: string) => void): number | null {
  const m = readGraphMeta(g);
  if (m.nprobe || !/IVF/.test(m.factory)) return m.nprobe;
  const vectors = loadVectors(g),
    index = openQueryIndex(g, m.factory);
  try {
    return tuneGraphNprobe(g, index, vectors, recallTarget, log);
  } finally {
    index.dispose();
    vectors.dispose();
  }
}

/** Candidates re-ranked are raised to at most this many times the number given. */
export const MAX_CANDIDATE_FACTOR = 8;

/**
 * The smallest nprobe (powers of two from 4, from 1 with an HNSW coarse quantizer) whose recall@10
 * on 500 sampled queries reaches the target. Where doubling nprobe gains less than 0.005 (the
 * codes do not rank the true neighbours among the candidates: bench/RESULTS.md, 10M × 128), the
 * candidates double instead (up to MAX_CANDIDATE_FACTOR × the number given) at the same nprobe.
 */
function chooseNprobe(index: FaissIndex, vectors: Tensor, meta: GraphMeta, target: number, log: (l: string) => void): { nprobe: number; candidates: number } {
  const N = vectors.size(0);
  const sample = new Rng(7).sample(N, Math.min(500, N)).sort((a, b) => a - b);
  const exact = exactNeighbours(vectors, sample, 10);
  const nlist = Number(/IVF(\d+)/.exec(meta.factory)?.[1] ?? 1);
  const maxCandidates = Math.min(N - 1, meta.candidates * MAX_CANDIDATE_FACTOR);
  let candidates = meta.candidates,
    prev = -1,
    best = 0;
  // an HNSW coarse quantizer serves many small lists, of which one or two often reach the target
  let p = Math.min(/IVF\d+_HNSW/.test(meta.factory) ? 1 : 4, nlist);
  for (;;) {
    index.setNprobe(p);
    let hit = 0;
    for (let i = 0; i < sample.length; i++) {
      const r = queryRows(index, vectors, sample[i]!, sample[i]! + 1, 10, candidates);
      // dist is 1 − the exact (re-ranked) score
      hit += hits(
        r.ids,
        Float32Array.from(r.dist, (x) => 1 - x),
        r.ids.length,
        new Set(exact.ids[i]!),
        exact.kth[i]!,
      );
    }
    best = hit / (sample.length * 10);
    log(`nprobe ${p}, ${candidates} candidates: recall@10 ${best.toFixed(3)} on ${sample.length} sampled sentences`);
    if (best >= target) break;
    const stalled = prev >= 0 && best - prev < 0.005;
    if ((stalled || p === nlist) && candidates < maxCandidates) {
      candidates = Math.min(maxCandidates, candidates * 2);
      prev = -1;
      continue;
    }
    if (p === nlist) break;
    prev = best;
    p = Math.min(nlist, p * 2);
  }
  if (best < target)
    log(
      `warning: recall@10 ${best.toFixed(3)} at nprobe ${p}${p === nlist ? ' (every list)' : ''} and ${candidates} candidates is below the recall target ${target}: the index's codes limit it; more --candidates or a finer --factory would raise it${/_HNSW/.test(meta.factory) ? '' : ` (e.g. --factory "${hnswFactory(N)}": finer lists, so finer residual codes; bench/RESULTS.md)`}`,
    );
  return { nprobe: p, candidates };
}

// Word alignment by EM (Dyer, Chahuneau & Smith 2013, "A simple, fast, and effective
// reparameterization of IBM Model 2" — fast_align). Each target word e_i aligns to a source word
// f_j (or to null) with probability p(a_i = j) · t(e_i | f_j), where the alignment prior favours the
// diagonal: p(a_i = j) ∝ exp(−λ·|i/m − j/n|) (j ≥ 1), p(a_i = 0) = p0. IBM Model 1 (a uniform
// prior) starts the translation table; Model 2 iterations follow. Run in both directions, the
// alignment links that both agree on (the intersection) are the precise ones the cross-lingual
// skip-gram needs.

export interface AlignOptions {
  /** EM iterations with the uniform prior (IBM Model 1), then with the diagonal prior. */
  model1Iterations?: number;
  iterations?: number;
  /** Diagonal tension λ (fast_align's default starting value is 4) and the null probability p0. */
  tension?: number;
  nullProb?: number;
  /** Called after each EM iteration with the iterations done and all of them (progress of a long training). */
  onIteration?: (done: number, total: number) => void;
}

/** A sentence pair as word ids of each side (ids per side are independent). */
export interface IdPair {
  src: Int32Array;
  trg: Int32Array;
}

/**
 * The (source word, target word) cells of a set of sentence pairs: every pair's target position i
 * has n + 1 cells (null, then each source position), each the dense id of its (f, e) word pair in
 * one table. EM then runs over typed arrays instead of a hash map per iteration (the aligner was
 * most of a JMT run's preparation: 11 minutes on the shared corpus).
 */
interface Cells {
  /** Per pair, where its cells start in `ids`: m·(n + 1) of them, target-major. */
  start: Int32Array;
  ids: Int32Array;
  /** The source word of each dense id (srcVocab: null). */
  srcOf: Int32Array;
}

function cellsOf(pairs: IdPair[], srcVocab: number, trgVocab: number): Cells {
  const NULL = srcVocab;
  const start = new Int32Array(pairs.length + 1);
  pairs.forEach((p, k) => {
    start[k + 1] = start[k]! + p.trg.length * (p.src.length + 1);
  });
  const ids = new Int32Array(start[pairs.length]!);
  const dense = new Map<number, number>(),
    srcOf: number[] = [];
  let at = 0;
  for (const { src, trg } of pairs) {
    for (const e of trg) {
      for (let j = 0; j <= src.length; j++) {
        const f = j === 0 ? NULL : src[j - 1]!;
        const key = f * trgVocab + e;
        let id = dense.get(key);
        if (id === undefined) {
          id = srcOf.length;
          dense.set(key, id);
          srcOf.push(f);
        }
        ids[at++] = id;
      }
    }
  }
  return { start, ids, srcOf: Int32Array.from(srcOf) };
}

function diagonal(i: number, j: number, m: number, n: number, tension: number): number {
  return Math.exp(-tension * Math.abs((i + 1) / m - (j + 1) / n));
}

/**
 * Trains t(trg | src) on sentence pairs (source ids < srcVocab + 1: id srcVocab is reserved for
 * null): t[c] of each cell id of `cells`. IBM Model 1 starts from t = 1 on every co-occurring word pair.
 */
function trainAlignment(pairs: IdPair[], cells: Cells, srcVocab: number, o: AlignOptions): Float64Array {
  const m1 = o.model1Iterations ?? 2,
    m2 = o.iterations ?? 4;
  const tension = o.tension ?? 4,
    p0 = o.nullProb ?? 0.08;
  const { start, ids, srcOf } = cells;
  const t = new Float64Array(srcOf.length).fill(1);
  const counts = new Float64Array(srcOf.length),
    totals = new Float64Array(srcVocab + 1);
  for (let it = 0; it < m1 + m2; it++) {
    const useDiag = it >= m1;
    counts.fill(0);
    totals.fill(0);
    pairs.forEach(({ src, trg }, k) => {
      const n = src.length,
        m = trg.length;
      const post = new Float64Array(n + 1);
      for (let i = 0; i < m; i++) {
        const row = start[k]! + i * (n + 1);
        let z = 0;
        const a0 = useDiag ? p0 : 1 / (n + 1);
        post[0] = a0 * t[ids[row]!]!;
        z += post[0]!;
        let dz = 0;
        if (useDiag) for (let j = 0; j < n; j++) dz += diagonal(i, j, m, n, tension);
        for (let j = 0; j < n; j++) {
          const prior = useDiag ? ((1 - p0) * diagonal(i, j, m, n, tension)) / dz : 1 / (n + 1);
          post[j + 1] = prior * t[ids[row + j + 1]!]!;
          z += post[j + 1]!;
        }
        for (let j = 0; j <= n; j++) {
          const c = post[j]! / z,
            id = ids[row + j]!;
          counts[id]! += c;
          totals[srcOf[id]!]! += c;
        }
      }
    });
    for (let c = 0; c < t.length; c++) t[c] = counts[c]! / totals[srcOf[c]!]!;
    o.onIteration?.(it + 1, m1 + m2);
  }
  return t;
}

/** For each target word of pair k, the best source position (−1: null), under t and the diagonal prior. */
function align(pair: IdPair, row0: number, ids: Int32Array, t: Float64Array, o: AlignOptions): Int32Array {
  const tension = o.tension ?? 4,
    p0 = o.nullProb ?? 0.08;
  const { src, trg } = pair;
  const n = src.length,
    m = trg.length;
  const out = new Int32Array(m).fill(-1);
  for (let i = 0; i < m; i++) {
    const row = row0 + i * (n + 1);
    let dz = 0;
    for (let j = 0; j < n; j++) dz += diagonal(i, j, m, n, tension);
    let best = p0 * t[ids[row]!]!;
    for (let j = 0; j < n; j++) {
      const s = (((1 - p0) * diagonal(i, j, m, n, tension)) / dz) * t[ids[row + j + 1]!]!;
      if (s > best) {
        best = s;
        out[i] = j;
      }
    }
  }
  return out;
}

/**
 * Alignment links of sentence pairs agreed by both directions: [src position, trg position] lists.
 * srcVocab / trgVocab bound the ids of each side.
 */
export function alignBothWays(pairs: IdPair[], srcVocab: number, trgVocab: number, o: AlignOptions = {}): [number, number][][] {
  const revPairs = pairs.map((p) => ({ src: p.trg, trg: p.src }));
  const fc = cellsOf(pairs, srcVocab, trgVocab),
    rc = cellsOf(revPairs, trgVocab, srcVocab);
  const fwd = trainAlignment(pairs, fc, srcVocab, o);
  const rev = trainAlignment(revPairs, rc, trgVocab, o);
  return pairs.map((p, k) => {
    const a = align(p, fc.start[k]!, fc.ids, fwd, o); // trg i → src a[i]
    const b = align(revPairs[k]!, rc.start[k]!, rc.ids, rev, o); // src j → trg b[j]
    const links: [number, number][] = [];
    a.forEach((j, i) => {
      if (j >= 0 && b[j] === i) links.push([j, i]);
    });
    return links;
  });
}

/**
 * The translation table t(trg word | src word) of fast_align's EM on sentence pairs (IBM Model 1,
 * then the diagonal prior), as a map from f · trgVocab + e to the probability (f = srcVocab: null);
 * entries below `floor` are dropped (a sparse table to store and look up).
 */
export function translationTable(pairs: IdPair[], srcVocab: number, trgVocab: number, o: AlignOptions & { floor?: number } = {}): Map<number, number> {
  const cells = cellsOf(pairs, srcVocab, trgVocab);
  const t = trainAlignment(pairs, cells, srcVocab, o);
  const out = new Map<number, number>();
  const floor = o.floor ?? 0.01;
  // each dense cell id once: its (f, e) key from the first place it occurs
  const keyOf = new Float64Array(t.length).fill(-1);
  pairs.forEach((p, k) => {
    const n = p.src.length;
    p.trg.forEach((e, i) => {
      for (let j = 0; j <= n; j++) {
        const id = cells.ids[cells.start[k]! + i * (n + 1) + j]!;
        if (keyOf[id] === -1) keyOf[id] = cells.srcOf[id]! * trgVocab + e;
      }
    });
  });
  for (let c = 0; c < t.length; c++) if (t[c]! >= floor) out.set(keyOf[c]!, t[c]!);
  return out;
}

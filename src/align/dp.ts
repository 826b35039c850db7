// Sentence-alignment dynamic programming: the cheapest monotone path from (0, 0) to (n, m)
// through a cost model whose steps are the alignment types (dx source sentences with dy target
// sentences, both ≥ 1) and the deletions 1:0 and 0:1, computed exactly over the cells of a band
// (a column range per row; the whole matrix is one band). Memory and time are the band's cells,
// so a band that follows a coarse path keeps long documents linear (Thompson & Koehn 2019,
// "Vecalign: Improved Sentence Alignment in Linear Time and Space", §3.2; bandAround and
// upsampleRanges build such bands). Also the length-based baseline of Gale & Church (1993,
// "A Program for Aligning Sentences in Bilingual Corpora") as a cost model for this DP.

/** One group of an alignment: source sentences [srcStart, srcEnd), target [trgStart, trgEnd); an empty side is a deletion (insertion). */
export interface DpGroup {
  srcStart: number;
  srcEnd: number;
  trgStart: number;
  trgEnd: number;
  cost: number;
}

/** What the DP minimises: costs of the steps between cells (i, j) = (source sentences done, target sentences done). */
export interface CostModel {
  n: number;
  m: number;
  /** The non-deletion steps [dx, dy] (both ≥ 1). */
  types: readonly (readonly [number, number])[];
  /** Cost of the group of source [i − dx, i) with target [j − dy, j). */
  cost(i: number, j: number, dx: number, dy: number): number;
  /** Cost of leaving source sentence i unaligned (1:0). */
  delSrc(i: number): number;
  /** Cost of leaving target sentence j unaligned (0:1). */
  delTrg(j: number): number;
}

/** Columns lo[i]..hi[i] (inclusive) of each row i = 0..n searched by the DP. */
export interface Band {
  lo: Int32Array;
  hi: Int32Array;
}

/** The whole (n + 1) × (m + 1) matrix as one band (exact, O(n·m) memory). */
export function fullBand(n: number, m: number): Band {
  return { lo: new Int32Array(n + 1), hi: new Int32Array(n + 1).fill(m) };
}

/** Number of cells of a band. */
export function bandCells(b: Band): number {
  let s = 0;
  for (let i = 0; i < b.lo.length; i++) s += b.hi[i]! - b.lo[i]! + 1;
  return s;
}

/**
 * The cheapest path from (0, 0) to (n, m) inside the band, as groups in document order. Ties go
 * to the earlier type of `types`, then to deletions (source first). Throws when the band does not
 * contain both corners or leaves (n, m) unreachable.
 */
export function alignDp(c: CostModel, band: Band = fullBand(c.n, c.m)): DpGroup[] {
  const { n, m, types } = c;
  const { lo, hi } = band;
  if (lo.length !== n + 1 || hi.length !== n + 1) throw new Error(`alignment DP: a band of ${lo.length} rows for ${n + 1}`);
  if (lo[0] !== 0 || hi[n]! !== m) throw new Error('alignment DP: the band must contain (0, 0) and (n, m)');
  const off = new Float64Array(n + 2);
  for (let i = 0; i <= n; i++) {
    if (lo[i]! < 0 || hi[i]! > m || hi[i]! < lo[i]!) throw new Error(`alignment DP: row ${i} of the band is [${lo[i]}, ${hi[i]}] (columns 0..${m})`);
    off[i + 1] = off[i]! + hi[i]! - lo[i]! + 1;
  }
  const cells = off[n + 1]!;
  const cum = new Float64Array(cells).fill(Infinity);
  const back = new Uint8Array(cells).fill(255);
  const T = types.length;
  if (T > 250) throw new Error('alignment DP: at most 250 alignment types');
  const at = (i: number, j: number) => (j < lo[i]! || j > hi[i]! ? -1 : off[i]! + j - lo[i]!);
  for (let i = 0; i <= n; i++) {
    const li = lo[i]!,
      hiI = hi[i]!,
      base = off[i]! - li;
    for (let j = li; j <= hiI; j++) {
      const k = base + j;
      if (i === 0 && j === 0) {
        cum[k] = 0;
        continue;
      }
      let best = Infinity,
        arg = 255;
      for (let t = 0; t < T; t++) {
        const dx = types[t]![0],
          dy = types[t]![1],
          pi = i - dx,
          pj = j - dy;
        if (pi < 0 || pj < 0) continue;
        const p = at(pi, pj);
        if (p < 0) continue;
        const prev = cum[p]!;
        if (prev === Infinity) continue;
        const v = prev + c.cost(i, j, dx, dy);
        if (v < best) {
          best = v;
          arg = t;
        }
      }
      if (i > 0) {
        const p = at(i - 1, j);
        if (p >= 0 && cum[p]! < Infinity) {
          const v = cum[p]! + c.delSrc(i - 1);
          if (v < best) {
            best = v;
            arg = T;
          }
        }
      }
      if (j > 0) {
        const p = k - 1; // (i, j − 1): j − 1 ≥ lo[i] since j > lo[i] here, or outside the band
        if (j - 1 >= li && cum[p]! < Infinity) {
          const v = cum[p]! + c.delTrg(j - 1);
          if (v < best) {
            best = v;
            arg = T + 1;
          }
        }
      }
      cum[k] = best;
      back[k] = arg;
    }
  }
  if (!(cum[at(n, m)]! < Infinity)) throw new Error('alignment DP: (n, m) is not reachable inside the band');
  const out: DpGroup[] = [];
  let i = n,
    j = m;
  while (i > 0 || j > 0) {
    const k = at(i, j),
      t = back[k]!;
    const [dx, dy] = t < T ? types[t]! : t === T ? [1, 0] : [0, 1];
    const pk = at(i - dx, j - dy);
    out.push({ srcStart: i - dx, srcEnd: i, trgStart: j - dy, trgEnd: j, cost: cum[k]! - cum[pk]! });
    i -= dx;
    j -= dy;
  }
  return out.reverse();
}

/**
 * Per-row column ranges [minJ, maxJ] that a path (groups in order, from (0, 0) to (n, m))
 * touches: a group covers the rows and columns of its box; a run of deletions between two
 * aligned groups covers its whole box too (the DP then searches it exactly) unless that box is
 * larger than `maxBlock` cells, when a straight line through it is used. Both ranges are
 * non-decreasing in the row.
 */
export function pathRanges(groups: readonly DpGroup[], n: number, m: number, maxBlock = 1 << 16): { minJ: Int32Array; maxJ: Int32Array } {
  const minJ = new Int32Array(n + 1).fill(m),
    maxJ = new Int32Array(n + 1).fill(0);
  const box = (i0: number, i1: number, j0: number, j1: number) => {
    for (let r = i0; r <= i1; r++) {
      if (j0 < minJ[r]!) minJ[r] = j0;
      if (j1 > maxJ[r]!) maxJ[r] = j1;
    }
  };
  const line = (i0: number, i1: number, j0: number, j1: number) => {
    for (let r = i0; r <= i1; r++) {
      const a = i1 === i0 ? j0 : j0 + Math.floor(((j1 - j0) * (r - i0)) / (i1 - i0)),
        b = i1 === i0 ? j1 : j0 + Math.ceil(((j1 - j0) * (r - i0)) / (i1 - i0));
      box(r, r, a, b);
    }
  };
  let g = 0;
  while (g < groups.length) {
    const s = groups[g]!;
    if (s.srcEnd > s.srcStart && s.trgEnd > s.trgStart) {
      box(s.srcStart, s.srcEnd, s.trgStart, s.trgEnd);
      g++;
      continue;
    }
    // a run of deletions: one block
    let e = g;
    while (e < groups.length && (groups[e]!.srcEnd === groups[e]!.srcStart || groups[e]!.trgEnd === groups[e]!.trgStart)) e++;
    const i0 = s.srcStart,
      j0 = s.trgStart,
      i1 = groups[e - 1]!.srcEnd,
      j1 = groups[e - 1]!.trgEnd;
    if ((i1 - i0 + 1) * (j1 - j0 + 1) <= maxBlock) box(i0, i1, j0, j1);
    else line(i0, i1, j0, j1);
    g = e;
  }
  box(0, 0, 0, 0);
  box(n, n, m, m);
  // a path touches every row; keep the ranges monotone (they are, for a monotone path)
  for (let r = 1; r <= n; r++) if (minJ[r]! < minJ[r - 1]!) minJ[r] = minJ[r - 1]!;
  for (let r = n - 1; r >= 0; r--) if (maxJ[r]! > maxJ[r + 1]!) maxJ[r] = maxJ[r + 1]!;
  return { minJ, maxJ };
}

/** The band of ranges widened by w rows and w columns on each side (clamped to the matrix). */
export function bandAround(r: { minJ: Int32Array; maxJ: Int32Array }, n: number, m: number, w: number): Band {
  const lo = new Int32Array(n + 1),
    hi = new Int32Array(n + 1);
  for (let i = 0; i <= n; i++) {
    lo[i] = Math.max(0, r.minJ[Math.max(0, i - w)]! - w);
    hi[i] = Math.min(m, r.maxJ[Math.min(n, i + w)]! + w);
  }
  lo[0] = 0;
  hi[n] = m;
  return { lo, hi };
}

/**
 * Ranges of a path found on documents of half the length (consecutive pairs of sentences merged:
 * coarse cell (i, j) is fine cell (2i, 2j)) carried to the full documents of n × m sentences
 * (a trailing odd sentence, dropped by the halving, joins the last row or column).
 */
export function upsampleRanges(r: { minJ: Int32Array; maxJ: Int32Array }, mc: number, n: number, m: number): { minJ: Int32Array; maxJ: Int32Array } {
  const nc = r.minJ.length - 1;
  const minJ = new Int32Array(n + 1),
    maxJ = new Int32Array(n + 1);
  for (let i = 0; i <= n; i++) {
    const a = Math.min(nc, i >> 1),
      b = Math.min(nc, (i + 1) >> 1);
    minJ[i] = Math.min(m, 2 * r.minJ[a]!);
    maxJ[i] = i >= 2 * nc || r.maxJ[b]! >= mc ? m : Math.min(m, 2 * r.maxJ[b]! + 1);
  }
  return { minJ, maxJ };
}

/** Standard normal cumulative distribution (Abramowitz & Stegun 26.2.17, |error| < 7.5e-8). */
function normalCdf(z: number): number {
  const t = 1 / (1 + 0.2316419 * Math.abs(z));
  const d = 0.3989422804014327 * Math.exp((-z * z) / 2);
  const p = d * t * (0.31938153 + t * (-0.356563782 + t * (1.781477937 + t * (-1.821255978 + t * 1.330274429))));
  return z >= 0 ? 1 - p : p;
}

/** Gale & Church's priors of the alignment types (1993, table 5); 1:3 and 3:1 are not theirs and get a small one. */
const GC_PRIOR: Record<string, number> = {
  '1:1': 0.89,
  '1:0': 0.0099 / 2,
  '0:1': 0.0099 / 2,
  '2:1': 0.089 / 2,
  '1:2': 0.089 / 2,
  '2:2': 0.011,
  '1:3': 0.001,
  '3:1': 0.001,
};

/**
 * The length-based cost model of Gale & Church: −log(P(type) · 2(1 − Φ(|δ|))) with
 * δ = (l₂ − c·l₁) / √(s²·(l₁ + l₂/c)/2), lengths in characters, c the ratio of the documents'
 * total lengths (their paper: 1, for closely related languages) and s² = 6.8.
 */
export function galeChurchCosts(
  srcLens: ArrayLike<number>,
  trgLens: ArrayLike<number>,
  types: readonly (readonly [number, number])[] = [
    [1, 1],
    [2, 1],
    [1, 2],
    [2, 2],
  ],
): CostModel {
  const n = srcLens.length,
    m = trgLens.length;
  const cs = new Float64Array(n + 1),
    ct = new Float64Array(m + 1);
  for (let i = 0; i < n; i++) cs[i + 1] = cs[i]! + srcLens[i]!;
  for (let j = 0; j < m; j++) ct[j + 1] = ct[j]! + trgLens[j]!;
  const c = cs[n]! > 0 && ct[m]! > 0 ? ct[m]! / cs[n]! : 1,
    s2 = 6.8;
  const lengthCost = (l1: number, l2: number, prior: number) => {
    const mean = (l1 + l2 / c) / 2;
    const delta = mean > 0 ? (l2 - c * l1) / Math.sqrt(s2 * mean) : 0;
    return -Math.log(prior) - Math.log(Math.max(1e-300, 2 * (1 - normalCdf(Math.abs(delta)))));
  };
  return {
    n,
    m,
    types,
    cost: (i, j, dx, dy) => lengthCost(cs[i]! - cs[i - dx]!, ct[j]! - ct[j - dy]!, GC_PRIOR[`${dx}:${dy}`] ?? 0.001),
    delSrc: (i) => lengthCost(srcLens[i]!, 0, GC_PRIOR['1:0']!),
    delTrg: (j) => lengthCost(0, trgLens[j]!, GC_PRIOR['0:1']!),
  };
}

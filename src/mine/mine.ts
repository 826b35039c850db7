// Bitext mining with margin scoring (Artetxe & Schwenk 2019; Yang et al. 2019 Eq. 9/10).
// Vectors are L2-normalised rows, so φ(x, y) = cos(x, y) = x·y. Both directions' k nearest
// neighbours give each sentence its neighbourhood mean; candidates are rescored by a margin
// and selected by a retrieval mode.
import { FaissIndex, SearchResult } from '../index/faiss.js';
import { KnnFn, knnChunked, knnChunkedAsync, rescoreExact, rowProduct } from '../index/exact.js';

export type MarginKind = 'ratio' | 'distance' | 'absolute' | 'eq9' | 'eq10';
export type Retrieval = 'fwd' | 'bwd' | 'intersect' | 'max';

/**
 * Score of a candidate pair from its cosine and the neighbourhood means
 * mx = mean cos of x's k neighbours in Y, my = mean cos of y's k neighbours in X.
 */
export function marginScore(kind: MarginKind, cos: number, mx: number, my: number): number {
  switch (kind) {
    case 'absolute':
      return cos;
    case 'ratio':
      return cos / ((mx + my) / 2);
    case 'distance':
      return cos - (mx + my) / 2;
    // Eq. 9: margin = Σ_{NN_k(x)} φ/2k + Σ_{NN_k(y)} φ/2k = (mx + my)/2; s = φ/margin + φ
    case 'eq9':
      return cos / ((mx + my) / 2) + cos;
    // Eq. 10: one-directional margin = Σ_{NN_k(x)} φ/k = mx
    case 'eq10':
      return cos / mx + cos;
  }
}

export interface Candidate {
  src: number;
  trg: number;
  score: number;
  cos: number;
}

export interface MineOptions {
  k?: number; // neighbours per direction (default 4)
  margin?: MarginKind; // default 'ratio'
  retrieval?: Retrieval; // default 'max'
  threshold?: number; // keep candidates scoring at least this
  /** Searches src→trg through this index (over the trg vectors, ids = trg rows) instead of exact search. */
  trgIndex?: FaissIndex;
  /** Query rows per exact-search call (bounds the result memory). */
  chunk?: number;
  knn?: KnnFn;
  /** Called after every search chunk with the rows searched so far (both directions) and the total. */
  onProgress?: (done: number, total: number) => void;
}

function checkVectors(x: Float32Array, d: number, name: string): number {
  if (!(d > 0)) throw new Error('mine: dimension must be positive');
  if (x.length === 0) throw new Error(`mine: ${name} has no vectors`);
  if (x.length % d !== 0) throw new Error(`mine: ${name} length ${x.length} is not a multiple of the dimension ${d}`);
  for (let i = 0; i < x.length; i++) if (!Number.isFinite(x[i]!)) throw new Error(`mine: ${name} row ${Math.floor(i / d)} has a NaN or infinite value`);
  return x.length / d;
}

/** Each row's mean similarity to its found neighbours (the margin's neighbourhood term). */
export function rowMeans(r: SearchResult): Float32Array {
  const m = new Float32Array(r.n);
  for (let i = 0; i < r.n; i++) {
    let s = 0,
      c = 0;
    for (let j = 0; j < r.k; j++)
      if (r.labels[i * r.k + j]! >= 0n) {
        s += r.distances[i * r.k + j]!;
        c++;
      }
    m[i] = c ? s / c : 0;
  }
  return m;
}

/**
 * Mines candidate pairs between row-aligned-nothing corpora src and trg (normalised vectors).
 * Memory: both k-NN result tables (rows × k) plus the candidates; vectors are not copied.
 */
export function mine(src: Float32Array, trg: Float32Array, d: number, o: MineOptions = {}): Candidate[] {
  const { fwd, bwd } = mineTables(src, trg, d, o);
  return candidatesFromKnn(fwd, bwd, o);
}

/** Both searches of mineTables: the vectors checked, k (at most either side's rows), and progress over both directions' rows. */
function searchPlan(src: Float32Array, trg: Float32Array, d: number, o: MineOptions): { k: number; onChunk?: (rows: number) => void } {
  const ns = checkVectors(src, d, 'source vectors'),
    nt = checkVectors(trg, d, 'target vectors');
  let searched = 0;
  return { k: Math.max(1, Math.min(o.k ?? 4, ns, nt)), onChunk: o.onProgress ? (rows: number) => o.onProgress!((searched += rows), ns + nt) : undefined };
}

/** Both directions' k-NN tables (src→trg, trg→src; best first, exact fixed-order scores) that mining scores. */
export function mineTables(src: Float32Array, trg: Float32Array, d: number, o: MineOptions = {}): { fwd: SearchResult; bwd: SearchResult; k: number } {
  const { k, onChunk } = searchPlan(src, trg, d, o);
  const viaIndex: KnnFn = (q, _b, _d, kk) => o.trgIndex!.search(q, kk);
  // exact, fixed-order scores: the pairs do not depend on how the search was split (or on PQ error)
  const fwd = rescoreExact(knnChunked(src, trg, d, k, o.chunk, o.trgIndex ? viaIndex : o.knn, onChunk), src, trg, d);
  const bwd = rescoreExact(knnChunked(trg, src, d, k, o.chunk, o.knn, onChunk), trg, src, d);
  return { fwd, bwd, k };
}

/**
 * mineTables with the exact search off the main thread, chunk by chunk (knnChunkedAsync): the same
 * tables, and a command's signal handlers run between chunks (Ctrl-C stops a long search). Through
 * an index or a given search function it is mineTables.
 */
export async function mineTablesAsync(
  src: Float32Array,
  trg: Float32Array,
  d: number,
  o: MineOptions = {},
): Promise<{ fwd: SearchResult; bwd: SearchResult; k: number }> {
  if (o.trgIndex || o.knn) return mineTables(src, trg, d, o);
  const { k, onChunk } = searchPlan(src, trg, d, o);
  const fwd = rescoreExact(await knnChunkedAsync(src, trg, d, k, o.chunk, onChunk), src, trg, d);
  const bwd = rescoreExact(await knnChunkedAsync(trg, src, d, k, o.chunk, onChunk), trg, src, d);
  return { fwd, bwd, k };
}

/**
 * The mined pairs from both directions' k-NN tables (src→trg and trg→src, best first): margin
 * scores against each side's mean neighbour similarity, then the retrieval rule.
 */
export function candidatesFromKnn(fwd: SearchResult, bwd: SearchResult, o: Pick<MineOptions, 'margin' | 'retrieval' | 'threshold'>): Candidate[] {
  const kind = o.margin ?? 'ratio',
    mode = o.retrieval ?? 'max';
  const mx = rowMeans(fwd),
    my = rowMeans(bwd);

  // best candidate of each source among its k neighbours (and of each target among its)
  const best = (r: SearchResult, fromSrc: boolean): Candidate[] => {
    const out: Candidate[] = [];
    for (let i = 0; i < r.n; i++) {
      let top: Candidate | null = null;
      for (let j = 0; j < r.k; j++) {
        const l = Number(r.labels[i * r.k + j]!);
        if (l < 0) continue;
        const s = fromSrc ? i : l,
          t = fromSrc ? l : i;
        const cos = r.distances[i * r.k + j]!;
        const score = marginScore(kind, cos, mx[s]!, my[t]!);
        if (!top || score > top.score) top = { src: s, trg: t, score, cos };
      }
      if (top) out.push(top);
    }
    return out;
  };
  const needF = mode !== 'bwd',
    needB = mode !== 'fwd';
  const f = needF ? best(fwd, true) : [];
  const b = needB ? best(bwd, false) : [];
  let cands: Candidate[];
  if (mode === 'fwd') cands = f;
  else if (mode === 'bwd') cands = b;
  else if (mode === 'intersect') {
    const back = new Map(b.map((c) => [c.trg, c.src]));
    cands = f.filter((c) => back.get(c.trg) === c.src);
  } else {
    // pool both directions' best candidates; accept greedily by score, each sentence at most once
    const pool = [...f, ...b].sort((x, y) => y.score - x.score || x.src - y.src || x.trg - y.trg);
    const usedS = new Set<number>(),
      usedT = new Set<number>();
    cands = [];
    for (const c of pool) {
      if (usedS.has(c.src) || usedT.has(c.trg)) continue;
      usedS.add(c.src);
      usedT.add(c.trg);
      cands.push(c);
    }
  }
  if (o.threshold !== undefined) cands = cands.filter((c) => c.score >= o.threshold!);
  return cands.sort((x, y) => y.score - x.score || x.src - y.src || x.trg - y.trg);
}

/**
 * Mined pairs as xling mine writes them, best first: score<TAB>src<TAB>trg, or the sentences'
 * ids for BUCC input (both sides id<TAB>sentence). sMap/tMap map unified rows back to lines.
 * withMargin (second-stage scorer runs: score is the probability): score<TAB>margin<TAB>src<TAB>trg.
 */
export function formatPairs(
  cands: (Candidate & { margin?: number })[],
  S: { ids: string[]; sentences: string[]; bucc: boolean },
  T: { ids: string[]; sentences: string[]; bucc: boolean },
  sMap: Int32Array | null = null,
  tMap: Int32Array | null = null,
  o: { withMargin?: boolean } = {},
): string {
  const bucc = S.bucc && T.bucc;
  const lines = cands.map((c) => {
    const s = sMap ? sMap[c.src]! : c.src,
      t = tMap ? tMap[c.trg]! : c.trg;
    const head = o.withMargin ? `${c.score.toFixed(6)}\t${c.margin!.toFixed(6)}` : c.score.toFixed(6);
    return bucc ? `${head}\t${S.ids[s]}\t${T.ids[t]}` : `${head}\t${S.sentences[s]}\t${T.sentences[t]}`;
  });
  return lines.length ? lines.join('\n') + '\n' : '';
}

/** Unique texts and, for each input line, the index of its unique text. */
export function unify(texts: string[]): { unique: string[]; of: Int32Array; first: Int32Array } {
  const map = new Map<string, number>();
  const of = new Int32Array(texts.length);
  const first: number[] = [];
  texts.forEach((t, i) => {
    let u = map.get(t);
    if (u === undefined) {
      u = first.length;
      map.set(t, u);
      first.push(i);
    }
    of[i] = u;
  });
  return { unique: [...map.keys()], of, first: Int32Array.from(first) };
}

/** Rows of x at the given indices (e.g. the first occurrence of each unique line). */
export function gatherRows(x: Float32Array, d: number, rows: ArrayLike<number>): Float32Array {
  const out = new Float32Array(rows.length * d);
  for (let i = 0; i < rows.length; i++) out.set(x.subarray(rows[i]! * d, (rows[i]! + 1) * d), i * d);
  return out;
}

/** The inner products of given row pairs (src row gSrc[i] · trg row gTrg[i]): the cosines of normalised vectors, as the k-NN's exact re-scoring computes them. */
export function pairProducts(src: Float32Array, trg: Float32Array, d: number, gSrc: ArrayLike<number>, gTrg: ArrayLike<number>): Float32Array {
  return Float32Array.from({ length: gSrc.length }, (_, i) => rowProduct(src, gSrc[i]!, trg, gTrg[i]!, d));
}

/**
 * Margin scores of given pairs (LASER's score mode): each pair's cosine against its source's mean
 * similarity to its k nearest targets and its target's to its k nearest sources, both searched
 * among all the rows given (the margin xling mine gives the pair when it is a candidate).
 */
export function marginOfPairs(
  src: Float32Array,
  trg: Float32Array,
  d: number,
  gSrc: ArrayLike<number>,
  gTrg: ArrayLike<number>,
  o: MineOptions = {},
): { score: Float64Array; cos: Float32Array } {
  const { fwd, bwd } = mineTables(src, trg, d, o);
  return marginOfTables(fwd, bwd, src, trg, d, gSrc, gTrg, o.margin ?? 'ratio');
}

/** marginOfPairs from both directions' k-NN tables already searched. */
export function marginOfTables(
  fwd: SearchResult,
  bwd: SearchResult,
  src: Float32Array,
  trg: Float32Array,
  d: number,
  gSrc: ArrayLike<number>,
  gTrg: ArrayLike<number>,
  kind: MarginKind,
): { score: Float64Array; cos: Float32Array } {
  const mx = rowMeans(fwd),
    my = rowMeans(bwd);
  const cos = pairProducts(src, trg, d, gSrc, gTrg);
  return { score: Float64Array.from(cos, (c, i) => marginScore(kind, c, mx[gSrc[i]!]!, my[gTrg[i]!]!)), cos };
}

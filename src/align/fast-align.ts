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
}

/** A sentence pair as word ids of each side (ids per side are independent). */
export interface IdPair { src: Int32Array; trg: Int32Array }

/** A translation table t(e | f), keyed by f * E + e, with E the target vocabulary size. */
export class TranslationTable {
  readonly p = new Map<number, number>();
  constructor(readonly targetVocab: number) {}
  key(f: number, e: number): number { return f * this.targetVocab + e; }
  get(f: number, e: number): number { return this.p.get(this.key(f, e)) ?? 1e-9; }
}

function diagonal(i: number, j: number, m: number, n: number, tension: number): number {
  return Math.exp(-tension * Math.abs((i + 1) / m - (j + 1) / n));
}

/**
 * Trains t(trg | src) on sentence pairs (source ids < srcVocab + 1: id srcVocab is reserved for
 * null). Returns the table; align() then reads the best source position of each target word.
 */
export function trainAlignment(pairs: IdPair[], srcVocab: number, trgVocab: number, o: AlignOptions = {}): TranslationTable {
  const m1 = o.model1Iterations ?? 2, m2 = o.iterations ?? 4;
  const tension = o.tension ?? 4, p0 = o.nullProb ?? 0.08;
  const NULL = srcVocab;
  let t = new TranslationTable(trgVocab);
  // uniform start over the pairs that co-occur
  for (const { src, trg } of pairs) for (const e of trg) { t.p.set(t.key(NULL, e), 1); for (const f of src) t.p.set(t.key(f, e), 1); }
  for (let it = 0; it < m1 + m2; it++) {
    const useDiag = it >= m1;
    const counts = new Map<number, number>();
    const totals = new Float64Array(srcVocab + 1);
    for (const { src, trg } of pairs) {
      const n = src.length, m = trg.length;
      const post = new Float64Array(n + 1);
      for (let i = 0; i < m; i++) {
        const e = trg[i]!;
        let z = 0;
        const a0 = useDiag ? p0 : 1 / (n + 1);
        post[0] = a0 * t.get(NULL, e); z += post[0]!;
        let dz = 0;
        if (useDiag) for (let j = 0; j < n; j++) dz += diagonal(i, j, m, n, tension);
        for (let j = 0; j < n; j++) {
          const prior = useDiag ? ((1 - p0) * diagonal(i, j, m, n, tension)) / dz : 1 / (n + 1);
          post[j + 1] = prior * t.get(src[j]!, e);
          z += post[j + 1]!;
        }
        for (let j = 0; j <= n; j++) {
          const f = j === 0 ? NULL : src[j - 1]!;
          const c = post[j]! / z;
          const k = t.key(f, e);
          counts.set(k, (counts.get(k) ?? 0) + c);
          totals[f]! += c;
        }
      }
    }
    const next = new TranslationTable(trgVocab);
    for (const [k, c] of counts) next.p.set(k, c / totals[Math.floor(k / trgVocab)]!);
    t = next;
  }
  return t;
}

/** For each target word, the best source position (−1: null), under t and the diagonal prior. */
export function align(pair: IdPair, t: TranslationTable, srcVocab: number, o: AlignOptions = {}): Int32Array {
  const tension = o.tension ?? 4, p0 = o.nullProb ?? 0.08;
  const { src, trg } = pair;
  const n = src.length, m = trg.length;
  const out = new Int32Array(m).fill(-1);
  for (let i = 0; i < m; i++) {
    let dz = 0;
    for (let j = 0; j < n; j++) dz += diagonal(i, j, m, n, tension);
    let best = p0 * t.get(srcVocab, trg[i]!);
    for (let j = 0; j < n; j++) {
      const s = ((1 - p0) * diagonal(i, j, m, n, tension)) / dz * t.get(src[j]!, trg[i]!);
      if (s > best) { best = s; out[i] = j; }
    }
  }
  return out;
}

/**
 * Alignment links of sentence pairs agreed by both directions: [src position, trg position] lists.
 * srcVocab / trgVocab bound the ids of each side.
 */
export function alignBothWays(pairs: IdPair[], srcVocab: number, trgVocab: number, o: AlignOptions = {}): [number, number][][] {
  const fwd = trainAlignment(pairs, srcVocab, trgVocab, o);
  const rev = trainAlignment(pairs.map((p) => ({ src: p.trg, trg: p.src })), trgVocab, srcVocab, o);
  return pairs.map((p) => {
    const a = align(p, fwd, srcVocab, o);                                  // trg i → src a[i]
    const b = align({ src: p.trg, trg: p.src }, rev, trgVocab, o);         // src j → trg b[j]
    const links: [number, number][] = [];
    a.forEach((j, i) => { if (j >= 0 && b[j] === i) links.push([j, i]); });
    return links;
  });
}

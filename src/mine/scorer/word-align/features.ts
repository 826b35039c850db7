// Word-alignment features of a candidate pair for the mining scorer: fast_align's translation
// tables t(e | f) (src/align, both directions) trained on known translations of a language pair,
// and how well each side's words are explained by the other's — IBM Model 1's mean log-likelihood
// per word and the share of words with a likely translation on the other side.
import { IdPair, translationTable } from './fast-align.js';

/** Words as the aligner sees them: lower-cased letter/number runs; characters of scripts written without spaces. */
export function wordsOf(s: string): string[] {
  return [...s.toLowerCase().matchAll(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}]|[\p{L}\p{M}\p{N}]+/gu)].map((m) => m[0]);
}

export const ALIGN_FEATURES = [
  'align_fwd_logprob',
  'align_bwd_logprob',
  'align_fwd_coverage',
  'align_bwd_coverage',
  'align_known',
  'align_fwd_best_hit',
  'align_bwd_best_hit',
  'align_fwd_known_share',
  'align_bwd_known_share',
] as const;

/** A language pair's translation tables, both directions, over the words seen in training. */
export interface WordTables {
  src_words: string[];
  trg_words: string[];
  /** [f, e, t(e | f)] with f = src_words.length for null. */
  fwd: [number, number, number][];
  /** [e, f, t(f | e)] with e = trg_words.length for null. */
  bwd: [number, number, number][];
}

/**
 * Trains both directions' tables on translation pairs; entries with t < minProb (default 0.01,
 * the aligner's floor) are not kept. onProgress: EM iterations done of both directions' (about
 * 5,000 pairs a second each on 2 cores).
 */
export function trainWordTables(pairs: [string, string][], o: { minProb?: number; onProgress?: (done: number, total: number) => void } = {}): WordTables {
  const sv = new Map<string, number>(),
    tv = new Map<string, number>();
  const id = (m: Map<string, number>, w: string) => {
    let i = m.get(w);
    if (i === undefined) {
      i = m.size;
      m.set(w, i);
    }
    return i;
  };
  const ids: IdPair[] = pairs
    .map(([s, t]) => ({ src: Int32Array.from(wordsOf(s), (w) => id(sv, w)), trg: Int32Array.from(wordsOf(t), (w) => id(tv, w)) }))
    .filter((p) => p.src.length && p.trg.length);
  const S = sv.size,
    T = tv.size;
  const floor = o.minProb ?? 0.01;
  // one direction after the other
  const progress = (dir: number) => (o.onProgress ? (done: number, total: number) => o.onProgress!(dir * total + done, 2 * total) : undefined);
  const f = translationTable(ids, S, T, { floor, onIteration: progress(0) }),
    b = translationTable(
      ids.map((p) => ({ src: p.trg, trg: p.src })),
      T,
      S,
      { floor, onIteration: progress(1) },
    );
  return {
    src_words: [...sv.keys()],
    trg_words: [...tv.keys()],
    // four significant digits: what the features need, and a third of the scorer file
    fwd: [...f].map(([k, p]) => [Math.floor(k / T), k % T, Number(p.toPrecision(4))]),
    bwd: [...b].map(([k, p]) => [Math.floor(k / S), k % S, Number(p.toPrecision(4))]),
  };
}

/** Scores pairs with a language pair's tables (ALIGN_FEATURES order); all zero without tables. */
export class WordAligner {
  private sv: Map<string, number>;
  private tv: Map<string, number>;
  /** t(e | f) keyed f · (trg words + 1) + e (numeric keys: a string key per lookup was most of mining's feature time). */
  private f = new Map<number, number>();
  /** t(f | e) keyed e · (src words + 1) + f. */
  private b = new Map<number, number>();
  private fStride: number;
  private bStride: number;
  /** Each word's most likely translation (not null) on the other side, by id. */
  private bestF = new Map<number, { id: number; p: number }>();
  private bestB = new Map<number, { id: number; p: number }>();
  constructor(t: WordTables) {
    this.sv = new Map(t.src_words.map((w, i) => [w, i]));
    this.tv = new Map(t.trg_words.map((w, i) => [w, i]));
    const best = (m: Map<number, { id: number; p: number }>, a: number, c: number, p: number, nullId: number) => {
      if (a === nullId) return;
      const o = m.get(a);
      if (!o || p > o.p || (p === o.p && c < o.id)) m.set(a, { id: c, p });
    };
    this.fStride = t.trg_words.length + 1;
    this.bStride = t.src_words.length + 1;
    for (const [a, c, p] of t.fwd) {
      this.f.set(a * this.fStride + c, p);
      best(this.bestF, a, c, p, t.src_words.length);
    }
    for (const [a, c, p] of t.bwd) {
      this.b.set(a * this.bStride + c, p);
      best(this.bestB, a, c, p, t.trg_words.length);
    }
  }

  /** Mean over trg words of log(Σ_f t(e|f)/(n+1) + ε) and the share of trg words with some t(e|f) ≥ 0.1; the same the other way. */
  features(src: string, trg: string): number[] {
    const s = wordsOf(src).map((w) => this.sv.get(w) ?? -1),
      t = wordsOf(trg).map((w) => this.tv.get(w) ?? -1);
    const side = (from: number[], to: number[], table: Map<number, number>, nullId: number, stride: number): [number, number] => {
      if (!to.length) return [0, 0];
      let lp = 0,
        covered = 0;
      for (const e of to) {
        let sum = e < 0 ? 0 : (table.get(nullId * stride + e) ?? 0),
          best = 0;
        for (const f of from) {
          if (f < 0 || e < 0) continue;
          const p = table.get(f * stride + e) ?? 0;
          sum += p;
          if (p > best) best = p;
        }
        lp += Math.log(sum / (from.length + 1) + 1e-4);
        if (best >= 0.1) covered++;
      }
      return [lp / to.length, covered / to.length];
    };
    const [fl, fc] = side(s, t, this.f, this.sv.size, this.fStride);
    const [bl, bc] = side(t, s, this.b, this.tv.size, this.bStride);
    const [fh, fk] = bestHits(s, t, this.bestF),
      [bh, bk] = bestHits(t, s, this.bestB);
    return [fl, bl, fc, bc, 1, fh, bh, fk, bk];
  }
}

/**
 * The content-word check: of the words of `from` that the table knows, the share whose most
 * likely translation is among the words of `to` (0 when none is known); and the share of `from`'s
 * words the table knows at all.
 */
function bestHits(from: number[], to: number[], best: Map<number, { id: number }>): [number, number] {
  if (!from.length) return [0, 0];
  const there = new Set(to);
  let known = 0,
    hit = 0;
  for (const w of from) {
    const b = w < 0 ? undefined : best.get(w);
    if (!b) continue;
    known++;
    if (there.has(b.id)) hit++;
  }
  return [known ? hit / known : 0, known / from.length];
}

/** The features of a pair without tables for its language pair. */
export const NO_ALIGNMENT: number[] = [Math.log(1e-4), Math.log(1e-4), 0, 0, 0, 0, 0, 0, 0];

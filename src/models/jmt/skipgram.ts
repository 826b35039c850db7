// Multilingual skip-gram training pairs (Luong et al. 2015, "Bilingual word representations with
// monolingual quality in mind"): (word, context word) from monolingual windows in every language,
// and cross-lingual pairs whose context is the window around the word *aligned* to the given word
// in the parallel sentence. Batches are drawn at random, deterministically from a seed (a step
// needs no stream state to resume); negatives come from the unigram distribution to the 3/4.
import { EncodedCorpus } from '../../train-data/examples.js';
import { Rng } from '../../util/rng.js';

export interface SkipGramOptions {
  /** Context window on each side. */
  window: number;
  /** Monolingual pairs, cross-lingual pairs (half a batch each when both). */
  mono: boolean;
  cross: boolean;
  /** Monolingual pairs also from sentences with no pivot-language side (monolingual data); off: parallel rows only. */
  extraMono: boolean;
  /** Pairs per batch, and negatives shared by the batch. */
  batch: number;
  negatives: number;
}

export interface SkipGramBatch {
  words: Int32Array;
  contexts: Int32Array;
  negatives: Int32Array;
}

/** Alignment links of one row: [position in the language's sentence, position in the pivot's]. */
export type RowLinks = [number, number][];

/** Ids below this are special tokens (pad, unk, bos, eos): never words or contexts. */
const FIRST_WORD = 4;

export class SkipGramSampler {
  private readonly mono: Int32Array[] = [];
  private readonly cross: { a: Int32Array; b: Int32Array; links: RowLinks }[] = [];
  private readonly cum: Float64Array;

  /**
   * corpus: token ids per language and row (rows without the pivot are monolingual text); links:
   * per language, the alignment links of each row with the pivot language.
   */
  constructor(
    corpus: EncodedCorpus,
    links: Map<string, (RowLinks | undefined)[]>,
    pivot: string,
    vocabSize: number,
    readonly o: SkipGramOptions,
  ) {
    const counts = new Float64Array(vocabSize);
    const pivotIds = corpus.ids.get(pivot);
    for (const l of corpus.langs) {
      for (const [r, s] of corpus.ids.get(l)!.entries()) {
        if (!s || (!o.extraMono && !pivotIds?.[r])) continue;
        let words = 0;
        for (const t of s)
          if (t >= FIRST_WORD) {
            counts[t]! += 1;
            words++;
          }
        if (words >= 2) this.mono.push(s);
      }
    }
    for (const [l, rows] of links) {
      rows.forEach((ls, r) => {
        if (ls?.length) this.cross.push({ a: corpus.ids.get(l)![r]!, b: corpus.ids.get(pivot)![r]!, links: ls });
      });
    }
    if (o.mono && !this.mono.length) throw new Error('skip-gram: no sentence has two words in the vocabulary');
    if (o.cross && !this.cross.length) throw new Error('skip-gram: no aligned word pairs (is the pivot language in the corpus?)');
    this.cum = new Float64Array(vocabSize);
    let acc = 0;
    counts.forEach((c, i) => {
      acc += c ** 0.75;
      this.cum[i] = acc;
    });
  }

  get monoSentences(): number {
    return this.mono.length;
  }
  get alignedRows(): number {
    return this.cross.length;
  }

  /** A random context position around i in a sentence of length n (word ids only), or -1. */
  private contextAt(s: Int32Array, i: number, rng: Rng, includeSelf: boolean): number {
    for (let tries = 0; tries < 8; tries++) {
      const off = rng.int(2 * this.o.window + 1) - this.o.window;
      if (off === 0 && !includeSelf) continue;
      const j = i + off;
      if (j >= 0 && j < s.length && s[j]! >= FIRST_WORD) return j;
    }
    return -1;
  }

  batch(seed: number): SkipGramBatch {
    const rng = new Rng(seed);
    const P = this.o.batch,
      words = new Int32Array(P),
      contexts = new Int32Array(P);
    const nCross = this.o.cross ? (this.o.mono ? P >> 1 : P) : 0;
    let k = 0;
    while (k < P) {
      if (k < nCross) {
        const { a, b, links } = this.cross[rng.int(this.cross.length)]!;
        const [ia, ib] = links[rng.int(links.length)]!;
        // the word of one side, a context word from the window around its aligned word on the other
        const [w, ctx, at] = rng.next() < 0.5 ? [a[ia]!, b, ib] : [b[ib]!, a, ia];
        if (w < FIRST_WORD) continue;
        const j = this.contextAt(ctx, at, rng, true);
        if (j < 0) continue;
        words[k] = w;
        contexts[k++] = ctx[j]!;
      } else {
        const s = this.mono[rng.int(this.mono.length)]!;
        const i = rng.int(s.length);
        if (s[i]! < FIRST_WORD) continue;
        const j = this.contextAt(s, i, rng, false);
        if (j < 0) continue;
        words[k] = s[i]!;
        contexts[k++] = s[j]!;
      }
    }
    const negatives = new Int32Array(this.o.negatives);
    const total = this.cum[this.cum.length - 1]!;
    for (let q = 0; q < negatives.length; q++) {
      const u = rng.next() * total;
      let lo = 0,
        hi = this.cum.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (this.cum[mid]! > u) hi = mid;
        else lo = mid + 1;
      }
      negatives[q] = lo;
    }
    return { words, contexts, negatives };
  }
}

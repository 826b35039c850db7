// Hashed character n-gram features (fastText style): strings → bucket ids, no vocabulary to learn.
// Used two ways by the dual encoder: a whole sentence as one bag of its n-grams and words
// (HashedNgramTokenizer), or each subword token of a vocabulary with the n-grams of its text
// (subwordNgramTable). The hash is FNV-1a (32-bit) over UTF-16 code units, so Python can
// reproduce the features: see hashString() and the model's config.json (`features`). With
// `hashes` h > 1 (hash embeddings, as spaCy's MultiHashEmbed and Svenstrup et al. 2017) every
// feature of a sentence bag gives h ids: its FNV bucket, then the buckets of extraHash(fnv, 1) …
// extraHash(fnv, h − 1), so two features share all their rows only when they collide under every hash.
import { normalize, NormalizeOptions } from './normalize.js';
import { TextTokenizer } from './text-tokenizer.js';

/** Ids 0–3 are the special tokens every xling tokenizer reserves (pad, unk, bos, eos). */
export const NGRAM_ID_OFFSET = 4;

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a 32-bit of a string's UTF-16 code units (from `start` to `end`), after a prefix state. */
export function hashString(s: string, start = 0, end = s.length, h = FNV_OFFSET): number {
  for (let i = start; i < end; i++) h = Math.imul(h ^ s.charCodeAt(i), FNV_PRIME);
  return h >>> 0;
}

/** The hash state after a kind prefix ("w:" for words): word and n-gram features never share a hash. */
const WORD_PREFIX = hashString('w:');

export interface NgramOptions {
  /** Smallest and largest n (in UTF-16 code units). */
  ngrams: [number, number];
  /** Hash buckets (rows of the feature table). */
  buckets: number;
  /** Also one feature per whitespace-separated word (sentence bags). */
  words: boolean;
  /** At most this many ids per sentence (long inputs are cut, counted in `truncated`). */
  maxFeatures: number;
  /** Ids per feature (hash embeddings; absent or 1: one). Sentence bags only. */
  hashes?: number;
}

/**
 * The i-th extra hash of a feature whose FNV-1a hash is h: murmur3's 32-bit finaliser of
 * h XOR (i × 0x9E3779B9), unsigned.
 */
export function extraHash(h: number, i: number): number {
  let x = (h ^ Math.imul(i, 0x9e3779b9)) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

/** `hashes` as a tokenizer option: only when above 1 (specs and configs of one-hash models stay as they were). */
export const hashesOf = (h: number | undefined): { hashes?: number } => (h !== undefined && h > 1 ? { hashes: h } : {});

/** h mod buckets (a mask when buckets is a power of two). */
function bucketOf(h: number, buckets: number, mask: number): number {
  return mask >= 0 ? h & mask : (h >>> 0) % buckets;
}

/** Character codes of strings being hashed (grown as needed): the hash loops read typed-array slots, not strings. */
let codeBuf = new Int32Array(256);

/**
 * Writes the n-gram bucket ids of `t` (n in [lo, hi], every start position), offset by `base`,
 * into out from position `at`; returns the new position (stops at out.length).
 */
export function writeNgrams(t: string, lo: number, hi: number, buckets: number, base: number, out: Int32Array, at = 0): number {
  const L = t.length;
  if (codeBuf.length < L) codeBuf = new Int32Array(Math.max(L, 2 * codeBuf.length));
  const c = codeBuf;
  for (let i = 0; i < L; i++) c[i] = t.charCodeAt(i);
  return writeNgramCodes(c, L, lo, hi, buckets, base, out, at);
}

/** writeNgrams over the first L character codes of c (hashes > 1: each n-gram's extra ids follow its own, see extraHash). */
function writeNgramCodes(c: Int32Array, L: number, lo: number, hi: number, buckets: number, base: number, out: Int32Array, at: number, hashes = 1): number {
  const end = out.length;
  const mask = (buckets & (buckets - 1)) === 0 ? buckets - 1 : -1;
  let k = at;
  if (hashes > 1) {
    for (let i = 0; i < L && k < end; i++) {
      let h = FNV_OFFSET;
      const top = Math.min(hi, L - i);
      for (let n = 1; n <= top && k < end; n++) {
        h = Math.imul(h ^ c[i + n - 1]!, FNV_PRIME);
        if (n < lo) continue;
        out[k++] = base + bucketOf(h, buckets, mask);
        for (let j = 1; j < hashes && k < end; j++) out[k++] = base + bucketOf(extraHash(h >>> 0, j), buckets, mask);
      }
    }
    return k;
  }
  for (let i = 0; i < L && k < end; i++) {
    let h = FNV_OFFSET;
    const top = Math.min(hi, L - i);
    for (let n = 1; n <= top; n++) {
      h = Math.imul(h ^ c[i + n - 1]!, FNV_PRIME);
      if (n >= lo) {
        out[k++] = base + bucketOf(h, buckets, mask);
        if (k >= end) break;
      }
    }
  }
  return k;
}

/** writeNgrams into a growing array (for tables built once). */
export function appendNgrams(t: string, lo: number, hi: number, buckets: number, base: number, out: number[], room = Infinity): number {
  const buf = new Int32Array(Math.min(room, t.length * Math.max(0, hi - lo + 1)));
  const n = writeNgrams(t, lo, hi, buckets, base, buf);
  for (let i = 0; i < n; i++) out.push(buf[i]!);
  return n;
}

/**
 * A sentence as one bag of features: the n-grams of ' ' + normalised text + ' ' (crossing word
 * boundaries) and a hashed id per word. Ids are NGRAM_ID_OFFSET + bucket; there is no padding,
 * no BOS/EOS (the ids 0–3 stay unused). Meant for the dual encoder's averaging encoder.
 */
export class HashedNgramTokenizer implements TextTokenizer {
  readonly padId = 0;
  readonly unkId = 1;
  readonly bosId = 2;
  readonly eosId = 3;
  /** Sentences whose features were cut at maxFeatures since construction. */
  truncated = 0;
  private buf = new Int32Array(1024);
  constructor(
    readonly opts: NgramOptions,
    readonly norm: NormalizeOptions,
  ) {
    const [lo, hi] = opts.ngrams;
    if (!(Number.isInteger(lo) && Number.isInteger(hi) && lo >= 1 && hi >= lo && hi <= 16))
      throw new Error(`n-gram range must be integers 1 <= lo <= hi <= 16, got [${lo}, ${hi}]`);
    if (opts.hashes !== undefined && !(Number.isInteger(opts.hashes) && opts.hashes >= 1 && opts.hashes <= 8))
      throw new Error(`hashes must be an integer from 1 to 8, got ${opts.hashes}`);
    if (!(Number.isInteger(opts.buckets) && opts.buckets >= 1)) throw new Error(`buckets must be a positive integer, got ${opts.buckets}`);
  }
  get vocabSize(): number {
    return NGRAM_ID_OFFSET + this.opts.buckets;
  }
  get maxLength(): number {
    return this.opts.maxFeatures;
  }

  /** The characters of s the model reads (normalised, cut): its input units, as the server's usage counts them. */
  inputUnits(s: string): number {
    return this.prepare(s).text.length;
  }

  encode(s: string): Int32Array {
    const { text, cap } = this.prepare(s);
    if (this.buf.length < cap) this.buf = new Int32Array(Math.max(cap, 2 * this.buf.length));
    return this.buf.slice(0, this.fill(text, this.buf.subarray(0, cap)));
  }

  /**
   * encode() into out (room for the sentence's ids: maxFeatures always suffices); returns how many
   * ids it wrote. No array of its own per sentence (xling/lite writes into its kernels' memory).
   */
  encodeInto(s: string, out: Int32Array): number {
    const { text, cap } = this.prepare(s);
    if (out.length < cap) throw new Error(`encodeInto: room for ${out.length} ids, the sentence has ${cap}`);
    return this.fill(text, out.subarray(0, cap));
  }

  /**
   * encode() of many sentences (the same ids), written one after another into one buffer and
   * returned as views into it: no array of its own per sentence (tens of thousands of small
   * allocations that the embed path's garbage collector then sweeps).
   */
  encodeBatch(sentences: string[]): Int32Array[] {
    // every sentence's feature count is known once it is normalised: one buffer of the exact size
    const texts = new Array<string>(sentences.length),
      ends = new Int32Array(sentences.length);
    let total = 0;
    for (let i = 0; i < sentences.length; i++) {
      const { text, cap } = this.prepare(sentences[i]!);
      texts[i] = text;
      ends[i] = total += cap;
    }
    const buf = new Int32Array(total),
      out = new Array<Int32Array>(sentences.length);
    for (let i = 0, start = 0; i < sentences.length; start = ends[i++]!) {
      out[i] = buf.subarray(start, ends[i]);
      this.fill(texts[i]!, out[i]!);
    }
    return out;
  }

  /**
   * The normalised text (cut) and its number of features: the n-grams of ' ' + text + ' ' and
   * the words (runs of non-spaces), at most maxFeatures (fill writes exactly that many).
   */
  private prepare(s: string): { text: string; cap: number } {
    const {
      ngrams: [lo, hi],
      words,
      maxFeatures,
    } = this.opts;
    const hashes = this.opts.hashes ?? 1;
    // cut before hashing: a feature starts at each position, so maxFeatures positions suffice
    let text = normalize(s.length > 4 * maxFeatures ? s.slice(0, 4 * maxFeatures) : s, this.norm);
    if (text.length > maxFeatures) text = text.slice(0, maxFeatures);
    const L = text.length + 2;
    let n = 0;
    for (let m = lo; m <= hi && m <= L; m++) n += L - m + 1;
    if (words) {
      let inWord = false;
      for (let i = 0; i < text.length; i++) {
        const space = text.charCodeAt(i) === 32;
        if (!space && !inWord) n++;
        inWord = !space;
      }
    }
    return { text, cap: Math.min(maxFeatures, n * hashes) };
  }

  /** Writes the features of a prepared text into out (its length: prepare's count, which it fills); returns how many. */
  private fill(text: string, out: Int32Array): number {
    const {
      ngrams: [lo, hi],
      buckets,
      words,
      maxFeatures,
    } = this.opts;
    const hashes = this.opts.hashes ?? 1;
    const cap = out.length;
    // the codes of ' ' + text + ' '
    const L = text.length + 2;
    if (codeBuf.length < L) codeBuf = new Int32Array(Math.max(L, 2 * codeBuf.length));
    const c = codeBuf;
    c[0] = 32;
    for (let i = 0; i < text.length; i++) c[i + 1] = text.charCodeAt(i);
    c[L - 1] = 32;
    let k = writeNgramCodes(c, L, lo, hi, buckets, NGRAM_ID_OFFSET, out, 0, hashes);
    if (words && k < cap) {
      // each word: text[start, i) = c[start + 1, i + 1), hashed after the "w:" prefix state
      let start = 0;
      for (let i = 0; i <= text.length && k < cap; i++) {
        if (i < text.length && c[i + 1] !== 32) continue;
        if (i > start) {
          let h = WORD_PREFIX;
          for (let j = start + 1; j <= i; j++) h = Math.imul(h ^ c[j]!, FNV_PRIME);
          out[k++] = NGRAM_ID_OFFSET + ((h >>> 0) % buckets);
          for (let j = 1; j < hashes && k < cap; j++) out[k++] = NGRAM_ID_OFFSET + (extraHash(h >>> 0, j) % buckets);
        }
        start = i + 1;
      }
    }
    if (k >= maxFeatures) this.truncated++;
    return k;
  }

  /** What config.json records (and what a resume must match). */
  toJSON(): Record<string, unknown> {
    return { type: 'hashed-ngrams', hash: 'fnv1a32-utf16', ...this.opts, lowercase: this.norm.lowercase ?? true, romanize: this.norm.romanize ?? false };
  }
}

/**
 * The n-gram features of every token of a subword vocabulary, as a CSR table: token v's features
 * are ids[offsets[v] .. offsets[v+1]) = vocabSize + bucket of each n-gram of its text ('▁' read
 * as a space, so word-initial n-grams differ from inner ones). Special tokens (ids < 4) get none.
 */
export function subwordNgramTable(tokens: readonly string[], lo: number, hi: number, buckets: number): { offsets: Int32Array; ids: Int32Array } {
  const V = tokens.length;
  const offsets = new Int32Array(V + 1);
  const ids: number[] = [];
  for (let v = 0; v < V; v++) {
    if (v >= NGRAM_ID_OFFSET) appendNgrams(tokens[v]!.replace(/\u2581/g, ' '), lo, hi, buckets, V, ids);
    offsets[v + 1] = ids.length;
  }
  return { offsets, ids: Int32Array.from(ids) };
}

/**
 * The rows of a pruned feature table (xling export --prune-unused): bucket b → its rank among the
 * kept buckets (ascending, each in [0, buckets)), or, for a bucket without a row of its own,
 * kept.length + b mod fallback (a deterministic shared row). Returns row offsets per bucket.
 */
export function prunedBucketMap(kept: Int32Array, buckets: number, fallback: number): Int32Array {
  if (!(Number.isInteger(fallback) && fallback >= 1)) throw new Error(`pruned table: fallback rows must be a positive integer, got ${fallback}`);
  const map = new Int32Array(buckets);
  for (let b = 0; b < buckets; b++) map[b] = kept.length + (b % fallback);
  for (let r = 0; r < kept.length; r++) {
    const b = kept[r]!;
    if (!(b >= 0 && b < buckets) || (r > 0 && b <= kept[r - 1]!))
      throw new Error(`pruned table: kept bucket ids must ascend within [0, ${buckets}) (entry ${r}: ${b})`);
    map[b] = r;
  }
  return map;
}

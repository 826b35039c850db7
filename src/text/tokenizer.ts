// The joint multilingual vocabulary: our BPE or unigram-LM learner trained on a language-balanced
// sample, saved as a Hugging Face tokenizer.json (BPE or Unigram model, Metaspace pre-tokenizer)
// that HF `tokenizers` (npm or Python) loads unchanged. encode() is synchronous (merge ranks or
// Viterbi + a word cache, the same segmentation as HF's); encodeBatchHF() runs HF's Rust encoder.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Tokenizer as HFTokenizer } from 'tokenizers';
import { TextTokenizer } from './text-tokenizer.js';
import { writeFileAtomicSync } from '../util/atomic.js';
import { Rng } from '../util/rng.js';
import { learnBpe, preTokenize, WORD_START } from './bpe.js';
import { learnUnigram, PieceTrie, UNK_PENALTY, viterbi } from './unigram.js';
import { normalize, NormalizeOptions } from './normalize.js';

export const SPECIALS = ['<pad>', '<unk>', '<s>', '</s>'] as const;

export interface TokenizerTrainOptions {
  /** 'words': whole words (whitespace, punctuation and CJK ideographs split as BERT does), for word-level models. */
  model?: 'bpe' | 'unigram' | 'words'; // default bpe
  vocabSize?: number; // default 16000
  temperature?: number; // language sampling p_l ∝ n_l^(1/T); default 5
  sampleSentences?: number; // sentences in the balanced sample; default 400000
  seed?: number;
  normalize?: NormalizeOptions;
  maxLen?: number; // ids per sentence incl. EOS; default 64
  characterCoverage?: number; // default 0.9995
}

export class Tokenizer implements TextTokenizer {
  readonly padId = 0;
  readonly unkId = 1;
  readonly bosId = 2;
  readonly eosId = 3;
  private readonly ids = new Map<string, number>();
  private readonly tokens: string[] = [];
  private readonly ranks = new Map<string, number>(); // "a b" -> rank
  private readonly cache = new Map<string, number[]>();
  /** Unigram models: piece log-probabilities by id (specials 0), a trie and HF's unknown score. */
  private readonly scores: number[] | null;
  private readonly trie: PieceTrie | null;
  private readonly unkScore: number;
  /** A word-level vocabulary (no subword segmentation). */
  private readonly wordLevel: boolean;

  private constructor(
    vocab: string[],
    merges: [string, string][] | null,
    readonly norm: NormalizeOptions,
    readonly maxLen: number,
    scores: number[] | null = null,
    wordLevel = false,
  ) {
    this.wordLevel = wordLevel;
    vocab.forEach((t, i) => {
      this.ids.set(t, i);
      this.tokens.push(t);
    });
    merges?.forEach(([a, b], r) => {
      const k = `${a} ${b}`;
      if (!this.ranks.has(k)) this.ranks.set(k, r);
    });
    this.scores = scores;
    this.trie = scores ? new PieceTrie(vocab, SPECIALS.length) : null;
    this.unkScore = scores ? Math.min(...scores) - UNK_PENALTY : 0;
  }

  get model(): 'bpe' | 'unigram' | 'words' {
    return this.wordLevel ? 'words' : this.scores ? 'unigram' : 'bpe';
  }

  get vocabSize(): number {
    return this.tokens.length;
  }
  get maxLength(): number {
    return this.maxLen;
  }

  /** The token strings by id ('▁' marks a word start). */
  get vocab(): readonly string[] {
    return this.tokens;
  }

  /** Learns a joint vocabulary from sentences grouped by language (temperature-balanced sample). */
  static train(byLang: Map<string, string[]>, o: TokenizerTrainOptions = {}): Tokenizer {
    const vocabSize = o.vocabSize ?? 16000,
      T = o.temperature ?? 5,
      S = o.sampleSentences ?? 400000;
    const norm = o.normalize ?? { lowercase: true };
    const langs = [...byLang].filter(([, s]) => s.length);
    if (!langs.length) throw new Error('Tokenizer.train: no sentences');
    const total = langs.reduce((a, [, s]) => a + s.length, 0);
    const weights = langs.map(([, s]) => s.length ** (1 / T));
    const wsum = weights.reduce((a, b) => a + b, 0);
    const rng = new Rng(o.seed ?? 0);
    const counts = new Map<string, number>();
    const take = Math.min(S, total * 2);
    const split = o.model === 'words' ? splitWords : preTokenize;
    langs.forEach(([, sents], i) => {
      const n = Math.max(1, Math.round((take * weights[i]!) / wsum));
      // without replacement while the language has enough sentences, then with replacement
      const order = n >= sents.length ? null : rng.sample(sents.length, n);
      for (let j = 0; j < n; j++) {
        const s = sents[order ? order[j]! : j % sents.length]!;
        for (const w of split(normalize(s, norm))) counts.set(w, (counts.get(w) ?? 0) + 1);
      }
    });
    if (o.model === 'words') {
      // the most frequent words (ties by text), each seen at least twice
      const words = [...counts]
        .filter(([, c]) => c >= 2)
        .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
        .slice(0, vocabSize - SPECIALS.length)
        .map(([w]) => w);
      return new Tokenizer([...SPECIALS, ...words], null, norm, o.maxLen ?? 64, null, true);
    }
    if (o.model === 'unigram') {
      const { pieces, scores } = learnUnigram(counts, { vocabSize, specials: SPECIALS.length, characterCoverage: o.characterCoverage });
      return new Tokenizer([...SPECIALS, ...pieces], null, norm, o.maxLen ?? 64, [...SPECIALS.map(() => 0), ...scores]);
    }
    const { symbols, merges } = learnBpe(counts, { vocabSize, specials: SPECIALS.length, characterCoverage: o.characterCoverage });
    return new Tokenizer([...SPECIALS, ...symbols], merges, norm, o.maxLen ?? 64);
  }

  /** Inputs cut to maxLen - 1 tokens (or at maxChars characters) since construction. */
  truncated = 0;

  /**
   * Characters read of an input: a token covers at least one character and rarely more than 8,
   * so text beyond 8 × maxLen never reaches the ids; cutting it first keeps a long line without
   * spaces (one huge "word", segmented in quadratic time) from taking seconds.
   */
  get maxChars(): number {
    return 8 * this.maxLen;
  }

  /** Normalised, BPE-segmented ids, truncated to maxLen-1, then EOS. */
  encode(s: string): Int32Array {
    let cut = false;
    if (s.length > this.maxChars) {
      let end = this.maxChars;
      if (/[\uD800-\uDBFF]/.test(s[end - 1]!)) end--; // never split a surrogate pair
      s = s.slice(0, end);
      cut = true;
    }
    const out: number[] = [];
    const words = this.wordLevel ? splitWords(normalize(s, this.norm)) : preTokenize(normalize(s, this.norm));
    for (let i = 0; i < words.length; i++) {
      if (out.length >= this.maxLen - 1) {
        cut = true;
        break;
      }
      if (this.wordLevel) out.push(this.ids.get(words[i]!) ?? this.unkId);
      else for (const id of this.encodeWord(words[i]!)) out.push(id);
    }
    if (out.length > this.maxLen - 1) {
      out.length = this.maxLen - 1;
      cut = true;
    }
    if (cut) this.truncated++;
    out.push(this.eosId);
    return Int32Array.from(out);
  }

  /** Token strings of a sentence (without EOS), for inspection. */
  tokenize(s: string): string[] {
    return Array.from(this.encode(s).subarray(0, -1), (i) => this.tokens[i]!);
  }

  decode(ids: ArrayLike<number>): string {
    if (this.wordLevel)
      return Array.from(ids, (id) => (id >= SPECIALS.length ? this.tokens[id] : id === this.unkId ? '⁇' : ''))
        .filter(Boolean)
        .join(' ');
    let s = '';
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      if (id >= SPECIALS.length) s += this.tokens[id];
      else if (id === this.unkId) s += '⁇';
    }
    return s.split(WORD_START).join(' ').trim();
  }

  private encodeWord(w: string): number[] {
    const hit = this.cache.get(w);
    if (hit) return hit;
    const ids = this.trie ? this.unigramWord(w) : this.bpeWord(w);
    if (this.cache.size > 500000) this.cache.clear();
    this.cache.set(w, ids);
    return ids;
  }

  private unigramWord(w: string): number[] {
    const cps = Array.from(w, (c) => c.codePointAt(0)!);
    const ids: number[] = [];
    for (const id of viterbi(cps, this.trie!, this.scores!, this.unkId, this.unkScore)) {
      if (id === this.unkId && ids[ids.length - 1] === this.unkId) continue; // fuse_unk, as HF
      ids.push(id);
    }
    return ids;
  }

  private bpeWord(w: string): number[] {
    let sym = Array.from(w);
    // lowest-rank merge first, until no adjacent pair is a merge (HF BPE semantics)
    for (;;) {
      let best = Infinity,
        at = -1;
      for (let i = 0; i + 1 < sym.length; i++) {
        const r = this.ranks.get(`${sym[i]} ${sym[i + 1]}`);
        if (r !== undefined && r < best) {
          best = r;
          at = i;
        }
      }
      if (at < 0) break;
      const a = sym[at]!,
        b = sym[at + 1]!;
      const next: string[] = [];
      for (let i = 0; i < sym.length; i++) {
        if (i + 1 < sym.length && sym[i] === a && sym[i + 1] === b) {
          next.push(a + b);
          i++;
        } else next.push(sym[i]!);
      }
      sym = next;
    }
    const ids: number[] = [];
    for (const t of sym) {
      const id = this.ids.get(t) ?? this.unkId;
      if (id === this.unkId && ids[ids.length - 1] === this.unkId) continue; // fuse_unk
      ids.push(id);
    }
    return ids;
  }

  /** HF tokenizer.json text. */
  toJSON(): unknown {
    const normalizers: unknown[] = [{ type: 'NFKC' }];
    if (this.norm.lowercase ?? true) normalizers.push({ type: 'Lowercase' });
    return {
      version: '1.0',
      // HF applies the same truncation (our EOS comes after it)
      truncation: { direction: 'Right', max_length: this.maxLen - 1, strategy: 'LongestFirst', stride: 0 },
      padding: null,
      added_tokens: SPECIALS.map((t, i) => ({ id: i, content: t, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })),
      normalizer: {
        type: 'Sequence',
        normalizers: this.wordLevel
          ? [
              ...normalizers,
              { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: false, lowercase: this.norm.lowercase ?? true },
            ]
          : normalizers,
      },
      pre_tokenizer: this.wordLevel ? { type: 'BertPreTokenizer' } : { type: 'Metaspace', replacement: WORD_START, prepend_scheme: 'always', split: true },
      post_processor: null,
      decoder: this.wordLevel ? null : { type: 'Metaspace', replacement: WORD_START, prepend_scheme: 'always', split: true },
      model: this.modelJSON(),
    };
  }

  private modelJSON(): unknown {
    if (this.wordLevel) return { type: 'WordLevel', vocab: Object.fromEntries(this.tokens.map((t, i) => [t, i])), unk_token: '<unk>' };
    if (this.scores) return { type: 'Unigram', unk_id: this.unkId, vocab: this.tokens.map((t, i) => [t, this.scores![i]!]), byte_fallback: false };
    const vocab: Record<string, number> = {};
    this.tokens.forEach((t, i) => {
      vocab[t] = i;
    });
    const merges = [...this.ranks.entries()].sort((a, b) => a[1] - b[1]).map(([k]) => k.split(' '));
    return {
      type: 'BPE',
      dropout: null,
      unk_token: '<unk>',
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: true,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges,
    };
  }

  save(path: string): void {
    writeFileAtomicSync(path, JSON.stringify(this.toJSON()));
  }

  /**
   * Loads a tokenizer.json. Lowercasing and the length limit are read from it (normalizer,
   * truncation); romanisation, which HF cannot express, comes from the model config.
   */
  static load(path: string, extra: { romanize?: boolean } = {}): Tokenizer {
    let j: {
      model?: { type?: string; vocab?: Record<string, number> | [string, number][]; merges?: (string | [string, string])[]; unk_id?: number };
      normalizer?: { normalizers?: { type: string }[] } | null;
      truncation?: { max_length?: number } | null;
    };
    try {
      j = JSON.parse(readFileSync(path, 'utf8'));
    } catch (e) {
      throw new Error(`${path}: cannot read tokenizer: ${(e as Error).message}`);
    }
    const m = j.model;
    const isBpe = m?.type === 'BPE' && !!m.vocab && !Array.isArray(m.vocab) && !!m.merges;
    const isUnigram = m?.type === 'Unigram' && Array.isArray(m.vocab);
    const isWords = m?.type === 'WordLevel' && !!m.vocab && !Array.isArray(m.vocab);
    if (!m || (!isBpe && !isUnigram && !isWords)) throw new Error(`${path}: not a BPE, Unigram or WordLevel tokenizer.json`);
    const vocab: string[] = [];
    let scores: number[] | null = null;
    if (isUnigram) {
      if (m.unk_id !== 1) throw new Error(`${path}: expected unk_id 1`);
      const v = m.vocab as [string, number][];
      scores = v.map(([, sc], i) => {
        if (typeof sc !== 'number' || !Number.isFinite(sc)) throw new Error(`${path}: vocab[${i}] has no numeric score`);
        return sc;
      });
      v.forEach(([t], i) => {
        vocab[i] = t;
      });
    } else {
      for (const [t, i] of Object.entries(m.vocab as Record<string, number>)) vocab[i] = t;
    }
    for (let i = 0; i < SPECIALS.length; i++) if (vocab[i] !== SPECIALS[i]) throw new Error(`${path}: expected special token ${SPECIALS[i]} at id ${i}`);
    const merges = isBpe ? m.merges!.map((x) => (Array.isArray(x) ? x : (x.split(' ') as [string, string]))) : null;
    const lowercase = !!j.normalizer?.normalizers?.some((n) => n.type === 'Lowercase');
    const maxLen = (j.truncation?.max_length ?? 63) + 1;
    return new Tokenizer(vocab, merges, { lowercase, romanize: extra.romanize ?? false }, maxLen, scores, isWords);
  }

  /** The same tokenizer in HF's own (Rust) implementation (its native package loaded now: importing it costs every command that reads a model). */
  toHF(): HFTokenizer {
    const hf = createRequire(import.meta.url)('tokenizers') as typeof import('tokenizers');
    return hf.Tokenizer.fromString(JSON.stringify(this.toJSON()));
  }

  /** Encodes with HF's batch encoder (parallel Rust); ids as encode() returns them. */
  async encodeBatchHF(sentences: string[]): Promise<Int32Array[]> {
    const hf = this.toHF();
    const enc = await hf.encodeBatch(sentences.map((s) => normalize(s, this.norm)));
    return enc.map((e) => {
      const ids = e.getIds();
      ids.push(this.eosId);
      return Int32Array.from(ids);
    });
  }
}

/** BERT's ideograph ranges: each such character is a word of its own. */
function isCjkIdeograph(c: number): boolean {
  return (
    (c >= 0x4e00 && c <= 0x9fff) ||
    (c >= 0x3400 && c <= 0x4dbf) ||
    (c >= 0x20000 && c <= 0x2a6df) ||
    (c >= 0x2a700 && c <= 0x2b73f) ||
    (c >= 0x2b740 && c <= 0x2b81f) ||
    (c >= 0x2b820 && c <= 0x2ceaf) ||
    (c >= 0xf900 && c <= 0xfaff) ||
    (c >= 0x2f800 && c <= 0x2fa1f)
  );
}

const PUNCT = /\p{P}/u;
function isBertPunct(c: number, ch: string): boolean {
  return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126) || PUNCT.test(ch);
}

/** Words of normalised text as Hugging Face's BertNormalizer + BertPreTokenizer split them. */
export function splitWords(s: string): string[] {
  const out: string[] = [];
  let cur = '';
  const flush = () => {
    if (cur) {
      out.push(cur);
      cur = '';
    }
  };
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (/\s/u.test(ch)) flush();
    else if (isCjkIdeograph(c) || isBertPunct(c, ch)) {
      flush();
      out.push(ch);
    } else cur += ch;
  }
  flush();
  return out;
}

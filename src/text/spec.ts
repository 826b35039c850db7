// What tokenises a model's input, as config.json records it (`tokenizerSpec`): the tokenizer's
// type, its file in the model directory, its special-token ids, whether BOS/EOS are added, the
// maximum length and the text normalisation. Loading a model reads this, never the training
// configuration; model directories written before the spec existed get one derived from their
// legacy fields in one place (src/embed/model-dir.ts, legacyTokenizerSpec).
import { join } from 'node:path';
import { HashedNgramTokenizer, hashesOf } from './ngrams.js';
import { SPECIALS, Tokenizer } from './tokenizer.js';
import type { TextTokenizer } from './text-tokenizer.js';

export interface SpecialIds {
  pad: number;
  unk: number;
  bos: number;
  eos: number;
}

interface SpecBase {
  /** The tokenizer's file in the model directory; null: none (the settings below are all of it). */
  file: string | null;
  special: SpecialIds;
  addBos: boolean;
  addEos: boolean;
  /** The most ids one input gives (longer inputs are cut). */
  maxLength: number | null;
  /** Text normalisation before tokenising. */
  lowercase: boolean;
  romanize: boolean;
}

/** A sentence as one bag of hashed character n-grams and words (src/text/ngrams.ts); no file. */
export interface HashedNgramSpec extends SpecBase {
  type: 'hashed-ngrams';
  hash: 'fnv1a32-utf16';
  ngrams: [number, number];
  buckets: number;
  words: boolean;
  maxFeatures: number;
  /** Ids per feature (hash embeddings, src/text/ngrams.ts extraHash); absent: 1. */
  hashes?: number;
}

/** xling's own BPE / unigram / word vocabulary, saved as a Hugging Face tokenizer.json (src/text/tokenizer.ts). */
export interface XlingSubwordSpec extends SpecBase {
  type: 'xling-subword';
  file: string;
  /** The vocabulary's model (checked against the file); absent in specs derived from directories written before specs. */
  model?: 'bpe' | 'unigram' | 'words';
}

/** Tokenizers of imported kinds, read by their own loaders (LASER's SentencePiece + fairseq dictionary, a Hugging Face tokenizer.json). */
export interface ForeignSpec extends Omit<SpecBase, 'lowercase' | 'romanize' | 'special' | 'addBos' | 'addEos' | 'maxLength'> {
  type: 'laser-spm' | 'hf-tokenizer';
  file: string;
  special?: SpecialIds;
  addBos?: boolean;
  addEos?: boolean;
  maxLength?: number | null;
}

export type TokenizerSpec = HashedNgramSpec | XlingSubwordSpec | ForeignSpec;

export const TOKENIZER_TYPES = ['hashed-ngrams', 'xling-subword', 'laser-spm', 'hf-tokenizer'] as const;

/** xling's ids 0–3 (Tokenizer's SPECIALS order). */
export const XLING_SPECIALS: SpecialIds = { pad: 0, unk: 1, bos: 2, eos: 3 };

/** The spec of a tokenizer xling made (saved as `file` when it has one). */
export function tokenizerSpecOf(tok: TextTokenizer, file: string | null): TokenizerSpec {
  if (tok instanceof HashedNgramTokenizer) {
    return {
      type: 'hashed-ngrams',
      hash: 'fnv1a32-utf16',
      file: null,
      ...tok.opts,
      special: { ...XLING_SPECIALS },
      addBos: false,
      addEos: false,
      maxLength: tok.opts.maxFeatures,
      lowercase: tok.norm.lowercase ?? true,
      romanize: tok.norm.romanize ?? false,
    };
  }
  if (tok instanceof Tokenizer) {
    if (!file) throw new Error('a subword tokenizer needs its file name');
    return {
      type: 'xling-subword',
      file,
      model: tok.model,
      special: { ...XLING_SPECIALS },
      addBos: false,
      addEos: true,
      maxLength: tok.maxLength,
      lowercase: tok.norm.lowercase ?? true,
      romanize: tok.norm.romanize ?? false,
    };
  }
  throw new Error(`no tokenizer spec for ${tok.constructor.name}`);
}

/** Checks a spec read from `where` (config.json): its type and the fields its type needs. */
export function checkTokenizerSpec(s: unknown, where: string): TokenizerSpec {
  const f = `${where}: 'tokenizerSpec'`;
  if (typeof s !== 'object' || s === null || Array.isArray(s)) throw new Error(`${f} must be an object`);
  const o = s as Record<string, unknown>;
  if (!TOKENIZER_TYPES.includes(o.type as never)) throw new Error(`${f}.type must be one of ${TOKENIZER_TYPES.join(', ')} (got ${JSON.stringify(o.type)})`);
  const need = (k: string, ok: (v: unknown) => boolean, what: string) => {
    if (!ok(o[k])) throw new Error(`${f}.${k} must be ${what} (got ${JSON.stringify(o[k])})`);
  };
  const bool = (v: unknown) => typeof v === 'boolean',
    int = (v: unknown) => Number.isInteger(v) && (v as number) >= 0;
  const special = (v: unknown) => typeof v === 'object' && v !== null && ['pad', 'unk', 'bos', 'eos'].every((k) => int((v as Record<string, unknown>)[k]));
  if (o.type === 'hashed-ngrams' || o.type === 'xling-subword') {
    need('special', special, 'an object of ids {pad, unk, bos, eos}');
    for (const k of ['addBos', 'addEos', 'lowercase', 'romanize']) need(k, bool, 'true or false');
    need('maxLength', int, 'a count');
  }
  if (o.type === 'hashed-ngrams') {
    need('hash', (v) => v === 'fnv1a32-utf16', "'fnv1a32-utf16'");
    need('ngrams', (v) => Array.isArray(v) && v.length === 2 && v.every(int), '[min, max]');
    for (const k of ['buckets', 'maxFeatures']) need(k, int, 'a count');
    need('words', bool, 'true or false');
    if (o.hashes !== undefined) need('hashes', (v) => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 8, 'an integer from 1 to 8');
  } else {
    need('file', (v) => typeof v === 'string' && v.length > 0 && !/[/\\]/.test(v), 'a file name in the model directory');
  }
  if (o.type === 'xling-subword' && o.model !== undefined) need('model', (v) => v === 'bpe' || v === 'unigram' || v === 'words', "'bpe', 'unigram' or 'words'");
  return o as unknown as TokenizerSpec;
}

/** The tokenizer of an xling spec (hashed n-grams, xling's subword vocabulary) in model directory dir. */
export function openXlingTokenizer(dir: string, spec: TokenizerSpec): HashedNgramTokenizer | Tokenizer {
  if (spec.type === 'hashed-ngrams') {
    return new HashedNgramTokenizer(
      { ngrams: spec.ngrams, buckets: spec.buckets, words: spec.words, maxFeatures: spec.maxFeatures, ...hashesOf(spec.hashes) },
      { lowercase: spec.lowercase, romanize: spec.romanize },
    );
  }
  if (spec.type === 'xling-subword') {
    const path = join(dir, spec.file);
    const s = spec.special;
    if (s.pad !== 0 || s.unk !== 1 || s.bos !== 2 || s.eos !== 3 || spec.addBos || !spec.addEos)
      throw new Error(`${path}: xling's subword tokenizer has ${SPECIALS.join(',')} at ids 0–3 and adds EOS only; the spec asks for another layout`);
    const t = Tokenizer.load(path, { romanize: spec.romanize });
    if (spec.model && t.model !== spec.model) throw new Error(`${path}: a ${t.model} vocabulary, but config.json's tokenizerSpec says ${spec.model}`);
    return t;
  }
  throw new Error(`a ${spec.type} tokenizer is read by its model kind's loader`);
}

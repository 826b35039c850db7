// LASER's tokenisation of a sentence, as laser_encoders does it: LaserTokenizer.tokenize
// (non-printing characters → space, Moses punctuation normalisation, lower-casing, SentencePiece
// pieces) then SentenceEncoder._tokenize (pieces split on whitespace, each mapped through the
// fairseq dictionary, <unk>=3 when absent, </s>=2 appended). The model directory keeps both the
// SentencePiece model and the dictionary in one file (LASER_TOKENIZER_FILE).
import { readFileSync } from 'node:fs';
import { laserPreprocess, pySplit } from '../../text/moses.js';
import { SentencePieceProcessor } from '../../text/sentencepiece.js';
import { TextTokenizer } from '../../text/text-tokenizer.js';

export const LASER_TOKENIZER_FILE = 'laser-tokenizer.json';

/** The tokenizer file of an imported LASER model. */
export interface LaserTokenizerFile {
  type: 'laser-spm';
  /** The SentencePiece .model, base64. */
  spm: string;
  /** The fairseq dictionary: [piece, id] (the special ids 0–3 are fixed, as LASER fixes them). */
  dictionary: [string, number][];
  lowerCase: boolean;
  normalizePunct: boolean;
  /** Ids per sentence including </s> (longer sentences are cut, counted for a warning). */
  maxLen: number;
}

export const LASER_SPECIALS: Record<string, number> = { '<s>': 0, '<pad>': 1, '</s>': 2, '<unk>': 3 };

/**
 * A fairseq dictionary file (.cvocab / dict.txt): one "<symbol> <count>" line each, ids from 4 on
 * after <s> <pad> </s> <unk> (fairseq's Dictionary.add_from_file; "#fairseq:overwrite" allowed).
 */
export function readFairseqDictionary(path: string): Map<string, number> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`--vocab ${path}: ${(e as Error).message}`);
  }
  const d = new Map<string, number>(Object.entries(LASER_SPECIALS));
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/\s+$/, '');
    if (!line) return;
    let parts = line.split(' ');
    let overwrite = false;
    if (parts[parts.length - 1] === '#fairseq:overwrite') {
      overwrite = true;
      parts = parts.slice(0, -1);
    }
    if (parts.length < 2 || !/^\d+$/.test(parts[parts.length - 1]!)) throw new Error(`--vocab ${path}:${i + 1}: expected "<symbol> <count>"`);
    const word = parts.slice(0, -1).join(' ');
    if (d.has(word) && !overwrite) throw new Error(`--vocab ${path}:${i + 1}: duplicate symbol ${JSON.stringify(word)} (fairseq needs "#fairseq:overwrite")`);
    if (!d.has(word)) d.set(word, d.size);
  });
  return d;
}

export class LaserTokenizer implements TextTokenizer {
  readonly padId = 1;
  readonly unkId = 3;
  readonly bosId = 0;
  readonly eosId = 2;
  truncated = 0;
  readonly sp: SentencePieceProcessor;
  private readonly dict: Map<string, number>;
  constructor(
    readonly file: LaserTokenizerFile,
    readonly vocabSize: number,
    what = LASER_TOKENIZER_FILE,
  ) {
    this.sp = new SentencePieceProcessor(Buffer.from(file.spm, 'base64'), `${what}: spm`);
    this.dict = new Map(file.dictionary);
    for (const [k, v] of Object.entries(LASER_SPECIALS)) this.dict.set(k, v);
    for (const [p, id] of this.dict)
      if (!Number.isInteger(id) || id < 0 || id >= vocabSize)
        throw new Error(`${what}: dictionary id ${id} of ${JSON.stringify(p)} is outside the embedding table (${vocabSize} rows)`);
  }
  get maxLength(): number {
    return this.file.maxLen;
  }

  static load(path: string, vocabSize: number): LaserTokenizer {
    let f: LaserTokenizerFile;
    try {
      f = JSON.parse(readFileSync(path, 'utf8')) as LaserTokenizerFile;
    } catch (e) {
      throw new Error(`${path}: ${(e as Error).message}`);
    }
    if (f.type !== 'laser-spm') throw new Error(`${path}: not a LASER tokenizer file`);
    return new LaserTokenizer(f, vocabSize, path);
  }

  /** The text SentencePiece sees (LaserTokenizer.tokenize before encoding). */
  preprocess(s: string): string {
    return this.file.normalizePunct
      ? laserPreprocess(s, { lowerCase: this.file.lowerCase })
      : this.file.lowerCase
        ? s.replace(/\p{C}/gu, ' ').toLowerCase()
        : s.replace(/\p{C}/gu, ' ');
  }

  /** LASER's pieces of a sentence (what LaserTokenizer.tokenize joins with spaces). */
  pieces(s: string): string[] {
    return this.sp.encode(this.preprocess(s)).pieces;
  }

  encode(s: string): Int32Array {
    const toks = pySplit(this.pieces(s).join(' '));
    const n = Math.min(toks.length, this.file.maxLen - 1);
    if (n < toks.length) this.truncated++;
    const out = new Int32Array(n + 1);
    for (let i = 0; i < n; i++) out[i] = this.dict.get(toks[i]!) ?? this.unkId;
    out[n] = this.eosId;
    return out;
  }
}

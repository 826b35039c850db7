// Sentence vectors for the CLI: one .npy reader with one dtype rule for every command, and one
// way to embed text with a model (xling embed's options and defaults) for every command that does.
import { loadSentenceEncoder } from '../embed/model-dir.js';
import { SentenceEncoderModel } from '../embed/model.js';
import { spreadSample } from '../embed/centering.js';
import { readVectors, Vectors } from '../io/vectors.js';

export { openVectors, readVectors, type Vectors } from '../io/vectors.js';

/** Options of every command that embeds text with a model, with xling embed's defaults (the language option is per input). */
export const EMBED_OPTIONS = {
  center: { type: 'boolean', default: true, help: 'apply per-language centring (--no-center: plain LASER vectors)' },
  batchTokens: { type: 'number', range: { int: true, min: 1 }, help: "max padded tokens per batch (default: the model's, 32000 for token sequences)" },
  batchSentences: { type: 'number', range: { int: true, min: 1 }, help: "max sentences per batch (default: the model's, 4096 for token sequences)" },
} as const;

export const LANG_HELP = "the model's mean vector of that language is subtracted (per-language centring; the encoder itself never sees it). Default 'auto': identified from a sample of non-blank lines spread over the whole input (a vote of nearest mean vectors; inputs of one language)";

/** xling embed's input and output options, shared by the commands that do its work elsewhere (xling cluster embed). */
export const EMBED_FILE_OPTIONS = {
  model: { type: 'string', required: true, metavar: 'DIR', help: 'model directory (xling train / xling export)' },
  lang: { type: 'string', help: `language of the input: ${LANG_HELP}` },
  center: EMBED_OPTIONS.center,
  fp16: { type: 'boolean', default: false, help: 'write float16 .npy' },
  normalize: { type: 'boolean', default: true, help: 'L2-normalise vectors (--no-normalize to keep raw)' },
  batchTokens: EMBED_OPTIONS.batchTokens,
  batchSentences: EMBED_OPTIONS.batchSentences,
} as const;

/** Warns when centring is asked for a language the model has no mean vector of (a model without any is not warned about). */
export function warnUnknownCenter(modelLangs: string[], lang: string, flag: string, label: string): void {
  if (modelLangs.length && !modelLangs.includes(lang))
    process.stderr.write(`[${label}] warning: the model has no mean vector for ${flag} ${lang} (it has ${modelLangs.join(' ')}); vectors are not centred\n`);
}

export interface EmbedSettings {
  /** A language code, or undefined / 'auto' to identify it from the input. */
  lang?: string;
  /** The option that gave lang, for messages (--lang, --src-lang, …). */
  langFlag: string;
  center: boolean;
  batchTokens?: number;
  batchSentences?: number;
  normalize?: boolean;
  /** No identification line (warnings are still printed). */
  quiet?: boolean;
  /** Log prefix, e.g. 'embed'. */
  label: string;
}

/**
 * How every command embeds one input with a model: the centring language is the one given, or is
 * identified from a sample spread over the whole input (identify()); lines are then embedded in
 * any chunks with the same options (embed()); finish() warns once about blank and cut lines.
 */
export class InputEmbedder {
  lang: string | undefined;
  private lines = 0;
  private blank = 0;
  private cut = 0;

  constructor(readonly model: SentenceEncoderModel, readonly s: EmbedSettings, readonly what: string) {
    this.lang = s.lang && s.lang !== 'auto' ? s.lang : undefined;
    if (this.lang && s.center) warnUnknownCenter([...model.centers.keys()], this.lang, s.langFlag, s.label);
  }

  /** Whether the language must be identified from a sample of the input (see identify). */
  get needsSample(): boolean { return !this.lang && this.s.center && this.model.centers.size > 0; }

  /** Sets the language from a spread sample of the input's lines (SpreadSample / spreadSample). */
  identify(sample: string[]): void {
    if (!this.needsSample) return;
    const id = this.model.identifyLanguage(sample);
    this.lang = id?.lang;
    if (id && !this.s.quiet) process.stderr.write(`[${this.s.label}] ${this.what}: input language identified as ${id.lang} (${(100 * id.share).toFixed(0)}% of ${id.sentences} sentences nearest its mean vector); centring with it (${this.s.langFlag} to set, --no-center for plain vectors)\n`);
  }

  embed(sentences: string[]): Float32Array {
    this.lines += sentences.length;
    for (const t of sentences) if (!t.trim()) this.blank++;
    const tok = this.model.tokenizer, before = tok.truncated ?? 0;
    const v = this.model.embed(sentences, { maxTokens: this.s.batchTokens, maxSentences: this.s.batchSentences, normalize: this.s.normalize ?? true, lang: this.lang, center: this.s.center });
    this.cut += (tok.truncated ?? 0) - before;
    return v;
  }

  finish(): void {
    const p = `[${this.s.label}] warning: ${this.what}:`;
    if (this.blank) process.stderr.write(`${p} ${this.blank} blank line${this.blank > 1 ? 's' : ''} (each still gets its row: the vector of an empty sentence; not used to identify the language)\n`);
    if (this.cut) process.stderr.write(`${p} ${this.cut} of ${this.lines} lines were longer than the model reads and were cut to its maximum input length\n`);
  }
}

/** Vectors for sentences: from a .npy (row count must match) or by embedding with a model as xling embed does. */
export function vectorsFor(sentences: string[], file: string | undefined, modelDir: string | undefined, what: string, settings: EmbedSettings): Vectors {
  if (file) {
    const v = readVectors(file);
    if (v.n !== sentences.length) throw new Error(`${file}: ${v.n} vectors but ${what} has ${sentences.length} lines`);
    return v;
  }
  if (!modelDir) throw new Error(`${what}: give vectors or --model`);
  const m = cachedModel(modelDir);
  const job = new InputEmbedder(m, settings, what);
  job.identify(spreadSample(sentences));
  const data = job.embed(sentences);
  job.finish();
  return { data, n: sentences.length, d: m.dim };
}

let cache: { dir: string; model: SentenceEncoderModel } | null = null;
function cachedModel(dir: string): SentenceEncoderModel {
  if (!cache || cache.dir !== dir) cache = { dir, model: loadSentenceEncoder(dir) };
  return cache.model;
}

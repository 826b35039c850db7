// How a command embeds one input with a model: the centring language given, or identified from a
// sample spread over the input, or each line's own; the model loaded once per process
// (vectorsFor). Used by the CLI's commands and by the jobs that embed inside xling's workers.
import { loadEncoderForRuntime, TextLanes, textLanes } from './portable.js';
import { EmbedOptions, SentenceEncoderModel } from './model.js';
import { chunksOf, JobRunner, streamEmbeddings, streamJobs, VectorSink } from './stream.js';
import { spreadSample } from './centering.js';
import { AUTO, CENTER_MIN_NORM, LID_CONFIDENCE, PER_SENTENCE, resolveLangOption } from './language.js';
import type { CenterChoice } from './model.js';
import { readVectors, Vectors } from '../io/vectors.js';
import type { TextTokenizer } from '../text/text-tokenizer.js';

/** The one warning of lines a model cut to its maximum input length, naming what they came from (a file, an option). */
export function cutLinesWarning(label: string, what: string, cut: number, lines: number): string {
  return `[${label}] warning: ${what}: ${cut} of ${lines} lines were longer than the model reads and were cut to its maximum input length\n`;
}

/** How many of the texts a model's tokenizer cuts to its maximum input length (each tokenised once more; 0 when it does not count). */
export function linesCut(tok: TextTokenizer, texts: readonly string[]): number {
  if (tok.truncated === undefined) return 0;
  const before = tok.truncated;
  for (const t of texts) tok.encode(t);
  return tok.truncated - before;
}

/** A language option checked against a model's languages (see resolveLangOption); the error names the option. */
export function checkLangOption(model: SentenceEncoderModel, lang: string | undefined, flag: string): string | null {
  return resolveLangOption(lang, model.languages, flag);
}

export interface EmbedSettings {
  /** A language code, 'auto-per-sentence', 'none', or undefined / 'auto' to identify it from the input. */
  lang?: string;
  /** The option that gave lang, for messages (--lang, --src-lang, …). */
  langFlag: string;
  center: boolean;
  /** Centre even when the model's mean vectors are negligible (--force-center). */
  forceCenter?: boolean;
  batchTokens?: number;
  batchSentences?: number;
  normalize?: boolean;
  /** No identification line (warnings are still printed). */
  quiet?: boolean;
  /** Log prefix, e.g. 'embed'. */
  label: string;
}

/** One line saying what centring a choice gives (for logs). */
export function describeCenter(model: SentenceEncoderModel, c: CenterChoice, langFlag: string): string {
  const id = c.identified
    ? `identified as ${c.identified.lang} (confidence ${(Math.floor(c.identified.confidence * 100) / 100).toFixed(2)}${c.identified.sentences !== undefined ? ` over ${c.identified.sentences} sentences` : ''})`
    : '';
  switch (c.reason) {
    case undefined:
      return c.lang ? `${id ? `${id}; c` : 'c'}entred with the ${c.lang} mean vector` : 'not centred (no language)';
    case 'off':
      return 'not centred (--no-center)';
    case 'no-means':
      return 'not centred: the model has no per-language mean vectors';
    case 'negligible':
      return `not centred: the model's per-language mean vectors are too small to matter (mean norm ${model.meanVectors.meanNorm.toFixed(3)} < ${CENTER_MIN_NORM}; --force-center to centre anyway)`;
    case 'no-identifier':
      return `not centred: the model has no language identifier (xling train-lid adds one), so the language is unknown (${langFlag} to give it)`;
    case 'no-evidence':
      return `not centred: no language could be identified (blank lines or an unknown script; ${langFlag} to give it)`;
    case 'unsure':
      return `${id}, below the confidence of ${LID_CONFIDENCE} needed to centre: not centred (${langFlag} to give the language)`;
    case 'no-mean-for-language':
      return `${id ? `${id}, ` : ''}but the model has no mean vector of it: not centred`;
  }
}

/**
 * How every command embeds one input with a model: the centring language is the one given, or is
 * identified from a sample spread over the whole input (identify()) and used only when the
 * identification is confident (SentenceEncoderModel.chooseCenter), or each line's own
 * ('auto-per-sentence'); lines are then embedded in any chunks with the same options (embed());
 * finish() warns once about blank and cut lines and sums up per-sentence centring.
 */
export class InputEmbedder {
  /** The language centred with (null: none), once decided. */
  lang: string | null = null;
  /** What was decided and why (after the constructor for a given language, after identify() for 'auto'). */
  choice: CenterChoice | null = null;
  readonly perSentence: boolean;
  private readonly auto: boolean;
  private lines = 0;
  private blank = 0;
  private cut = 0;
  private readonly sentenceLangs = new Map<string, number>();
  private uncentred = 0;

  constructor(
    readonly model: SentenceEncoderModel,
    readonly s: EmbedSettings,
    readonly what: string,
  ) {
    const l = resolveLangOption(s.lang, model.languages, s.langFlag);
    this.perSentence = l === PER_SENTENCE;
    this.auto = l === AUTO;
    const center = !s.center ? false : s.forceCenter ? 'force' : true;
    if (!this.auto && !this.perSentence) {
      this.choice = model.chooseCenter(l, center);
      this.lang = this.choice.lang;
      if (!s.quiet && s.center && l !== null) this.say(describeCenter(model, this.choice, s.langFlag));
    } else {
      // decided without reading the input when nothing can be centred anyway
      const pre = model.chooseCenter(l, center, { lang: '', confidence: 1 });
      if (pre.reason && pre.reason !== 'no-mean-for-language') {
        this.choice = pre;
        if (!s.quiet && s.center) this.say(describeCenter(model, pre, s.langFlag));
      } else if (this.perSentence && !s.quiet)
        this.say(`each line identified on its own and centred when the identification's confidence is at least ${LID_CONFIDENCE}`);
    }
  }

  private say(line: string): void {
    process.stderr.write(`[${this.s.label}] ${this.what}: ${line}\n`);
  }

  private get centerMode(): boolean | 'force' {
    return !this.s.center ? false : this.s.forceCenter ? 'force' : true;
  }

  /** Whether the language must be identified from a sample of the input (see identify). */
  get needsSample(): boolean {
    return this.auto && !this.choice;
  }

  /** Decides the centring language from a spread sample of the input's lines (SpreadSample / spreadSample). */
  identify(sample: string[]): void {
    if (!this.needsSample) return;
    this.choice = this.model.chooseCenter(AUTO, this.centerMode, this.model.identifyLanguage(sample));
    this.lang = this.choice.lang;
    if (!this.s.quiet) this.say(`input language ${describeCenter(this.model, this.choice, this.s.langFlag)}`);
  }

  /** Counts a chunk's lines and decides its centring (each line's own language when per sentence): the options embed() gives the model. */
  private chunkOptions(sentences: string[]): EmbedOptions {
    this.lines += sentences.length;
    for (const t of sentences) if (!t.trim()) this.blank++;
    const o = { maxTokens: this.s.batchTokens, maxSentences: this.s.batchSentences, normalize: this.s.normalize ?? true, center: this.centerMode };
    if (!this.perSentence || this.choice) return { ...o, lang: this.lang ?? undefined };
    const langs = sentences.map((t) => this.model.sentenceCenter(t, this.centerMode).lang);
    for (const l of langs) {
      if (l) this.sentenceLangs.set(l, (this.sentenceLangs.get(l) ?? 0) + 1);
      else this.uncentred++;
    }
    return { ...o, langs };
  }

  embed(sentences: string[]): Float32Array {
    const o = this.chunkOptions(sentences);
    const tok = this.model.tokenizer,
      before = tok.truncated ?? 0;
    const v = this.model.embed(sentences, o);
    this.cut += (tok.truncated ?? 0) - before;
    return v;
  }

  /**
   * Embeds a stream of lines into sink, rows in input order, at most `chunk` lines held at a time
   * (the vectors do not depend on it); after(rows, total) runs as each chunk's rows are written.
   * On the portable runtime's kernels a pipeline (streamJobs): lines are read while earlier chunks
   * are tokenised and embedded on every thread and finished ones written; elsewhere embed() chunk
   * by chunk. Returns the rows written.
   */
  embedStream(lines: AsyncIterable<string>, chunk: number, sink: VectorSink, after?: (rows: number, total: number) => void | Promise<void>): Promise<number> {
    const lanes = textLanes(this.model);
    if (!lanes) return streamEmbeddings(chunksOf(lines, chunk), this.model.dim, (b) => this.embed(b), sink, after);
    return streamJobs(chunksOf(lines, Math.min(chunk, STREAM_JOB_LINES)), this.model.dim, this.runner(lanes), sink, after);
  }

  /** Chunks of lines as jobs on text lanes: counted and planned here, the lines cut counted from the replies. */
  private runner(lanes: TextLanes): JobRunner<string[]> {
    const job = (sentences: string[]) => {
      const o = this.chunkOptions(sentences);
      return { plan: this.model.centerPlan(sentences, o), normalize: o.normalize !== false };
    };
    const rowsOf = (r: { rows: Float32Array; truncated: number }) => {
      this.cut += r.truncated;
      return r.rows;
    };
    return {
      workers: lanes.workers,
      worthPosting: (sentences) => sentences.length >= lanes.minJob,
      queued: (i) => lanes.queued(i),
      onWorker: async (i, sentences) => {
        const { plan, normalize } = job(sentences);
        return rowsOf(await lanes.onWorker(i, sentences, plan, normalize));
      },
      here: (sentences) => {
        const { plan, normalize } = job(sentences);
        return rowsOf(lanes.here(sentences, plan, normalize));
      },
    };
  }

  /** Options for SentenceEncoderModel.embed (and documentVectors) that embed as this job decided (after identify()). */
  embedOptions(): { lang?: string; center: boolean | 'force' } {
    return { lang: this.perSentence && !this.choice ? PER_SENTENCE : (this.lang ?? undefined), center: this.centerMode };
  }

  /** What was done, for JSON outputs: the language centred with (null: none) and why not. */
  get centring(): {
    lang: string | null;
    reason: string | null;
    identified: { lang: string; confidence: number } | null;
    per_sentence?: Record<string, number>;
  } {
    if (this.perSentence && !this.choice)
      return {
        lang: null,
        reason: 'per-sentence',
        identified: null,
        per_sentence: { ...Object.fromEntries([...this.sentenceLangs].sort()), none: this.uncentred },
      };
    return {
      lang: this.choice?.lang ?? null,
      reason: this.choice?.reason ?? null,
      identified: this.choice?.identified ? { lang: this.choice.identified.lang, confidence: this.choice.identified.confidence } : null,
    };
  }

  finish(): void {
    const p = `[${this.s.label}] warning: ${this.what}:`;
    if (this.blank)
      process.stderr.write(
        `${p} ${this.blank} blank line${this.blank > 1 ? 's' : ''} (each still gets its row: the vector of an empty sentence; not used to identify the language)\n`,
      );
    if (this.cut) process.stderr.write(cutLinesWarning(this.s.label, this.what, this.cut, this.lines));
    if (this.perSentence && !this.choice && !this.s.quiet) {
      const by = [...this.sentenceLangs]
        .sort((a, b) => b[1] - a[1])
        .map(([l, n]) => `${l} ${n}`)
        .join(', ');
      this.say(
        `per-sentence centring: ${this.lines - this.uncentred} of ${this.lines} lines centred${by ? ` (${by})` : ''}; ${this.uncentred} not (confidence below ${LID_CONFIDENCE}, no evidence or no mean vector)`,
      );
    }
  }
}

/** Lines a job of embedStream's pipeline holds (a few tens of milliseconds of one thread's work). */
const STREAM_JOB_LINES = 2048;

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

/** Checks language options against a model (loaded once, kept for vectorsFor) before any other work (without a model they are not used). */
export function checkLangOptions(modelDir: string | undefined, opts: [string, string | undefined][]): void {
  const given = opts.filter(([, v]) => v !== undefined);
  if (!given.length || !modelDir) return;
  const m = cachedModel(modelDir);
  for (const [flag, v] of given) checkLangOption(m, v, flag);
}

/** The dimension of a model's sentence vectors (the model loaded once, kept for vectorsFor). */
export function modelDim(modelDir: string): number {
  return cachedModel(modelDir).dim;
}

let cache: { dir: string; model: SentenceEncoderModel } | null = null;
function cachedModel(dir: string): SentenceEncoderModel {
  if (!cache || cache.dir !== dir) cache = { dir, model: loadEncoderForRuntime(dir) };
  return cache.model;
}

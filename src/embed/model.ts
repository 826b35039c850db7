// A sentence encoder ready for embedding: any family's SentenceEncoder, its tokenizer and the
// per-language mean vectors of the model. Embeds in length-sorted batches capped by tokens and
// returns L2-normalised float32 rows in input order. Every command (and the server) embeds
// through this class, so the same text gets the same vector whichever command embeds it.
import { lengthBatches } from '../data/batch.js';
import { SentenceEncoder } from '../models/encoder.js';
import { TextTokenizer } from '../text/text-tokenizer.js';
import { LanguageIdentifier } from '../text/lid.js';
import { spreadSample } from './centering.js';
import { centerEachRow, l2normalizeRows } from './vectors.js';
import { AUTO, LID_CONFIDENCE, meanNorm, meansNegligible, PER_SENTENCE } from './language.js';

export { lengthBatches };

export interface EmbedOptions {
  maxTokens?: number; maxSentences?: number; normalize?: boolean; onBatch?: (done: number) => void;
  /**
   * Language of the sentences: with `center` (default on), the model's mean vector of that
   * language is subtracted. 'auto': identified from the sentences themselves (identifyLanguage:
   * the model's language identifier over a spread sample; inputs of one language);
   * 'auto-per-sentence': each sentence identified on its own. An identified language is used
   * only with a confidence of at least LID_CONFIDENCE; otherwise nothing is centred.
   */
  lang?: string;
  /** Per-language centring (default on); 'force': even when the model's means are negligible (meansNegligible). */
  center?: boolean | 'force';
  /** Each sentence's language (already decided, e.g. by sentenceCenter; null: not centred); replaces `lang`. */
  langs?: (string | null)[];
  /** The encoder's fast inference path (e.g. LASER's token tables): 'auto' when it pays for the job. */
  fastPath?: 'auto' | boolean;
}

/** What centring a text or an input gets, and why (for log lines, JSON fields and headers). */
export interface CenterChoice {
  /** The language whose mean is subtracted; null: not centred. */
  lang: string | null;
  /** The identified (or given) language, also when it is not used. */
  identified?: { lang: string; confidence: number; sentences?: number } | null;
  /** Why nothing is centred: 'off' (center false), 'negligible' (the means are too small), 'no-means', 'no-identifier', 'unsure' (below LID_CONFIDENCE), 'no-evidence' (blank or unknown script), 'no-mean-for-language'. */
  reason?: 'off' | 'negligible' | 'no-means' | 'no-identifier' | 'unsure' | 'no-evidence' | 'no-mean-for-language';
}

export class SentenceEncoderModel {
  constructor(readonly encoder: SentenceEncoder, readonly tokenizer: TextTokenizer,
    /** Per-language mean vectors (see centering.ts); empty for models without them. */
    public centers: Map<string, Float32Array> = new Map(),
    /** The model directory's config.json, when loaded from one. */
    readonly config: unknown = null,
    /** The model's language identifier (lid.json), null when it has none. */
    public lid: LanguageIdentifier | null = null) {}
  get dim(): number { return this.encoder.dim; }
  /** The arithmetic of the encoder's large matrices as loaded ('bf16': loadSentenceEncoder's precision option). */
  precision: 'fp32' | 'bf16' = 'fp32';

  /** The languages a language option may name: those with mean vectors and those the identifier knows. */
  get languages(): string[] { return [...new Set([...this.centers.keys(), ...(this.lid?.languages ?? [])])].sort(); }

  /** The average norm of the mean vectors, and whether it is too small to matter (centring then skipped unless forced). */
  get meanVectors(): { languages: number; meanNorm: number; negligible: boolean } {
    return { languages: this.centers.size, meanNorm: meanNorm(this.centers), negligible: meansNegligible(this.centers) };
  }

  /**
   * The centring rule of every command and the server, for a language that is given (a code,
   * 'auto' with the input's identification `identified`, or undefined/null: none).
   */
  chooseCenter(lang: string | null | undefined, center: boolean | 'force' | undefined, identified?: { lang: string; confidence: number; sentences?: number } | null): CenterChoice {
    if (center === false) return { lang: null, reason: 'off' };
    if (!this.centers.size) return { lang: null, reason: 'no-means' };
    if (center !== 'force' && meansNegligible(this.centers)) return { lang: null, reason: 'negligible', identified };
    if (!lang) return { lang: null };
    if (lang === AUTO || lang === PER_SENTENCE) {
      if (!this.lid) return { lang: null, reason: 'no-identifier' };
      if (!identified) return { lang: null, reason: 'no-evidence', identified: null };
      if (identified.confidence < LID_CONFIDENCE) return { lang: null, reason: 'unsure', identified };
      lang = identified.lang;
    }
    return this.centers.has(lang) ? { lang, identified } : { lang: null, reason: 'no-mean-for-language', identified };
  }

  /** The mean vector embed() subtracts for these options, or null ('auto' is resolved by the caller). */
  centerFor(o: EmbedOptions): Float32Array | null {
    if (!o.lang || o.lang === AUTO || o.lang === PER_SENTENCE) return null;
    const c = this.chooseCenter(o.lang, o.center);
    return c.lang ? this.centers.get(c.lang)! : null;
  }

  /**
   * The language of a set of sentences taken to share one language (a file), by the model's
   * language identifier: the mean of the per-sentence posteriors over a spread sample of at most
   * `sample` non-blank sentences (spreadSample: a streamed input sampled the same way gets the
   * same answer); `confidence` is the winner's mean posterior. null when the model has no
   * identifier or no sentence gives evidence.
   */
  identifyLanguage(sentences: string[], sample = 2000): { lang: string; confidence: number; sentences: number } | null {
    if (!this.lid) return null;
    return this.lid.identifyAll(spreadSample(sentences, sample));
  }

  /** What centring one sentence gets with lang 'auto-per-sentence' (or 'auto' for a single text). */
  sentenceCenter(text: string, center?: boolean | 'force'): CenterChoice {
    return this.chooseCenter(PER_SENTENCE, center, this.lid && text.trim() ? this.lid.identify(text) : null);
  }

  /** Options with lang 'auto' replaced by the identified language (or none: see chooseCenter), 'auto-per-sentence' by per-row means. */
  private resolveAuto(sentences: string[], o: EmbedOptions): EmbedOptions & { rowCenters?: (Float32Array | null)[] } {
    if (o.langs) {
      if (o.langs.length !== sentences.length) throw new Error(`embed: ${o.langs.length} languages for ${sentences.length} sentences`);
      return { ...o, lang: undefined, rowCenters: o.center === false ? undefined : o.langs.map((l) => (l && this.chooseCenter(l, o.center).lang ? this.centers.get(l)! : null)) };
    }
    if (o.lang === PER_SENTENCE) {
      if (o.center === false) return { ...o, lang: undefined };
      return { ...o, lang: undefined, rowCenters: sentences.map((t) => { const c = this.sentenceCenter(t, o.center); return c.lang ? this.centers.get(c.lang)! : null; }) };
    }
    if (o.lang !== AUTO) return o;
    const c = o.center === false ? null : this.chooseCenter(AUTO, o.center, this.identifyLanguage(sentences));
    return { ...o, lang: c?.lang ?? undefined };
  }

  private fastFor(seqs: ArrayLike<number>[], o: EmbedOptions): (SentenceEncoder & { dispose(): void }) | null {
    const want = o.fastPath ?? 'auto';
    if (want === false || !this.encoder.fastPath) return null;
    let tokens = 0;
    for (const s of seqs) tokens += s.length;
    return this.encoder.fastPath({ tokens, force: want === true });
  }

  /** Embeds token sequences; rows in input order. */
  embedIds(seqs: Int32Array[], o: EmbedOptions & { rowCenters?: (Float32Array | null)[] } = {}): Float32Array {
    const out = new Float32Array(seqs.length * this.dim);
    const fast = this.fastFor(seqs, o);
    const enc = fast ?? this.encoder;
    try {
      let done = 0;
      const norm = this.normalizes(o);
      for (const idx of this.batches(seqs, o)) {
        const block = this.outputBlock(idx, out, o);
        const rows = enc.encode(idx.map((k) => seqs[k]!), { normalize: norm, into: block ?? undefined });
        if (!block) this.finishBatch(rows, idx, out, o, norm);
        else if (rows !== block) block.set(rows);
        done += idx.length;
        o.onBatch?.(done);
      }
    } finally {
      fast?.dispose();
    }
    return out;
  }

  /**
   * embed() whose heavy kernels run on a worker thread: for servers, the event loop stays
   * responsive while a batch is encoded. Same batches and post-processing as embed().
   */
  async embedAsync(sentences: string[], o: EmbedOptions = {}): Promise<Float32Array> {
    const r = this.resolveAuto(sentences, o);
    const seqs = this.tokenize(sentences);
    const out = new Float32Array(seqs.length * this.dim);
    const fast = this.fastFor(seqs, r);
    const enc = fast ?? this.encoder;
    try {
      let done = 0;
      const norm = this.normalizes(r);
      for (const idx of this.batches(seqs, r)) {
        const block = this.outputBlock(idx, out, r);
        const rows = await enc.encodeAsync(idx.map((k) => seqs[k]!), { normalize: norm, into: block ?? undefined });
        if (!block) this.finishBatch(rows, idx, out, r, norm);
        else if (rows !== block) block.set(rows);
        done += idx.length;
        r.onBatch?.(done);
      }
    } finally {
      fast?.dispose();
    }
    return out;
  }

  /**
   * The block of `out` a batch's rows go to as the encoder gives them (normalised in the tensor
   * or not at all), when the batch is a run in input order (inputOrderBatches) and nothing is
   * centred: finishBatch would only copy them; null otherwise.
   */
  private outputBlock(idx: number[], out: Float32Array, o: EmbedOptions & { rowCenters?: (Float32Array | null)[] }): Float32Array | null {
    if (!idx.length || o.rowCenters || this.centerFor(o) || idx[idx.length - 1]! - idx[0]! !== idx.length - 1 || !isAscending(idx)) return null;
    return out.subarray(idx[0]! * this.dim, (idx[0]! + idx.length) * this.dim);
  }

  /** Whether finishBatch L2-normalises a batch's rows (asked, or centred). */
  private normalizes(o: EmbedOptions & { rowCenters?: (Float32Array | null)[] }): boolean {
    return o.normalize !== false || !!this.centerFor(o) || !!o.rowCenters;
  }

  /**
   * Batches of row indices, capped by the options' or the encoder's limits: length-sorted, or for
   * an encoder that pads nothing (batchLimits.unpadded) consecutive runs in input order.
   */
  private batches(seqs: Int32Array[], o: EmbedOptions): number[][] {
    const lim = this.encoder.batchLimits;
    const maxTokens = o.maxTokens ?? lim?.maxTokens ?? 32000, maxSentences = o.maxSentences ?? lim?.maxSentences ?? 4096;
    return lim?.unpadded ? inputOrderBatches(seqs, maxTokens, maxSentences) : lengthBatches(seqs, maxTokens, maxSentences);
  }

  /**
   * The embed path's post-processing of one batch's encoder rows (plain float32): L2-normalised
   * (when asked or centred), each row's language mean subtracted and normalised again (centring),
   * then written to `out` at the rows' input positions.
   */
  private finishBatch(rows: Float32Array, idx: number[], out: Float32Array, o: EmbedOptions & { rowCenters?: (Float32Array | null)[] }, normalized = false): void {
    const d = this.dim, mu = this.centerFor(o), rowMu = o.rowCenters;
    const centred = mu ? idx.map(() => mu) : rowMu ? idx.map((k) => rowMu[k] ?? null) : null;
    if (!normalized && (o.normalize !== false || centred)) l2normalizeRows(rows, d);
    if (centred) centerEachRow(rows, d, centred, o.normalize !== false);
    // a run in input order (inputOrderBatches) is one block of the output
    if (idx.length && idx[idx.length - 1]! - idx[0]! === idx.length - 1 && isAscending(idx)) out.set(rows.subarray(0, idx.length * d), idx[0]! * d);
    else idx.forEach((k, r) => out.set(rows.subarray(r * d, (r + 1) * d), k * d));
  }

  /** Token ids of each sentence (in one call where the tokenizer encodes batches). */
  tokenize(sentences: string[]): Int32Array[] {
    const t = this.tokenizer;
    return t.encodeBatch ? t.encodeBatch(sentences) : sentences.map((s) => t.encode(s));
  }

  embed(sentences: string[], o: EmbedOptions = {}): Float32Array {
    return this.embedIds(this.tokenize(sentences), this.resolveAuto(sentences, o));
  }
}

export { centerEachRow };

function isAscending(a: number[]): boolean {
  for (let i = 1; i < a.length; i++) if (a[i]! <= a[i - 1]!) return false;
  return true;
}

/**
 * Consecutive runs of row indices in input order, each at most maxSentences rows and maxTokens
 * tokens in total (a longer sentence alone): batches for encoders that pad nothing.
 */
export function inputOrderBatches(seqs: ArrayLike<number>[], maxTokens: number, maxSentences: number): number[][] {
  const out: number[][] = [];
  let i = 0;
  while (i < seqs.length) {
    let j = i + 1, tokens = seqs[i]!.length;
    while (j < seqs.length && j - i < maxSentences && tokens + seqs[j]!.length <= maxTokens) tokens += seqs[j++]!.length;
    out.push(Array.from({ length: j - i }, (_, k) => i + k));
    i = j;
  }
  return out;
}

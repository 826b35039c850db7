// A sentence encoder ready for embedding: any family's SentenceEncoder, its tokenizer and the
// per-language mean vectors of the model. Embeds in length-sorted batches capped by tokens and
// returns L2-normalised float32 rows in input order. Every command (and the server) embeds
// through this class, so the same text gets the same vector whichever command embeds it.
import { lengthBatches } from '../data/batch.js';
import { SentenceEncoder } from '../models/encoder.js';
import { TextTokenizer } from '../text/text-tokenizer.js';
import { normalize as l2normalize } from '../tensor/ops.js';
import { noGrad, tidy } from '../tensor/tensor.js';
import { centerRows, nearestCenterVote, spreadSample } from './centering.js';

export { lengthBatches };

export interface EmbedOptions {
  maxTokens?: number; maxSentences?: number; normalize?: boolean; onBatch?: (done: number) => void;
  /**
   * Language of the sentences: with `center` (default on), the model's mean vector of that
   * language is subtracted. 'auto': the language is identified from the sentences themselves
   * (identifyLanguage: a vote of nearest mean vectors; meant for inputs of one language).
   */
  lang?: string;
  center?: boolean;
  /** The encoder's fast inference path (e.g. LASER's token tables): 'auto' when it pays for the job. */
  fastPath?: 'auto' | boolean;
}

export class SentenceEncoderModel {
  constructor(readonly encoder: SentenceEncoder, readonly tokenizer: TextTokenizer,
    /** Per-language mean vectors (see centering.ts); empty for models without them. */
    public centers: Map<string, Float32Array> = new Map(),
    /** The model directory's config.json, when loaded from one. */
    readonly config: unknown = null) {}
  get dim(): number { return this.encoder.dim; }

  /** The mean vector embed() subtracts for these options, or null ('auto' is resolved by the caller). */
  centerFor(o: EmbedOptions): Float32Array | null {
    if (o.center === false || !o.lang || o.lang === 'auto') return null;
    return this.centers.get(o.lang) ?? null;
  }

  /**
   * The language of a set of sentences (assumed to share one language) among those the model has
   * mean vectors for, by a majority vote of nearest mean vectors over a spread sample of at most
   * `sample` non-blank sentences (spreadSample: a streamed input sampled the same way gets the
   * same answer). null when the model has no mean vectors or every sentence is blank.
   */
  identifyLanguage(sentences: string[], sample = 2000): { lang: string; share: number; sentences: number } | null {
    const pick = spreadSample(sentences, sample);
    if (!this.centers.size || !pick.length) return null;
    const vote = nearestCenterVote(this.embed(pick, { center: false }), this.dim, this.centers);
    return vote && { ...vote, sentences: pick.length };
  }

  /** Options with lang 'auto' replaced by the identified language. */
  private resolveAuto(sentences: string[], o: EmbedOptions): EmbedOptions {
    if (o.lang !== 'auto' || o.center === false) return o;
    return { ...o, lang: this.identifyLanguage(sentences)?.lang };
  }

  private fastFor(seqs: ArrayLike<number>[], o: EmbedOptions): (SentenceEncoder & { dispose(): void }) | null {
    const want = o.fastPath ?? 'auto';
    if (want === false || !this.encoder.fastPath) return null;
    let tokens = 0;
    for (const s of seqs) tokens += s.length;
    return this.encoder.fastPath({ tokens, force: want === true });
  }

  /** Embeds token sequences; rows in input order. */
  embedIds(seqs: Int32Array[], o: EmbedOptions = {}): Float32Array {
    const d = this.dim;
    const out = new Float32Array(seqs.length * d);
    const fast = this.fastFor(seqs, o);
    const enc = fast ?? this.encoder;
    const mu = this.centerFor(o);
    try {
      let done = 0;
      for (const idx of lengthBatches(seqs, o.maxTokens ?? this.encoder.batchLimits?.maxTokens ?? 32000, o.maxSentences ?? this.encoder.batchLimits?.maxSentences ?? 4096)) {
        const rows = noGrad(() => tidy(() => {
          const v = enc.encode(idx.map((k) => seqs[k]!));
          return (o.normalize !== false || mu ? l2normalize(v, 1) : v).toFloat32Array();
        }));
        if (mu) centerRows(rows, d, mu, o.normalize !== false);
        idx.forEach((k, r) => out.set(rows.subarray(r * d, (r + 1) * d), k * d));
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
   * responsive while a batch is encoded. Same result as embed().
   */
  async embedAsync(sentences: string[], o: EmbedOptions = {}): Promise<Float32Array> {
    o = this.resolveAuto(sentences, o);
    const seqs = this.tokenize(sentences);
    const d = this.dim;
    const out = new Float32Array(seqs.length * d);
    const fast = this.fastFor(seqs, o);
    const enc = fast ?? this.encoder;
    const mu = this.centerFor(o);
    try {
      for (const idx of lengthBatches(seqs, o.maxTokens ?? this.encoder.batchLimits?.maxTokens ?? 32000, o.maxSentences ?? this.encoder.batchLimits?.maxSentences ?? 4096)) {
        const v = await enc.encodeAsync(idx.map((k) => seqs[k]!));
        const rows = noGrad(() => tidy(() => (o.normalize !== false || mu ? l2normalize(v, 1) : v).toFloat32Array()));
        if (mu) centerRows(rows, d, mu, o.normalize !== false);
        v.dispose();
        idx.forEach((k, r) => out.set(rows.subarray(r * d, (r + 1) * d), k * d));
      }
    } finally {
      fast?.dispose();
    }
    return out;
  }

  /** Token ids of each sentence (in one call where the tokenizer encodes batches). */
  tokenize(sentences: string[]): Int32Array[] {
    const t = this.tokenizer;
    return t.encodeBatch ? t.encodeBatch(sentences) : sentences.map((s) => t.encode(s));
  }

  embed(sentences: string[], o: EmbedOptions = {}): Float32Array {
    o = this.resolveAuto(sentences, o);
    return this.embedIds(this.tokenize(sentences), o);
  }
}

// A sentence encoder ready for embedding: the trained encoder, its tokenizer and the text
// normalisation recorded in the model config. Embeds in length-sorted batches capped by
// tokens, in no-grad eval mode, and returns L2-normalised float32 rows in input order.
import { encodeAsync, encoderTables, LaserEncoder, padBatch } from '../models/laser.js';
import { LSTMTokenTables } from '../nn/layers.js';
import { TextTokenizer } from '../models/text-tokenizer.js';
import { normalize as l2normalize } from '../tensor/ops.js';
import { noGrad, tidy } from '../tensor/tensor.js';
import { centerRows, nearestCenterVote } from './centering.js';

export interface EmbedOptions {
  maxTokens?: number; maxSentences?: number; normalize?: boolean; onBatch?: (done: number) => void;
  /**
   * Language of the sentences: with `center` (default on), the model's mean vector of that
   * language is subtracted. 'auto': the language is identified from the sentences themselves
   * (identifyLanguage: a vote of nearest mean vectors; meant for inputs of one language).
   */
  lang?: string;
  center?: boolean;
  /** Per-token input projection tables (1-layer encoders): 'auto' uses them when the job has more tokens than the vocabulary. */
  tables?: 'auto' | boolean;
}

/**
 * Input indices grouped into batches: sorted by length, each batch capped by sentences and by
 * padded tokens (ascending order: a batch's longest sentence is its last one).
 */
export function lengthBatches(seqs: ArrayLike<number>[], maxTokens: number, maxSentences: number): number[][] {
  const order = Array.from({ length: seqs.length }, (_, i) => i).sort((a, b) => seqs[a]!.length - seqs[b]!.length);
  const batches: number[][] = [];
  let i = 0;
  while (i < order.length) {
    let j = i + 1;
    while (j < order.length && j - i < maxSentences && seqs[order[j]!]!.length * (j - i + 1) <= maxTokens) j++;
    batches.push(order.slice(i, j));
    i = j;
  }
  return batches;
}

export class SentenceEncoderModel {
  constructor(readonly encoder: LaserEncoder, readonly tokenizer: TextTokenizer, readonly config: unknown,
    /** Per-language mean vectors (see centering.ts); empty for models without them. */
    public centers: Map<string, Float32Array> = new Map()) {}
  get dim(): number { return this.encoder.dim; }

  /** The mean vector embed() subtracts for these options, or null ('auto' is resolved by the caller). */
  centerFor(o: EmbedOptions): Float32Array | null {
    if (o.center === false || !o.lang || o.lang === 'auto') return null;
    return this.centers.get(o.lang) ?? null;
  }

  /**
   * The language of a set of sentences (assumed to share one language) among those the model has
   * mean vectors for, by a majority vote of nearest mean vectors; `sample` caps the sentences
   * looked at. null when the model has no mean vectors.
   */
  identifyLanguage(sentences: string[], sample = 2000): { lang: string; share: number } | null {
    if (!this.centers.size || !sentences.length) return null;
    const pick = sentences.length > sample ? sentences.filter((_, i) => i % Math.ceil(sentences.length / sample) === 0) : sentences;
    return nearestCenterVote(this.embed(pick, { center: false }), this.dim, this.centers);
  }

  /** Options with lang 'auto' replaced by the identified language. */
  private resolveAuto(sentences: string[], o: EmbedOptions): EmbedOptions {
    if (o.lang !== 'auto' || o.center === false) return o;
    return { ...o, lang: this.identifyLanguage(sentences)?.lang };
  }

  private tablesFor(seqs: ArrayLike<number>[], o: EmbedOptions): LSTMTokenTables | null {
    const want = o.tables ?? 'auto';
    if (want === false) return null;
    let tokens = 0;
    for (const s of seqs) tokens += s.length;
    // building costs one GEMM over the vocabulary; it pays once the job has more tokens
    if (want === 'auto' && tokens < this.encoder.cfg.vocabSize) return null;
    return encoderTables(this.encoder);
  }

  /** Embeds token sequences; rows in input order. */
  embedIds(seqs: Int32Array[], o: EmbedOptions = {}): Float32Array {
    const d = this.dim;
    const out = new Float32Array(seqs.length * d);
    const wasTraining = this.encoder.training;
    this.encoder.eval();
    const tables = this.tablesFor(seqs, o);
    const mu = this.centerFor(o);
    try {
      let done = 0;
      for (const idx of lengthBatches(seqs, o.maxTokens ?? 32000, o.maxSentences ?? 4096)) {
        const rows = noGrad(() => tidy(() => {
          const b = padBatch(idx.map((k) => seqs[k]!), this.tokenizer.padId);
          let v = tables ? tables.encode(b.ids, b.lengths, this.encoder.cfg.pooling) : this.encoder.forward(b);
          if (o.normalize !== false || mu) v = l2normalize(v, 1);
          return v.toFloat32Array();
        }));
        if (mu) centerRows(rows, d, mu, o.normalize !== false);
        idx.forEach((k, r) => out.set(rows.subarray(r * d, (r + 1) * d), k * d));
        done += idx.length;
        o.onBatch?.(done);
      }
    } finally {
      tables?.dispose();
      this.encoder.train(wasTraining);
    }
    return out;
  }

  /**
   * embed() whose recurrent kernels run on a worker thread: for servers, the event loop stays
   * responsive while a batch is encoded. Same result as embed().
   */
  async embedAsync(sentences: string[], o: EmbedOptions = {}): Promise<Float32Array> {
    o = this.resolveAuto(sentences, o);
    const seqs = sentences.map((s) => this.tokenizer.encode(s));
    const d = this.dim;
    const out = new Float32Array(seqs.length * d);
    const tables = this.tablesFor(seqs, o);
    const mu = this.centerFor(o);
    try {
      for (const idx of lengthBatches(seqs, o.maxTokens ?? 32000, o.maxSentences ?? 4096)) {
        const b = padBatch(idx.map((k) => seqs[k]!), this.tokenizer.padId);
        const v = await encodeAsync(this.encoder, b, tables);
        const rows = noGrad(() => tidy(() => (o.normalize !== false || mu ? l2normalize(v, 1) : v).toFloat32Array()));
        if (mu) centerRows(rows, d, mu, o.normalize !== false);
        v.dispose(); b.ids.dispose();
        idx.forEach((k, r) => out.set(rows.subarray(r * d, (r + 1) * d), k * d));
      }
    } finally {
      tables?.dispose();
    }
    return out;
  }

  embed(sentences: string[], o: EmbedOptions = {}): Float32Array {
    o = this.resolveAuto(sentences, o);
    return this.embedIds(sentences.map((s) => this.tokenizer.encode(s)), o);
  }
}

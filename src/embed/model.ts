// A sentence encoder ready for embedding: the trained encoder, its tokenizer and the text
// normalisation recorded in the model config. Embeds in length-sorted batches capped by
// tokens, in no-grad eval mode, and returns L2-normalised float32 rows in input order.
import { encodeAsync, LaserEncoder, padBatch } from '../models/laser.js';
import { TextTokenizer } from '../models/text-tokenizer.js';
import { normalize as l2normalize } from '../tensor/ops.js';
import { noGrad, tidy } from '../tensor/tensor.js';

export interface EmbedOptions { maxTokens?: number; maxSentences?: number; normalize?: boolean; onBatch?: (done: number) => void }

export class SentenceEncoderModel {
  constructor(readonly encoder: LaserEncoder, readonly tokenizer: TextTokenizer, readonly config: unknown) {}
  get dim(): number { return this.encoder.dim; }

  /** Embeds token sequences; rows in input order. */
  embedIds(seqs: Int32Array[], o: EmbedOptions = {}): Float32Array {
    const maxTokens = o.maxTokens ?? 12000, maxSentences = o.maxSentences ?? 512;
    const d = this.dim;
    const out = new Float32Array(seqs.length * d);
    const order = Array.from(seqs.keys()).sort((a, b) => seqs[a]!.length - seqs[b]!.length);
    const wasTraining = this.encoder.training;
    this.encoder.eval();
    try {
      let i = 0, done = 0;
      while (i < order.length) {
        // Sorted ascending: the batch's longest sentence is its last one.
        let j = i + 1;
        while (j < order.length && j - i < maxSentences && seqs[order[j]!]!.length * (j - i + 1) <= maxTokens) j++;
        const idx = order.slice(i, j);
        const rows = noGrad(() => tidy(() => {
          const b = padBatch(idx.map((k) => seqs[k]!), this.tokenizer.padId);
          let v = this.encoder.forward(b);
          if (o.normalize !== false) v = l2normalize(v, 1);
          return v.toFloat32Array();
        }));
        idx.forEach((k, r) => out.set(rows.subarray(r * d, (r + 1) * d), k * d));
        done += idx.length;
        o.onBatch?.(done);
        i = j;
      }
    } finally {
      this.encoder.train(wasTraining);
    }
    return out;
  }

  /**
   * embed() whose recurrent kernels run on a worker thread: for servers, the event loop stays
   * responsive while a batch is encoded. Same result as embed().
   */
  async embedAsync(sentences: string[], o: EmbedOptions = {}): Promise<Float32Array> {
    const seqs = sentences.map((s) => this.tokenizer.encode(s));
    const maxTokens = o.maxTokens ?? 12000, maxSentences = o.maxSentences ?? 512;
    const d = this.dim;
    const out = new Float32Array(seqs.length * d);
    const order = Array.from(seqs.keys()).sort((a, b) => seqs[a]!.length - seqs[b]!.length);
    let i = 0;
    while (i < order.length) {
      let j = i + 1;
      while (j < order.length && j - i < maxSentences && seqs[order[j]!]!.length * (j - i + 1) <= maxTokens) j++;
      const idx = order.slice(i, j);
      const b = padBatch(idx.map((k) => seqs[k]!), this.tokenizer.padId);
      const v = await encodeAsync(this.encoder, b);
      const rows = noGrad(() => tidy(() => (o.normalize !== false ? l2normalize(v, 1) : v).toFloat32Array()));
      v.dispose(); b.ids.dispose();
      idx.forEach((k, r) => out.set(rows.subarray(r * d, (r + 1) * d), k * d));
      i = j;
    }
    return out;
  }

  embed(sentences: string[], o: EmbedOptions = {}): Float32Array {
    return this.embedIds(sentences.map((s) => this.tokenizer.encode(s)), o);
  }
}

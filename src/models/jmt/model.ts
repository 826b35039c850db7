// The joint multi-task model of Singla et al. 2018 ("A Multi-task Approach to Learning
// Multilingual Representations"): one word-embedding table shared by a multilingual skip-gram
// (with its own context vectors) and a sentence encoder — the mean over time of a BiLSTM over the
// word embeddings ("Sent-LSTM"), or the plain average of the embeddings ("Sent-Avg"). The two
// losses are in ./loss.ts; the alternation of their batches in ./family.ts.
import { Module } from '../../nn/module.js';
import { EmbeddingBag, LSTM } from '../../nn/layers.js';
import { meanPool } from '../../nn/pooling.js';
import { dropout } from '../../tensor/ops.js';
import { fromArray, Tensor, tidy } from '../../tensor/tensor.js';

export interface JmtConfig {
  vocabSize: number;
  padId: number;
  /** Word-embedding width (shared by both tasks), and the initial std of the rows. */
  dim: number;
  initStd: number;
  /** 'lstm': mean over time of a BiLSTM's outputs; 'avg': mean of the word embeddings. */
  encoder: 'lstm' | 'avg';
  /** BiLSTM hidden size per direction, and layers. */
  hidden: number;
  layers: number;
  /** Dropout on the word embeddings (training). */
  dropout: number;
}

/** Bags of one id each (empty for padding): embedding lookups with row-sparse gradients. */
function lookupBags(seqs: Int32Array[], T: number): { ids: Int32Array; offsets: BigInt64Array } {
  let n = 0;
  for (const s of seqs) n += s.length;
  const ids = new Int32Array(n),
    offsets = new BigInt64Array(seqs.length * T + 1);
  let k = 0,
    b = 0;
  for (const s of seqs) {
    for (let t = 0; t < T; t++) {
      if (t < s.length) ids[k++] = s[t]!;
      offsets[++b] = BigInt(k);
    }
  }
  return { ids, offsets };
}

export class JmtEncoder extends Module {
  readonly embed: EmbeddingBag;
  readonly lstm: LSTM | null;
  constructor(readonly cfg: JmtConfig) {
    super();
    this.embed = this.module('embed', new EmbeddingBag(cfg.vocabSize, cfg.dim, cfg.initStd));
    this.lstm = cfg.encoder === 'lstm' ? this.module('lstm', new LSTM(cfg.dim, cfg.hidden, { numLayers: cfg.layers, bidirectional: true })) : null;
  }

  get dim(): number {
    return this.cfg.encoder === 'lstm' ? 2 * this.cfg.hidden : this.cfg.dim;
  }

  /** Rows of the word-embedding table for ids (any shape flattened), [n, dim]. */
  rows(ids: Int32Array): Tensor {
    return tidy(() => this.embed.forward(fromArray(ids), fromArray(BigInt64Array.from({ length: ids.length + 1 }, (_, i) => BigInt(i)))));
  }

  /** Sentence vectors [B, dim] of word-id sequences: mean over time (LSTM outputs or embeddings). */
  forward(seqs: Int32Array[]): Tensor {
    return tidy(() => {
      const B = seqs.length,
        T = Math.max(1, ...seqs.map((s) => s.length));
      const lengths = seqs.map((s) => Math.max(1, s.length));
      const { ids, offsets } = lookupBags(seqs, T);
      const x = dropout(this.embed.forward(fromArray(ids), fromArray(offsets)).view([B, T, this.cfg.dim]), this.cfg.dropout, this.training);
      const mask = fromArray(
        Uint8Array.from({ length: B * T }, (_, i) => (i % T < lengths[Math.floor(i / T)]! ? 1 : 0)),
        [B, T],
        'bool',
      );
      const h = this.lstm ? this.lstm.forward(x, { lengths }).output : x;
      return meanPool(h, mask);
    });
  }
}

/** The skip-gram's context (output) vectors; word2vec starts them at zero. */
export class SkipGramContext extends Module {
  readonly context: EmbeddingBag;
  constructor(vocabSize: number, dim: number) {
    super();
    this.context = this.module('context', new EmbeddingBag(vocabSize, dim, 0));
  }
}

/** What model.safetensors holds: encoder.* (embeddings, BiLSTM) and skipgram.context.* (context vectors). */
export class JmtModel extends Module {
  readonly encoder: JmtEncoder;
  readonly skipgram: SkipGramContext;
  constructor(readonly cfg: JmtConfig) {
    super();
    this.encoder = this.module('encoder', new JmtEncoder(cfg));
    this.skipgram = this.module('skipgram', new SkipGramContext(cfg.vocabSize, cfg.dim));
  }
}

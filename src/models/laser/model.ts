// LASER-style encoder–decoder (Artetxe & Schwenk 2019): a shared BiLSTM encoder whose sentence
// vector is the max-pool over its outputs, and an LSTM decoder (no attention) that translates
// from that vector alone, told the target language by a small language embedding.
import { padBatch, TokenBatch } from '../../train-data/batch.js';
import { Module } from '../../nn/module.js';
import { Embedding, Linear, LSTM, LSTMTokenTables, lstmForwardAsync } from '../../nn/layers.js';
import { lastToken } from '../../nn/pooling.js';
import { cat, crossEntropy, dropout, zeros } from '../../tensor/ops.js';
import { fromArray, noGrad, Tensor, tidy } from '../../tensor/tensor.js';
import { inEvalMode, SentenceEncoder } from '../encoder.js';
import { TensorEncoder, tensorEncoder } from '../tensor-encoder.js';

export interface LaserConfig {
  vocabSize: number;
  padId: number;
  /** Encoder */
  embedDim: number; // 320
  hidden: number; // 512 per direction
  layers: number; // 1
  bidirectional: boolean;
  pooling: 'max' | 'last';
  /** Decoder */
  decEmbedDim: number; // 320
  decHidden: number; // 1024
  langEmbedDim: number; // 32
  targetLangs: string[]; // decoder target languages (index = language id)
  dropout: number; // on embeddings and the sentence vector
}

export const LASER_DEFAULTS: Omit<LaserConfig, 'vocabSize' | 'targetLangs'> = {
  padId: 0,
  embedDim: 320,
  hidden: 512,
  layers: 1,
  bidirectional: true,
  pooling: 'max',
  decEmbedDim: 320,
  decHidden: 1024,
  langEmbedDim: 32,
  dropout: 0,
};

export class LaserEncoder extends Module {
  readonly embed: Embedding;
  readonly lstm: LSTM;
  constructor(readonly cfg: LaserConfig) {
    super();
    this.embed = this.module('embed', new Embedding(cfg.vocabSize, cfg.embedDim, cfg.padId));
    this.lstm = this.module(
      'lstm',
      new LSTM(cfg.embedDim, cfg.hidden, { numLayers: cfg.layers, bidirectional: cfg.bidirectional, dropout: cfg.layers > 1 ? cfg.dropout : 0 }),
    );
  }
  get dim(): number {
    return this.lstm.outputSize;
  }

  /** Sentence vectors [B, dim]. The encoder never sees a language id. */
  forward(b: TokenBatch): Tensor {
    return tidy(() => {
      const x = dropout(this.embed.forward(b.ids), this.cfg.dropout, this.training);
      if (this.cfg.pooling === 'max') {
        // Padded steps hold -1e9 so they never win the max (as the reference does).
        const out = this.lstm.forward(x, { lengths: b.lengths, paddingValue: -1e9 }).output;
        return out.max(1)[0];
      }
      const out = this.lstm.forward(x, { lengths: b.lengths }).output;
      if (!this.cfg.bidirectional) return lastTokenOf(out, b.lengths);
      // BiLSTM-last: forward direction's last real step ++ backward direction's first step.
      const H = this.cfg.hidden;
      return cat([lastTokenOf(out.narrow(2, 0, H), b.lengths), out.narrow(2, H, H).select(1, 0)], 1);
    });
  }
}

/**
 * Inference tables of a 1-layer encoder (input projections per vocabulary entry), or null when
 * the encoder has more layers. Same vectors as forward() in eval mode, to float rounding.
 */
export function encoderTables(enc: LaserEncoder): LSTMTokenTables | null {
  return enc.cfg.layers === 1 ? LSTMTokenTables.build(enc.embed, enc.lstm) : null;
}

/** Inference-only forward with the recurrent kernel off the JS thread; with tables, through them. */
export async function encodeAsync(enc: LaserEncoder, b: TokenBatch, tables?: LSTMTokenTables | null): Promise<Tensor> {
  if (tables) return tables.encodeAsync(b.ids, b.lengths, enc.cfg.pooling);
  if (enc.cfg.pooling !== 'max') return noGrad(() => enc.forward(b));
  const x = noGrad(() => enc.embed.forward(b.ids));
  try {
    const r = await lstmForwardAsync(enc.lstm, x, { lengths: b.lengths, paddingValue: -1e9 });
    try {
      return noGrad(() => r.output.max(1)[0]);
    } finally {
      r.output.dispose();
      r.h.dispose();
      r.c.dispose();
    }
  } finally {
    x.dispose();
  }
}

/**
 * The LASER encoder as a SentenceEncoder: token ids → BiLSTM → max-pool (or last state). The fast
 * path precomputes the first layer's input projection per vocabulary entry (LSTMTokenTables).
 */
export class LaserSentenceEncoder extends TensorEncoder {
  constructor(
    readonly net: LaserEncoder,
    readonly padId: number,
  ) {
    super();
  }
  get dim(): number {
    return this.net.dim;
  }

  vectors(seqs: Int32Array[]): Tensor {
    return inEvalMode(this.net, () => noGrad(() => tidy(() => this.net.forward(padBatch(seqs, this.padId)))));
  }

  override async vectorsAsync(seqs: Int32Array[]): Promise<Tensor> {
    const b = padBatch(seqs, this.padId);
    try {
      return await encodeAsync(this.net, b);
    } finally {
      b.ids.dispose();
    }
  }

  fastPath(job: { tokens: number; force?: boolean }): (SentenceEncoder & { dispose(): void }) | null {
    // building costs one GEMM over the vocabulary; it pays once the job has more tokens
    if (!job.force && job.tokens < this.net.cfg.vocabSize) return null;
    const tables = encoderTables(this.net);
    if (!tables) return null;
    const { padId } = this,
      pooling = this.net.cfg.pooling,
      dim = this.dim;
    return tensorEncoder(
      dim,
      (seqs) =>
        noGrad(() =>
          tidy(() => {
            const b = padBatch(seqs, padId);
            return tables.encode(b.ids, b.lengths, pooling);
          }),
        ),
      async (seqs) => {
        const b = padBatch(seqs, padId);
        try {
          return await tables.encodeAsync(b.ids, b.lengths, pooling);
        } finally {
          b.ids.dispose();
        }
      },
      { dispose: () => tables.dispose() },
    );
  }
}

function lastTokenOf(out: Tensor, lengths: number[]): Tensor {
  const T = out.size(1);
  const mask = fromArray(Uint8Array.from(lengths.flatMap((l) => Array.from({ length: T }, (_, t) => (t < l ? 1 : 0)))), [lengths.length, T], 'bool');
  return lastToken(out, mask);
}

export class LaserDecoder extends Module {
  readonly embed: Embedding;
  readonly langEmbed: Embedding;
  readonly init: Linear;
  readonly lstm: LSTM;
  readonly out: Linear;
  constructor(
    readonly cfg: LaserConfig,
    sentDim: number,
  ) {
    super();
    this.embed = this.module('embed', new Embedding(cfg.vocabSize, cfg.decEmbedDim, cfg.padId));
    this.langEmbed = this.module('lang_embed', new Embedding(Math.max(1, cfg.targetLangs.length), cfg.langEmbedDim));
    this.init = this.module('init', new Linear(sentDim, cfg.decHidden));
    this.lstm = this.module('lstm', new LSTM(cfg.decEmbedDim + sentDim + cfg.langEmbedDim, cfg.decHidden));
    this.out = this.module('out', new Linear(cfg.decHidden, cfg.vocabSize));
  }

  /**
   * Teacher-forced logits over the vocabulary, only at real target positions ([N, V], N = total
   * target tokens): the projection to the vocabulary is the costliest op, so padding skips it.
   */
  forward(sent: Tensor, tgtIn: TokenBatch, lang: Tensor, validIndex: Tensor): Tensor {
    return tidy(() => {
      const [B, T] = tgtIn.ids.shape as [number, number];
      // the input at every step is [token embedding; sentence vector; language embedding]; the
      // last two are constant over time, so the LSTM takes them as a per-sequence input
      const ctx = cat([sent, this.langEmbed.forward(lang)], 1);
      const h0 = this.init.forward(sent).tanh().unsqueeze(0);
      const emb = dropout(this.embed.forward(tgtIn.ids), this.cfg.dropout, this.training);
      const o = this.lstm.forward(emb, { h0: [h0, zeros(h0.shape)], rowInput: ctx, lengths: tgtIn.lengths }).output; // [B, T, H]
      const flat = o.reshape([B * T, -1]).indexSelect(0, validIndex);
      return this.out.forward(flat);
    });
  }
}

/** Encoder + decoder; loss = cross entropy of the target given the source's sentence vector. */
export class LaserModel extends Module {
  readonly encoder: LaserEncoder;
  readonly decoder: LaserDecoder;
  constructor(readonly cfg: LaserConfig) {
    super();
    this.encoder = this.module('encoder', new LaserEncoder(cfg));
    this.decoder = this.module('decoder', new LaserDecoder(cfg, this.encoder.dim));
  }

  /**
   * Translation loss for one step. src: source batches whose sentence vectors are averaged
   * (one batch = 1:1; several = the M:1 path). targets: one or more (target ids, target-language
   * id) for the same sentences (several = the 1:N path); losses are summed.
   */
  loss(src: TokenBatch[], targets: { seqs: ArrayLike<number>[]; lang: number | ArrayLike<number> }[], bosId: number): Tensor {
    return tidy(() => {
      let sent = this.encoder.forward(src[0]!);
      for (let i = 1; i < src.length; i++) sent = sent.add(this.encoder.forward(src[i]!));
      if (src.length > 1) sent = sent.div(src.length);
      sent = dropout(sent, this.cfg.dropout, this.training);
      let total: Tensor | null = null;
      for (const t of targets) {
        const { tgtIn, gold, valid } = teacherForcing(t.seqs, this.cfg.padId, bosId);
        const langT =
          typeof t.lang === 'number'
            ? fromArray(new BigInt64Array(t.seqs.length).fill(BigInt(t.lang)))
            : fromArray(BigInt64Array.from(Array.from(t.lang), (v) => BigInt(v)));
        const logits = this.decoder.forward(sent, tgtIn, langT, valid);
        const l = crossEntropy(logits, gold);
        total = total ? total.add(l) : l;
      }
      return total!;
    });
  }
}

/** Decoder input (BOS + target[:-1]), gold tokens at real positions, and their flat indices. */
export function teacherForcing(seqs: ArrayLike<number>[], padId: number, bosId: number): { tgtIn: TokenBatch; gold: Tensor; valid: Tensor } {
  const T = Math.max(1, ...seqs.map((s) => s.length));
  const ins: number[][] = [];
  const gold: bigint[] = [];
  const valid: bigint[] = [];
  seqs.forEach((s, i) => {
    const inp = [bosId];
    for (let j = 0; j + 1 < s.length; j++) inp.push(s[j]!);
    ins.push(inp);
    for (let j = 0; j < s.length; j++) {
      gold.push(BigInt(s[j]!));
      valid.push(BigInt(i * T + j));
    }
  });
  const tgtIn = padBatch(ins, padId);
  if (tgtIn.ids.size(1) !== T) throw new Error('teacherForcing: inconsistent lengths');
  return { tgtIn, gold: fromArray(BigInt64Array.from(gold)), valid: fromArray(BigInt64Array.from(valid)) };
}

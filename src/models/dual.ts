// Bidirectional dual encoder with additive margin softmax (Yang et al. 2019): one shared
// Transformer encodes both sides; in-batch negatives; the margin m is subtracted from the
// positive's similarity, and the softmax runs in both directions (x→y and y→x).
import { AttentionPool, Embedding, Linear, Module, TransformerEncoder, firstToken, maxPool, meanPool } from '../nn/index.js';
import { arange, cat, crossEntropy, dropout, eye, normalize } from '../tensor/ops.js';
import { Tensor, tidy } from '../tensor/tensor.js';
import { TokenBatch } from './laser.js';

export type PoolKind = 'max' | 'mean' | 'first' | 'attention';

export interface DualConfig {
  vocabSize: number;
  padId: number;
  dim: number;       // 256
  layers: number;    // 3
  heads: number;     // 4
  ff: number;        // 1024
  dropout: number;   // 0.1
  maxLen: number;    // 64 (learned positions)
  pooling: PoolKind[];
  outDim: number;    // 512
  margin: number;    // 0.3
  scale: number;     // 20
}

export const DUAL_DEFAULTS: Omit<DualConfig, 'vocabSize'> = {
  padId: 0, dim: 256, layers: 3, heads: 4, ff: 1024, dropout: 0.1, maxLen: 64, pooling: ['max', 'mean'], outDim: 512, margin: 0.3, scale: 20,
};

export class DualEncoder extends Module {
  readonly embed: Embedding;
  readonly pos: Embedding;
  readonly encoder: TransformerEncoder;
  readonly attnPool: AttentionPool | null;
  readonly proj: Linear;
  constructor(readonly cfg: DualConfig) {
    super();
    this.embed = this.module('embed', new Embedding(cfg.vocabSize, cfg.dim, cfg.padId));
    this.pos = this.module('pos', new Embedding(cfg.maxLen, cfg.dim));
    this.encoder = this.module('encoder', new TransformerEncoder({ dim: cfg.dim, heads: cfg.heads, ff: cfg.ff, dropout: cfg.dropout, numLayers: cfg.layers }));
    this.attnPool = cfg.pooling.includes('attention') ? this.module('attn_pool', new AttentionPool(cfg.dim)) : null;
    this.proj = this.module('proj', new Linear(cfg.dim * cfg.pooling.length, cfg.outDim));
  }
  get dim(): number { return this.cfg.outDim; }

  /** Sentence vectors [B, outDim] (not normalised). */
  forward(b: TokenBatch): Tensor {
    return tidy(() => {
      const T = b.ids.size(1);
      if (T > this.cfg.maxLen) throw new Error(`DualEncoder: sequence length ${T} exceeds maxLen ${this.cfg.maxLen}`);
      const pad = b.ids.eq(this.cfg.padId);
      const valid = pad.logicalNot();
      const h0 = this.embed.forward(b.ids).add(this.pos.forward(arange(T).unsqueeze(0)));
      const h = this.encoder.forward(dropout(h0, this.cfg.dropout, this.training), pad);
      const feats = this.cfg.pooling.map((k) => {
        switch (k) {
          case 'max': return maxPool(h, valid);
          case 'mean': return meanPool(h, valid);
          case 'first': return firstToken(h);
          case 'attention': return this.attnPool!.forward(h, valid);
        }
      });
      return this.proj.forward(feats.length === 1 ? feats[0]! : cat(feats, 1));
    });
  }

  /**
   * Additive-margin softmax loss over in-batch negatives, both directions. hardNeg: optional
   * extra target-side negatives (one batch of sentences), used in the x→y direction.
   */
  loss(src: TokenBatch, trg: TokenBatch, hardNeg?: TokenBatch): Tensor {
    return tidy(() => {
      const x = normalize(this.forward(src), 1);
      const y = normalize(this.forward(trg), 1);
      const B = x.size(0);
      const { margin, scale } = this.cfg;
      const labels = arange(B);
      const sim = x.matmul(y.t()).sub(eye(B).mul(margin)).mul(scale);
      let fwd = sim;
      if (hardNeg) {
        const z = normalize(this.forward(hardNeg), 1);
        fwd = cat([sim, x.matmul(z.t()).mul(scale)], 1);
      }
      return crossEntropy(fwd, labels).add(crossEntropy(sim.t(), labels));
    });
  }
}

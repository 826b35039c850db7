// Hugging Face Transformer sentence encoders: BERT (LaBSE, paraphrase-multilingual-MiniLM),
// XLM-RoBERTa (paraphrase-multilingual-mpnet, multilingual-e5, BGE-M3's dense head) and DistilBERT,
// followed by sentence-transformers' modules (Pooling, Dense, Normalize). Inference only.
// The arithmetic follows transformers' modeling_bert.py, modeling_xlm_roberta.py and
// modeling_distilbert.py (post-norm layers; the attention mask added as the dtype's minimum) and
// sentence-transformers' models/Pooling.py, Dense.py, Normalize.py. Parameter names are the
// originals' (BertModel / DistilBertModel state dicts), so weights load unchanged.
import { Module, ModuleList } from '../../nn/module.js';
import { LayerNorm } from '../../nn/layers.js';
import { cat, embedding, empty, layerNorm, linear } from '../../tensor/ops.js';
import { fromArray, keep, noGrad, Tensor, tidy } from '../../tensor/tensor.js';
import { SentenceEncoder } from '../encoder.js';

export const HF_ARCHS = ['bert', 'xlm-roberta', 'distilbert'] as const;
export type HfArch = (typeof HF_ARCHS)[number];
/** Hidden activations: 'gelu' exact (erf), 'gelu_tanh' the tanh approximation (gelu_new). */
export type HfActivation = 'gelu' | 'gelu_tanh' | 'relu' | 'tanh' | 'sigmoid' | 'identity';
/** sentence-transformers' pooling modes, in the order Pooling.forward concatenates them. */
export const POOL_MODES = ['cls', 'max', 'mean', 'mean_sqrt_len', 'lasttoken'] as const;
export type PoolMode = (typeof POOL_MODES)[number];

/** One sentence-transformers Dense module: linear (+ bias) then an activation. */
export interface DenseSpec { in: number; out: number; bias: boolean; activation: HfActivation }

/** config.json's `model` for an imported Hugging Face encoder. */
export interface HfModelConfig {
  arch: HfArch;
  vocabSize: number;
  hidden: number;
  layers: number;
  heads: number;
  intermediate: number;
  maxPositions: number;
  /** Token-type (segment) embeddings; 0 for DistilBERT. Every token is type 0. */
  typeVocabSize: number;
  eps: number;
  activation: HfActivation;
  padTokenId: number;
  pooling: PoolMode[];
  dense: DenseSpec[];
  normalize: boolean;
  /** Ids per input at most, special tokens included (sentence-transformers' max_seq_length). */
  maxSeqLength: number;
  /** Named prompts (config_sentence_transformers.json) and the one put before every input ('' = none). */
  prompts: Record<string, string>;
  prompt: string;
  /** Where the weights came from (the snapshot's folder name and model_type), for /info and logs. */
  source: string;
}

export const HF_MODEL_KEYS: readonly (keyof HfModelConfig)[] = ['arch', 'vocabSize', 'hidden', 'layers', 'heads', 'intermediate', 'maxPositions', 'typeVocabSize', 'eps', 'activation', 'padTokenId', 'pooling', 'dense', 'normalize', 'maxSeqLength', 'prompts', 'prompt', 'source'];

/** A weight of a given shape, left uninitialised (it is read from the model file right after). */
class Weight extends Module {
  readonly weight: Tensor;
  constructor(shape: number[]) { super(); this.weight = this.param('weight', empty(shape)); }
}

/** nn.Linear without the initialisation (weights come from the file). */
class Dense extends Module {
  readonly weight: Tensor;
  readonly bias: Tensor | null;
  constructor(inF: number, outF: number, bias = true) {
    super();
    this.weight = this.param('weight', empty([outF, inF]));
    this.bias = bias ? this.param('bias', empty([outF])) : null;
  }
  forward(x: Tensor): Tensor { return linear(x, this.weight, this.bias); }
}

export function activate(x: Tensor, a: HfActivation): Tensor {
  switch (a) {
    case 'gelu': return x.gelu();
    case 'gelu_tanh': return x.gelu('tanh');
    case 'relu': return x.relu();
    case 'tanh': return x.tanh();
    case 'sigmoid': return x.sigmoid();
    case 'identity': return x;
  }
}

/**
 * One post-norm Transformer layer: x = LN(x + Attn(x)); x = LN(x + W2·act(W1·x)). The children
 * carry BERT's names (attention.self.query, …) or DistilBERT's (attention.q_lin, …).
 */
class Layer extends Module {
  readonly q: Dense; readonly k: Dense; readonly v: Dense; readonly o: Dense;
  readonly ln1: LayerNorm; readonly ff1: Dense; readonly ff2: Dense; readonly ln2: LayerNorm;
  /** Q, K and V as one matrix (built on first use: one GEMM instead of three). */
  private qkv: { w: Tensor; b: Tensor } | null = null;

  constructor(readonly c: HfModelConfig) {
    super();
    const d = c.hidden, f = c.intermediate, bert = c.arch !== 'distilbert';
    const n = bert
      ? ['attention.self.query', 'attention.self.key', 'attention.self.value', 'attention.output.dense', 'attention.output.LayerNorm', 'intermediate.dense', 'output.dense', 'output.LayerNorm']
      : ['attention.q_lin', 'attention.k_lin', 'attention.v_lin', 'attention.out_lin', 'sa_layer_norm', 'ffn.lin1', 'ffn.lin2', 'output_layer_norm'];
    this.q = this.module(n[0]!, new Dense(d, d));
    this.k = this.module(n[1]!, new Dense(d, d));
    this.v = this.module(n[2]!, new Dense(d, d));
    this.o = this.module(n[3]!, new Dense(d, d));
    this.ln1 = this.module(n[4]!, new LayerNorm(d, c.eps));
    this.ff1 = this.module(n[5]!, new Dense(d, f));
    this.ff2 = this.module(n[6]!, new Dense(f, d));
    this.ln2 = this.module(n[7]!, new LayerNorm(d, c.eps));
  }

  private fused(): { w: Tensor; b: Tensor } {
    if (!this.qkv) {
      const [w, b] = noGrad(() => [cat([this.q.weight, this.k.weight, this.v.weight], 0), cat([this.q.bias!, this.k.bias!, this.v.bias!], 0)]);
      keep([w!, b!]);
      this.qkv = { w: w!, b: b! };
    }
    return this.qkv;
  }

  /** x [B, T, D]; maskBias [B, 1, 1, T]: 0 at tokens, the dtype's minimum at padding. */
  forward(x: Tensor, maskBias: Tensor): Tensor {
    const [B, T, D] = x.shape as [number, number, number];
    const H = this.c.heads, hd = D / H;
    const { w, b } = this.fused();
    const heads = (t: Tensor): Tensor => t.view([B, T, H, hd]).transpose(1, 2); // [B, H, T, hd]
    const [q, k, v] = linear(x, w, b).chunk(3, -1) as [Tensor, Tensor, Tensor];
    // scores = q·kᵀ / √hd + mask (BERT divides the product; DistilBERT scales q first: the same to rounding)
    const scores = heads(q).matmul(heads(k).transpose(2, 3)).div(Math.sqrt(hd)).add(maskBias);
    const ctx = scores.softmax(-1).matmul(heads(v)).transpose(1, 2).reshape([B, T, D]);
    const h = this.ln1.forward(this.o.forward(ctx).add(x));
    return this.ln2.forward(this.ff2.forward(activate(this.ff1.forward(h), this.c.activation)).add(h));
  }

  override dispose(): void {
    if (this.qkv) { this.qkv.w.dispose(); this.qkv.b.dispose(); this.qkv = null; }
    super.dispose();
  }
}

/** The Transformer body (BertModel / XLMRobertaModel / DistilBertModel without the pooler) and the heads. */
export class HfEncoder extends Module {
  readonly wordEmb: Weight;
  readonly posEmb: Weight;
  readonly typeEmb: Weight | null;
  readonly embLn: LayerNorm;
  readonly layers: Layer[];
  readonly dense: Dense[];

  constructor(readonly c: HfModelConfig) {
    super();
    if (c.hidden % c.heads !== 0) throw new Error(`hidden size ${c.hidden} is not a multiple of ${c.heads} heads`);
    this.wordEmb = this.module('embeddings.word_embeddings', new Weight([c.vocabSize, c.hidden]));
    this.posEmb = this.module('embeddings.position_embeddings', new Weight([c.maxPositions, c.hidden]));
    this.typeEmb = c.typeVocabSize > 0 ? this.module('embeddings.token_type_embeddings', new Weight([c.typeVocabSize, c.hidden])) : null;
    this.embLn = this.module('embeddings.LayerNorm', new LayerNorm(c.hidden, c.eps));
    const list = this.module(c.arch === 'distilbert' ? 'transformer.layer' : 'encoder.layer', new ModuleList<Layer>());
    for (let i = 0; i < c.layers; i++) list.append(new Layer(c));
    this.layers = list.items;
    const heads = this.module('dense', new ModuleList<Dense>());
    let width = this.pooledWidth;
    for (const [i, d] of c.dense.entries()) {
      if (d.in !== width) throw new Error(`Dense module ${i}: input width ${d.in}, but the previous module gives ${width}`);
      heads.append(new Dense(d.in, d.out, d.bias));
      width = d.out;
    }
    this.dense = heads.items;
  }

  get pooledWidth(): number { return this.c.hidden * this.c.pooling.length; }
  get dim(): number { return this.c.dense.length ? this.c.dense[this.c.dense.length - 1]!.out : this.pooledWidth; }

  /** Position ids: 0, 1, … (BERT, DistilBERT); XLM-R counts from padding_idx + 1 and gives padding padding_idx. */
  private positions(lengths: number[], T: number): BigInt64Array {
    const p = new BigInt64Array(lengths.length * T);
    const xlmr = this.c.arch === 'xlm-roberta', pad = this.c.padTokenId;
    lengths.forEach((n, r) => {
      for (let t = 0; t < T; t++) p[r * T + t] = BigInt(xlmr ? (t < n ? pad + 1 + t : pad) : t);
    });
    return p;
  }

  /** Sentence vectors [B, dim] of token-id sequences (each with its special tokens). */
  forward(seqs: Int32Array[]): Tensor {
    return tidy(() => {
      const B = seqs.length, T = Math.max(1, ...seqs.map((s) => s.length));
      const lengths = seqs.map((s) => s.length);
      for (const [i, n] of lengths.entries()) if (n > this.c.maxPositions - (this.c.arch === 'xlm-roberta' ? this.c.padTokenId + 1 : 0)) throw new Error(`sequence ${i} has ${n} tokens, more than the model's ${this.c.maxPositions} positions allow`);
      const ids = new BigInt64Array(B * T).fill(BigInt(this.c.padTokenId));
      const mask = new Float32Array(B * T);
      seqs.forEach((s, r) => { for (let t = 0; t < s.length; t++) { ids[r * T + t] = BigInt(s[t]!); mask[r * T + t] = 1; } });
      for (const id of ids) if (id < 0n || id >= BigInt(this.c.vocabSize)) throw new Error(`token id ${id} outside the vocabulary of ${this.c.vocabSize}`);
      let x = embedding(this.wordEmb.weight, fromArray(ids, [B, T]));
      x = x.add(embedding(this.posEmb.weight, fromArray(this.positions(lengths, T), [B, T])));
      if (this.typeEmb) x = x.add(this.typeEmb.weight.select(0, 0));
      x = layerNorm(x, [this.c.hidden], this.embLn.weight, this.embLn.bias, this.c.eps);
      const m = fromArray(mask, [B, T]);
      // (1 - mask) · finfo(float32).min, as transformers' get_extended_attention_mask
      const maskBias = m.rsub(1).mul(-3.4028234663852886e38).view([B, 1, 1, T]);
      for (const l of this.layers) x = l.forward(x, maskBias);
      let v = this.pool(x, m, lengths);
      for (const [i, d] of this.dense.entries()) v = activate(d.forward(v), this.c.dense[i]!.activation);
      if (this.c.normalize) v = v.div(v.norm(2, 1, true).clampMin(1e-12));
      return v;
    });
  }

  /** sentence-transformers' Pooling over the token vectors h [B, T, D] (mask [B, T], 1 = token). */
  private pool(h: Tensor, mask: Tensor, lengths: number[]): Tensor {
    const m3 = mask.unsqueeze(-1);
    const parts = this.c.pooling.map((mode) => {
      switch (mode) {
        case 'cls': return h.select(1, 0);
        case 'max': return h.maskedFill(m3.eq(0), -1e9).max(1)[0]!; // padding set to -1e9 as Pooling does
        case 'mean': return h.mul(m3).sum(1).div(m3.sum(1).clampMin(1e-9));
        case 'mean_sqrt_len': return h.mul(m3).sum(1).div(m3.sum(1).clampMin(1e-9).sqrt());
        case 'lasttoken': {
          const idx = fromArray(BigInt64Array.from(lengths, (n) => BigInt(Math.max(0, n - 1))), [h.size(0), 1, 1]).expand([h.size(0), 1, h.size(2)]);
          return h.gather(1, idx).squeeze(1);
        }
      }
    });
    return parts.length === 1 ? parts[0]! : cat(parts, 1);
  }
}

/** The SentenceEncoder of an imported model. */
export class HfSentenceEncoder implements SentenceEncoder {
  constructor(readonly net: HfEncoder) {}
  get dim(): number { return this.net.dim; }
  /** Attention is quadratic in length: moderate batches keep the working set small. */
  readonly batchLimits = { maxTokens: 8192, maxSentences: 256 };
  encode(seqs: Int32Array[]): Tensor { return noGrad(() => this.net.forward(seqs)); }
  async encodeAsync(seqs: Int32Array[]): Promise<Tensor> { return this.encode(seqs); }
}

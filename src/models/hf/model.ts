// Hugging Face Transformer sentence encoders: BERT (LaBSE, paraphrase-multilingual-MiniLM),
// XLM-RoBERTa (paraphrase-multilingual-mpnet, multilingual-e5, BGE-M3's dense head) and DistilBERT,
// followed by sentence-transformers' modules (Pooling, Dense, Normalize). Inference, and training
// through the padded op-by-op forward (`xling train --init`).
// The arithmetic follows transformers' modeling_bert.py, modeling_xlm_roberta.py and
// modeling_distilbert.py (post-norm layers; the attention mask added as the dtype's minimum) and
// sentence-transformers' models/Pooling.py, Dense.py, Normalize.py. Parameter names are the
// originals' (BertModel / DistilBertModel state dicts), so weights load unchanged.
import { Module, ModuleList } from '../../nn/module.js';
import { LayerNorm } from '../../nn/layers.js';
import { cat, embedding, empty, layerNorm, linear, zeros } from '../../tensor/ops.js';
import { fromArray, isGradEnabled, keep, noGrad, Tensor, tidy } from '../../tensor/tensor.js';
import { EncoderActivation, packedEncoderLayers, packedEncoderLayersAsync } from '../../tensor/kernels.js';
import { TensorEncoder } from '../tensor-encoder.js';

export const HF_ARCHS = ['bert', 'xlm-roberta', 'distilbert'] as const;
export type HfArch = (typeof HF_ARCHS)[number];
/** Hidden activations: 'gelu' exact (erf), 'gelu_tanh' the tanh approximation (gelu_new). */
export type HfActivation = 'gelu' | 'gelu_tanh' | 'relu' | 'tanh' | 'sigmoid' | 'identity';
/** sentence-transformers' pooling modes, in the order Pooling.forward concatenates them. */
export const POOL_MODES = ['cls', 'max', 'mean', 'mean_sqrt_len', 'lasttoken'] as const;
export type PoolMode = (typeof POOL_MODES)[number];

/** One sentence-transformers Dense module: linear (+ bias) then an activation. */
export interface DenseSpec {
  in: number;
  out: number;
  bias: boolean;
  activation: HfActivation;
}

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

export const HF_MODEL_KEYS: readonly (keyof HfModelConfig)[] = [
  'arch',
  'vocabSize',
  'hidden',
  'layers',
  'heads',
  'intermediate',
  'maxPositions',
  'typeVocabSize',
  'eps',
  'activation',
  'padTokenId',
  'pooling',
  'dense',
  'normalize',
  'maxSeqLength',
  'prompts',
  'prompt',
  'source',
];

/** A weight of a given shape, left uninitialised (it is read from the model file right after). */
class Weight extends Module {
  readonly weight: Tensor;
  constructor(shape: number[]) {
    super();
    this.weight = this.param('weight', empty(shape));
  }
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
  forward(x: Tensor): Tensor {
    return linear(x, this.weight, this.bias);
  }
}

export function activate(x: Tensor, a: HfActivation): Tensor {
  switch (a) {
    case 'gelu':
      return x.gelu();
    case 'gelu_tanh':
      return x.gelu('tanh');
    case 'relu':
      return x.relu();
    case 'tanh':
      return x.tanh();
    case 'sigmoid':
      return x.sigmoid();
    case 'identity':
      return x;
  }
}

/**
 * One post-norm Transformer layer: x = LN(x + Attn(x)); x = LN(x + W2·act(W1·x)). The children
 * carry BERT's names (attention.self.query, …) or DistilBERT's (attention.q_lin, …).
 */
class Layer extends Module {
  readonly q: Dense;
  readonly k: Dense;
  readonly v: Dense;
  readonly o: Dense;
  readonly ln1: LayerNorm;
  readonly ff1: Dense;
  readonly ff2: Dense;
  readonly ln2: LayerNorm;
  /** Q, K and V as one matrix, a no-grad copy for inference (built on first use: one GEMM instead of three; stale if the weights change). */
  private qkv: { w: Tensor; b: Tensor } | null = null;

  constructor(readonly c: HfModelConfig) {
    super();
    const d = c.hidden,
      f = c.intermediate,
      bert = c.arch !== 'distilbert';
    const n = bert
      ? [
          'attention.self.query',
          'attention.self.key',
          'attention.self.value',
          'attention.output.dense',
          'attention.output.LayerNorm',
          'intermediate.dense',
          'output.dense',
          'output.LayerNorm',
        ]
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

  /** The 12 weights of the packed kernel (native/transformer.h), in its order. */
  packedWeights(): Tensor[] {
    const { w, b } = this.fused();
    return [
      w,
      b,
      this.o.weight,
      this.o.bias!,
      this.ln1.weight,
      this.ln1.bias,
      this.ff1.weight,
      this.ff1.bias!,
      this.ff2.weight,
      this.ff2.bias!,
      this.ln2.weight,
      this.ln2.bias,
    ];
  }

  /** x [B, T, D]; maskBias [B, 1, 1, T]: 0 at tokens, the dtype's minimum at padding. */
  forward(x: Tensor, maskBias: Tensor): Tensor {
    const [B, T, D] = x.shape as [number, number, number];
    const H = this.c.heads,
      hd = D / H;
    // with gradient, Q/K/V stacked afresh so the gradient reaches each (the cache is a no-grad copy)
    const { w, b } = isGradEnabled()
      ? { w: cat([this.q.weight, this.k.weight, this.v.weight], 0), b: cat([this.q.bias!, this.k.bias!, this.v.bias!], 0) }
      : this.fused();
    const heads = (t: Tensor): Tensor => t.view([B, T, H, hd]).transpose(1, 2); // [B, H, T, hd]
    const [q, k, v] = linear(x, w, b).chunk(3, -1) as [Tensor, Tensor, Tensor];
    // scores = q·kᵀ / √hd + mask (BERT divides the product; DistilBERT scales q first: the same to rounding)
    const scores = heads(q).matmul(heads(k).transpose(2, 3)).div(Math.sqrt(hd)).add(maskBias);
    const ctx = scores.softmax(-1).matmul(heads(v)).transpose(1, 2).reshape([B, T, D]);
    const h = this.ln1.forward(this.o.forward(ctx).add(x));
    return this.ln2.forward(this.ff2.forward(activate(this.ff1.forward(h), this.c.activation)).add(h));
  }

  /** Drops the stacked Q/K/V copy (the weights changed: it is rebuilt on the next inference). */
  dropCache(): void {
    if (this.qkv) {
      this.qkv.w.dispose();
      this.qkv.b.dispose();
      this.qkv = null;
    }
  }

  override dispose(): void {
    this.dropCache();
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

  get pooledWidth(): number {
    return this.c.hidden * this.c.pooling.length;
  }
  get dim(): number {
    return this.c.dense.length ? this.c.dense[this.c.dense.length - 1]!.out : this.pooledWidth;
  }

  /** Position ids: 0, 1, … (BERT, DistilBERT); XLM-R counts from padding_idx + 1 and gives padding padding_idx. */
  private positions(lengths: number[], T: number): BigInt64Array {
    const p = new BigInt64Array(lengths.length * T);
    const xlmr = this.c.arch === 'xlm-roberta',
      pad = this.c.padTokenId;
    lengths.forEach((n, r) => {
      for (let t = 0; t < T; t++) p[r * T + t] = BigInt(xlmr ? (t < n ? pad + 1 + t : pad) : t);
    });
    return p;
  }

  /** The lengths of the sequences, checked against the positions and the vocabulary. */
  private check(seqs: Int32Array[]): number[] {
    const maxLen = this.c.maxPositions - (this.c.arch === 'xlm-roberta' ? this.c.padTokenId + 1 : 0);
    return seqs.map((s, i) => {
      if (s.length > maxLen) throw new Error(`sequence ${i} has ${s.length} tokens, more than the model's ${this.c.maxPositions} positions allow`);
      if (s.length === 0) throw new Error(`sequence ${i} is empty (a tokenized input has at least its special tokens)`);
      for (const id of s) if (id < 0 || id >= this.c.vocabSize) throw new Error(`token id ${id} outside the vocabulary of ${this.c.vocabSize}`);
      return s.length;
    });
  }

  /** The packed kernel's activation for this model's, or null when it has none. */
  private get packedActivation(): EncoderActivation | null {
    const a = this.c.activation;
    return a === 'gelu' || a === 'gelu_tanh' || a === 'relu' ? a : null;
  }

  /**
   * Sentence vectors [B, dim] of token-id sequences (each with its special tokens). Without
   * gradient (inference) the layers run packed in one native kernel: the tokens of all sequences
   * one after another, no padding computed; with gradient, op by op over the padded batch (the
   * graph autograd differentiates). Both follow the same arithmetic.
   */
  forward(seqs: Int32Array[]): Tensor {
    if (!isGradEnabled() && this.packedActivation) {
      const lengths = this.check(seqs);
      return tidy(() =>
        this.head(
          packedEncoderLayers(this.embedPacked(seqs, lengths), lengths, this.packedWeights(), this.c.heads, this.c.eps, this.packedActivation!),
          lengths,
        ),
      );
    }
    return this.forwardPadded(seqs);
  }

  /** forward() without gradient, the layers on a libuv worker thread (the event loop stays free). */
  async forwardAsync(seqs: Int32Array[]): Promise<Tensor> {
    if (!this.packedActivation) return noGrad(() => this.forwardPadded(seqs));
    const lengths = this.check(seqs);
    const x = noGrad(() => tidy(() => this.embedPacked(seqs, lengths)));
    let h: Tensor;
    try {
      h = await packedEncoderLayersAsync(x, lengths, this.packedWeights(), this.c.heads, this.c.eps, this.packedActivation);
    } finally {
      x.dispose();
    }
    try {
      return noGrad(() => tidy(() => this.head(h, lengths)));
    } finally {
      h.dispose();
    }
  }

  /**
   * The packed kernel's matrix precision: 'fp32' (the original arithmetic, the default) or 'bf16'
   * (W_qkv, W_o, W_1, W_2 as bfloat16 copies beside the float32 weights; each product takes the
   * activations rounded to bfloat16 with float32 accumulation: about twice the speed where the CPU
   * has AVX512_BF16; cosine to the fp32 vectors > 0.999). Training and the padded path stay float32.
   */
  get precision(): 'fp32' | 'bf16' {
    return this.matrixPrecision;
  }
  set precision(p: 'fp32' | 'bf16') {
    if (p !== 'fp32' && p !== 'bf16') throw new Error(`precision must be 'fp32' or 'bf16', got ${JSON.stringify(p)}`);
    if (p !== this.matrixPrecision) {
      this.dropPacked();
      this.matrixPrecision = p;
    }
  }
  private matrixPrecision: 'fp32' | 'bf16' = 'fp32';

  private packedWeightList: Tensor[] | null = null;
  /** bfloat16 copies owned here (precision 'bf16'), disposed with the list. */
  private packedCopies: Tensor[] = [];
  private packedWeights(): Tensor[] {
    if (this.packedWeightList) return this.packedWeightList;
    const list = this.layers.flatMap((l) => l.packedWeights());
    if (this.matrixPrecision === 'bf16') {
      for (let i = 0; i < list.length; i++) {
        if (i % 12 !== 0 && i % 12 !== 2 && i % 12 !== 6 && i % 12 !== 8) continue;
        const c = noGrad(() => list[i]!.to('bfloat16'));
        keep([c]);
        this.packedCopies.push(c);
        list[i] = c;
      }
    }
    return (this.packedWeightList = list);
  }

  private dropPacked(): void {
    this.packedWeightList = null;
    for (const c of this.packedCopies) c.dispose();
    this.packedCopies = [];
  }

  /**
   * The weights changed (training, a loaded checkpoint): the packed kernel's stacked copies are
   * dropped and rebuilt from the live weights on the next no-grad forward.
   */
  weightsChanged(): void {
    this.dropPacked();
    for (const l of this.layers) l.dropCache();
  }

  override dispose(): void {
    this.dropPacked();
    super.dispose();
  }

  /** Embeddings of the packed tokens [N, D]: word + position + type 0, layer-normed. */
  private embedPacked(seqs: Int32Array[], lengths: number[]): Tensor {
    const N = lengths.reduce((a, n) => a + n, 0);
    const ids = new BigInt64Array(N),
      pos = new BigInt64Array(N);
    const xlmr = this.c.arch === 'xlm-roberta',
      pad = this.c.padTokenId;
    let o = 0;
    for (const s of seqs) {
      for (let t = 0; t < s.length; t++) {
        ids[o + t] = BigInt(s[t]!);
        pos[o + t] = BigInt(xlmr ? pad + 1 + t : t);
      }
      o += s.length;
    }
    let x = embedding(this.wordEmb.weight, fromArray(ids, [N]));
    x = x.add(embedding(this.posEmb.weight, fromArray(pos, [N])));
    if (this.typeEmb) x = x.add(this.typeEmb.weight.select(0, 0));
    return layerNorm(x, [this.c.hidden], this.embLn.weight, this.embLn.bias, this.c.eps);
  }

  /** Pooling and the heads over packed token vectors h [N, D] (rows re-spread over a padded [B, T, D]). */
  private head(h: Tensor, lengths: number[]): Tensor {
    const B = lengths.length,
      T = Math.max(1, ...lengths),
      N = h.size(0);
    // padded position → packed row, padding → an appended zero row
    const at = new BigInt64Array(B * T).fill(BigInt(N));
    const mask = new Float32Array(B * T);
    let o = 0;
    lengths.forEach((n, r) => {
      for (let t = 0; t < n; t++) {
        at[r * T + t] = BigInt(o + t);
        mask[r * T + t] = 1;
      }
      o += n;
    });
    const padded = embedding(cat([h, zeros([1, h.size(1)])], 0), fromArray(at, [B, T]));
    return this.heads(this.pool(padded, fromArray(mask, [B, T]), lengths));
  }

  /** Dense modules and Normalize over the pooled vectors. */
  private heads(pooled: Tensor): Tensor {
    let v = pooled;
    for (const [i, d] of this.dense.entries()) v = activate(d.forward(v), this.c.dense[i]!.activation);
    if (this.c.normalize) v = v.div(v.norm(2, 1, true).clampMin(1e-12));
    return v;
  }

  /** The op-by-op forward over the padded batch (differentiable). */
  forwardPadded(seqs: Int32Array[]): Tensor {
    return tidy(() => {
      const B = seqs.length,
        T = Math.max(1, ...seqs.map((s) => s.length));
      const lengths = this.check(seqs);
      const ids = new BigInt64Array(B * T).fill(BigInt(this.c.padTokenId));
      const mask = new Float32Array(B * T);
      seqs.forEach((s, r) => {
        for (let t = 0; t < s.length; t++) {
          ids[r * T + t] = BigInt(s[t]!);
          mask[r * T + t] = 1;
        }
      });
      let x = embedding(this.wordEmb.weight, fromArray(ids, [B, T]));
      x = x.add(embedding(this.posEmb.weight, fromArray(this.positions(lengths, T), [B, T])));
      if (this.typeEmb) x = x.add(this.typeEmb.weight.select(0, 0));
      x = layerNorm(x, [this.c.hidden], this.embLn.weight, this.embLn.bias, this.c.eps);
      const m = fromArray(mask, [B, T]);
      // (1 - mask) · finfo(float32).min, as transformers' get_extended_attention_mask
      const maskBias = m.rsub(1).mul(-3.4028234663852886e38).view([B, 1, 1, T]);
      for (const l of this.layers) x = l.forward(x, maskBias);
      return this.heads(this.pool(x, m, lengths));
    });
  }

  /** sentence-transformers' Pooling over the token vectors h [B, T, D] (mask [B, T], 1 = token). */
  private pool(h: Tensor, mask: Tensor, lengths: number[]): Tensor {
    const m3 = mask.unsqueeze(-1);
    const parts = this.c.pooling.map((mode) => {
      switch (mode) {
        case 'cls':
          return h.select(1, 0);
        case 'max':
          return h.maskedFill(m3.eq(0), -1e9).max(1)[0]!; // padding set to -1e9 as Pooling does
        case 'mean':
          return h.mul(m3).sum(1).div(m3.sum(1).clampMin(1e-9));
        case 'mean_sqrt_len':
          return h.mul(m3).sum(1).div(m3.sum(1).clampMin(1e-9).sqrt());
        case 'lasttoken': {
          const idx = fromArray(
            BigInt64Array.from(lengths, (n) => BigInt(Math.max(0, n - 1))),
            [h.size(0), 1, 1],
          ).expand([h.size(0), 1, h.size(2)]);
          return h.gather(1, idx).squeeze(1);
        }
      }
    });
    return parts.length === 1 ? parts[0]! : cat(parts, 1);
  }
}

/** The SentenceEncoder of an imported model. */
export class HfSentenceEncoder extends TensorEncoder {
  constructor(readonly net: HfEncoder) {
    super();
  }
  get dim(): number {
    return this.net.dim;
  }
  /** Attention is quadratic in length: moderate batches keep the working set small. */
  readonly batchLimits = { maxTokens: 8192, maxSentences: 256 };
  vectors(seqs: Int32Array[]): Tensor {
    return noGrad(() => this.net.forward(seqs));
  }
  override vectorsAsync(seqs: Int32Array[]): Promise<Tensor> {
    return this.net.forwardAsync(seqs);
  }
}

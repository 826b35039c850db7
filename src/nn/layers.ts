// Layers with PyTorch's parameter names, shapes and default initialisation.
import { DType } from '../tensor/dtype.js';
import {
  cat,
  dropout,
  embedding,
  embeddingBag,
  embeddingBagAsync,
  embeddingBagInt8,
  embeddingBagInt8Async,
  empty,
  layerNorm,
  linear,
  lstm,
  lstmPacked,
  lstmRecurrence,
  ones,
  packPaddedSequence,
  padPackedSequence,
  stack,
  zeros,
} from '../tensor/ops.js';
import { callOpAsync, dispose, fromArray, keep, noGrad, opId, Tensor, tidy } from '../tensor/tensor.js';
import { fillNormal, lstmTableEncode, lstmTableEncodeAsync } from '../tensor/kernels.js';
import { Module, ModuleList } from './module.js';

/** Row order by decreasing length (stable) and its inverse, as packing and the LSTM kernels want. */
function lengthOrder(lengths: ArrayLike<number>): { order: number[]; inv: number[] } {
  const order = Array.from({ length: lengths.length }, (_, i) => i).sort((a, b) => lengths[b]! - lengths[a]! || a - b);
  const inv = new Array<number>(order.length);
  order.forEach((o, i) => {
    inv[o] = i;
  });
  return { order, inv };
}

/** The rows of a kernel's output (`out`, freed) back in the callers' order. */
function inOrder(out: Tensor, inv: Tensor): Tensor {
  try {
    return noGrad(() => out.indexSelect(0, inv));
  } finally {
    out.dispose();
  }
}

function isNonIncreasing(a: ArrayLike<number>): boolean {
  for (let i = 1; i < a.length; i++) if (a[i]! > a[i - 1]!) return false;
  return true;
}

function uniformParam(shape: number[], bound: number, dtype?: DType): Tensor {
  const t = empty(shape, dtype);
  noGrad(() => t.uniform_(-bound, bound));
  return t;
}

export class Linear extends Module {
  readonly weight: Tensor;
  readonly bias: Tensor | null;
  constructor(
    readonly inFeatures: number,
    readonly outFeatures: number,
    bias = true,
  ) {
    super();
    // kaiming_uniform(a=sqrt(5)) reduces to U(-1/sqrt(in), 1/sqrt(in)), like the bias.
    const bound = 1 / Math.sqrt(inFeatures);
    this.weight = this.param('weight', uniformParam([outFeatures, inFeatures], bound));
    this.bias = bias ? this.param('bias', uniformParam([outFeatures], bound)) : null;
  }
  forward(x: Tensor): Tensor {
    return linear(x, this.weight, this.bias);
  }
}

export class Embedding extends Module {
  readonly weight: Tensor;
  constructor(
    readonly numEmbeddings: number,
    readonly dim: number,
    readonly paddingIdx: number | null = null,
  ) {
    super();
    const w = empty([numEmbeddings, dim]);
    noGrad(() => {
      w.normal_(0, 1);
      if (paddingIdx !== null) tidy(() => w.select(0, paddingIdx).zero_());
    });
    this.weight = this.param('weight', w);
  }
  forward(ids: Tensor): Tensor {
    return embedding(this.weight, ids, this.paddingIdx ?? -1);
  }
}

let initTables = true;

/**
 * Builds modules whose large tables (EmbeddingBag) are left uninitialised, for weights that are
 * read from a file right after: initialising a 1 GiB table only to overwrite it costs seconds.
 */
export function withoutTableInit<T>(fn: () => T): T {
  initTables = false;
  try {
    return fn();
  } finally {
    initTables = true;
  }
}

/**
 * nn.EmbeddingBag (mode 'sum' with per-sample weights; a mean is weights 1/count) whose weight gets
 * row-sparse gradients: meant for large hashed-feature tables trained with SparseAdam. Rows start
 * as N(0, std²) (std 0: zeros), drawn in parallel from the seeded generator.
 *
 * A loaded model may hold the table as int8 rows with one float32 scale per row instead (a compact
 * export, setInt8): then `weight` is that int8 tensor, the bags dequantise each row as they read
 * it (embeddingBagInt8, a quarter of the bytes) and the module is inference-only.
 */
export class EmbeddingBag extends Module {
  private table: Tensor;
  private rowScale: Tensor | null = null;
  constructor(
    readonly numEmbeddings: number,
    readonly dim: number,
    readonly std = 1,
  ) {
    super();
    const w = empty([numEmbeddings, dim]);
    if (initTables)
      noGrad(() => {
        if (std > 0) fillNormal(w, 0, std);
        else w.zero_();
      });
    this.table = this.param('weight', w);
  }
  /** The table [numEmbeddings, dim]: float32 (trainable), or int8 rows after setInt8 (see scale). */
  get weight(): Tensor {
    return this.table;
  }
  /** The int8 table's per-row scales [numEmbeddings] (float32); null for a float table. */
  get scale(): Tensor | null {
    return this.rowScale;
  }
  /**
   * Replaces the float table by int8 rows q [numEmbeddings, dim] with per-row float32 scales
   * (row r ≈ q[r] · scale[r]); the float table is freed. Inference only from then on. Takes
   * ownership of both tensors.
   */
  setInt8(q: Tensor, scale: Tensor): void {
    if (q.dtype !== 'int8' || q.shape.length !== 2 || q.shape[0] !== this.numEmbeddings || q.shape[1] !== this.dim)
      throw new Error(`EmbeddingBag.setInt8: the table must be int8 [${this.numEmbeddings}, ${this.dim}], got ${q.dtype} [${q.shape.join(', ')}]`);
    if (scale.dtype !== 'float32' || scale.shape.length !== 1 || scale.shape[0] !== this.numEmbeddings)
      throw new Error(`EmbeddingBag.setInt8: the scales must be float32 [${this.numEmbeddings}], got ${scale.dtype} [${scale.shape.join(', ')}]`);
    this.rowScale?.dispose();
    this.table = this.replaceFrozen('weight', q);
    this.rowScale = keep(scale);
  }
  /** ids [N] int32/int64, offsets [B+1] int64 (bag b = ids[offsets[b] .. offsets[b+1])) → [B, dim]. */
  forward(ids: Tensor, offsets: Tensor, perSampleWeights?: Tensor | null): Tensor {
    if (!this.rowScale) return embeddingBag(this.table, ids, offsets, perSampleWeights);
    this.checkInference();
    return embeddingBagInt8(this.table, this.rowScale, ids, offsets, perSampleWeights);
  }
  /** forward() on a worker thread, without autograd (inference). */
  async forwardAsync(ids: Tensor, offsets: Tensor, perSampleWeights?: Tensor | null): Promise<Tensor> {
    if (!this.rowScale) return embeddingBagAsync(this.table, ids, offsets, perSampleWeights);
    this.checkInference();
    return embeddingBagInt8Async(this.table, this.rowScale, ids, offsets, perSampleWeights);
  }
  private checkInference(): void {
    if (this.training)
      throw new Error('EmbeddingBag: an int8 table (a compact export) is inference-only and cannot be trained; train from the fp32 model directory');
  }
  override dispose(): void {
    super.dispose();
    this.rowScale?.dispose();
    this.rowScale = null;
  }
}

export class LayerNorm extends Module {
  readonly weight: Tensor;
  readonly bias: Tensor;
  constructor(
    readonly dim: number,
    readonly eps = 1e-5,
  ) {
    super();
    this.weight = this.param('weight', ones([dim]));
    this.bias = this.param('bias', zeros([dim]));
  }
  forward(x: Tensor): Tensor {
    return layerNorm(x, [this.dim], this.weight, this.bias, this.eps);
  }
}

export class Dropout extends Module {
  constructor(readonly p = 0.5) {
    super();
  }
  forward(x: Tensor): Tensor {
    return dropout(x, this.p, this.training);
  }
}

/**
 * impl: 'recurrence' (default for float32 on CPU) runs each layer as one GEMM for the input gates
 * plus the native recurrence node (lstmRecurrence); 'aten' runs aten::lstm with packing. Same
 * arithmetic; the first is faster to train (fewer autograd nodes, directions side by side).
 * XLING_LSTM=aten selects the second everywhere.
 */
export interface LSTMOptions {
  numLayers?: number;
  bidirectional?: boolean;
  batchFirst?: boolean;
  dropout?: number;
  impl?: 'recurrence' | 'aten';
}

/** Options of one LSTM call. */
export interface LSTMForwardOptions {
  /** Real length of each sequence: steps past it are skipped (reverse directions start at the end). */
  lengths?: ArrayLike<number>;
  /** Initial [h0, c0], each [layers*dirs, B, H]. */
  h0?: [Tensor, Tensor];
  /** Output value at padded steps (default 0). */
  paddingValue?: number;
  /**
   * A per-sequence input [B, R] appended to x at every step (the layer's input is [x_t; row]).
   * Its share of the input gates is computed once per sequence rather than once per step.
   */
  rowInput?: Tensor;
}

export interface LSTMOutput {
  /** [B, T, dirs*H] (batch-first) — padded steps hold paddingValue. */
  output: Tensor;
  /** [layers*dirs, B, H] final hidden and cell states (at each sequence's last real step). */
  h: Tensor;
  c: Tensor;
}

/** Multi-layer (bi)LSTM with PyTorch's parameters, length-aware (see LSTMOptions.impl). */
export class LSTM extends Module {
  readonly numLayers: number;
  readonly bidirectional: boolean;
  readonly batchFirst: boolean;
  readonly dropout: number;
  impl: 'recurrence' | 'aten';
  private readonly flat: Tensor[] = [];

  constructor(
    readonly inputSize: number,
    readonly hiddenSize: number,
    o: LSTMOptions = {},
  ) {
    super();
    this.numLayers = o.numLayers ?? 1;
    this.bidirectional = o.bidirectional ?? false;
    this.batchFirst = o.batchFirst ?? true;
    this.dropout = o.dropout ?? 0;
    this.impl = o.impl ?? (process.env.XLING_LSTM === 'aten' ? 'aten' : 'recurrence');
    const dirs = this.bidirectional ? 2 : 1;
    const bound = 1 / Math.sqrt(hiddenSize);
    for (let l = 0; l < this.numLayers; l++) {
      for (let d = 0; d < dirs; d++) {
        const sfx = `_l${l}${d === 1 ? '_reverse' : ''}`;
        const inp = l === 0 ? inputSize : hiddenSize * dirs;
        this.flat.push(
          this.param(`weight_ih${sfx}`, uniformParam([4 * hiddenSize, inp], bound)),
          this.param(`weight_hh${sfx}`, uniformParam([4 * hiddenSize, hiddenSize], bound)),
          this.param(`bias_ih${sfx}`, uniformParam([4 * hiddenSize], bound)),
          this.param(`bias_hh${sfx}`, uniformParam([4 * hiddenSize], bound)),
        );
      }
    }
  }

  get outputSize(): number {
    return this.hiddenSize * (this.bidirectional ? 2 : 1);
  }
  /** Weights in aten::lstm's flat order. */
  flatWeights(): Tensor[] {
    return [...this.flat];
  }

  /** x: [B, T, I] (batch-first) or [T, B, I]; with rowInput, I + R = inputSize. */
  forward(x: Tensor, opts: LSTMForwardOptions = {}): LSTMOutput {
    return tidy(() => {
      const bf = this.batchFirst;
      const B = x.size(bf ? 0 : 1),
        T = x.size(bf ? 1 : 0);
      const lengths = opts.lengths;
      if (lengths) {
        if (lengths.length !== B) throw new Error(`LSTM: ${lengths.length} lengths for a batch of ${B}`);
        for (let i = 0; i < B; i++) if (!(lengths[i]! >= 1 && lengths[i]! <= T)) throw new Error(`LSTM: length ${lengths[i]} out of range [1, ${T}]`);
      }
      const full = !lengths || Array.prototype.every.call(lengths, (l: number) => l === T);
      if (this.impl === 'recurrence' && x.dtype === 'float32' && x.device === 'cpu') return this.forwardRecurrence(x, full ? [] : lengths!, opts);
      if (opts.rowInput) x = cat([x, opts.rowInput.unsqueeze(bf ? 1 : 0).expand(bf ? [B, T, -1] : [T, B, -1])], 2);
      return this.forwardAten(x, full ? null : lengths!, opts);
    });
  }

  private forwardRecurrence(x: Tensor, lengths: ArrayLike<number>, opts: LSTMForwardOptions): LSTMOutput {
    const dirs = this.bidirectional ? 2 : 1,
      H = this.hiddenSize;
    let seq = this.batchFirst ? x.transpose(0, 1) : x; // [T, B, I]
    const B = seq.size(1);
    // Rows in decreasing length let each step's GEMM skip the rows that have ended.
    let inv: Tensor | null = null;
    if (!isNonIncreasing(lengths)) {
      const { order, inv: invOrder } = lengthOrder(lengths);
      const orderT = fromArray(BigInt64Array.from(order, BigInt));
      inv = fromArray(BigInt64Array.from(invOrder, BigInt));
      seq = seq.indexSelect(1, orderT);
      if (opts.rowInput) opts = { ...opts, rowInput: opts.rowInput.indexSelect(0, orderT) };
      if (opts.h0) opts = { ...opts, h0: [opts.h0[0].indexSelect(1, orderT), opts.h0[1].indexSelect(1, orderT)] };
      lengths = order.map((i) => lengths[i]!);
    }
    const hs: Tensor[] = [],
      cs: Tensor[] = [];
    for (let l = 0; l < this.numLayers; l++) {
      const w = Array.from({ length: dirs }, (_, d) => this.flat.slice((l * dirs + d) * 4, (l * dirs + d) * 4 + 4));
      // input gates of every direction from one GEMM over all steps: [T, B, dirs*4H]
      const wih = dirs === 2 ? cat([w[0]![0]!, w[1]![0]!], 0) : w[0]![0]!;
      const bias = cat(
        w.map((p) => p[2]!.add(p[3]!)),
        0,
      );
      let xg: Tensor;
      if (l === 0 && opts.rowInput) {
        const I = seq.size(2);
        const rowGates = linear(opts.rowInput, wih.narrow(1, I, wih.size(1) - I), bias); // [B, dirs*4H]
        xg = linear(seq, wih.narrow(1, 0, I)).add(rowGates.unsqueeze(0));
      } else {
        xg = linear(seq, wih, bias);
      }
      const whh = stack(
        w.map((p) => p[1]!),
        0,
      );
      const [h0, c0] = opts.h0 ? [opts.h0[0].narrow(0, l * dirs, dirs), opts.h0[1].narrow(0, l * dirs, dirs)] : [zeros([dirs, B, H]), zeros([dirs, B, H])];
      const last = l === this.numLayers - 1;
      const [out, hN, cN] = lstmRecurrence(xg, whh, h0, c0, lengths, last ? (opts.paddingValue ?? 0) : 0);
      hs.push(hN);
      cs.push(cN);
      seq = last ? out : dropout(out, this.dropout, this.training);
    }
    let h = cat(hs, 0),
      c = cat(cs, 0);
    if (inv) {
      seq = seq.indexSelect(1, inv);
      h = h.indexSelect(1, inv);
      c = c.indexSelect(1, inv);
    }
    return { output: this.batchFirst ? seq.transpose(0, 1) : seq, h, c };
  }

  private forwardAten(x: Tensor, lengths: ArrayLike<number> | null, opts: LSTMForwardOptions): LSTMOutput {
    const bf = this.batchFirst;
    const B = x.size(bf ? 0 : 1),
      T = x.size(bf ? 1 : 0);
    const dirs = this.bidirectional ? 2 : 1;
    const hx: [Tensor, Tensor] = opts.h0 ?? [zeros([this.numLayers * dirs, B, this.hiddenSize]), zeros([this.numLayers * dirs, B, this.hiddenSize])];
    const o = { numLayers: this.numLayers, bidirectional: this.bidirectional, dropout: this.dropout, train: this.training };
    if (!lengths) {
      const [output, h, c] = lstm(x, hx, this.flat, { ...o, batchFirst: bf });
      return { output, h, c };
    }
    // Sort by decreasing length (packing needs it), run packed, restore the original order.
    const { order, inv } = lengthOrder(lengths);
    const orderT = fromArray(BigInt64Array.from(order, BigInt));
    const invT = fromArray(BigInt64Array.from(inv, BigInt));
    const sortedLens = fromArray(BigInt64Array.from(order, (i) => BigInt(lengths[i]!)));
    const xs = x.indexSelect(bf ? 0 : 1, orderT);
    const h0s: [Tensor, Tensor] = opts.h0 ? [hx[0].indexSelect(1, orderT), hx[1].indexSelect(1, orderT)] : hx;
    const [data, batchSizes] = packPaddedSequence(xs, sortedLens, bf);
    const [outData, h, c] = lstmPacked(data, batchSizes, h0s, this.flat, o);
    const [padded] = padPackedSequence(outData, batchSizes, bf, opts.paddingValue ?? 0, T);
    return { output: padded.indexSelect(bf ? 0 : 1, invT), h: h.indexSelect(1, invT), c: c.indexSelect(1, invT) };
  }
}

/**
 * forward() for inference off the JS thread: the recurrent kernel (the costly part) runs on a
 * libuv worker in no-grad mode while the event loop keeps serving; the cheap reordering runs
 * here. Call with no autograd needed; the caller owns the returned tensors.
 */
export async function lstmForwardAsync(m: LSTM, x: Tensor, opts: { lengths?: ArrayLike<number>; paddingValue?: number } = {}): Promise<LSTMOutput> {
  const tmp: Tensor[] = [];
  const own = <T extends Tensor>(t: T): T => {
    tmp.push(t);
    return t;
  };
  try {
    const B = x.size(0),
      T = x.size(1),
      dirs = m.bidirectional ? 2 : 1;
    const flat = m.flatWeights();
    const hx: [Tensor, Tensor] = noGrad(() => [
      own(zeros([m.numLayers * dirs, B, m.hiddenSize], x.dtype)),
      own(zeros([m.numLayers * dirs, B, m.hiddenSize], x.dtype)),
    ]);
    const lengths = opts.lengths;
    if (!lengths || Array.prototype.every.call(lengths, (l: number) => l === T)) {
      const [output, h, c] = (await callOpAsync(opId('lstm', 'input'), [x, hx, flat, true, m.numLayers, 0, false, m.bidirectional, true])) as [
        Tensor,
        Tensor,
        Tensor,
      ];
      return { output, h, c };
    }
    const { order, inv } = lengthOrder(lengths);
    for (const l of order) if (!(lengths[l]! >= 1 && lengths[l]! <= T)) throw new Error(`LSTM: length ${lengths[l]} out of range [1, ${T}]`);
    const [data, batchSizes] = noGrad(() => {
      const orderT = own(fromArray(BigInt64Array.from(order, BigInt)));
      const sortedLens = own(fromArray(BigInt64Array.from(order, (i) => BigInt(lengths[i]!))));
      return packPaddedSequence(own(x.indexSelect(0, orderT)), sortedLens, true).map(own) as [Tensor, Tensor];
    });
    const [outData, h, c] = (
      (await callOpAsync(opId('lstm', 'data'), [data, batchSizes, hx, flat, true, m.numLayers, 0, false, m.bidirectional])) as Tensor[]
    ).map(own);
    return noGrad(() => {
      const invT = own(fromArray(BigInt64Array.from(inv, BigInt)));
      const [padded, lens] = padPackedSequence(outData!, batchSizes, true, opts.paddingValue ?? 0, T);
      own(padded!);
      own(lens!);
      return { output: padded!.indexSelect(0, invT), h: h!.indexSelect(1, invT), c: c!.indexSelect(1, invT) };
    });
  } finally {
    for (const t of tmp) t.dispose();
  }
}

/**
 * Inference over token ids for an embedding followed by a 1-layer (bi)LSTM, with the input
 * projection precomputed per vocabulary entry: table = E·W_ihᵀ + b_ih + b_hh, [V, 4H] float32
 * per direction (native lstmTableEncode). Removes the input GEMM over every token; worth it
 * once a job embeds more tokens than the vocabulary has entries. The tables are a snapshot of
 * the weights: build after training, dispose() when done.
 */
export class LSTMTokenTables {
  private constructor(
    private readonly tables: Tensor[],
    private readonly whh: Tensor[],
  ) {}

  static build(emb: Embedding, m: LSTM): LSTMTokenTables {
    if (m.numLayers !== 1) throw new Error('LSTMTokenTables: only a 1-layer LSTM');
    if (emb.dim !== m.inputSize) throw new Error(`LSTMTokenTables: embedding dim ${emb.dim} != LSTM input ${m.inputSize}`);
    const w = m.flatWeights();
    const dirs = m.bidirectional ? 2 : 1;
    return noGrad(() => {
      const tables: Tensor[] = [],
        whh: Tensor[] = [];
      for (let d = 0; d < dirs; d++) {
        const [wih, wh, bih, bhh] = w.slice(4 * d, 4 * d + 4) as [Tensor, Tensor, Tensor, Tensor];
        tables.push(tidy(() => emb.weight.float().mm(wih.float().t()).add(bih.float()).add(bhh.float()).contiguous()));
        whh.push(tidy(() => wh.float().contiguous()));
      }
      return new LSTMTokenTables(tables, whh);
    });
  }

  /** Sorts rows by decreasing length for the kernel; returns [sorted ids, sorted lengths, inverse order]. */
  private prepare(ids: Tensor, lengths: ArrayLike<number>): [Tensor, number[], Tensor] {
    const { order, inv } = lengthOrder(lengths);
    return noGrad(() =>
      tidy(() => [
        ids.indexSelect(0, fromArray(BigInt64Array.from(order, BigInt))).contiguous(),
        order.map((i) => lengths[i]!),
        fromArray(BigInt64Array.from(inv, BigInt)),
      ]),
    );
  }

  /** ids [B, T] int64 (padding after each sequence's length) → [B, dirs·H]: max over time, or final states. */
  encode(ids: Tensor, lengths: ArrayLike<number>, pooling: 'max' | 'last'): Tensor {
    const [sorted, lens, inv] = this.prepare(ids, lengths);
    try {
      return inOrder(lstmTableEncode(sorted, lens, this.tables, this.whh, pooling), inv);
    } finally {
      dispose([sorted, inv]);
    }
  }

  /** encode() on a libuv worker thread. */
  async encodeAsync(ids: Tensor, lengths: ArrayLike<number>, pooling: 'max' | 'last'): Promise<Tensor> {
    const [sorted, lens, inv] = this.prepare(ids, lengths);
    try {
      return inOrder(await lstmTableEncodeAsync(sorted, lens, this.tables, this.whh, pooling), inv);
    } finally {
      dispose([sorted, inv]);
    }
  }

  dispose(): void {
    for (const t of [...this.tables, ...this.whh]) t.dispose();
  }
}

/** Multi-head self-attention (PyTorch nn.MultiheadAttention parameter layout, batch-first). */
export class MultiheadAttention extends Module {
  readonly in_proj_weight: Tensor;
  readonly in_proj_bias: Tensor;
  readonly out_proj: Linear;
  readonly headDim: number;
  constructor(
    readonly dim: number,
    readonly numHeads: number,
    readonly dropout = 0,
  ) {
    super();
    if (dim % numHeads !== 0) throw new Error(`MultiheadAttention: dim ${dim} not divisible by ${numHeads} heads`);
    this.headDim = dim / numHeads;
    // xavier_uniform over the packed [3E, E] matrix, zero biases (as PyTorch).
    this.in_proj_weight = this.param('in_proj_weight', uniformParam([3 * dim, dim], Math.sqrt(6 / (4 * dim))));
    this.in_proj_bias = this.param('in_proj_bias', zeros([3 * dim]));
    this.out_proj = this.module('out_proj', new Linear(dim, dim));
    noGrad(() => this.out_proj.bias!.zero_());
  }

  /** x: [B, T, E]; keyPaddingMask: bool [B, T], true = padding (ignored as a key). */
  forward(x: Tensor, keyPaddingMask?: Tensor | null): Tensor {
    return tidy(() => {
      const [B, T, E] = x.shape as [number, number, number];
      const H = this.numHeads,
        hd = this.headDim;
      const [q, k, v] = linear(x, this.in_proj_weight, this.in_proj_bias).chunk(3, -1) as [Tensor, Tensor, Tensor];
      const heads = (t: Tensor) =>
        t
          .reshape([B, T, H, hd])
          .transpose(1, 2)
          .reshape([B * H, T, hd]);
      const qh = heads(q).mul(1 / Math.sqrt(hd)),
        kh = heads(k),
        vh = heads(v);
      let scores = qh.bmm(kh.transpose(1, 2)); // [B*H, T, T]
      if (keyPaddingMask) {
        const m = keyPaddingMask
          .view([B, 1, 1, T])
          .expand([B, H, 1, T])
          .reshape([B * H, 1, T]);
        scores = scores.maskedFill(m, -Infinity);
      }
      const attn = dropout(scores.softmax(-1), this.dropout, this.training);
      const out = attn.bmm(vh).reshape([B, H, T, hd]).transpose(1, 2).reshape([B, T, E]);
      return this.out_proj.forward(out);
    });
  }
}

export interface TransformerLayerOptions {
  dim: number;
  heads: number;
  ff?: number;
  dropout?: number;
  activation?: 'relu' | 'gelu';
  normFirst?: boolean;
  eps?: number;
}

/** nn.TransformerEncoderLayer (batch_first), post-norm by default. */
export class TransformerEncoderLayer extends Module {
  readonly self_attn: MultiheadAttention;
  readonly linear1: Linear;
  readonly linear2: Linear;
  readonly norm1: LayerNorm;
  readonly norm2: LayerNorm;
  readonly p: number;
  readonly activation: 'relu' | 'gelu';
  readonly normFirst: boolean;
  constructor(o: TransformerLayerOptions) {
    super();
    const ff = o.ff ?? 4 * o.dim;
    this.p = o.dropout ?? 0.1;
    this.activation = o.activation ?? 'relu';
    this.normFirst = o.normFirst ?? false;
    this.self_attn = this.module('self_attn', new MultiheadAttention(o.dim, o.heads, this.p));
    this.linear1 = this.module('linear1', new Linear(o.dim, ff));
    this.linear2 = this.module('linear2', new Linear(ff, o.dim));
    this.norm1 = this.module('norm1', new LayerNorm(o.dim, o.eps ?? 1e-5));
    this.norm2 = this.module('norm2', new LayerNorm(o.dim, o.eps ?? 1e-5));
  }

  private ffBlock(x: Tensor): Tensor {
    const h = this.linear1.forward(x);
    const a = this.activation === 'relu' ? h.relu() : h.gelu();
    return dropout(this.linear2.forward(dropout(a, this.p, this.training)), this.p, this.training);
  }

  forward(x: Tensor, keyPaddingMask?: Tensor | null): Tensor {
    return tidy(() => {
      const tr = this.training;
      if (this.normFirst) {
        const y = x.add(dropout(this.self_attn.forward(this.norm1.forward(x), keyPaddingMask), this.p, tr));
        return y.add(this.ffBlock(this.norm2.forward(y)));
      }
      const y = this.norm1.forward(x.add(dropout(this.self_attn.forward(x, keyPaddingMask), this.p, tr)));
      return this.norm2.forward(y.add(this.ffBlock(y)));
    });
  }
}

/** A stack of encoder layers named layers.0, layers.1, … (as nn.TransformerEncoder). */
export class TransformerEncoder extends Module {
  readonly layers: TransformerEncoderLayer[];
  constructor(o: TransformerLayerOptions & { numLayers: number }) {
    super();
    const list = this.module('layers', new ModuleList<TransformerEncoderLayer>());
    for (let i = 0; i < o.numLayers; i++) list.append(new TransformerEncoderLayer(o));
    this.layers = list.items;
  }
  forward(x: Tensor, keyPaddingMask?: Tensor | null): Tensor {
    return tidy(() => {
      let h = x;
      for (const l of this.layers) h = l.forward(h, keyPaddingMask);
      return h;
    });
  }
}

// Functional ops over Tensors: creation, joining, neural-network primitives (the ones the
// models need), each a direct call of the ATen operator of the same name.
import { DType, dtypeCode } from './dtype.js';
import { native } from '../native.js';
import { callOp, opId, Scalar, Shape, Tensor, tidy } from './tensor.js';

const ID = {
  zeros: opId('zeros'),
  ones: opId('ones'),
  full: opId('full'),
  empty: opId('empty', 'memory_format'),
  arange: opId('arange'),
  arangeStart: opId('arange', 'start_step'),
  eye: opId('eye'),
  rand: opId('rand'),
  randn: opId('randn'),
  randint: opId('randint', 'low'),
  randperm: opId('randperm'),
  zerosLike: opId('zeros_like'),
  onesLike: opId('ones_like'),
  cat: opId('cat'),
  stack: opId('stack'),
  where: opId('where', 'self'),
  whereS: opId('where', 'ScalarOther'),
  crossEntropy: opId('cross_entropy_loss'),
  nllLoss: opId('nll_loss_nd'),
  mse: opId('mse_loss'),
  layerNorm: opId('layer_norm'),
  dropout: opId('dropout'),
  embedding: opId('embedding'),
  lstm: opId('lstm', 'input'),
  lstmPacked: opId('lstm', 'data'),
  pack: opId('_pack_padded_sequence'),
  unpack: opId('_pad_packed_sequence'),
  cosine: opId('cosine_similarity'),
  baddbmm: opId('baddbmm'),
  addmm: opId('addmm'),
  multinomial: opId('multinomial'),
  eyeM: opId('eye', 'm'),
  linear: opId('linear'),
};

function dt(d?: DType): number | null {
  return d === undefined ? null : dtypeCode(d);
}

let defaultFloat: DType = 'float32';
/** The dtype of floating tensors created without an explicit dtype (parameters included). */
export function setDefaultDtype(d: 'float32' | 'float64'): void {
  defaultFloat = d;
}

// ---- creation
export function zeros(shape: Shape, dtype: DType = defaultFloat): Tensor {
  return callOp(ID.zeros, [shape, dt(dtype)]) as Tensor;
}
export function ones(shape: Shape, dtype: DType = defaultFloat): Tensor {
  return callOp(ID.ones, [shape, dt(dtype)]) as Tensor;
}
export function full(shape: Shape, value: Scalar, dtype: DType = defaultFloat): Tensor {
  return callOp(ID.full, [shape, value, dt(dtype)]) as Tensor;
}
export function empty(shape: Shape, dtype: DType = defaultFloat): Tensor {
  return callOp(ID.empty, [shape, dt(dtype)]) as Tensor;
}
export function zerosLike(t: Tensor): Tensor {
  return callOp(ID.zerosLike, [t]) as Tensor;
}
export function onesLike(t: Tensor): Tensor {
  return callOp(ID.onesLike, [t]) as Tensor;
}
/** [0, end) or [start, end) with step; int64 unless dtype given. */
export function arange(startOrEnd: number, end?: number, step = 1, dtype: DType = 'int64'): Tensor {
  if (end === undefined) return callOp(ID.arange, [startOrEnd, dt(dtype)]) as Tensor;
  return callOp(ID.arangeStart, [startOrEnd, end, step, dt(dtype)]) as Tensor;
}
export function eye(n: number, m?: number, dtype: DType = defaultFloat): Tensor {
  return (m === undefined ? callOp(ID.eye, [n, dt(dtype)]) : callOp(ID.eyeM, [n, m, dt(dtype)])) as Tensor;
}
/** Uniform [0, 1). Seeded by manualSeed(). */
export function rand(shape: Shape, dtype: DType = defaultFloat): Tensor {
  return callOp(ID.rand, [shape, dt(dtype)]) as Tensor;
}
/** Standard normal. */
export function randn(shape: Shape, dtype: DType = defaultFloat): Tensor {
  return callOp(ID.randn, [shape, dt(dtype)]) as Tensor;
}
/** Integers in [low, high). */
export function randint(low: number, high: number, shape: Shape, dtype: DType = 'int64'): Tensor {
  return callOp(ID.randint, [low, high, shape, dt(dtype)]) as Tensor;
}
export function randperm(n: number): Tensor {
  return callOp(ID.randperm, [n, dt('int64')]) as Tensor;
}
export function multinomial(probs: Tensor, n: number, replacement = false): Tensor {
  return callOp(ID.multinomial, [probs, n, replacement]) as Tensor;
}

// ---- joining / selection
export function cat(ts: Tensor[], dim = 0): Tensor {
  return callOp(ID.cat, [ts, dim]) as Tensor;
}
export function stack(ts: Tensor[], dim = 0): Tensor {
  return callOp(ID.stack, [ts, dim]) as Tensor;
}
/** Elementwise cond ? a : b (b may be a scalar). */
export function where(cond: Tensor, a: Tensor, b: Tensor | Scalar): Tensor {
  return callOp(b instanceof Tensor ? ID.where : ID.whereS, [cond, a, b]) as Tensor;
}

// ---- nn primitives
export function linear(x: Tensor, weight: Tensor, bias?: Tensor | null): Tensor {
  return callOp(ID.linear, [x, weight, bias ?? null]) as Tensor;
}
export function addmm(bias: Tensor, a: Tensor, b: Tensor, beta = 1, alpha = 1): Tensor {
  return callOp(ID.addmm, [bias, a, b, beta, alpha]) as Tensor;
}
export function baddbmm(input: Tensor, a: Tensor, b: Tensor, beta = 1, alpha = 1): Tensor {
  return callOp(ID.baddbmm, [input, a, b, beta, alpha]) as Tensor;
}

export type Reduction = 'none' | 'mean' | 'sum';
const REDUCTION: Record<Reduction, number> = { none: 0, mean: 1, sum: 2 };

/**
 * Cross entropy of logits [N, C] (or [N, C, d...]) against class indices [N] (int64).
 * Targets equal to ignoreIndex contribute nothing (and are excluded from the mean).
 */
export function crossEntropy(
  logits: Tensor,
  target: Tensor,
  opts: { ignoreIndex?: number; reduction?: Reduction; labelSmoothing?: number; weight?: Tensor } = {},
): Tensor {
  return callOp(ID.crossEntropy, [
    logits,
    target,
    opts.weight ?? null,
    REDUCTION[opts.reduction ?? 'mean'],
    opts.ignoreIndex ?? -100,
    opts.labelSmoothing ?? 0,
  ]) as Tensor;
}
export function mseLoss(a: Tensor, b: Tensor, reduction: Reduction = 'mean'): Tensor {
  return callOp(ID.mse, [a, b, REDUCTION[reduction]]) as Tensor;
}

export function layerNorm(x: Tensor, normalizedShape: Shape, weight?: Tensor | null, bias?: Tensor | null, eps = 1e-5): Tensor {
  return callOp(ID.layerNorm, [x, normalizedShape, weight ?? null, bias ?? null, eps, false]) as Tensor;
}
/** A mask of 0 and 1/(1-p) entries (keep probability 1-p), drawn in parallel; seeded by manualSeed(). */
export function dropoutMask(shape: Shape, p: number, dtype: DType = defaultFloat): Tensor {
  return new Tensor(native.torch.dropoutMask(shape, p, dtypeCode(dtype)));
}

/** Inverted dropout (x * mask / (1-p)); identity when !train or p == 0. */
export function dropout(x: Tensor, p: number, train: boolean): Tensor {
  if (p < 0 || p >= 1) throw new Error(`dropout: p must be in [0, 1), got ${p}`);
  if (!train || p === 0) return x;
  return tidy(() => x.mul(dropoutMask(x.shape, p, x.dtype === 'float64' ? 'float64' : 'float32')));
}
/** Rows of weight [V, E] picked by integer indices of any shape. paddingIdx rows get no gradient. */
export function embedding(weight: Tensor, indices: Tensor, paddingIdx = -1): Tensor {
  return callOp(ID.embedding, [weight, indices, paddingIdx, false, false]) as Tensor;
}
/**
 * Bags of embedding rows: out[b] = Σ_{j in [offsets[b], offsets[b+1])} w_j · weight[ids[j]]
 * (w_j = 1 without perSampleWeights; mean = weights 1/count). ids int32/int64 [N], offsets int64
 * [B+1] from 0 to N. The weight's gradient is row-sparse (a coalesced sparse COO tensor over the
 * rows used), for SparseAdam; native/bag.cc.
 */
export function embeddingBag(weight: Tensor, ids: Tensor, offsets: Tensor, perSampleWeights?: Tensor | null): Tensor {
  return new Tensor(native.torch.embeddingBag(weight.handle, ids.handle, offsets.handle, perSampleWeights?.handle ?? null));
}
/**
 * x · weightᵀ + bias (weight [N, K] as Linear stores it) with every output row the same whatever
 * batch it is in (BLAS results depend on the matrix sizes): inference only, no gradient.
 */
export function rowLinear(x: Tensor, weight: Tensor, bias?: Tensor | null): Tensor {
  return new Tensor(native.torch.rowLinear(x.handle, weight.handle, bias?.handle ?? null));
}
/** rowLinear() on a worker thread. */
export async function rowLinearAsync(x: Tensor, weight: Tensor, bias?: Tensor | null): Promise<Tensor> {
  return new Tensor(await native.torch.rowLinearAsync(x.handle, weight.handle, bias?.handle ?? null));
}
/**
 * Inner products of gathered rows with queries: scores[i, j] = <table[ids[i, j]], q[i]> for table
 * [N, d] (float16 or float32), ids [n, K] int64 (negative: -inf), q [n, d] float32 — an approximate
 * search's candidates re-ranked exactly, with the rows prefetched (native/gather_dot.h). No gradient.
 */
export function gatherDot(table: Tensor, ids: Tensor, q: Tensor): Tensor {
  return new Tensor(native.torch.gatherDot(table.handle, ids.handle, q.handle));
}
/** embeddingBag() on a worker thread, without autograd (inference). */
export async function embeddingBagAsync(weight: Tensor, ids: Tensor, offsets: Tensor, perSampleWeights?: Tensor | null): Promise<Tensor> {
  return new Tensor(await native.torch.embeddingBagAsync(weight.handle, ids.handle, offsets.handle, perSampleWeights?.handle ?? null));
}
/**
 * embeddingBag() over an int8 table [R, D] with one float32 scale per row (a compact export's
 * `scale.<name>`), inference only: out[b] = Σ w_j · scale[ids[j]] · table[ids[j]], each row
 * dequantised as it is read (a quarter of the float table's bytes), equal to embeddingBag() over
 * table.float() · scale[:, None]. ids, offsets and perSampleWeights as embeddingBag(); native/bag.cc.
 */
export function embeddingBagInt8(table: Tensor, scale: Tensor, ids: Tensor, offsets: Tensor, perSampleWeights?: Tensor | null): Tensor {
  return new Tensor(native.torch.embeddingBagInt8(table.handle, scale.handle, ids.handle, offsets.handle, perSampleWeights?.handle ?? null));
}
/** embeddingBagInt8() on a worker thread. */
export async function embeddingBagInt8Async(table: Tensor, scale: Tensor, ids: Tensor, offsets: Tensor, perSampleWeights?: Tensor | null): Promise<Tensor> {
  return new Tensor(await native.torch.embeddingBagInt8Async(table.handle, scale.handle, ids.handle, offsets.handle, perSampleWeights?.handle ?? null));
}
export function softmax(x: Tensor, dim: number): Tensor {
  return x.softmax(dim);
}
export function logSoftmax(x: Tensor, dim: number): Tensor {
  return x.logSoftmax(dim);
}

/** x / max(||x||_p, eps) along dim (torch.nn.functional.normalize). */
export function normalize(x: Tensor, dim = -1, p = 2, eps = 1e-12): Tensor {
  return tidy(() => x.div(x.norm(p, dim, true).clampMin(eps)));
}
export function cosineSimilarity(a: Tensor, b: Tensor, dim = 1, eps = 1e-8): Tensor {
  return callOp(ID.cosine, [a, b, dim, eps]) as Tensor;
}

export interface LstmOptions {
  numLayers: number;
  bidirectional: boolean;
  batchFirst: boolean;
  dropout: number; // between layers
  train: boolean;
  hasBiases?: boolean;
}

/**
 * The fused multi-layer LSTM (aten::lstm). params are, per layer and direction,
 * [w_ih, w_hh, b_ih, b_hh] (PyTorch's flat order). hx = [h0, c0], each [layers*dirs, B, H].
 * Returns [output, hN, cN].
 */
export function lstm(input: Tensor, hx: [Tensor, Tensor], params: Tensor[], o: LstmOptions): [Tensor, Tensor, Tensor] {
  return callOp(ID.lstm, [input, hx, params, o.hasBiases ?? true, o.numLayers, o.dropout, o.train, o.bidirectional, o.batchFirst]) as [Tensor, Tensor, Tensor];
}

/** Packed-sequence LSTM over (data, batchSizes) from packPaddedSequence. */
export function lstmPacked(
  data: Tensor,
  batchSizes: Tensor,
  hx: [Tensor, Tensor],
  params: Tensor[],
  o: Omit<LstmOptions, 'batchFirst'>,
): [Tensor, Tensor, Tensor] {
  return callOp(ID.lstmPacked, [data, batchSizes, hx, params, o.hasBiases ?? true, o.numLayers, o.dropout, o.train, o.bidirectional]) as [
    Tensor,
    Tensor,
    Tensor,
  ];
}

/**
 * The recurrence of one (bi)directional LSTM layer over precomputed input gates, as one autograd
 * node (native/lstm.cc). xg [T, B, D*4H] = x·W_ihᵀ + b_ih + b_hh per direction (gates i, f, g, o);
 * whh [D, 4H, H]; h0, c0 [D, B, H]; lengths: each row's real length (empty: all T). Steps past a
 * row's length keep its state and output `fill`; direction 1 runs backwards from each row's end.
 * Returns [output [T, B, D*H], hN [D, B, H], cN [D, B, H]].
 */
export function lstmRecurrence(xg: Tensor, whh: Tensor, h0: Tensor, c0: Tensor, lengths: ArrayLike<number>, fill = 0): [Tensor, Tensor, Tensor] {
  const r = native.torch.lstmRecurrence(xg.handle, whh.handle, h0.handle, c0.handle, Array.from(lengths), fill) as unknown[];
  return [new Tensor(r[0]), new Tensor(r[1]), new Tensor(r[2])];
}

/** Packs a padded batch whose lengths are sorted in decreasing order. lengths: int64 CPU tensor. */
export function packPaddedSequence(input: Tensor, lengths: Tensor, batchFirst: boolean): [Tensor, Tensor] {
  return callOp(ID.pack, [input, lengths, batchFirst]) as [Tensor, Tensor];
}
/** Inverse of packPaddedSequence: [padded, lengths]. */
export function padPackedSequence(data: Tensor, batchSizes: Tensor, batchFirst: boolean, paddingValue = 0, totalLength = -1): [Tensor, Tensor] {
  return callOp(ID.unpack, [data, batchSizes, batchFirst, paddingValue, totalLength]) as [Tensor, Tensor];
}

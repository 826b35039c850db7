// Typed wrappers of the addon's tensor kernels that are not ATen operators (file I/O straight into
// or out of a tensor's storage, the LSTM token-table encoder, SparseAdam, lazy zeros). Layers above
// src/tensor call these, never the addon itself.
import { native } from '../native.js';
import { DType, dtypeCode } from './dtype.js';
import { Tensor } from './tensor.js';

/** Reads bytes of a file at the given offsets into each tensor's storage (its whole byte size). */
export function readInto(path: string, targets: [Tensor, number][]): void {
  native.torch.readInto(path, placed(targets));
}

/** Tensors at byte offsets, as the addon takes them. */
function placed(list: [Tensor, number][]): [unknown, number][] {
  return list.map(([t, off]) => [t.handle, off]);
}

/** Writes each tensor's storage (contiguous) into an open file descriptor at the given offsets. */
export function writeFrom(fd: number, sources: [Tensor, number][]): void {
  native.torch.writeFrom(fd, placed(sources));
}

/** Fills t in place with N(mean, std²) from the torch generator, without autograd. */
export function fillNormal(t: Tensor, mean: number, std: number): void {
  native.torch.fillNormal(t.handle, mean, std);
}

/** Zeros whose pages are only touched when written (large optimiser state of sparse tables). */
export function zerosLazy(shape: number[], dtype: DType): Tensor {
  return new Tensor(native.torch.zerosLazy(shape, dtypeCode(dtype)));
}

/** One SparseAdam step over the rows that the gradient g touches (param, m, v updated in place). */
export function sparseAdamStep(param: Tensor, m: Tensor, v: Tensor, g: Tensor, lr: number, beta1: number, beta2: number, eps: number, step: number): void {
  native.torch.sparseAdamStep(param.handle, m.handle, v.handle, g.handle, lr, beta1, beta2, eps, step);
}

const handles = (ts: Tensor[]) => ts.map((t) => t.handle);

/** The addon's arguments of lstmTableEncode(Async). */
function lstmTableArgs(ids: Tensor, lens: number[], tables: Tensor[], whh: Tensor[], pooling: 'max' | 'last') {
  return [ids.handle, lens, handles(tables), handles(whh), pooling] as const;
}

/**
 * The LSTM encoder over per-token input tables (ids [B, T] sorted by decreasing length, lens,
 * one table and one W_hh per layer and direction): [B, dirs·H], max over time or final states.
 */
export function lstmTableEncode(...args: Parameters<typeof lstmTableArgs>): Tensor {
  return new Tensor(native.torch.lstmTableEncode(...lstmTableArgs(...args)));
}

/** lstmTableEncode on a libuv worker thread. */
export async function lstmTableEncodeAsync(...args: Parameters<typeof lstmTableArgs>): Promise<Tensor> {
  return new Tensor(await native.torch.lstmTableEncodeAsync(...lstmTableArgs(...args)));
}

/** The addon's arguments of lstmStackEncode(Async). */
function lstmStackArgs(ids: Tensor, lens: number[], emb: Tensor, weights: Tensor[], layers: number, bidirectional: boolean, pooling: 'max' | 'last') {
  return [ids.handle, lens, emb.handle, handles(weights), layers, bidirectional, pooling] as const;
}

/**
 * A multi-layer (bi)LSTM over embedded token ids on packed sequences, inference only (native
 * lstmStackEncode): ids [B, T] int32/int64 with rows sorted by decreasing length, emb [V, E], the
 * LSTM's weights in aten::lstm's flat order → [B, dirs·H], max over each row's steps or final states.
 */
export function lstmStackEncode(...args: Parameters<typeof lstmStackArgs>): Tensor {
  return new Tensor(native.torch.lstmStackEncode(...lstmStackArgs(...args)));
}

/** lstmStackEncode on a libuv worker thread. */
export async function lstmStackEncodeAsync(...args: Parameters<typeof lstmStackArgs>): Promise<Tensor> {
  return new Tensor(await native.torch.lstmStackEncodeAsync(...lstmStackArgs(...args)));
}

/** Activation codes of packedEncoderLayers. */
export type EncoderActivation = 'gelu' | 'gelu_tanh' | 'relu';
const ENCODER_ACTIVATION: Record<EncoderActivation, number> = { gelu: 0, gelu_tanh: 1, relu: 2 };

/** The addon's arguments of packedEncoderLayers(Async). */
function encoderLayerArgs(x: Tensor, lengths: number[], weights: Tensor[], heads: number, eps: number, activation: EncoderActivation) {
  return [x.handle, lengths, handles(weights), heads, eps, ENCODER_ACTIVATION[activation]] as const;
}

/**
 * Post-norm Transformer encoder layers over packed sequences (native/transformer.h): x [N, D] holds
 * the tokens of each sequence one after another (lengths sum to N; no padding), attention runs
 * within each sequence. Per layer 12 float32 weights: W_qkv [3D, D], b_qkv, W_o [D, D], b_o,
 * LN1 weight, LN1 bias, W_1 [F, D], b_1, W_2 [D, F], b_2, LN2 weight, LN2 bias; the four matrices
 * may all be bfloat16 instead (their products then take bfloat16-rounded activations, float32
 * accumulation). Inference only.
 */
export function packedEncoderLayers(...args: Parameters<typeof encoderLayerArgs>): Tensor {
  return new Tensor(native.torch.packedEncoderLayers(...encoderLayerArgs(...args)));
}

/** Whether this CPU multiplies bfloat16 natively (AVX512_BF16) through oneDNN; elsewhere bfloat16 weights are emulated, slower than float32. */
export function cpuHasBf16(): boolean {
  return native.torch.cpuHasBf16() as boolean;
}

/** packedEncoderLayers on a libuv worker thread (the event loop stays free). */
export async function packedEncoderLayersAsync(...args: Parameters<typeof encoderLayerArgs>): Promise<Tensor> {
  return new Tensor(await native.torch.packedEncoderLayersAsync(...encoderLayerArgs(...args)));
}

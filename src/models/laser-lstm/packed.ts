// The imported LASER BiLSTM's inference: every layer on packed sequences in one native call
// (lstmStackEncode: input GEMMs over real tokens only, as PyTorch's PackedSequence does, both
// directions side by side, max-pool fused into the last layer). Same vectors as LaserEncoder's
// forward (the padded path) to float rounding; one N-API call per batch.
import { LaserEncoder } from '../laser/model.js';
import { lstmStackEncode, lstmStackEncodeAsync } from '../../tensor/kernels.js';
import { fromArray, noGrad, Tensor } from '../../tensor/tensor.js';

interface PackedBatch {
  ids: Tensor;
  lengths: number[];
  inv: Tensor;
}

/** Rows in decreasing length (the kernel's order), ids [B, T] int32, and the inverse order. */
function packedBatch(seqs: ArrayLike<number>[]): PackedBatch {
  const order = seqs.map((_, i) => i).sort((a, b) => seqs[b]!.length - seqs[a]!.length || a - b);
  const lengths = order.map((i) => seqs[i]!.length);
  const T = Math.max(1, lengths[0] ?? 1);
  const buf = new Int32Array(seqs.length * T);
  order.forEach((i, r) => buf.set(seqs[i]!, r * T));
  const inv = new BigInt64Array(order.length);
  order.forEach((i, r) => {
    inv[i] = BigInt(r);
  });
  return { ids: fromArray(buf, [seqs.length, T]), lengths, inv: fromArray(inv) };
}

function args(net: LaserEncoder): [Tensor, Tensor[], number, boolean, 'max' | 'last'] {
  const c = net.cfg;
  return [net.embed.weight, net.lstm.flatWeights(), c.layers, c.bidirectional, c.pooling];
}

/** The kernel's rows [n, dim] back in input order (the kernel's output is disposed of). */
function inputOrder(b: PackedBatch, out: Tensor): Tensor {
  try {
    return noGrad(() => out.indexSelect(0, b.inv));
  } finally {
    out.dispose();
  }
}

/** Sentence vectors [n, dim] (input order) of token-id sequences. */
export function encodePacked(net: LaserEncoder, seqs: ArrayLike<number>[]): Tensor {
  const b = packedBatch(seqs);
  try {
    return inputOrder(b, lstmStackEncode(b.ids, b.lengths, ...args(net)));
  } finally {
    b.ids.dispose();
    b.inv.dispose();
  }
}

/** encodePacked() on a libuv worker thread. */
export async function encodePackedAsync(net: LaserEncoder, seqs: ArrayLike<number>[]): Promise<Tensor> {
  const b = packedBatch(seqs);
  try {
    return inputOrder(b, await lstmStackEncodeAsync(b.ids, b.lengths, ...args(net)));
  } finally {
    b.ids.dispose();
    b.inv.dispose();
  }
}

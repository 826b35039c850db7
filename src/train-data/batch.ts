// Token batches shared by every model family: right-padded id matrices and length-sorted
// batching of variable-length sequences.
import { fromArray, Tensor } from '../tensor/tensor.js';

/** A batch of token ids, right-padded: ids [B, T] int64 plus each row's real length. */
export interface TokenBatch {
  ids: Tensor;
  lengths: number[];
}

/** Pads int sequences into a [B, T] int64 tensor (prefix: an id put before each sequence). */
export function padBatch(seqs: ArrayLike<number>[], padId = 0, prefix?: number): TokenBatch {
  const extra = prefix === undefined ? 0 : 1;
  const lengths = seqs.map((s) => s.length + extra);
  const T = Math.max(1, ...lengths);
  const buf = new BigInt64Array(seqs.length * T).fill(BigInt(padId));
  seqs.forEach((s, i) => {
    let o = i * T;
    if (prefix !== undefined) buf[o++] = BigInt(prefix);
    for (let j = 0; j < s.length; j++) buf[o + j] = BigInt(s[j]!);
  });
  return { ids: fromArray(buf, [seqs.length, T]), lengths };
}

/**
 * Input indices grouped into batches: sorted by length, each batch capped by sentences and by
 * padded tokens (ascending order: a batch's longest sentence is its last one).
 */
export function lengthBatches(seqs: ArrayLike<number>[], maxTokens: number, maxSentences: number): number[][] {
  const order = Array.from({ length: seqs.length }, (_, i) => i).sort((a, b) => seqs[a]!.length - seqs[b]!.length);
  const batches: number[][] = [];
  let i = 0;
  while (i < order.length) {
    let j = i + 1;
    while (j < order.length && j - i < maxSentences && seqs[order[j]!]!.length * (j - i + 1) <= maxTokens) j++;
    batches.push(order.slice(i, j));
    i = j;
  }
  return batches;
}

// What every model family gives for inference: token-id sequences in, sentence vectors out.
// Embedding, centring, validation, mining and the CLI use only this (src/embed/model.ts adds
// the tokenizer, batching, normalisation and centring on top).
import { normalize } from '../tensor/ops.js';
import { noGrad, Tensor, tidy } from '../tensor/tensor.js';

export interface SentenceEncoder {
  /** Width of the sentence vectors. */
  readonly dim: number;
  /**
   * Vectors [n, dim] (not normalised) of a batch of token-id sequences (each as the family's
   * tokenizer returns it), in inference mode: no gradient, no dropout.
   */
  encode(seqs: Int32Array[]): Tensor;
  /** encode() with the heavy kernels on a worker thread (the event loop keeps serving). */
  encodeAsync(seqs: Int32Array[]): Promise<Tensor>;
  /**
   * A faster encoder for a job of `tokens` tokens when the model has one (e.g. input projections
   * precomputed per vocabulary entry); null when it does not pay (force: whenever the model has
   * one). Same vectors to float rounding; a snapshot of the weights, disposed after the job.
   */
  fastPath?(job: { tokens: number; force?: boolean }): (SentenceEncoder & { dispose(): void }) | null;
  /**
   * Batch limits that suit this encoder (padded tokens, sentences per batch); default 32000 and
   * 4096, for token sequences. Bags of hashed features (hundreds of ids a sentence, no padding)
   * want far larger batches. unpadded: the encoder pads nothing (one bag per sentence), so a
   * batch costs its total tokens whatever the lengths: the embed path then batches sentences in
   * input order (maxTokens caps the total) instead of sorting them by length.
   */
  readonly batchLimits?: { maxTokens: number; maxSentences: number; unpadded?: boolean };
}

/**
 * The encoder's vectors of a batch as plain float32 rows (n × dim, not normalised): what the embed
 * path (src/embed) takes from an encoder; tensors stay on this side of the interface.
 */
export function encodeRows(enc: SentenceEncoder, seqs: Int32Array[], l2normalize = false, into?: Float32Array): Float32Array {
  // l2normalize: the embed path's normaliser (src/embed/vectors.ts l2normalizeRows, the same torch
  // op on the same values, so the same bits) applied before the rows leave the tensor: two copies
  // fewer per batch, which the bag-of-n-grams models' ~10k sentences/s notice
  return noGrad(() => tidy(() => { const v = enc.encode(seqs); return rowsOf(l2normalize ? normalize(v, 1) : v, into); }));
}

/** encodeRows() with the heavy kernels on a worker thread (SentenceEncoder.encodeAsync); the normalisation as there. */
export async function encodeRowsAsync(enc: SentenceEncoder, seqs: Int32Array[], l2normalize = false, into?: Float32Array): Promise<Float32Array> {
  const v = await enc.encodeAsync(seqs);
  try { return noGrad(() => tidy(() => rowsOf(l2normalize ? normalize(v, 1) : v, into))); } finally { v.dispose(); }
}

/** A tensor's rows as float32: written into `into` (exactly their size: e.g. the caller's output block), or a new array. */
function rowsOf(v: Tensor, into?: Float32Array): Float32Array {
  if (!into) return v.toFloat32Array();
  v.copyInto(into);
  return into;
}

/** Runs fn with a module in eval mode and restores its previous mode. */
export function inEvalMode<T>(m: { training: boolean; train(mode?: boolean): unknown }, fn: () => T): T {
  const was = m.training;
  m.train(false);
  try { return fn(); } finally { m.train(was); }
}

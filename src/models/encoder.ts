// What every model family gives for inference: token-id sequences in, sentence vectors out, as
// plain float32 rows. Embedding, centring, validation, mining, the server and the CLI use only this
// (src/embed/model.ts adds the tokenizer, batching, normalisation and centring on top); no tensor
// crosses this interface. Families that compute with libtorch implement it through TensorEncoder
// (./tensor-encoder.ts); a runtime without libtorch can implement it directly.

export interface EncodeOptions {
  /**
   * L2-normalise each row before it is handed over (the embed path's normaliser: the same
   * arithmetic as src/embed/vectors.ts l2normalizeRows, so the same bits).
   */
  normalize?: boolean;
  /**
   * Write the rows into this array (exactly `seqs.length × dim` floats, e.g. the caller's block of
   * its output) and return it, instead of a new array. An encoder may ignore it and return a new
   * array: callers check which they got.
   */
  into?: Float32Array;
}

export interface SentenceEncoder {
  /** Width of the sentence vectors. */
  readonly dim: number;
  /**
   * Vectors of a batch of token-id sequences (each as the kind's tokenizer returns it), in
   * inference mode (no gradient, no dropout): `seqs.length` rows of `dim` floats, row-major, not
   * normalised unless asked.
   */
  encode(seqs: Int32Array[], o?: EncodeOptions): Float32Array;
  /** encode() with the heavy kernels on a worker thread (the event loop keeps serving). */
  encodeAsync(seqs: Int32Array[], o?: EncodeOptions): Promise<Float32Array>;
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

/** Runs fn with a module in eval mode and restores its previous mode. */
export function inEvalMode<T>(m: { training: boolean; train(mode?: boolean): unknown }, fn: () => T): T {
  const was = m.training;
  m.train(false);
  try {
    return fn();
  } finally {
    m.train(was);
  }
}

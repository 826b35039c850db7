// What models need from a tokenizer (implemented by src/text/tokenizer.ts).
export interface TextTokenizer {
  readonly vocabSize: number;
  readonly padId: number;
  readonly unkId: number;
  readonly bosId: number;
  readonly eosId: number;
  /** Normalised, tokenised ids ending with EOS, at most maxLen ids. */
  encode(s: string): Int32Array;
  /** encode() of many inputs at once, for tokenizers with a per-call cost (same ids). */
  encodeBatch?(s: string[]): Int32Array[];
  /** Inputs encode() cut to the model's maximum length so far (a count for one warning per job). */
  readonly truncated?: number;
  /** The most ids encode() returns for one input (longer inputs are cut). */
  readonly maxLength?: number;
  /**
   * An input's size in the model's own input units, where they are not the ids (a bag of hashed
   * character n-grams: the characters it reads, after normalisation and the cut); absent: the ids.
   */
  inputUnits?(s: string): number;
}

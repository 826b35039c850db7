// A sentence encoder ready for embedding: any family's SentenceEncoder, its tokenizer and the
// per-language mean vectors of the model. Embeds in length-sorted batches capped by tokens and
// returns L2-normalised float32 rows in input order. Every command (and the server) embeds
// through this class, so the same text gets the same vector whichever command embeds it.
import { lengthBatches } from '../train-data/batch.js';
import { SentenceEncoder } from '../models/encoder.js';
import { TextTokenizer } from '../text/text-tokenizer.js';
import { LanguageIdentifier } from '../text/lid.js';
import { CenterOptions, CenterPlan, CenterPolicy, finishRows, AUTO, PER_SENTENCE } from '../util/embed-policy.js';
import { centerEachRow, l2normalizeRows } from './vectors.js';

export { lengthBatches };
export type { CenterChoice } from '../util/embed-policy.js';

export interface EmbedOptions extends CenterOptions {
  maxTokens?: number;
  maxSentences?: number;
  normalize?: boolean;
  onBatch?: (done: number) => void;
  /**
   * Language of the sentences: with `center` (default on), the model's mean vector of that
   * language is subtracted. 'auto': identified from the sentences themselves (identifyLanguage:
   * the model's language identifier over a spread sample; inputs of one language);
   * 'auto-per-sentence': each sentence identified on its own. An identified language is used
   * only with a confidence of at least LID_CONFIDENCE; otherwise nothing is centred (the rule:
   * src/util/embed-policy.ts, shared with xling/lite).
   */
  lang?: string;
  /** The encoder's fast inference path (e.g. LASER's token tables): 'auto' when it pays for the job. */
  fastPath?: 'auto' | boolean;
}

/** Options with the centring decided (CenterPolicy.centerPlan). */
type Planned = EmbedOptions & { plan?: CenterPlan };

/**
 * A model ready to embed text: the encoder, its tokenizer, and the centring policy (mean vectors,
 * language identifier, the rule: CenterPolicy, the same class xling/lite's model is).
 */
export class SentenceEncoderModel extends CenterPolicy<LanguageIdentifier> {
  constructor(
    readonly encoder: SentenceEncoder,
    readonly tokenizer: TextTokenizer,
    /** Per-language mean vectors (see centering.ts); empty for models without them. */
    centers: Map<string, Float32Array> = new Map(),
    /** The model directory's config.json, when loaded from one. */
    readonly config: unknown = null,
    /** The model's language identifier (lid.json), null when it has none. */
    lid: LanguageIdentifier | null = null,
  ) {
    super(centers, lid);
  }
  get dim(): number {
    return this.encoder.dim;
  }
  /** The arithmetic of the encoder's large matrices as loaded ('bf16': loadSentenceEncoder's precision option). */
  precision: 'fp32' | 'bf16' = 'fp32';

  /** Options with the centring decided over the sentences ('auto' identified, 'auto-per-sentence' per sentence). */
  private resolve(sentences: string[], o: EmbedOptions): Planned {
    return { ...o, plan: this.centerPlan(sentences, o) };
  }

  /** The plan of options given to embedIds: decided already, or a language code's (no text to identify: 'auto' centres nothing). */
  private planOf(o: Planned): CenterPlan {
    if (o.plan !== undefined) return o.plan;
    return !o.lang || o.lang === AUTO || o.lang === PER_SENTENCE ? null : this.chooseCenter(o.lang, o.center).lang;
  }

  private fastFor(seqs: ArrayLike<number>[], o: Planned): (SentenceEncoder & { dispose(): void }) | null {
    const want = o.fastPath ?? 'auto';
    if (want === false || !this.encoder.fastPath) return null;
    let tokens = 0;
    for (const s of seqs) tokens += s.length;
    return this.encoder.fastPath({ tokens, force: want === true });
  }

  /** Embeds token sequences; rows in input order. */
  embedIds(seqs: Int32Array[], o: Planned = {}): Float32Array {
    o = { ...o, plan: this.planOf(o) };
    const out = new Float32Array(seqs.length * this.dim);
    const fast = this.fastFor(seqs, o);
    const enc = fast ?? this.encoder;
    try {
      let done = 0;
      const norm = this.normalizes(o);
      for (const idx of this.batches(seqs, o)) {
        const block = this.outputBlock(idx, out, o);
        const rows = enc.encode(
          idx.map((k) => seqs[k]!),
          { normalize: norm, into: block ?? undefined },
        );
        if (!block) this.finishBatch(rows, idx, out, o, norm);
        else if (rows !== block) block.set(rows);
        done += idx.length;
        o.onBatch?.(done);
      }
    } finally {
      fast?.dispose();
    }
    return out;
  }

  /**
   * embed() whose heavy kernels run on a worker thread: for servers, the event loop stays
   * responsive while a batch is encoded. Same batches and post-processing as embed().
   */
  async embedAsync(sentences: string[], o: EmbedOptions = {}): Promise<Float32Array> {
    const r = this.resolve(sentences, o);
    const seqs = this.tokenize(sentences);
    const out = new Float32Array(seqs.length * this.dim);
    const fast = this.fastFor(seqs, r);
    const enc = fast ?? this.encoder;
    try {
      let done = 0;
      const norm = this.normalizes(r);
      for (const idx of this.batches(seqs, r)) {
        const block = this.outputBlock(idx, out, r);
        const rows = await enc.encodeAsync(
          idx.map((k) => seqs[k]!),
          { normalize: norm, into: block ?? undefined },
        );
        if (!block) this.finishBatch(rows, idx, out, r, norm);
        else if (rows !== block) block.set(rows);
        done += idx.length;
        r.onBatch?.(done);
      }
    } finally {
      fast?.dispose();
    }
    return out;
  }

  /**
   * The block of `out` a batch's rows go to as the encoder gives them (normalised in the tensor
   * or not at all), when the batch is a run in input order (inputOrderBatches) and nothing is
   * centred: finishBatch would only copy them; null otherwise.
   */
  private outputBlock(idx: number[], out: Float32Array, o: Planned): Float32Array | null {
    if (!idx.length || this.planOf(o) !== null || idx[idx.length - 1]! - idx[0]! !== idx.length - 1 || !isAscending(idx)) return null;
    return out.subarray(idx[0]! * this.dim, (idx[0]! + idx.length) * this.dim);
  }

  /** Whether the encoder L2-normalises a batch's rows (asked, or centred). */
  private normalizes(o: Planned): boolean {
    return o.normalize !== false || this.planOf(o) !== null;
  }

  /**
   * Batches of row indices, capped by the options' or the encoder's limits: length-sorted, or for
   * an encoder that pads nothing (batchLimits.unpadded) consecutive runs in input order.
   */
  private batches(seqs: Int32Array[], o: Planned): number[][] {
    const lim = this.encoder.batchLimits;
    const maxTokens = o.maxTokens ?? lim?.maxTokens ?? 32000,
      maxSentences = o.maxSentences ?? lim?.maxSentences ?? 4096;
    return lim?.unpadded ? inputOrderBatches(seqs, maxTokens, maxSentences) : lengthBatches(seqs, maxTokens, maxSentences);
  }

  /**
   * The embed path's post-processing of one batch's encoder rows (plain float32, finishRows of
   * src/util/embed-policy.ts with torch's normaliser): L2-normalised (when asked or centred), each row's
   * language mean subtracted and normalised again (centring), then written to `out` at the rows'
   * input positions.
   */
  private finishBatch(rows: Float32Array, idx: number[], out: Float32Array, o: Planned, normalized = false): void {
    const d = this.dim,
      plan = this.planOf(o);
    finishRows(rows, d, this.meansOf(plan, idx), o.normalize !== false, normalized, l2normalizeRows);
    // a run in input order (inputOrderBatches) is one block of the output
    if (idx.length && idx[idx.length - 1]! - idx[0]! === idx.length - 1 && isAscending(idx)) out.set(rows.subarray(0, idx.length * d), idx[0]! * d);
    else idx.forEach((k, r) => out.set(rows.subarray(r * d, (r + 1) * d), k * d));
  }

  /** Token ids of each sentence (in one call where the tokenizer encodes batches). */
  tokenize(sentences: string[]): Int32Array[] {
    const t = this.tokenizer;
    return t.encodeBatch ? t.encodeBatch(sentences) : sentences.map((s) => t.encode(s));
  }

  embed(sentences: string[], o: EmbedOptions = {}): Float32Array {
    return this.embedIds(this.tokenize(sentences), this.resolve(sentences, o));
  }
}

export { centerEachRow };

function isAscending(a: number[]): boolean {
  for (let i = 1; i < a.length; i++) if (a[i]! <= a[i - 1]!) return false;
  return true;
}

/**
 * Consecutive runs of row indices in input order, each at most maxSentences rows and maxTokens
 * tokens in total (a longer sentence alone): batches for encoders that pad nothing.
 */
export function inputOrderBatches(seqs: ArrayLike<number>[], maxTokens: number, maxSentences: number): number[][] {
  const out: number[][] = [];
  let i = 0;
  while (i < seqs.length) {
    let j = i + 1,
      tokens = seqs[i]!.length;
    while (j < seqs.length && j - i < maxSentences && tokens + seqs[j]!.length <= maxTokens) tokens += seqs[j++]!.length;
    out.push(Array.from({ length: j - i }, (_, k) => i + k));
    i = j;
  }
  return out;
}

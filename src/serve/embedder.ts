// The server's one way to vectors: request inputs (texts or token ids) tokenized under the request
// limits, pooled by the dynamic batcher (batcher.ts) with the other requests' inputs, identified on
// worker threads when each input is centred by its own language (identify.ts), and the batch's rows
// normalised and centred in one pass. Vectors are as `xling embed` makes them, and an input's
// vector never depends on what else its request or batch holds.
import type { FastifyReply } from 'fastify';
import { centerEachRow, l2normalizeRows } from '../embed/vectors.js';
import { AUTO, LID_CONFIDENCE, PER_SENTENCE, resolveLangOption } from '../embed/language.js';
import { SentenceEncoderModel } from '../embed/model.js';
import { SentenceEncoder } from '../models/encoder.js';
import type { TextTokenizer } from '../text/text-tokenizer.js';
import { BatchPart, BatchStats, DynamicBatcher } from './batcher.js';
import { Identified, LanguageIdentification } from './identify.js';
import { HttpError } from './http-error.js';
import { SERVE_DEFAULTS } from './settings.js';

/** What a request asks of its vectors. */
export interface VectorQuery {
  truncate?: boolean;
  normalize?: boolean;
  lang?: string | null;
  center?: boolean;
  signal?: AbortSignal;
  /** The request's field holding the inputs ('inputs' as TEI, 'input' as OpenAI), named in errors. */
  field?: string;
}

export interface Embedder {
  /** The model's dimension. */
  readonly d: number;
  /** The model's input length in tokens (null: unbounded). */
  readonly maxInputLength: number | null;
  /** The batcher's token budget. */
  readonly maxBatchTokens: number;
  /** The server's default language ('auto', a code, or null: none). */
  readonly defaultLang: string | null;
  /** Sentences waiting for a batch. */
  readonly queueDepth: number;
  /**
   * Vectors of the inputs, normalised (unless normalize: false) and centred with a language's
   * mean vector — the request's `lang` (checked: an unknown code is 422), else the server's; 'auto'
   * identifies each input on its own (centred only with a confidence of at least LID_CONFIDENCE).
   * lang null: no centring. Given a reply, its `x-xling-lang` header lists each input's centring
   * language ('none' where not centred) and `x-xling-center` says why nothing is; given `counted`,
   * its tokens are set to the inputs' size in the model's input units (inputUnits).
   */
  vectors(inputs: (string | number[])[], q: VectorQuery, reply?: FastifyReply, counted?: { tokens: number }): Promise<Float32Array>;
  close(): Promise<void>;
}

export interface EmbedderOptions {
  maxBatchTokens?: number;
  maxClientBatchSize: number;
  autoTruncate: boolean;
  lang?: string | null;
  center?: boolean;
  onBatch?: (s: BatchStats) => void;
}

/** A request's rows as the batch's post-processing leaves them: what it asked for, and each input's centring language once decided. */
interface RowPlan {
  normalize: boolean;
  center: boolean;
  /** Inputs identified one by one ('auto'); otherwise every input's centring language is `fixed`. */
  perSentence: boolean;
  fixed: string | null;
  langs?: (string | null)[];
}

/** The centring rule for the server's life: per identified input, and per request's options (remembered). */
interface CentringRules {
  /** The centring language of an identified input (null: none). */
  centreOf(id: Identified | null, center: boolean): string | null;
  /** The rule for a request's language (after resolveLangOption) and centring option. */
  forRequest(lang: string | null, center: boolean): ReturnType<SentenceEncoderModel['chooseCenter']>;
}

function centringRules(model: SentenceEncoderModel): CentringRules {
  // The centring rule (model.chooseCenter) for an identified input: its answer depends on the
  // identification only through its language and whether its confidence reaches LID_CONFIDENCE,
  // so it is asked once per (center, language, sure) and remembered (the rule also weighs the
  // mean vectors' norms: not per sentence).
  const ruled = new Map<string, string | null>();
  // and the rule for a request's language and centring options (the same answer for the server's life)
  const requestRule = new Map<string, ReturnType<SentenceEncoderModel['chooseCenter']>>();
  return {
    centreOf(id, center) {
      if (!id) return null;
      const key = `${center ? 1 : 0}${id.confidence >= LID_CONFIDENCE ? 1 : 0}${id.lang}`;
      let l = ruled.get(key);
      if (l === undefined) ruled.set(key, (l = model.chooseCenter(PER_SENTENCE, center, id).lang));
      return l;
    },
    forRequest(lang, center) {
      const auto = lang === AUTO || lang === PER_SENTENCE;
      const key = `${center ? 1 : 0}${lang ?? ''}`;
      let whole = requestRule.get(key);
      if (!whole) requestRule.set(key, (whole = auto ? model.chooseCenter(lang, center, { lang: '', confidence: 1 }) : model.chooseCenter(lang, center)));
      return whole;
    },
  };
}

/** A batch's rows: normalised (those that ask or are centred) and centred in one pass each. */
function batchFinisher(model: SentenceEncoderModel, rules: CentringRules) {
  const d = model.dim;
  return (rows: Float32Array, parts: BatchPart<RowPlan>[], normalized: boolean) => {
    for (const p of parts) {
      const m = p.meta,
        n = p.rows.length / d;
      m.langs = m.perSentence && p.identified ? p.identified.map((id) => rules.centreOf(id, m.center)) : Array<string | null>(n).fill(m.fixed);
    }
    const normalizes = (p: BatchPart<RowPlan>) => p.meta.normalize || p.meta.langs!.some((l) => l);
    if (!normalized) {
      if (parts.every(normalizes)) l2normalizeRows(rows, d);
      else for (const p of parts) if (normalizes(p)) l2normalizeRows(p.rows, d);
    }
    const mus = (p: BatchPart<RowPlan>) => p.meta.langs!.map((l) => (l ? model.centers.get(l)! : null));
    if (parts.every((p) => p.meta.normalize)) centerEachRow(rows, d, parts.flatMap(mus), true);
    else for (const p of parts) centerEachRow(p.rows, d, mus(p), p.meta.normalize);
  };
}

/** Token ids of a request's input given as ids: checked against the vocabulary, cut or refused (413) over the length limit. */
function idsInput(s: number[], i: number, vocabSize: number, maxInputLength: number | null, truncate: boolean): Int32Array {
  if (!s.length) throw new HttpError(422, `Input validation error: input ${i} has no token ids`, 'Validation');
  const bad = s.findIndex((t) => !Number.isInteger(t) || t < 0 || t >= vocabSize);
  if (bad >= 0)
    throw new HttpError(422, `Input validation error: input ${i}: token id ${s[bad]} is not in the model's vocabulary [0, ${vocabSize})`, 'Validation');
  if (maxInputLength !== null && s.length > maxInputLength) {
    if (!truncate)
      throw new HttpError(413, `Input validation error: input ${i} is longer than ${maxInputLength} tokens (send truncate: true to cut it)`, 'Validation');
    return Int32Array.from(s.slice(0, maxInputLength));
  }
  return Int32Array.from(s);
}

/**
 * An input's size in the model's input units, as `usage` counts them: its tokens (token ids
 * given, or the ids a vocabulary's tokenizer makes, special ones included), or for a model whose
 * tokenizer says otherwise (a bag of character n-grams: the characters it reads) that count.
 */
function inputUnits(tok: TextTokenizer, input: string | number[], ids: Int32Array): number {
  return typeof input === 'string' && tok.inputUnits ? tok.inputUnits(input) : ids.length;
}

/**
 * Token ids of the inputs (texts, or token ids as the model's tokenizer makes them); an input over
 * the model's length limit is cut (truncate) or refused (413): one rule on every route.
 */
function tokenizeInputs(tok: TextTokenizer, maxClientBatchSize: number, inputs: (string | number[])[], truncate: boolean, field: string): Int32Array[] {
  if (inputs.length > maxClientBatchSize)
    throw new HttpError(413, `batch size ${inputs.length} > maximum allowed batch size ${maxClientBatchSize}`, 'Validation');
  if (!inputs.length) throw new HttpError(422, `Input validation error: \`${field}\` cannot be empty`, 'Empty');
  const maxInputLength = tok.maxLength ?? null;
  return inputs.map((s, i) => {
    // an empty string has no input to embed (OpenAI and TEI refuse it too)
    if (s === '')
      throw new HttpError(422, `Input validation error: \`${field}\` cannot hold an empty string${inputs.length > 1 ? ` (input ${i})` : ''}`, 'Empty');
    if (typeof s !== 'string') return idsInput(s, i, tok.vocabSize, maxInputLength, truncate);
    const before = tok.truncated ?? 0;
    const ids = tok.encode(s);
    if (!truncate && (tok.truncated ?? 0) > before)
      throw new HttpError(413, `Input validation error: input ${i} is longer than ${maxInputLength} tokens (send truncate: true to cut it)`, 'Validation');
    return ids;
  });
}

/** What a request asks of its rows: normalised or not, and the centring language of every input or of each (RowPlan). */
function rowPlanOf(whole: ReturnType<SentenceEncoderModel['chooseCenter']>, lang: string | null, center: boolean, normalize: boolean): RowPlan {
  // nothing centred (off, no means, negligible means, no identifier), one language for all, or
  // each text identified on its own in the batch (token-id inputs have no text: not centred)
  const auto = lang === AUTO || lang === PER_SENTENCE;
  const none = !!whole.reason && whole.reason !== 'no-mean-for-language';
  return { normalize, center, perSentence: !none && auto, fixed: none || auto ? null : whole.lang };
}

export function createEmbedder(model: SentenceEncoderModel, o: EmbedderOptions): Embedder {
  const tok = model.tokenizer;
  // a server's model never changes: its fast inference path (if any) is built once
  const encoder: SentenceEncoder = model.encoder.fastPath?.({ tokens: Infinity, force: true }) ?? model.encoder;
  // the token budget of a batch: for encoders that read unpadded bags of features (the averaging
  // dual encoder: a "token" is one of a sentence's ~300 n-gram features), 16 times the default
  const maxBatchTokens = o.maxBatchTokens ?? (encoder.batchLimits ? 16 * SERVE_DEFAULTS.maxBatchTokens : SERVE_DEFAULTS.maxBatchTokens);
  // the server's default language (--lang): 'auto' (each input identified on its own), a code, or null (none)
  const defaultLang = resolveLangOption(o.lang, model.languages, '--lang');
  const rules = centringRules(model);
  const lid = model.lid ? new LanguageIdentification(model.lid) : null;
  const batcher = new DynamicBatcher<RowPlan>(encoder, maxBatchTokens, 4096, o.onBatch, {
    identify: lid ? (texts) => lid.identify(texts) : undefined,
    finish: batchFinisher(model, rules),
    normalizes: (m) => m.normalize,
  });

  async function vectors(inputs: (string | number[])[], q: VectorQuery, reply?: FastifyReply, counted?: { tokens: number }): Promise<Float32Array> {
    let lang: string | null;
    try {
      lang = q.lang === undefined ? defaultLang : resolveLangOption(q.lang, model.languages, 'lang');
    } catch (e) {
      throw new HttpError(422, `Input validation error: ${(e as Error).message}`, 'Validation');
    }
    const seqs = tokenizeInputs(tok, o.maxClientBatchSize, inputs, q.truncate ?? o.autoTruncate, q.field ?? 'inputs');
    if (counted) counted.tokens = seqs.reduce((a, s, i) => a + inputUnits(tok, inputs[i]!, s), 0);
    const center = q.center ?? o.center ?? true;
    const whole = rules.forRequest(lang, center);
    const plan = rowPlanOf(whole, lang, center, q.normalize !== false);
    const { rows } = await batcher.embed(seqs, {
      signal: q.signal,
      meta: plan,
      texts: plan.perSentence ? inputs.map((t) => (typeof t === 'string' ? t : null)) : null,
    });
    const langs = plan.langs!;
    reply?.header('x-xling-lang', langs.map((l) => l ?? 'none').join(','));
    if (!langs.some((l) => l))
      reply?.header(
        'x-xling-center',
        whole.reason ?? (lang === null ? 'no-language' : lang === AUTO || lang === PER_SENTENCE ? 'unsure' : 'no-mean-for-language'),
      );
    return rows;
  }

  return {
    d: model.dim,
    maxInputLength: tok.maxLength ?? null,
    maxBatchTokens,
    defaultLang,
    vectors,
    get queueDepth() {
      return batcher.queueDepth;
    },
    async close() {
      (encoder as { dispose?: () => void }).dispose?.();
      await lid?.close();
    },
  };
}

// Sentence-pair routes of xling serve: POST /similarity (cosine similarity of pairs of texts, or
// TEI's {inputs: {source_sentence, sentences}}) and POST /mine (parallel sentences between two
// small lists, with the margin scoring and retrieval of xling mine; its work is bounded by
// SERVE_LIMITS).
import type { FastifyPluginCallback, FastifyRequest } from 'fastify';
import { MarginKind, mine, Retrieval } from '../../mine/mine.js';
import { HttpError } from '../http-error.js';
import { signalOf } from '../plugins/limits.js';
import { SERVE_LIMITS } from '../settings.js';
import { RouteOptions, ServeContext, xlingFields } from '../context.js';

const similaritySchema = {
  description: "Cosine similarity: pairs of texts, or TEI's {inputs: {source_sentence, sentences}}",
  tags: ['xling'],
  body: {
    type: 'object',
    properties: {
      pairs: { type: 'array', items: { type: 'array', items: { type: 'string' }, minItems: 2, maxItems: 2 } },
      inputs: {
        type: 'object',
        required: ['source_sentence', 'sentences'],
        properties: { source_sentence: { type: 'string' }, sentences: { type: 'array', items: { type: 'string' } } },
      },
      truncate: { type: 'boolean' },
      ...xlingFields,
    },
  },
};

interface SimilarityBody {
  pairs?: [string, string][];
  inputs?: { source_sentence: string; sentences: string[] };
  truncate?: boolean;
  lang?: string | null;
  center?: boolean;
}

/** POST /similarity: each pair's cosine, every distinct text embedded once. */
async function similarity({ embedder }: ServeContext, req: FastifyRequest): Promise<number[]> {
  const b = req.body as SimilarityBody,
    d = embedder.d;
  const pairs = b.pairs ?? b.inputs?.sentences.map((t) => [b.inputs!.source_sentence, t] as [string, string]);
  if (!pairs) throw new HttpError(422, 'give pairs: [[a, b], …] or inputs: {source_sentence, sentences}', 'Validation');
  const texts = [...new Set(pairs.flat())];
  const field = b.pairs ? 'pairs' : 'inputs';
  const v = await embedder.vectors(texts, { truncate: b.truncate, normalize: true, lang: b.lang, center: b.center, signal: signalOf(req), field });
  const at = new Map(texts.map((t, i) => [t, i]));
  return pairs.map(([a, c]) => {
    const i = at.get(a)!,
      j = at.get(c)!;
    let dot = 0;
    for (let k = 0; k < d; k++) dot += v[i * d + k]! * v[j * d + k]!;
    return dot;
  });
}

const mineSchema = {
  description: 'Parallel sentences between two small lists, with the margin scoring and retrieval of xling mine',
  tags: ['xling'],
  body: {
    type: 'object',
    required: ['src', 'trg'],
    properties: {
      src: { type: 'array', items: { type: 'string' }, minItems: 1 },
      trg: { type: 'array', items: { type: 'string' }, minItems: 1 },
      k: { type: 'integer', minimum: 1, maximum: SERVE_LIMITS.mineK, default: 4 },
      margin: { type: 'string', enum: ['ratio', 'distance', 'absolute', 'eq9', 'eq10'], default: 'ratio' },
      retrieval: { type: 'string', enum: ['fwd', 'bwd', 'intersect', 'max'], default: 'max' },
      threshold: { type: 'number' },
      src_lang: { type: ['string', 'null'] },
      trg_lang: { type: ['string', 'null'] },
    },
  },
};

interface MineBody {
  src: string[];
  trg: string[];
  k?: number;
  margin?: MarginKind;
  retrieval?: Retrieval;
  threshold?: number;
  src_lang?: string | null;
  trg_lang?: string | null;
}

/** The request's sentences and k within SERVE_LIMITS (413 otherwise). */
function checkMineWork(b: MineBody, maxClientBatchSize: number): void {
  const limit = maxClientBatchSize * 32;
  if (b.src.length > limit || b.trg.length > limit) throw new HttpError(413, `at most ${limit} sentences per side`, 'Validation');
  const work = (b.src.length + b.trg.length) * (b.k ?? 4);
  if (work > SERVE_LIMITS.mineWork)
    throw new HttpError(413, `(src + trg sentences) × k = ${work} > ${SERVE_LIMITS.mineWork}: send fewer sentences or a smaller k`, 'Validation');
}

/** One side's vectors, embedded in requests of at most maxClientBatchSize inputs. */
async function embedSide({ embedder, settings: s }: ServeContext, texts: string[], lang: string | null | undefined, field: string, signal?: AbortSignal) {
  const d = embedder.d,
    out = new Float32Array(texts.length * d);
  for (let i = 0; i < texts.length; i += s.maxClientBatchSize)
    out.set(await embedder.vectors(texts.slice(i, i + s.maxClientBatchSize), { truncate: true, normalize: true, lang, signal, field }), i * d);
  return out;
}

/** POST /mine: both lists embedded, then mined as xling mine does. */
async function minePairs(ctx: ServeContext, req: FastifyRequest) {
  const b = req.body as MineBody;
  checkMineWork(b, ctx.settings.maxClientBatchSize);
  const signal = signalOf(req);
  const sv = await embedSide(ctx, b.src, b.src_lang, 'src', signal),
    tv = await embedSide(ctx, b.trg, b.trg_lang, 'trg', signal);
  if (signal?.aborted) throw new HttpError(503, 'the request was cancelled', 'Timeout');
  const k = Math.min(b.k ?? 4, b.src.length, b.trg.length);
  const cands = mine(sv, tv, ctx.embedder.d, { k, margin: b.margin ?? 'ratio', retrieval: b.retrieval ?? 'max', threshold: b.threshold });
  return { k, pairs: cands.map((c) => ({ src: c.src, trg: c.trg, score: c.score, cos: c.cos, src_text: b.src[c.src], trg_text: b.trg[c.trg] })) };
}

export const pairRoutes: FastifyPluginCallback<RouteOptions> = (app, { ctx }, done) => {
  app.post('/similarity', { schema: similaritySchema }, async (req) => similarity(ctx, req));
  app.post('/mine', { schema: mineSchema }, async (req) => minePairs(ctx, req));
  done();
};

// The embedding routes of xling serve: POST /embed as Hugging Face text-embeddings-inference
// answers it (an array of vectors) and POST /v1/embeddings as OpenAI's embeddings API (a list of
// embedding objects, float or base64, with usage in the model's input units), with GET /v1/models
// (the one model served) for OpenAI's clients. Both take texts or token ids and
// `dimensions` (the first N, re-normalised: Matryoshka truncation). Vectors go out as the shortest
// float32 decimals, formatted natively where the addon is loaded (large responses on a libuv
// thread), else by src/util/float-text.ts (the same bytes, without loading libtorch): JavaScript's
// own number text widens each float32 to 17 digits and cost the event loop more than the embedding.
import type { FastifyPluginCallback } from 'fastify';
import { statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { l2normalizeRows } from '../../embed/vectors.js';
import { joinRows } from '../../io/json.js';
import { formatJoinRowsAsync } from '../../kernels.js';
import { HttpError } from '../http-error.js';
import { signalOf } from '../plugins/limits.js';
import { RouteOptions, xlingFields } from '../context.js';

/** The first n of each row's d dimensions, re-normalised (Matryoshka-style truncation). */
function firstDims(rows: Float32Array, d: number, n: number, normalize: boolean): Float32Array {
  if (n === d) return rows;
  const m = rows.length / d,
    out = new Float32Array(m * n);
  for (let i = 0; i < m; i++) out.set(rows.subarray(i * d, i * d + n), i * n);
  if (normalize) l2normalizeRows(out, n);
  return out;
}

function toBase64(v: Float32Array): string {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
}

/** Responses with at least this many numbers are formatted on a libuv thread (fewer: here, cheaper than the hand-off). */
const ASYNC_FORMAT_NUMBERS = 4096;

/** joinRows, on a libuv thread for large responses. */
function joinRowsOff(v: Float32Array, d: number, parts: string[]): Promise<Buffer> {
  return v.length >= ASYNC_FORMAT_NUMBERS ? formatJoinRowsAsync(v, d, parts) : Promise.resolve(joinRows(v, d, parts));
}

const errorSchema = { type: 'object', properties: { error: { type: 'string' }, error_type: { type: 'string' } } };
// texts, or token ids: one input [ids] or several [[ids], …] (TEI, OpenAI)
const ids = { type: 'array', items: { type: 'integer' }, minItems: 1 };
const inputs = { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }, ids, { type: 'array', items: ids }] };
const asList = (x: string | string[] | number[] | number[][]): (string | number[])[] =>
  typeof x === 'string' ? [x] : x.length && typeof x[0] === 'number' ? [x as number[]] : (x as (string | number[])[]);
const dimensions = { type: 'integer', minimum: 1, description: 'the first N dimensions of each vector, re-normalised (Matryoshka truncation)' };

export const embeddingRoutes: FastifyPluginCallback<RouteOptions> = (app, { ctx }, done) => {
  const { embedder } = ctx,
    d = embedder.d;
  const dimsOf = (n: number | undefined) => {
    if (n === undefined) return d;
    if (n > d) throw new HttpError(422, `Input validation error: dimensions ${n} > the model's ${d}`, 'Validation');
    return n;
  };

  app.post(
    '/embed',
    {
      schema: {
        description: 'TEI: embed one or more inputs; returns one vector per input',
        tags: ['TEI'],
        body: {
          type: 'object',
          required: ['inputs'],
          properties: {
            inputs,
            normalize: { type: 'boolean', default: true },
            truncate: { type: 'boolean', description: "cut inputs over the model's length (default: refuse them, 413; --auto-truncate: cut)" },
            truncation_direction: { type: 'string', enum: ['Left', 'Right', 'left', 'right'] },
            dimensions,
            ...xlingFields,
          },
        },
        response: { 200: { type: 'array', items: { type: 'array', items: { type: 'number' } } }, 413: errorSchema, 422: errorSchema, 429: errorSchema },
      },
    },
    async (req, reply) => {
      const b = req.body as {
        inputs: string | string[] | number[] | number[][];
        normalize?: boolean;
        truncate?: boolean;
        lang?: string | null;
        center?: boolean;
        dimensions?: number;
      };
      const n = dimsOf(b.dimensions);
      const v = firstDims(await embedder.vectors(asList(b.inputs), { ...b, signal: signalOf(req), field: 'inputs' }, reply), d, n, b.normalize !== false);
      const rows = v.length / n;
      return reply.type('application/json; charset=utf-8').send(await joinRowsOff(v, n, rows ? ['[', ...Array<string>(rows - 1).fill(','), ']'] : ['[]']));
    },
  );

  app.post(
    '/v1/embeddings',
    {
      schema: {
        description: 'OpenAI-compatible embeddings',
        tags: ['OpenAI'],
        body: {
          type: 'object',
          required: ['input'],
          properties: {
            input: inputs,
            model: { type: 'string' },
            encoding_format: { type: 'string', enum: ['float', 'base64'], default: 'float' },
            dimensions,
            user: { type: 'string' },
            truncate: {
              type: 'boolean',
              description: "xling: cut inputs over the model's length (default: refuse them, 413, as /embed; --auto-truncate: cut)",
            },
            ...xlingFields,
          },
        },
      },
    },
    async (req, reply) => {
      const b = req.body as {
        input: string | string[] | number[] | number[][];
        model?: string;
        encoding_format?: 'float' | 'base64';
        lang?: string | null;
        center?: boolean;
        dimensions?: number;
        truncate?: boolean;
      };
      const texts = asList(b.input);
      const counted = { tokens: 0 };
      const n = dimsOf(b.dimensions);
      const v = firstDims(await embedder.vectors(texts, { ...b, signal: signalOf(req), field: 'input' }, reply, counted), d, n, true);
      const usage = JSON.stringify({ prompt_tokens: counted.tokens, total_tokens: counted.tokens });
      const head = '{"object":"list","data":[',
        tail = `],"model":${JSON.stringify(b.model ?? basename(ctx.options.modelDir))},"usage":${usage}}`;
      const open = '{"object":"embedding","embedding":',
        close = (i: number) => `,"index":${i}}`;
      reply.type('application/json; charset=utf-8');
      if (b.encoding_format === 'base64')
        return reply.send(head + texts.map((_, i) => `${open}"${toBase64(v.subarray(i * n, (i + 1) * n))}"${close(i)}`).join(',') + tail);
      return reply.send(await joinRowsOff(v, n, [head + open, ...texts.slice(1).map((_, i) => close(i) + ',' + open), close(texts.length - 1) + tail]));
    },
  );
  done();
};

/** OpenAI's model list: the one model this server embeds with, by the id /v1/embeddings answers with. */
export const modelRoutes: FastifyPluginCallback<RouteOptions> = (app, { ctx }, done) => {
  const modelId = basename(ctx.options.modelDir);
  const modelObject = () => {
    let created = 0;
    try {
      created = Math.floor(statSync(join(ctx.options.modelDir, 'config.json')).mtimeMs / 1000);
    } catch {
      /* a model given without its directory: no date */
    }
    return { id: modelId, object: 'model', created, owned_by: 'xling' };
  };
  app.get('/v1/models', { schema: { description: "OpenAI: the model served (its id is the model directory's name)", tags: ['OpenAI'] } }, async () => ({
    object: 'list',
    data: [modelObject()],
  }));
  app.get('/v1/models/:id', { schema: { description: 'OpenAI: the model of this id', tags: ['OpenAI'] } }, async (req) => {
    const id = (req.params as { id: string }).id;
    if (id !== modelId) throw new HttpError(404, `model '${id.slice(0, 200)}' not found: this server serves '${modelId}'`, 'NotFound');
    return modelObject();
  });
  done();
};

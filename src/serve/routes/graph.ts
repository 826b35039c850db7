// The graph routes of xling serve (with --graph: a k-nn graph of xling graph build): GET
// /neighbours/:id (a sentence and its nearest sentences) and POST /path (the minimax trajectory
// between two sentences, found on a worker thread: paths.ts). A text is snapped to its nearest
// sentence of the graph through the graph's index. Without a graph both answer 503.
import type { FastifyPluginCallback, FastifyRequest } from 'fastify';
import { GraphReader, rankCandidates } from '../../graph/query.js';
import { HttpError } from '../http-error.js';
import { PathFinder } from '../paths.js';
import { RouteOptions, ServeContext } from '../context.js';

function needGraph({ options: o }: ServeContext): GraphReader {
  if (!o.graph) throw new HttpError(503, 'no graph loaded (xling serve --graph G)', 'Unavailable');
  return o.graph;
}

/** A sentence of the graph: an id (checked), or the sentence nearest to a text. */
async function nodeOf(ctx: ServeContext, g: GraphReader, x: number | string, lang: string | null | undefined, field = 'text'): Promise<number> {
  const { options: o, embedder } = ctx;
  if (typeof x === 'number') {
    if (!Number.isInteger(x) || x < 0 || x >= g.size) throw new HttpError(422, `sentence ${x} out of range [0, ${g.size})`, 'Validation');
    return x;
  }
  if (!o.index || embedder.d !== o.index.d) throw new HttpError(503, "texts need the graph's index and a model of its dimension", 'Unavailable');
  const q = await embedder.vectors([x], { truncate: true, normalize: true, lang, field });
  const r = await o.index.searchAsync(q, Math.min(g.meta.candidates, o.index.ntotal), g.meta.nprobe ? { nprobe: g.meta.nprobe } : undefined);
  const n = rankCandidates(g, q, r.labels, 1)[0];
  if (!n) throw new HttpError(422, `no sentence of the graph near '${x.slice(0, 80)}'`, 'Validation');
  return n.id;
}

const neighboursSchema = {
  description: 'A sentence of the graph and its k nearest sentences (every language), with cosine distances',
  tags: ['graph'],
  params: { type: 'object', properties: { id: { type: 'string', pattern: '^[0-9]+$' } } },
  querystring: {
    type: 'object',
    properties: { k: { type: 'string', pattern: '^[1-9][0-9]{0,2}$' }, threshold: { type: 'string', pattern: '^[0-9]*\\.?[0-9]+$' } },
  },
};

/** GET /neighbours/:id: the sentence and its k nearest (the graph's k by default), those within the threshold. */
async function neighbours(ctx: ServeContext, req: FastifyRequest) {
  const g = needGraph(ctx);
  const id = Number((req.params as { id: string }).id),
    q = req.query as { k?: number | string; threshold?: number | string };
  await nodeOf(ctx, g, id, null);
  return {
    id,
    text: g.store.text(id),
    lang: g.store.lang(id),
    neighbours: g.neighboursOf(id, q.threshold !== undefined ? Number(q.threshold) : Infinity).slice(0, q.k !== undefined ? Number(q.k) : g.meta.k),
  };
}

const pathEnd = {
  anyOf: [
    { type: 'integer', minimum: 0 },
    { type: 'string', minLength: 1 },
  ],
};

const pathSchema = {
  description:
    'The minimax trajectory between two sentences: the path along neighbour edges whose largest step is smallest. Each end is one of from_id (a sentence id), from_text (a text snapped to its nearest sentence) or from (a JSON number: an id; a string: a text); the same for to',
  tags: ['graph'],
  body: {
    type: 'object',
    properties: {
      from: pathEnd,
      to: pathEnd,
      from_id: { type: 'integer', minimum: 0 },
      to_id: { type: 'integer', minimum: 0 },
      from_text: { type: 'string', minLength: 1 },
      to_text: { type: 'string', minLength: 1 },
      lang: { type: ['string', 'null'] },
      undirected: { type: 'boolean', description: 'walk neighbour edges both ways' },
    },
  },
};

interface PathBody {
  from?: number | string;
  to?: number | string;
  from_id?: number;
  to_id?: number;
  from_text?: string;
  to_text?: string;
  lang?: string | null;
  undirected?: boolean;
}

/** One end of a path as the request gives it: exactly one of side, side_id, side_text. */
function endOf(b: PathBody, side: 'from' | 'to'): number | string {
  const given = [b[side], b[`${side}_id`], b[`${side}_text`]].filter((x) => x !== undefined);
  if (given.length !== 1) throw new HttpError(422, `Input validation error: give exactly one of ${side}_id, ${side}_text or ${side}`, 'Validation');
  return given[0]!;
}

/** POST /path: the minimax path between two sentences, its steps with their text and language. */
async function path(ctx: ServeContext, paths: PathFinder | null, req: FastifyRequest) {
  const g = needGraph(ctx);
  const b = req.body as PathBody;
  const ends = [endOf(b, 'from'), endOf(b, 'to')];
  const from = await nodeOf(ctx, g, ends[0]!, b.lang, 'from'),
    to = await nodeOf(ctx, g, ends[1]!, b.lang, 'to');
  const p = await paths!.find(from, to, b.undirected ?? false);
  if (!p) return { from, to, found: false, maxStep: null, visited: null, steps: [] };
  return {
    from,
    to,
    found: true,
    maxStep: p.maxStep,
    visited: p.visited,
    steps: p.steps.map((st) => ({ ...st, text: g.store.text(st.id), lang: g.store.lang(st.id) })),
  };
}

export const graphRoutes: FastifyPluginCallback<RouteOptions> = (app, { ctx }, done) => {
  const paths = ctx.options.graph ? new PathFinder(ctx.options.graph.dir) : null;
  if (paths)
    app.addHook('onClose', async () => {
      await paths.close();
    });
  app.get('/neighbours/:id', { schema: neighboursSchema }, async (req) => neighbours(ctx, req));
  app.post('/path', { schema: pathSchema }, async (req) => path(ctx, paths, req));
  done();
};

// The web explorer's routes of xling serve: the page itself (/, /app.js from dist/web, built by
// esbuild), the 2-D map of the store's sentences (GET /map: UMAP, computed on the first request,
// cached in memory and beside the index), the model's figures as xling train drew them
// (/model/figures, /model/:file), and the model's own files for xling/lite in the browser
// (/lite/:file, the explorer's "embed in this tab", for a bag-of-n-grams dual encoder).
import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HttpError } from '../http-error.js';
import { buildMap, SentenceMap } from '../map.js';
import { RouteOptions } from '../context.js';

const webRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'web');

/** Training curves and the dev error heat map, when the model directory holds them. */
const FIGURES = ['loss.svg', 'xsim.svg', 'xsim-minutes.svg', 'dev-xsim.svg'];
/** The files xling/lite loads. */
const LITE_FILES = ['config.json', 'model.safetensors', 'lid.json'];

/** Whether xling/lite embeds with this model (src/lite/model.ts: a bag-of-n-grams dual encoder). */
export function liteCapable(config: unknown): boolean {
  const c = config as { kind?: string; model?: { unit?: string; body?: string; pooling?: string[] } } | null;
  return !!c && c.kind === 'dual' && c.model?.unit === 'sentence' && c.model.body === 'none' && (c.model.pooling ?? []).join() === 'mean';
}

export const explorerRoutes: FastifyPluginCallback<RouteOptions> = (app, { ctx }, done) => {
  const o = ctx.options,
    model = o.model;
  let mapping: Promise<SentenceMap> | null = null;
  app.get('/map', { schema: { description: "A 2-D map (UMAP) of a sample of the store's sentences, for the explorer", tags: ['xling'] } }, async () => {
    if (!o.store) throw new HttpError(503, 'no sentence store loaded (xling serve --index F.faiss --store S)', 'Unavailable');
    mapping ??= buildMap(model, o.store, {
      sample: o.mapSample ?? 5000,
      cacheFile: o.indexPath ? `${o.indexPath}.map.json` : undefined,
      indexFile: o.indexPath,
      modelDir: o.modelDir,
      // kept in memory for the server's life; the failed write is logged once
      onCacheError: (e) => {
        app.log.warn(`map cache not written (${(e as NodeJS.ErrnoException).code ?? e.message}): kept in memory`);
        if (!o.logger)
          process.stderr.write(
            `[serve] the explorer's map could not be cached beside the index (${(e as NodeJS.ErrnoException).code ?? e.message}); kept in memory\n`,
          );
      },
    });
    try {
      return await mapping;
    } catch (e) {
      mapping = null;
      throw e;
    }
  });

  app.get('/model/figures', { schema: { description: 'The figures the model directory holds', tags: ['xling'] } }, async () =>
    FIGURES.filter((f) => existsSync(join(o.modelDir, f))),
  );
  app.get('/model/:file', { schema: { hide: true } }, async (req, reply) => {
    const file = (req.params as { file: string }).file;
    if (!FIGURES.includes(file) || !existsSync(join(o.modelDir, file))) throw new HttpError(404, `no figure ${file} in the model directory`, 'NotFound');
    return reply.type('image/svg+xml').send(readFileSync(join(o.modelDir, file)));
  });

  app.get('/lite/:file', { schema: { hide: true } }, async (req, reply) => {
    const file = (req.params as { file: string }).file;
    if (!liteCapable(model.config)) throw new HttpError(404, 'this model does not run in xling/lite (a bag-of-n-grams dual encoder does)', 'NotFound');
    if (!LITE_FILES.includes(file) || !existsSync(join(o.modelDir, file))) throw new HttpError(404, `no ${file} in the model directory`, 'NotFound');
    return reply.type(file.endsWith('.json') ? 'application/json' : 'application/octet-stream').send(createReadStream(join(o.modelDir, file)));
  });

  const page = (file: string, type: string) => async (_req: FastifyRequest, reply: FastifyReply) => {
    const p = join(webRoot, file);
    if (!existsSync(p)) return reply.status(404).send({ error: 'the web explorer is not built (npm run build:web)', error_type: 'NotFound' });
    return reply.type(type).send(readFileSync(p));
  };
  app.get('/', { schema: { hide: true } }, page('index.html', 'text/html; charset=utf-8'));
  app.get('/app.js', { schema: { hide: true } }, page('app.js', 'application/javascript; charset=utf-8'));
  done();
};

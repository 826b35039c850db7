// xling serve: sentence embeddings and search over HTTP. Routes compatible with Hugging Face
// text-embeddings-inference (POST /embed, POST /v1/embeddings as OpenAI's, GET /health, /info,
// /metrics) so existing clients work unchanged, and xling's own (/similarity, /search, /mine, the
// graph's and the explorer's). A Fastify app composed of plugins — errors (TEI's {error,
// error_type}, 404/405), the OpenAPI document at /docs, metrics, the API key, the limits
// (connections, concurrency, timeouts) and request bodies (plugins/) — and route plugins
// (routes/) sharing one embedding path (embedder.ts): a dynamic batcher off the event loop whose
// batches' texts are identified on worker threads while earlier batches are encoded.
import Fastify, { FastifyInstance } from 'fastify';
import { createEmbedder, Embedder } from './embedder.js';
import { ServeContext } from './context.js';
import { ServeOptions, resolveSettings } from './settings.js';
import { authPlugin } from './plugins/auth.js';
import { bodyPlugin } from './plugins/body.js';
import { errorsPlugin } from './plugins/errors.js';
import { limitsPlugin, serverOptions } from './plugins/limits.js';
import { metricsPlugin, ServeMetrics } from './plugins/metrics.js';
import { openapiPlugin } from './plugins/openapi.js';
import { embeddingRoutes, modelRoutes } from './routes/embeddings.js';
import { explorerRoutes } from './routes/explorer.js';
import { graphRoutes } from './routes/graph.js';
import { pairRoutes } from './routes/pairs.js';
import { searchRoutes } from './routes/search.js';
import { statusRoutes } from './routes/status.js';

export { SERVE_DEFAULTS, SERVE_LIMITS, resolveSettings } from './settings.js';
export type { ServeOptions, ServeSettings } from './settings.js';
export { drainBody, jsonDeeperThan } from './plugins/body.js';

/**
 * Stops the server: new requests get 503, requests in flight finish, and after graceMs the
 * connections still open (clients that stopped mid-upload, idle keep-alives) are closed.
 */
export async function closeGracefully(app: FastifyInstance, graceMs: number): Promise<void> {
  const force = setTimeout(() => app.server.closeAllConnections(), graceMs);
  force.unref();
  try {
    await app.close();
  } finally {
    clearTimeout(force);
  }
}

export async function buildServer(o: ServeOptions): Promise<FastifyInstance> {
  const settings = resolveSettings(o);
  // no type coercion: a number where a string belongs is a 422, not a sentence "1"
  const app = Fastify({ ...serverOptions(settings), logger: o.logger ?? false, ajv: { customOptions: { coerceTypes: false } } });
  const metrics = new ServeMetrics(() => embedder.queueDepth);
  const embedder: Embedder = createEmbedder(o.model, {
    ...settings,
    maxBatchTokens: o.maxBatchTokens,
    lang: o.lang,
    center: o.center,
    onBatch: metrics.observeBatch,
  });
  app.addHook('onClose', () => embedder.close());
  // hooks run in the order their plugins are registered: timing, then the key, then a slot
  await app.register(errorsPlugin, { bodyLimit: settings.bodyLimit });
  await app.register(openapiPlugin);
  await app.register(metricsPlugin, { metrics });
  await app.register(authPlugin, { apiKey: o.apiKey });
  await app.register(limitsPlugin, { settings, metrics });
  await app.register(bodyPlugin, { bodyLimit: settings.bodyLimit });
  const ctx: ServeContext = { options: o, settings, embedder, metrics };
  for (const routes of [embeddingRoutes, modelRoutes, statusRoutes, pairRoutes, searchRoutes, graphRoutes, explorerRoutes]) await app.register(routes, { ctx });
  return app;
}

// The status routes of xling serve, as TEI has them: GET /health (200 once the model is ready),
// GET /info (the model and the server's settings, plus xling's: centring, index, graph, limits,
// auth) and GET /metrics (Prometheus).
import type { FastifyPluginCallback } from 'fastify';
import { basename } from 'node:path';
import { LID_CONFIDENCE } from '../../embed/language.js';
import { SERVE_LIMITS } from '../settings.js';
import { RouteOptions } from '../context.js';
import { liteCapable } from './explorer.js';

export const statusRoutes: FastifyPluginCallback<RouteOptions> = (app, { ctx }, done) => {
  const { options: o, settings: s, embedder, metrics } = ctx,
    model = o.model;
  app.get('/health', { schema: { description: 'TEI: 200 when the model is ready', tags: ['TEI'] } }, async (_req, reply) => reply.status(200).send());

  app.get('/info', { schema: { description: "TEI: model and server settings (plus xling's)", tags: ['TEI'] } }, async () => ({
    model_id: basename(o.modelDir),
    model_sha: null,
    model_dtype: model.precision === 'bf16' ? 'bfloat16' : 'float32',
    model_type: { embedding: { pooling: 'model' } },
    max_concurrent_requests: s.maxConcurrentRequests,
    max_input_length: embedder.maxInputLength,
    max_batch_tokens: embedder.maxBatchTokens,
    max_batch_requests: null,
    max_client_batch_size: s.maxClientBatchSize,
    tokenization_workers: 1,
    version: '0.1.0',
    xling: {
      kind: (model.config as { kind?: string } | null)?.kind ?? null,
      dim: embedder.d,
      languages: model.languages,
      centring: {
        default_lang: embedder.defaultLang,
        enabled: o.center ?? true,
        rule: `a request's lang (or the server's): a code centres with its mean vector; 'auto' identifies each input on its own and centres it only when the confidence is at least ${LID_CONFIDENCE}; null: none. The x-xling-lang header lists each input's language ('none': not centred).`,
        identifier: model.lid ? { languages: model.lid.languages, confidence_threshold: LID_CONFIDENCE } : null,
        mean_vectors: { languages: model.centers.size, mean_norm: +model.meanVectors.meanNorm.toFixed(4), negligible: model.meanVectors.negligible },
      },
      index: o.index ? { ntotal: o.index.ntotal, dim: o.index.d } : null,
      store: o.store ? { sentences: o.store.size } : null,
      lite: liteCapable(model.config) ? { files: '/lite/' } : null,
      graph: o.graph ? { sentences: o.graph.size, k: o.graph.meta.k } : null,
      limits: {
        body_bytes: s.bodyLimit,
        json_depth: SERVE_LIMITS.jsonDepth,
        request_timeout_s: s.requestTimeoutMs / 1000,
        headers_timeout_s: s.headersTimeoutMs / 1000,
        keep_alive_timeout_s: s.keepAliveTimeoutMs / 1000,
        max_connections: app.server.maxConnections,
        auto_truncate: s.autoTruncate,
        mine_k: SERVE_LIMITS.mineK,
        mine_work: SERVE_LIMITS.mineWork,
        mine_sentences: s.maxClientBatchSize * 32,
        search_k: SERVE_LIMITS.searchK,
      },
      auth: o.apiKey ? 'bearer' : null,
    },
  }));

  app.get('/metrics', { schema: { description: 'Prometheus metrics', tags: ['TEI'] } }, async (_req, reply) =>
    reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
  done();
};

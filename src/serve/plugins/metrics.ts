// Prometheus metrics of xling serve (prom-client): requests by route and status, their latency,
// the requests in flight, and per inference batch its sentences, tokens and time, and the
// sentences waiting for one. ServeMetrics holds them (the limits plugin sets the in-flight gauge,
// the batcher reports its batches, GET /metrics serves the registry); the plugin times requests.
import fp from 'fastify-plugin';
import type { FastifyPluginCallback, FastifyRequest } from 'fastify';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { BatchStats } from '../batcher.js';

export class ServeMetrics {
  readonly registry = new Registry();
  readonly requests: Counter<'route' | 'status'>;
  readonly duration: Histogram<'route'>;
  readonly inflight: Gauge;
  private readonly batchSize: Histogram;
  private readonly batchTokens: Histogram;
  private readonly batchSeconds: Histogram;

  /** queueDepth: the sentences waiting for a batch, read when the metrics are collected. */
  constructor(queueDepth: () => number) {
    const registers = [this.registry];
    this.requests = new Counter({ name: 'xling_requests_total', help: 'HTTP requests by route and status', labelNames: ['route', 'status'], registers });
    this.duration = new Histogram({
      name: 'xling_request_duration_seconds',
      help: 'request latency',
      labelNames: ['route'],
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.batchSize = new Histogram({
      name: 'xling_batch_sentences',
      help: 'sentences per inference batch',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096],
      registers,
    });
    this.batchTokens = new Histogram({
      name: 'xling_batch_tokens',
      help: 'tokens per inference batch',
      buckets: [16, 64, 256, 1024, 4096, 16384, 65536],
      registers,
    });
    this.batchSeconds = new Histogram({
      name: 'xling_batch_duration_seconds',
      help: 'inference time per batch',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    new Gauge({
      name: 'xling_queue_sentences',
      help: 'sentences waiting for a batch',
      registers,
      collect() {
        this.set(queueDepth());
      },
    });
    this.inflight = new Gauge({ name: 'xling_inflight_requests', help: 'requests being served', registers });
  }

  /** One inference batch done (the batcher's report). */
  readonly observeBatch = (s: BatchStats): void => {
    this.batchSize.observe(s.sentences);
    this.batchTokens.observe(s.tokens);
    this.batchSeconds.observe(s.seconds);
  };
}

type Timed = FastifyRequest & { t0?: number };

/** Times every request from its headers to its response (the first onRequest hook: register this plugin before auth and limits). */
const metrics: FastifyPluginCallback<{ metrics: ServeMetrics }> = (app, { metrics: m }, done) => {
  app.addHook('onRequest', (req, _reply, next) => {
    (req as Timed).t0 = performance.now();
    next();
  });
  app.addHook('onResponse', (req, reply, next) => {
    const route = req.routeOptions.url ?? 'unknown';
    m.requests.inc({ route, status: String(reply.statusCode) });
    m.duration.observe({ route }, (performance.now() - ((req as Timed).t0 ?? performance.now())) / 1000);
    next();
  });
  done();
};

export const metricsPlugin = fp(metrics, { name: 'xling-metrics', fastify: '5.x' });

// The limits of xling serve on connections and requests in flight. Node's own timers: headers
// within the headers timeout, the whole request within the request timeout (a backstop 1 s after
// the server's own 408/503), idle keep-alives closed, checked every quarter of the shortest (not
// Node's 30 s), and a connection cap. Concurrency: /health and /metrics answer outside the limit
// (a probe must see an overloaded server); every other request holds a slot from its headers until
// its connection's response ends or the client goes away (429 beyond the limit), and its abort
// signal (signalOf) fires when its client goes away or its time is up, so that its queued
// inference is dropped. While the server closes, answers say `Connection: close`.
import fp from 'fastify-plugin';
import type { FastifyPluginCallback, FastifyRequest } from 'fastify';
import { HttpError, pathOf } from '../http-error.js';
import type { ServeSettings } from '../settings.js';
import type { ServeMetrics } from './metrics.js';

/** Fastify's server options for these limits (body limit, timeouts, connection checks, closing). */
export function serverOptions(s: ServeSettings) {
  const headersTimeout = s.headersTimeoutMs;
  return {
    bodyLimit: s.bodyLimit,
    requestTimeout: s.requestTimeoutMs + 1000,
    keepAliveTimeout: s.keepAliveTimeoutMs,
    http: { headersTimeout, requestTimeout: s.requestTimeoutMs + 1000, connectionsCheckingInterval: Math.max(25, Math.min(1000, headersTimeout / 4)) },
    return503OnClosing: true,
    forceCloseConnections: 'idle' as const,
  };
}

/** Paths answered outside the concurrency limit. */
const UNCOUNTED = new Set(['/health', '/metrics']);

type Tracked = FastifyRequest & { handling?: boolean; gone?: AbortController };

/** The abort signal of a request: its client went away, or its time is up. */
export function signalOf(req: FastifyRequest): AbortSignal | undefined {
  return (req as Tracked).gone?.signal;
}

const limits: FastifyPluginCallback<{ settings: ServeSettings; metrics: ServeMetrics }> = (app, { settings: s, metrics }, done) => {
  app.server.maxConnections = s.maxConnections;
  // closing (SIGTERM): requests in flight finish, and their connections close after the answer
  // (else a keep-alive connection would hold the server open for its whole timeout)
  let closing = false;
  app.addHook('preClose', (next) => {
    closing = true;
    next();
  });
  app.addHook('onSend', (_req, reply, payload, next) => {
    if (closing) reply.header('connection', 'close');
    next(null, payload);
  });

  let active = 0;
  app.addHook('onRequest', (req, reply, next) => {
    if (UNCOUNTED.has(pathOf(req.url))) {
      next();
      return;
    }
    if (active >= s.maxConcurrentRequests) {
      next(new HttpError(429, `Model is overloaded: ${s.maxConcurrentRequests} concurrent requests`, 'Overloaded'));
      return;
    }
    active++;
    metrics.inflight.set(active);
    const r = req as Tracked;
    const gone = (r.gone = new AbortController());
    // the request timeout covers the whole request: 408 while its body is still arriving, 503
    // once the handler runs (its queued inference is dropped); the connection is then closed
    const timer = setTimeout(() => {
      gone.abort();
      if (reply.sent || reply.raw.headersSent) return;
      const secs = s.requestTimeoutMs / 1000;
      reply.header('connection', 'close');
      reply.raw.once('finish', () => req.raw.socket?.destroy());
      if (r.handling)
        void reply.status(503).send({ error: `Request timeout: not answered within ${secs} s (the server's requestTimeout)`, error_type: 'Timeout' });
      else void reply.status(408).send({ error: `Request timeout: the request was not received within ${secs} s`, error_type: 'Timeout' });
    }, s.requestTimeoutMs);
    // res 'close' fires when the response ends and when the client goes away (onResponse only in the first)
    let held = true;
    reply.raw.once('close', () => {
      clearTimeout(timer);
      if (!reply.raw.writableFinished) gone.abort();
      if (held) {
        held = false;
        active--;
        metrics.inflight.set(active);
      }
    });
    next();
  });
  app.addHook('preHandler', (req, _reply, next) => {
    (req as Tracked).handling = true;
    next();
  });
  done();
};

/** Register after the metrics and auth plugins. */
export const limitsPlugin = fp(limits, { name: 'xling-limits', fastify: '5.x' });

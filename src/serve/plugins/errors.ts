// Errors of xling serve as TEI answers them ({error, error_type}): thrown HttpErrors with their
// status, schema failures 422, bodies over the limit 413 (a body still arriving is read and
// dropped up to a bound first), other client errors 400/415, the rest 500 with no directory
// names; an unknown path 404, and a wrong method on a known path 405 with Allow (the routes'
// paths and methods as registered: register this plugin before any route).
import fp from 'fastify-plugin';
import type { FastifyPluginCallback } from 'fastify';
import { editDistance } from '../../util/args.js';
import { HttpError, pathOf, withoutPaths } from '../http-error.js';
import { SERVE_LIMITS } from '../settings.js';
import { drainBody } from './body.js';

/**
 * For a missing required field, the field the client sent instead when it is one edit away (TEI's
 * `inputs` sent to OpenAI's route, or the other way round): said, so that the fix is plain.
 */
function misnamedField(message: string, body: unknown): string {
  const want = /must have required property '([^']+)'/.exec(message)?.[1];
  if (!want || !body || typeof body !== 'object' || Array.isArray(body)) return '';
  const sent = Object.keys(body).find((k) => k !== want && editDistance(k, want) <= 1);
  return sent ? ` (the body has '${sent}': this route takes '${want}')` : '';
}

const errors: FastifyPluginCallback<{ bodyLimit: number }> = (app, { bodyLimit }, done) => {
  const known: { re: RegExp; methods: Set<string> }[] = [];
  app.addHook('onRoute', (r) => {
    const re = new RegExp(
      '^' +
        r.url
          .split('/')
          .map((p) => (p.startsWith(':') ? '[^/]+' : p === '*' ? '.*' : p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
          .join('/') +
        '$',
    );
    let k = known.find((x) => x.re.source === re.source);
    if (!k) known.push((k = { re, methods: new Set() }));
    for (const m of Array.isArray(r.method) ? r.method : [r.method]) k.methods.add(m);
  });
  app.setErrorHandler(async (err: Error & { statusCode?: number; validation?: unknown; code?: string }, req, reply) => {
    // a body refused while the client is still sending it: the rest is read and dropped (up to a
    // bound) before the answer, so that the client reads its 413 instead of a reset mid-upload
    const tooLarge = err.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || (err instanceof HttpError && err.status === 413);
    if (tooLarge && !req.raw.complete) {
      await drainBody(req.raw, SERVE_LIMITS.drainFactor * bodyLimit);
      if (reply.sent || reply.raw.headersSent || reply.raw.destroyed) return reply;
    }
    if (err instanceof HttpError) return reply.status(err.status).send({ error: err.message, error_type: err.type });
    if (err.validation)
      return reply.status(422).send({ error: `Input validation error: ${err.message}${misnamedField(err.message, req.body)}`, error_type: 'Validation' });
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
      return reply.status(413).send({ error: `Payload too large: the body limit is ${bodyLimit} bytes`, error_type: 'Validation' });
    if (err.statusCode && err.statusCode < 500)
      return reply.status(err.statusCode === 415 ? 415 : 400).send({ error: withoutPaths(err.message), error_type: 'Validation' });
    return reply.status(500).send({ error: withoutPaths(err.message), error_type: 'Backend' });
  });
  app.setNotFoundHandler((req, reply) => {
    const path = pathOf(req.url);
    const allow = [...new Set(known.filter((k) => k.re.test(path)).flatMap((k) => [...k.methods]))].sort().join(', ');
    if (allow)
      return reply
        .status(405)
        .header('allow', allow)
        .send({ error: `method ${req.method} not allowed on ${path.slice(0, 200)} (allowed: ${allow})`, error_type: 'MethodNotAllowed' });
    return reply.status(404).send({ error: `no route ${req.method} ${path.slice(0, 200)}`, error_type: 'NotFound' });
  });
  done();
};

export const errorsPlugin = fp(errors, { name: 'xling-errors', fastify: '5.x' });

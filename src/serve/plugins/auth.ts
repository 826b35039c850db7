// API-key authentication of xling serve: with a key every route needs `Authorization: Bearer KEY`
// (the scheme in any case, RFC 6750 §2.1; 401 with WWW-Authenticate otherwise, §3) except /health
// and the explorer's static shell (/, /app.js: the page asks for the key and sends it). Keys are
// compared as SHA-256 digests in constant time. Without a key the plugin adds nothing.
import fp from 'fastify-plugin';
import type { FastifyPluginCallback } from 'fastify';
import { createHash, timingSafeEqual } from 'node:crypto';
import { HttpError, pathOf } from '../http-error.js';

/** Paths answered without the key. */
const OPEN = new Set(['/health', '/', '/app.js']);

const auth: FastifyPluginCallback<{ apiKey?: string }> = (app, { apiKey }, done) => {
  if (apiKey) {
    const keyDigest = createHash('sha256').update(apiKey).digest();
    const authorized = (h: string | undefined) => {
      const m = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(h ?? '');
      return (
        timingSafeEqual(
          createHash('sha256')
            .update(m ? m[1]! : '')
            .digest(),
          keyDigest,
        ) && !!m
      );
    };
    app.addHook('onRequest', (req, reply, next) => {
      if (OPEN.has(pathOf(req.url)) || authorized(req.headers.authorization)) {
        next();
        return;
      }
      reply.header('www-authenticate', req.headers.authorization ? 'Bearer realm="xling", error="invalid_token"' : 'Bearer realm="xling"');
      next(new HttpError(401, 'Unauthorized: give Authorization: Bearer <api key>', 'Unauthorized'));
    });
  }
  done();
};

/** Register after the metrics plugin and before the limits plugin (a refused request holds no slot). */
export const authPlugin = fp(auth, { name: 'xling-auth', fastify: '5.x' });

// Request bodies of xling serve: Content-Encoding gzip/deflate decoded (RFC 9110 §8.4) with the
// body limit applied to the decoded bytes (the decoder is stopped there: no zip bombs), and JSON
// bodies checked before they are parsed: valid UTF-8 (422 otherwise, not replaced silently) and
// nested at most SERVE_LIMITS.jsonDepth deep (400).
import fp from 'fastify-plugin';
import type { FastifyPluginCallback } from 'fastify';
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { Readable, Transform } from 'node:stream';
import { createGunzip, createInflate } from 'node:zlib';
import { HttpError } from '../http-error.js';
import { SERVE_LIMITS } from '../settings.js';

/** JSON nested deeper than max ([ and { outside strings)? A linear scan, before any parsing. */
export function jsonDeeperThan(s: string, max: number): boolean {
  let depth = 0,
    inString = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}

/**
 * Reads and drops what is left of a request's body, up to `bound` bytes in all (a declared
 * Content-Length over it: nothing is read); resolves when the body has ended, the bound is passed
 * or the connection is gone. A server that answers and closes while the client is still sending
 * makes the client's TCP stack see a reset, which can discard the answer before it is read.
 */
export function drainBody(raw: IncomingMessage, bound: number): Promise<void> {
  const declared = Number(raw.headers['content-length']);
  if (raw.complete || raw.destroyed || (Number.isFinite(declared) && declared > bound)) return Promise.resolve();
  return new Promise((resolve) => {
    let seen = 0;
    const done = () => {
      raw.off('data', onData);
      raw.off('end', done);
      raw.off('close', done);
      raw.off('error', done);
      resolve();
    };
    const onData = (c: Buffer) => {
      seen += c.length;
      if (seen > bound) done();
    };
    raw.on('data', onData);
    raw.once('end', done);
    raw.once('close', done);
    raw.once('error', done);
    raw.resume();
  });
}

/**
 * The decoded body of an encoded one (enc: gzip, x-gzip or deflate), at most `limit` decoded
 * bytes: past it decoding stops and, once the (encoded, itself bounded) rest has been read and
 * dropped, the stream fails with 413, so that the client reads its answer rather than a reset.
 */
function decoded(payload: Readable, enc: string, limit: number, onClose: (f: () => void) => void): Transform {
  const z = enc === 'deflate' ? createInflate() : createGunzip();
  let encoded = 0,
    seen = 0,
    over = false;
  const counted = new Transform({
    transform(chunk: Buffer, _e, cb) {
      if (over) {
        cb();
        return;
      }
      seen += chunk.length;
      if (seen <= limit) {
        cb(null, chunk);
        return;
      }
      over = true;
      payload.unpipe(z);
      z.destroy();
      const fail = () => counted.destroy(new HttpError(413, `Payload too large: the body limit is ${limit} bytes (decoded)`, 'Validation'));
      if (payload.readableEnded) fail();
      else {
        payload.on('data', () => {
          if (encoded > limit) fail();
        });
        payload.once('end', fail);
        payload.resume();
      }
      cb();
    },
  }) as Transform & { receivedEncodedLength: number };
  // Fastify checks the received length against Content-Length with this
  counted.receivedEncodedLength = 0;
  payload.on('data', (c: Buffer) => {
    encoded += c.length;
    counted.receivedEncodedLength = encoded;
  });
  payload.on('error', (e) => counted.destroy(e));
  z.on('error', () => counted.destroy(new HttpError(400, `the body is not valid ${enc === 'deflate' ? 'deflate' : 'gzip'} data`, 'Validation')));
  onClose(() => {
    z.destroy();
    counted.destroy();
  });
  payload.pipe(z).pipe(counted);
  return counted;
}

const body: FastifyPluginCallback<{ bodyLimit: number }> = (app, { bodyLimit }, done) => {
  app.addHook('preParsing', async (req, reply, payload) => {
    const enc = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    if (enc === 'identity' || enc === '') return payload;
    if (enc !== 'gzip' && enc !== 'x-gzip' && enc !== 'deflate')
      throw new HttpError(415, `Content-Encoding '${enc.slice(0, 40)}' is not supported (gzip, deflate)`, 'Validation');
    return decoded(payload, enc, bodyLimit, (f) => reply.raw.once('close', f));
  });
  const jsonParser = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, buf, next) => {
    if (!isUtf8(buf as Buffer)) {
      next(new HttpError(422, 'Input validation error: the body is not valid UTF-8', 'Validation'), undefined);
      return;
    }
    const text = (buf as Buffer).toString('utf8');
    if (jsonDeeperThan(text, SERVE_LIMITS.jsonDepth)) {
      next(new HttpError(400, `JSON nested deeper than ${SERVE_LIMITS.jsonDepth} levels`, 'Validation'), undefined);
      return;
    }
    jsonParser(req, text, next);
  });
  done();
};

export const bodyPlugin = fp(body, { name: 'xling-body', fastify: '5.x' });

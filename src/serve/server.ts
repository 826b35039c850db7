// xling serve: sentence embeddings and search over HTTP. Routes compatible with Hugging Face
// text-embeddings-inference (POST /embed, POST /v1/embeddings as OpenAI's, GET /health, /info,
// /metrics) so existing clients work unchanged, and xling's own (/similarity, /search, /mine).
// Inference runs through one dynamic batcher (src/serve/batcher.ts) off the event loop: a batch's
// texts are identified on worker threads while it is encoded, its rows normalised and centred in
// one pass, and large responses formatted on a libuv thread; limits and error bodies
// ({error, error_type}) follow TEI; an OpenAPI document is served at /docs.
import Fastify, { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { createHash, timingSafeEqual } from 'node:crypto';
import { Transform } from 'node:stream';
import { createGunzip, createInflate } from 'node:zlib';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { centerEachRow, l2normalizeRows } from '../embed/vectors.js';
import { AUTO, LID_CONFIDENCE, PER_SENTENCE, resolveLangOption } from '../embed/language.js';
import { joinRows } from '../io/json.js';
import { formatJoinRowsAsync } from '../kernels.js';
import { SentenceEncoderModel } from '../embed/model.js';
import { GraphReader, rankCandidates } from '../graph/query.js';
import { FaissIndex } from '../index/faiss.js';
import { BinaryFlatIndex } from '../index/binary.js';
import { MarginKind, mine, Retrieval } from '../mine/mine.js';
import { SentenceEncoder } from '../models/encoder.js';
import { BatchPart, DynamicBatcher } from './batcher.js';
import { Identified, LanguageIdentification } from './identify.js';
import { PathFinder } from './paths.js';
import { buildMap, SentenceMap } from './map.js';
import { SentenceStore } from '../io/sentence-store.js';

export interface ServeOptions {
  model: SentenceEncoderModel;
  /** Shown as model_id (the model directory's name). */
  modelDir: string;
  maxBatchTokens?: number;          // 16384 (×16 for encoders of unpadded feature bags)
  maxClientBatchSize?: number;      // 32 inputs per request
  maxConcurrentRequests?: number;   // 512
  bodyLimit?: number;               // 2 MB
  requestTimeoutMs?: number;        // 30 s: the whole request (receiving it and the handler); 408 while receiving, 503 past it in the handler
  headersTimeoutMs?: number;        // 10 s: a request's headers must arrive within it (408)
  keepAliveTimeoutMs?: number;      // 5 s: an idle keep-alive connection is closed after it
  maxConnections?: number;          // max(1024, 2 × maxConcurrentRequests): connections beyond are dropped
  /** Inputs over the model's length are cut instead of refused (413) unless a request says truncate: false (TEI's --auto-truncate). */
  autoTruncate?: boolean;
  apiKey?: string;
  /** Default language of requests for per-language centring (a request's `lang` wins); default 'auto' (identified per request); null: none. */
  lang?: string | null;
  center?: boolean;
  /** A float faiss index, or a binary flat one (packed sign bits: Hamming search of the query's signs, rescored with the float query). */
  index?: FaissIndex | BinaryFlatIndex;
  store?: SentenceStore;
  /** Where the index was read from (the explorer's map is cached beside it, keyed by the index's and store's content). */
  indexPath?: string;
  /** A k-nn graph (xling graph build): GET /neighbours/:id and POST /path; `index` and `store` must then be the graph's (texts are snapped through them). */
  graph?: GraphReader;
  /** Sentences in the explorer's 2-D map (default 5000). */
  mapSample?: number;
  logger?: boolean;
}

/**
 * Stops the server: new requests get 503, requests in flight finish, and after graceMs the
 * connections still open (clients that stopped mid-upload, idle keep-alives) are closed.
 */
export async function closeGracefully(app: FastifyInstance, graceMs: number): Promise<void> {
  const force = setTimeout(() => app.server.closeAllConnections(), graceMs);
  force.unref();
  try { await app.close(); } finally { clearTimeout(force); }
}

export const SERVE_DEFAULTS = { maxBatchTokens: 16384, maxClientBatchSize: 32, maxConcurrentRequests: 512, bodyLimit: 2 << 20, requestTimeoutMs: 30000, headersTimeoutMs: 10000, keepAliveTimeoutMs: 5000, autoTruncate: false };

/** Fixed bounds of the work one request can ask for. */
export const SERVE_LIMITS = {
  /** JSON bodies nested deeper are refused (400) before they are parsed. */
  jsonDepth: 32,
  /** /mine: k at most this, and (|src| + |trg|) × k at most mineWork. */
  mineK: 64,
  mineWork: 32768,
  /** A body refused as too large while still arriving is read and dropped up to this many times the body limit before the 413 (more: the connection is closed after it). */
  drainFactor: 4,
};

/** A JSON error as TEI answers it. */
class HttpError extends Error {
  constructor(readonly status: number, message: string, readonly type: string) { super(message); }
}

const webRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'web');


/** JSON nested deeper than max ([ and { outside strings)? A linear scan, before any parsing. */
export function jsonDeeperThan(s: string, max: number): boolean {
  let depth = 0, inString = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (inString) { if (c === 92) i++; else if (c === 34) inString = false; continue; }
    if (c === 34) inString = true;
    else if (c === 123 || c === 91) { if (++depth > max) return true; }
    else if (c === 125 || c === 93) depth--;
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
      raw.off('data', onData); raw.off('end', done); raw.off('close', done); raw.off('error', done);
      resolve();
    };
    const onData = (c: Buffer) => { seen += c.length; if (seen > bound) done(); };
    raw.on('data', onData); raw.once('end', done); raw.once('close', done); raw.once('error', done);
    raw.resume();
  });
}

/** An error message without the directories of paths in it (file names are kept). */
function withoutPaths(m: string): string { return m.replace(/(?:[A-Za-z]:)?(?:[\\/][^\s'"`:,()\\/]+)+[\\/]([^\s'"`:,()\\/]*)/g, '$1'); }

/** The first n of each row's d dimensions, re-normalised (Matryoshka-style truncation). */
function firstDims(rows: Float32Array, d: number, n: number, normalize: boolean): Float32Array {
  if (n === d) return rows;
  const m = rows.length / d, out = new Float32Array(m * n);
  for (let i = 0; i < m; i++) out.set(rows.subarray(i * d, i * d + n), i * n);
  if (normalize) l2normalizeRows(out, n);
  return out;
}

function toBase64(v: Float32Array): string { return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64'); }

/** Responses with at least this many numbers are formatted on a libuv thread (fewer: here, cheaper than the hand-off). */
const ASYNC_FORMAT_NUMBERS = 4096;

/** joinRows, on a libuv thread for large responses. */
function joinRowsOff(v: Float32Array, d: number, parts: string[]): Promise<Buffer> {
  return v.length >= ASYNC_FORMAT_NUMBERS ? formatJoinRowsAsync(v, d, parts) : Promise.resolve(joinRows(v, d, parts));
}

/** A request's rows as the batch's post-processing leaves them: what it asked for, and each input's centring language once decided. */
interface RowPlan {
  normalize: boolean; center: boolean;
  /** Inputs identified one by one ('auto'); otherwise every input's centring language is `fixed`. */
  perSentence: boolean; fixed: string | null;
  langs?: (string | null)[];
}

export async function buildServer(o: ServeOptions): Promise<FastifyInstance> {
  const opts = { ...SERVE_DEFAULTS, ...o };
  const model = o.model;
  const tok = model.tokenizer;
  const maxInputLength = tok.maxLength ?? null;
  // a server's model never changes: its fast inference path (if any) is built once
  const encoder: SentenceEncoder = model.encoder.fastPath?.({ tokens: Infinity, force: true }) ?? model.encoder;
  const d = model.dim;
  // the token budget of a batch: for encoders that read unpadded bags of features (the averaging
  // dual encoder: a "token" is one of a sentence's ~300 n-gram features), 16 times the default
  const maxBatchTokens = o.maxBatchTokens ?? (encoder.batchLimits ? 16 * SERVE_DEFAULTS.maxBatchTokens : SERVE_DEFAULTS.maxBatchTokens);

  const registry = new Registry();
  const requests = new Counter({ name: 'xling_requests_total', help: 'HTTP requests by route and status', labelNames: ['route', 'status'], registers: [registry] });
  const duration = new Histogram({ name: 'xling_request_duration_seconds', help: 'request latency', labelNames: ['route'], buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers: [registry] });
  const batchSize = new Histogram({ name: 'xling_batch_sentences', help: 'sentences per inference batch', buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096], registers: [registry] });
  const batchTokens = new Histogram({ name: 'xling_batch_tokens', help: 'tokens per inference batch', buckets: [16, 64, 256, 1024, 4096, 16384, 65536], registers: [registry] });
  const batchSeconds = new Histogram({ name: 'xling_batch_duration_seconds', help: 'inference time per batch', buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5], registers: [registry] });
  const queueDepth = new Gauge({ name: 'xling_queue_sentences', help: 'sentences waiting for a batch', registers: [registry], collect() { this.set(batcher.queueDepth); } });
  const inflight = new Gauge({ name: 'xling_inflight_requests', help: 'requests being served', registers: [registry] });
  void queueDepth;
  // the server's default language (--lang): 'auto' (each input identified on its own), a code, or null (none)
  const defaultLang = resolveLangOption(o.lang, model.languages, '--lang');
  // The centring rule (model.chooseCenter) for an identified input: its answer depends on the
  // identification only through its language and whether its confidence reaches LID_CONFIDENCE,
  // so it is asked once per (center, language, sure) and remembered (the rule also weighs the
  // mean vectors' norms: not per sentence).
  const ruled = new Map<string, string | null>();
  // and the rule for a request's language and centring options (the same answer for the server's life)
  const requestRule = new Map<string, ReturnType<SentenceEncoderModel['chooseCenter']>>();
  const centreOf = (id: Identified | null, center: boolean): string | null => {
    if (!id) return null;
    const key = `${center ? 1 : 0}${id.confidence >= LID_CONFIDENCE ? 1 : 0}${id.lang}`;
    let l = ruled.get(key);
    if (l === undefined) ruled.set(key, l = model.chooseCenter(PER_SENTENCE, center, id).lang);
    return l;
  };
  // a batch's rows: normalised (those that ask or are centred) and centred in one pass each
  const finish = (rows: Float32Array, parts: BatchPart<RowPlan>[], normalized: boolean) => {
    for (const p of parts) {
      const m = p.meta, n = p.rows.length / d;
      m.langs = m.perSentence && p.identified ? p.identified.map((id) => centreOf(id, m.center)) : Array<string | null>(n).fill(m.fixed);
    }
    const normalizes = (p: BatchPart<RowPlan>) => p.meta.normalize || p.meta.langs!.some((l) => l);
    if (!normalized) {
      if (parts.every(normalizes)) l2normalizeRows(rows, d);
      else for (const p of parts) if (normalizes(p)) l2normalizeRows(p.rows, d);
    }
    const mus = (p: BatchPart<RowPlan>) => p.meta.langs!.map((l) => (l ? model.centers.get(l)! : null));
    if (parts.every((p) => p.meta.normalize)) centerEachRow(rows, d, parts.flatMap(mus), true);
    else for (const p of parts) centerEachRow(p.rows, d, mus(p), p.meta.normalize);
  };
  const lid = model.lid ? new LanguageIdentification(model.lid) : null;
  const batcher = new DynamicBatcher<RowPlan>(encoder, maxBatchTokens, 4096, (s) => { batchSize.observe(s.sentences); batchTokens.observe(s.tokens); batchSeconds.observe(s.seconds); }, {
    identify: lid ? (texts) => lid.identify(texts) : undefined, finish, normalizes: (m) => m.normalize,
  });

  // no type coercion: a number where a string belongs is a 422, not a sentence "1"
  // Node's own timers: headers within headersTimeout, the whole request within the request
  // timeout (a backstop 1 s after the server's own 408/503), idle keep-alives closed, checked
  // every quarter of the shortest (not Node's 30 s), and a connection cap
  const headersTimeout = Math.min(opts.headersTimeoutMs, opts.requestTimeoutMs);
  const app = Fastify({
    logger: o.logger ?? false, bodyLimit: opts.bodyLimit, requestTimeout: opts.requestTimeoutMs + 1000, keepAliveTimeout: opts.keepAliveTimeoutMs,
    http: { headersTimeout, requestTimeout: opts.requestTimeoutMs + 1000, connectionsCheckingInterval: Math.max(25, Math.min(1000, headersTimeout / 4)) },
    return503OnClosing: true, forceCloseConnections: 'idle', ajv: { customOptions: { coerceTypes: false } },
  });
  app.server.maxConnections = opts.maxConnections ?? Math.max(1024, 2 * opts.maxConcurrentRequests);
  // wrong methods on known paths: 405 with Allow (the paths and methods of the routes, as registered)
  const known: { re: RegExp; methods: Set<string> }[] = [];
  app.addHook('onRoute', (r) => {
    const re = new RegExp('^' + r.url.split('/').map((p) => p.startsWith(':') ? '[^/]+' : p === '*' ? '.*' : p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('/') + '$');
    let k = known.find((x) => x.re.source === re.source);
    if (!k) known.push(k = { re, methods: new Set() });
    for (const m of Array.isArray(r.method) ? r.method : [r.method]) k.methods.add(m);
  });
  await app.register(swagger, {
    openapi: { info: { title: 'xling', description: 'Language-agnostic sentence embeddings: TEI-compatible embedding routes, search and mining', version: '0.1.0' } },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  // closing (SIGTERM): requests in flight finish, and their connections close after the answer
  // (else a keep-alive connection would hold the server open for its whole timeout)
  let closing = false;
  app.addHook('preClose', async () => { closing = true; });
  app.addHook('onSend', async (_req, reply) => { if (closing) reply.header('connection', 'close'); });

  // Auth: with an API key every route needs `Authorization: Bearer KEY` (scheme case-insensitive),
  // except /health and the explorer's static shell (/, /app.js: the page asks for the key and
  // sends it). Keys are compared as SHA-256 digests in constant time.
  const OPEN = new Set(['/health', '/', '/app.js']);
  const keyDigest = o.apiKey ? createHash('sha256').update(o.apiKey).digest() : null;
  const authorized = (h: string | undefined) => {
    const m = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(h ?? '');
    return timingSafeEqual(createHash('sha256').update(m ? m[1]! : '').digest(), keyDigest!) && !!m;
  };
  // Concurrency: /health and /metrics answer outside the limit (a probe must see an overloaded
  // server); every other request holds a slot from its headers until its connection's response
  // ends or the client goes away (res 'close' fires in both cases, onResponse only in the first).
  const UNCOUNTED = new Set(['/health', '/metrics']);
  let active = 0;
  type Tracked = FastifyRequest & { t0?: number; handling?: boolean; gone?: AbortController };
  app.addHook('onRequest', async (req, reply) => {
    const r = req as Tracked;
    r.t0 = performance.now();
    const q = req.url.indexOf('?'), path = q < 0 ? req.url : req.url.slice(0, q);
    if (keyDigest && !OPEN.has(path) && !authorized(req.headers.authorization)) {
      reply.header('www-authenticate', req.headers.authorization ? 'Bearer realm="xling", error="invalid_token"' : 'Bearer realm="xling"');
      throw new HttpError(401, 'Unauthorized: give Authorization: Bearer <api key>', 'Unauthorized');
    }
    if (UNCOUNTED.has(path)) return;
    if (active >= opts.maxConcurrentRequests) throw new HttpError(429, `Model is overloaded: ${opts.maxConcurrentRequests} concurrent requests`, 'Overloaded');
    active++;
    inflight.set(active);
    const gone = r.gone = new AbortController();
    // the request timeout covers the whole request: 408 while its body is still arriving, 503
    // once the handler runs (its queued inference is dropped); the connection is then closed
    const timer = setTimeout(() => {
      gone.abort();
      if (reply.sent || reply.raw.headersSent) return;
      const s = opts.requestTimeoutMs / 1000;
      reply.header('connection', 'close');
      reply.raw.once('finish', () => req.raw.socket?.destroy());
      if (r.handling) void reply.status(503).send({ error: `Request timeout: not answered within ${s} s (--request-timeout)`, error_type: 'Timeout' });
      else void reply.status(408).send({ error: `Request timeout: the request was not received within ${s} s`, error_type: 'Timeout' });
    }, opts.requestTimeoutMs);
    let held = true;
    reply.raw.once('close', () => {
      clearTimeout(timer);
      if (!reply.raw.writableFinished) gone.abort();
      if (held) { held = false; active--; inflight.set(active); }
    });
  });
  app.addHook('preHandler', async (req) => { (req as Tracked).handling = true; });
  // request bodies: Content-Encoding gzip/deflate decoded, the body limit applied to the decoded
  // bytes (the decoder is stopped there: no zip bombs)
  app.addHook('preParsing', async (req, reply, payload) => {
    const enc = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    if (enc === 'identity' || enc === '') return payload;
    if (enc !== 'gzip' && enc !== 'x-gzip' && enc !== 'deflate') throw new HttpError(415, `Content-Encoding '${enc.slice(0, 40)}' is not supported (gzip, deflate)`, 'Validation');
    const z = enc === 'deflate' ? createInflate() : createGunzip();
    let encoded = 0, decoded = 0, over = false;
    const counted = new Transform({
      transform(chunk: Buffer, _e, cb) {
        if (over) { cb(); return; }
        decoded += chunk.length;
        if (decoded <= opts.bodyLimit) { cb(null, chunk); return; }
        // over the limit: stop decoding; the rest of the (encoded, itself bounded) body is read
        // and dropped so that the client gets its 413 instead of a reset mid-upload
        over = true;
        payload.unpipe(z);
        z.destroy();
        const fail = () => counted.destroy(new HttpError(413, `Payload too large: the body limit is ${opts.bodyLimit} bytes (decoded)`, 'Validation'));
        if (payload.readableEnded) fail();
        else { payload.on('data', () => { if (encoded > opts.bodyLimit) fail(); }); payload.once('end', fail); payload.resume(); }
        cb();
      },
    }) as Transform & { receivedEncodedLength: number };
    counted.receivedEncodedLength = 0;
    payload.on('data', (c: Buffer) => { encoded += c.length; counted.receivedEncodedLength = encoded; });
    payload.on('error', (e) => counted.destroy(e));
    z.on('error', () => counted.destroy(new HttpError(400, `the body is not valid ${enc === 'deflate' ? 'deflate' : 'gzip'} data`, 'Validation')));
    reply.raw.once('close', () => { z.destroy(); counted.destroy(); });
    payload.pipe(z).pipe(counted);
    return counted;
  });
  // JSON bodies: valid UTF-8 (422 otherwise, not replaced silently), nesting bounded before parsing
  const jsonParser = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body, done) => {
    const buf = body as Buffer;
    if (!isUtf8(buf)) { done(new HttpError(422, 'Input validation error: the body is not valid UTF-8', 'Validation'), undefined); return; }
    const text = buf.toString('utf8');
    if (jsonDeeperThan(text, SERVE_LIMITS.jsonDepth)) { done(new HttpError(400, `JSON nested deeper than ${SERVE_LIMITS.jsonDepth} levels`, 'Validation'), undefined); return; }
    jsonParser(req, text, done);
  });
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unknown';
    requests.inc({ route, status: String(reply.statusCode) });
    duration.observe({ route }, (performance.now() - ((req as FastifyRequest & { t0?: number }).t0 ?? performance.now())) / 1000);
  });
  app.setErrorHandler(async (err: Error & { statusCode?: number; validation?: unknown; code?: string }, req, reply) => {
    // a body refused while the client is still sending it: the rest is read and dropped (up to a
    // bound) before the answer, so that the client reads its 413 instead of a reset mid-upload
    const tooLarge = err.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || (err instanceof HttpError && err.status === 413);
    if (tooLarge && !req.raw.complete) {
      await drainBody(req.raw, SERVE_LIMITS.drainFactor * opts.bodyLimit);
      if (reply.sent || reply.raw.headersSent || reply.raw.destroyed) return reply;
    }
    if (err instanceof HttpError) return reply.status(err.status).send({ error: err.message, error_type: err.type });
    if (err.validation) return reply.status(422).send({ error: `Input validation error: ${err.message}`, error_type: 'Validation' });
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return reply.status(413).send({ error: `Payload too large: the body limit is ${opts.bodyLimit} bytes`, error_type: 'Validation' });
    if (err.statusCode && err.statusCode < 500) return reply.status(err.statusCode === 415 ? 415 : 400).send({ error: withoutPaths(err.message), error_type: 'Validation' });
    return reply.status(500).send({ error: withoutPaths(err.message), error_type: 'Backend' });
  });
  app.setNotFoundHandler((req, reply) => {
    const q = req.url.indexOf('?'), path = q < 0 ? req.url : req.url.slice(0, q);
    const allow = new Set(known.filter((k) => k.re.test(path)).flatMap((k) => [...k.methods]));
    if (allow.size) return reply.status(405).header('allow', [...allow].sort().join(', ')).send({ error: `method ${req.method} not allowed on ${path.slice(0, 200)} (allowed: ${[...allow].sort().join(', ')})`, error_type: 'MethodNotAllowed' });
    return reply.status(404).send({ error: `no route ${req.method} ${path.slice(0, 200)}`, error_type: 'NotFound' });
  });

  /**
   * Token ids of the inputs (texts, or token ids as the model's tokenizer makes them); an input over
   * the model's length limit is cut (truncate) or refused (413): one rule on every route.
   */
  function tokenize(inputs: (string | number[])[], truncate: boolean): Int32Array[] {
    if (inputs.length > opts.maxClientBatchSize) throw new HttpError(413, `batch size ${inputs.length} > maximum allowed batch size ${opts.maxClientBatchSize}`, 'Validation');
    if (!inputs.length) throw new HttpError(422, 'Input validation error: `inputs` cannot be empty', 'Empty');
    return inputs.map((s, i) => {
      if (typeof s !== 'string') {
        if (!s.length) throw new HttpError(422, `Input validation error: input ${i} has no token ids`, 'Validation');
        const bad = s.findIndex((t) => !Number.isInteger(t) || t < 0 || t >= tok.vocabSize);
        if (bad >= 0) throw new HttpError(422, `Input validation error: input ${i}: token id ${s[bad]} is not in the model's vocabulary [0, ${tok.vocabSize})`, 'Validation');
        if (maxInputLength !== null && s.length > maxInputLength) {
          if (!truncate) throw new HttpError(413, `Input validation error: input ${i} is longer than ${maxInputLength} tokens (send truncate: true to cut it)`, 'Validation');
          return Int32Array.from(s.slice(0, maxInputLength));
        }
        return Int32Array.from(s);
      }
      const before = tok.truncated ?? 0;
      const ids = tok.encode(s);
      if (!truncate && (tok.truncated ?? 0) > before) throw new HttpError(413, `Input validation error: input ${i} is longer than ${maxInputLength} tokens (send truncate: true to cut it)`, 'Validation');
      return ids;
    });
  }

  /**
   * Vectors of the inputs as `xling embed` makes them: normalised, and centred with a language's
   * mean vector — the request's `lang` (checked: an unknown code is 422), else the server's
   * --lang; 'auto' identifies each input on its own (the model's identifier; centred only with a
   * confidence of at least LID_CONFIDENCE), so a text's vector never depends on what else a
   * request (or a batch) holds. lang null: no centring. The `x-xling-lang` header lists each
   * input's centring language ('none' where not centred); `x-xling-center` says why nothing is.
   */
  async function vectors(inputs: (string | number[])[], q: { truncate?: boolean; normalize?: boolean; lang?: string | null; center?: boolean; signal?: AbortSignal }, reply?: FastifyReply, counted?: { tokens: number }): Promise<Float32Array> {
    let lang: string | null;
    try { lang = q.lang === undefined ? defaultLang : resolveLangOption(q.lang, model.languages, 'lang'); } catch (e) { throw new HttpError(422, `Input validation error: ${(e as Error).message}`, 'Validation'); }
    const seqs = tokenize(inputs, q.truncate ?? opts.autoTruncate);
    if (counted) counted.tokens = seqs.reduce((a, s) => a + s.length, 0);
    const center = q.center ?? o.center ?? true;
    const auto = lang === AUTO || lang === PER_SENTENCE;
    const wholeKey = `${center ? 1 : 0}${lang ?? ''}`;
    let whole = requestRule.get(wholeKey);
    if (!whole) requestRule.set(wholeKey, whole = auto ? model.chooseCenter(lang, center, { lang: '', confidence: 1 }) : model.chooseCenter(lang, center));
    // nothing centred (off, no means, negligible means, no identifier), one language for all, or
    // each text identified on its own in the batch (token-id inputs have no text: not centred)
    const none = !!whole.reason && whole.reason !== 'no-mean-for-language';
    const plan: RowPlan = { normalize: q.normalize !== false, center, perSentence: !none && auto, fixed: none || auto ? null : whole.lang };
    const { rows } = await batcher.embed(seqs, { signal: q.signal, meta: plan, texts: plan.perSentence ? inputs.map((t) => (typeof t === 'string' ? t : null)) : null });
    const langs = plan.langs!;
    const centred = langs.some((l) => l);
    reply?.header('x-xling-lang', langs.map((l) => l ?? 'none').join(','));
    if (!centred) reply?.header('x-xling-center', whole.reason ?? (lang === null ? 'no-language' : lang === AUTO || lang === PER_SENTENCE ? 'unsure' : 'no-mean-for-language'));
    return rows;
  }
  // vectors go out as text formatted natively (shortest float32 decimals): formatting them in
  // JavaScript cost the event loop more than the embedding

  const errorSchema = { type: 'object', properties: { error: { type: 'string' }, error_type: { type: 'string' } } };
  // texts, or token ids: one input [ids] or several [[ids], …] (TEI, OpenAI)
  const ids = { type: 'array', items: { type: 'integer' }, minItems: 1 };
  const inputs = { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }, ids, { type: 'array', items: ids }] };
  const asList = (x: string | string[] | number[] | number[][]): (string | number[])[] =>
    typeof x === 'string' ? [x] : x.length && typeof x[0] === 'number' ? [x as number[]] : x as (string | number[])[];
  const dimensions = { type: 'integer', minimum: 1, description: 'the first N dimensions of each vector, re-normalised (Matryoshka truncation)' };
  const dimsOf = (n: number | undefined) => {
    if (n === undefined) return d;
    if (n > d) throw new HttpError(422, `Input validation error: dimensions ${n} > the model's ${d}`, 'Validation');
    return n;
  };
  const signalOf = (req: FastifyRequest) => (req as Tracked).gone?.signal;
  const xlingFields = { lang: { type: ['string', 'null'], description: 'language of the inputs, for per-language centring (xling)' }, center: { type: 'boolean' } };

  app.post('/embed', {
    schema: {
      description: 'TEI: embed one or more inputs; returns one vector per input', tags: ['TEI'],
      body: { type: 'object', required: ['inputs'], properties: { inputs, normalize: { type: 'boolean', default: true }, truncate: { type: 'boolean', description: 'cut inputs over the model\'s length (default: refuse them, 413; --auto-truncate: cut)' }, truncation_direction: { type: 'string', enum: ['Left', 'Right', 'left', 'right'] }, dimensions, ...xlingFields } },
      response: { 200: { type: 'array', items: { type: 'array', items: { type: 'number' } } }, 413: errorSchema, 422: errorSchema, 429: errorSchema },
    },
  }, async (req, reply) => {
    const b = req.body as { inputs: string | string[] | number[] | number[][]; normalize?: boolean; truncate?: boolean; lang?: string | null; center?: boolean; dimensions?: number };
    const n = dimsOf(b.dimensions);
    const v = firstDims(await vectors(asList(b.inputs), { ...b, signal: signalOf(req) }, reply), d, n, b.normalize !== false);
    const rows = v.length / n;
    return reply.type('application/json; charset=utf-8').send(await joinRowsOff(v, n, rows ? ['[', ...Array<string>(rows - 1).fill(','), ']'] : ['[]']));
  });

  app.post('/v1/embeddings', {
    schema: {
      description: 'OpenAI-compatible embeddings', tags: ['OpenAI'],
      body: { type: 'object', required: ['input'], properties: { input: inputs, model: { type: 'string' }, encoding_format: { type: 'string', enum: ['float', 'base64'], default: 'float' }, dimensions, user: { type: 'string' }, truncate: { type: 'boolean', description: 'xling: cut inputs over the model\'s length (default: refuse them, 413, as /embed; --auto-truncate: cut)' }, ...xlingFields } },
    },
  }, async (req, reply) => {
    const b = req.body as { input: string | string[] | number[] | number[][]; model?: string; encoding_format?: 'float' | 'base64'; lang?: string | null; center?: boolean; dimensions?: number; truncate?: boolean };
    const texts = asList(b.input);
    const counted = { tokens: 0 };
    const n = dimsOf(b.dimensions);
    const v = firstDims(await vectors(texts, { ...b, signal: signalOf(req) }, reply, counted), d, n, true);
    const usage = JSON.stringify({ prompt_tokens: counted.tokens, total_tokens: counted.tokens });
    const head = '{"object":"list","data":[', tail = `],"model":${JSON.stringify(b.model ?? basename(o.modelDir))},"usage":${usage}}`;
    const open = '{"object":"embedding","embedding":', close = (i: number) => `,"index":${i}}`;
    reply.type('application/json; charset=utf-8');
    if (b.encoding_format === 'base64') return reply.send(head + texts.map((_, i) => `${open}"${toBase64(v.subarray(i * n, (i + 1) * n))}"${close(i)}`).join(',') + tail);
    return reply.send(await joinRowsOff(v, n, [head + open, ...texts.slice(1).map((_, i) => close(i) + ',' + open), close(texts.length - 1) + tail]));
  });
  app.get('/health', { schema: { description: 'TEI: 200 when the model is ready', tags: ['TEI'] } }, async (_req, reply) => reply.status(200).send());

  app.get('/info', { schema: { description: 'TEI: model and server settings (plus xling\'s)', tags: ['TEI'] } }, async () => ({
    model_id: basename(o.modelDir), model_sha: null, model_dtype: model.precision === 'bf16' ? 'bfloat16' : 'float32',
    model_type: { embedding: { pooling: 'model' } },
    max_concurrent_requests: opts.maxConcurrentRequests, max_input_length: maxInputLength, max_batch_tokens: maxBatchTokens,
    max_batch_requests: null, max_client_batch_size: opts.maxClientBatchSize, tokenization_workers: 1, version: '0.1.0',
    xling: {
      kind: (model.config as { kind?: string } | null)?.kind ?? null, dim: d, languages: model.languages,
      centring: {
        default_lang: defaultLang, enabled: o.center ?? true,
        rule: `a request's lang (or the server's): a code centres with its mean vector; 'auto' identifies each input on its own and centres it only when the confidence is at least ${LID_CONFIDENCE}; null: none. The x-xling-lang header lists each input's language ('none': not centred).`,
        identifier: model.lid ? { languages: model.lid.languages, confidence_threshold: LID_CONFIDENCE } : null,
        mean_vectors: { languages: model.centers.size, mean_norm: +model.meanVectors.meanNorm.toFixed(4), negligible: model.meanVectors.negligible },
      },
      index: o.index ? { ntotal: o.index.ntotal, dim: o.index.d } : null, store: o.store ? { sentences: o.store.size } : null,
      lite: liteCapable(model.config) ? { files: '/lite/' } : null,
      graph: o.graph ? { sentences: o.graph.size, k: o.graph.meta.k } : null,
      limits: {
        body_bytes: opts.bodyLimit, json_depth: SERVE_LIMITS.jsonDepth, request_timeout_s: opts.requestTimeoutMs / 1000, headers_timeout_s: headersTimeout / 1000,
        keep_alive_timeout_s: opts.keepAliveTimeoutMs / 1000, max_connections: app.server.maxConnections, auto_truncate: opts.autoTruncate,
        mine_k: SERVE_LIMITS.mineK, mine_work: SERVE_LIMITS.mineWork, mine_sentences: opts.maxClientBatchSize * 32, search_k: 1000,
      },
      auth: keyDigest ? 'bearer' : null,
    },
  }));

  app.get('/metrics', { schema: { description: 'Prometheus metrics', tags: ['TEI'] } }, async (_req, reply) => reply.type(registry.contentType).send(await registry.metrics()));

  app.post('/similarity', {
    schema: {
      description: 'Cosine similarity: pairs of texts, or TEI\'s {inputs: {source_sentence, sentences}}', tags: ['xling'],
      body: {
        type: 'object', properties: {
          pairs: { type: 'array', items: { type: 'array', items: { type: 'string' }, minItems: 2, maxItems: 2 } },
          inputs: { type: 'object', required: ['source_sentence', 'sentences'], properties: { source_sentence: { type: 'string' }, sentences: { type: 'array', items: { type: 'string' } } } },
          truncate: { type: 'boolean' }, ...xlingFields,
        },
      },
    },
  }, async (req) => {
    const b = req.body as { pairs?: [string, string][]; inputs?: { source_sentence: string; sentences: string[] }; truncate?: boolean; lang?: string | null; center?: boolean };
    const pairs = b.pairs ?? b.inputs?.sentences.map((s) => [b.inputs!.source_sentence, s] as [string, string]);
    if (!pairs) throw new HttpError(422, 'give pairs: [[a, b], …] or inputs: {source_sentence, sentences}', 'Validation');
    const texts = [...new Set(pairs.flat())];
    const v = await vectors(texts, { truncate: b.truncate, normalize: true, lang: b.lang, center: b.center, signal: signalOf(req) });
    const at = new Map(texts.map((t, i) => [t, i]));
    return pairs.map(([a, c]) => { const i = at.get(a)!, j = at.get(c)!; let s = 0; for (let k = 0; k < d; k++) s += v[i * d + k]! * v[j * d + k]!; return s; });
  });

  app.post('/search', {
    schema: {
      description: 'k nearest sentences of the index to a text (or a vector), with their text and language', tags: ['xling'],
      body: { type: 'object', properties: { text: { type: 'string' }, vector: { type: 'array', items: { type: 'number' } }, k: { type: 'integer', minimum: 1, maximum: 1000, default: 10 }, nprobe: { type: 'integer', minimum: 1 }, rescore: { type: 'integer', minimum: 0, maximum: 100 }, ...xlingFields } },
    },
  }, async (req) => {
    const idx = o.index;
    if (!idx) throw new HttpError(503, 'no index loaded (xling serve --index F.faiss --store S)', 'Unavailable');
    const b = req.body as { text?: string; vector?: number[]; k?: number; nprobe?: number; rescore?: number; lang?: string | null; center?: boolean };
    if (b.rescore !== undefined && !(idx instanceof BinaryFlatIndex)) throw new HttpError(422, 'Input validation error: rescore applies to binary indexes only (this index holds float vectors)', 'Validation');
    if (!b.text === !b.vector) throw new HttpError(422, 'give exactly one of text or vector', 'Validation');
    let q: Float32Array;
    // nprobe is a per-request faiss SearchParameters (the index's own setting is never changed)
    if (b.nprobe !== undefined && !idx.info.ivf) throw new HttpError(422, 'Input validation error: nprobe applies to IVF indexes only (this index has no inverted lists)', 'Validation');
    if (b.vector) {
      if (b.vector.length !== idx.d) throw new HttpError(422, `vector has ${b.vector.length} dimensions, the index ${idx.d}`, 'Validation');
      q = Float32Array.from(b.vector);
      let norm = 0;
      for (const x of q) norm += x * x;
      if (!Number.isFinite(norm)) throw new HttpError(422, 'Input validation error: vector has values that are not finite as 32-bit floats', 'Validation');
      if (norm === 0) throw new HttpError(422, 'Input validation error: vector is zero (it has no direction to search)', 'Validation');
      l2normalizeRows(q, idx.d);
    } else {
      if (d !== idx.d) throw new HttpError(500, `the model gives ${d}-d vectors, the index holds ${idx.d}-d`, 'Backend');
      q = await vectors([b.text!], { truncate: true, normalize: true, lang: b.lang, center: b.center, signal: signalOf(req) });
    }
    // binary: the k·rescore nearest by Hamming distance re-ranked by the float query (default 4; 0: Hamming distances as scores)
    const r = idx instanceof BinaryFlatIndex ? await idx.searchAsync(q, b.k ?? 10, { rescore: b.rescore ?? 4 }) : await idx.searchAsync(q, b.k ?? 10, b.nprobe !== undefined ? { nprobe: b.nprobe } : undefined);
    const results = [];
    for (let j = 0; j < r.k; j++) {
      const id = Number(r.labels[j]);
      if (id < 0) continue;
      results.push({ id, score: r.distances[j]!, text: o.store && id < o.store.size ? o.store.text(id) : null, lang: o.store && id < o.store.size ? o.store.lang(id) : null });
    }
    return { results };
  });

  app.post('/mine', {
    schema: {
      description: 'Parallel sentences between two small lists, with the margin scoring and retrieval of xling mine', tags: ['xling'],
      body: {
        type: 'object', required: ['src', 'trg'], properties: {
          src: { type: 'array', items: { type: 'string' }, minItems: 1 }, trg: { type: 'array', items: { type: 'string' }, minItems: 1 },
          k: { type: 'integer', minimum: 1, maximum: SERVE_LIMITS.mineK, default: 4 }, margin: { type: 'string', enum: ['ratio', 'distance', 'absolute', 'eq9', 'eq10'], default: 'ratio' },
          retrieval: { type: 'string', enum: ['fwd', 'bwd', 'intersect', 'max'], default: 'max' }, threshold: { type: 'number' },
          src_lang: { type: ['string', 'null'] }, trg_lang: { type: ['string', 'null'] },
        },
      },
    },
  }, async (req) => {
    const b = req.body as { src: string[]; trg: string[]; k?: number; margin?: MarginKind; retrieval?: Retrieval; threshold?: number; src_lang?: string | null; trg_lang?: string | null };
    const limit = opts.maxClientBatchSize * 32;
    if (b.src.length > limit || b.trg.length > limit) throw new HttpError(413, `at most ${limit} sentences per side`, 'Validation');
    const work = (b.src.length + b.trg.length) * (b.k ?? 4);
    if (work > SERVE_LIMITS.mineWork) throw new HttpError(413, `(src + trg sentences) × k = ${work} > ${SERVE_LIMITS.mineWork}: send fewer sentences or a smaller k`, 'Validation');
    const signal = signalOf(req);
    const embedSide = async (s: string[], lang: string | null | undefined) => {
      const out = new Float32Array(s.length * d);
      for (let i = 0; i < s.length; i += opts.maxClientBatchSize) out.set(await vectors(s.slice(i, i + opts.maxClientBatchSize), { truncate: true, normalize: true, lang, signal }), i * d);
      return out;
    };
    const sv = await embedSide(b.src, b.src_lang), tv = await embedSide(b.trg, b.trg_lang);
    if (signal?.aborted) throw new HttpError(503, 'the request was cancelled', 'Timeout');
    const k = Math.min(b.k ?? 4, b.src.length, b.trg.length);
    const cands = mine(sv, tv, d, { k, margin: b.margin ?? 'ratio', retrieval: b.retrieval ?? 'max', threshold: b.threshold });
    return { k, pairs: cands.map((c) => ({ src: c.src, trg: c.trg, score: c.score, cos: c.cos, src_text: b.src[c.src], trg_text: b.trg[c.trg] })) };
  });

  // the graph's routes: a sentence's neighbours, and minimax trajectories between sentences
  const graph = o.graph;
  const needGraph = () => { if (!graph) throw new HttpError(503, 'no graph loaded (xling serve --graph G)', 'Unavailable'); return graph; };
  const paths = graph ? new PathFinder(graph.dir) : null;
  const nodeOf = async (g: GraphReader, x: number | string, lang: string | null | undefined): Promise<number> => {
    if (typeof x === 'number') {
      if (!Number.isInteger(x) || x < 0 || x >= g.size) throw new HttpError(422, `sentence ${x} out of range [0, ${g.size})`, 'Validation');
      return x;
    }
    if (!o.index || d !== o.index.d) throw new HttpError(503, 'texts need the graph\'s index and a model of its dimension', 'Unavailable');
    const q = await vectors([x], { truncate: true, normalize: true, lang });
    const r = await o.index.searchAsync(q, Math.min(g.meta.candidates, o.index.ntotal), g.meta.nprobe ? { nprobe: g.meta.nprobe } : undefined);
    const n = rankCandidates(g, q, r.labels, 1)[0];
    if (!n) throw new HttpError(422, `no sentence of the graph near '${x.slice(0, 80)}'`, 'Validation');
    return n.id;
  };
  app.get('/neighbours/:id', {
    schema: {
      description: 'A sentence of the graph and its k nearest sentences (every language), with cosine distances', tags: ['graph'],
      params: { type: 'object', properties: { id: { type: 'string', pattern: '^[0-9]+$' } } },
      querystring: { type: 'object', properties: { k: { type: 'string', pattern: '^[1-9][0-9]{0,2}$' }, threshold: { type: 'string', pattern: '^[0-9]*\\.?[0-9]+$' } } },
    },
  }, async (req) => {
    const g = needGraph();
    const id = Number((req.params as { id: string }).id), q = req.query as { k?: number | string; threshold?: number | string };
    await nodeOf(g, id, null);
    return { id, text: g.store.text(id), lang: g.store.lang(id), neighbours: g.neighboursOf(id, q.threshold !== undefined ? Number(q.threshold) : Infinity).slice(0, q.k !== undefined ? Number(q.k) : g.meta.k) };
  });
  app.post('/path', {
    schema: {
      description: 'The minimax trajectory between two sentences: the path along neighbour edges whose largest step is smallest. Each end is one of from_id (a sentence id), from_text (a text snapped to its nearest sentence) or from (a JSON number: an id; a string: a text); the same for to', tags: ['graph'],
      body: {
        type: 'object', properties: {
          from: { anyOf: [{ type: 'integer', minimum: 0 }, { type: 'string', minLength: 1 }] }, to: { anyOf: [{ type: 'integer', minimum: 0 }, { type: 'string', minLength: 1 }] },
          from_id: { type: 'integer', minimum: 0 }, to_id: { type: 'integer', minimum: 0 }, from_text: { type: 'string', minLength: 1 }, to_text: { type: 'string', minLength: 1 },
          lang: { type: ['string', 'null'] }, undirected: { type: 'boolean', description: 'walk neighbour edges both ways' },
        },
      },
    },
  }, async (req) => {
    const g = needGraph();
    const b = req.body as { from?: number | string; to?: number | string; from_id?: number; to_id?: number; from_text?: string; to_text?: string; lang?: string | null; undirected?: boolean };
    const end = (side: 'from' | 'to'): number | string => {
      const given = [b[side], b[`${side}_id`], b[`${side}_text`]].filter((x) => x !== undefined);
      if (given.length !== 1) throw new HttpError(422, `Input validation error: give exactly one of ${side}_id, ${side}_text or ${side}`, 'Validation');
      return given[0]!;
    };
    const ends = [end('from'), end('to')];
    const from = await nodeOf(g, ends[0]!, b.lang), to = await nodeOf(g, ends[1]!, b.lang);
    const p = await paths!.find(from, to, b.undirected ?? false);
    if (!p) return { from, to, found: false, maxStep: null, visited: null, steps: [] };
    return { from, to, found: true, maxStep: p.maxStep, visited: p.visited, steps: p.steps.map((s) => ({ ...s, text: g.store.text(s.id), lang: g.store.lang(s.id) })) };
  });

  // the explorer's map: computed on the first request, cached in memory and beside the index
  let mapping: Promise<SentenceMap> | null = null;
  app.get('/map', { schema: { description: 'A 2-D map (UMAP) of a sample of the store\'s sentences, for the explorer', tags: ['xling'] } }, async () => {
    if (!o.store) throw new HttpError(503, 'no sentence store loaded (xling serve --index F.faiss --store S)', 'Unavailable');
    mapping ??= buildMap(model, o.store, {
      sample: o.mapSample ?? 5000, cacheFile: o.indexPath ? `${o.indexPath}.map.json` : undefined, indexFile: o.indexPath, modelDir: o.modelDir,
      // kept in memory for the server's life; the failed write is logged once
      onCacheError: (e) => { app.log.warn(`map cache not written (${(e as NodeJS.ErrnoException).code ?? e.message}): kept in memory`); if (!o.logger) process.stderr.write(`[serve] the explorer's map could not be cached beside the index (${(e as NodeJS.ErrnoException).code ?? e.message}); kept in memory\n`); },
    });
    try { return await mapping; } catch (e) { mapping = null; throw e; }
  });

  // the model's figures (training curves, dev error heat map), as xling train drew them
  const FIGURES = ['loss.svg', 'xsim.svg', 'xsim-minutes.svg', 'dev-xsim.svg'];
  app.get('/model/figures', { schema: { description: 'The figures the model directory holds', tags: ['xling'] } }, async () => FIGURES.filter((f) => existsSync(join(o.modelDir, f))));
  app.get('/model/:file', { schema: { hide: true } }, async (req, reply) => {
    const file = (req.params as { file: string }).file;
    if (!FIGURES.includes(file) || !existsSync(join(o.modelDir, file))) throw new HttpError(404, `no figure ${file} in the model directory`, 'NotFound');
    return reply.type('image/svg+xml').send(readFileSync(join(o.modelDir, file)));
  });

  // xling/lite in the browser (the explorer's "embed in this tab"): the model's own files, for a bag-of-n-grams dual encoder
  const LITE_FILES = ['config.json', 'model.safetensors', 'lid.json'];
  app.get('/lite/:file', { schema: { hide: true } }, async (req, reply) => {
    const file = (req.params as { file: string }).file;
    if (!liteCapable(model.config)) throw new HttpError(404, 'this model does not run in xling/lite (a bag-of-n-grams dual encoder does)', 'NotFound');
    if (!LITE_FILES.includes(file) || !existsSync(join(o.modelDir, file))) throw new HttpError(404, `no ${file} in the model directory`, 'NotFound');
    return reply.type(file.endsWith('.json') ? 'application/json' : 'application/octet-stream').send(createReadStream(join(o.modelDir, file)));
  });

  // the web explorer (dist/web, built by esbuild), when built
  const page = (file: string, type: string) => async (_req: FastifyRequest, reply: FastifyReply) => {
    const p = join(webRoot, file);
    if (!existsSync(p)) return reply.status(404).send({ error: 'the web explorer is not built (npm run build:web)', error_type: 'NotFound' });
    return reply.type(type).send(readFileSync(p));
  };
  app.get('/', { schema: { hide: true } }, page('index.html', 'text/html; charset=utf-8'));
  app.get('/app.js', { schema: { hide: true } }, page('app.js', 'application/javascript; charset=utf-8'));
  app.addHook('onClose', async () => { (encoder as { dispose?: () => void }).dispose?.(); await paths?.close(); await lid?.close(); });
  return app;
}

/** Whether xling/lite embeds with this model (src/lite/model.ts: a bag-of-n-grams dual encoder). */
function liteCapable(config: unknown): boolean {
  const c = config as { kind?: string; model?: { unit?: string; body?: string; pooling?: string[] } } | null;
  return !!c && c.kind === 'dual' && c.model?.unit === 'sentence' && c.model.body === 'none' && (c.model.pooling ?? []).join() === 'mean';
}

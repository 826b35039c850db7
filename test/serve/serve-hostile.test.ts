// xling serve under hostile and careless clients, over loopback with bounded loops:
// concurrency slots come back when clients abort (mid-body and mid-handler), search parameters are
// per request, the explorer's map cache follows the index's content and survives an unwritable
// cache, every size and time is bounded (nesting, /mine work, whole-request timeout, headers,
// connections, idle keep-alives), the TEI/OpenAI gaps (dimensions, token ids, one over-length rule,
// 405, gzip bodies), auth that works in a browser, and bad vectors and bytes refused.
// Waits are on the server's own counters (/metrics), never on a guessed sleep.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { deflateSync, gzipSync } from 'node:zlib';
import { FastifyInstance } from 'fastify';
import { loadSentenceEncoder } from '../../src/embed/model-dir.js';
import { SentenceEncoderModel } from '../../src/embed/model.js';
import { FaissIndex, indexFactory } from '../../src/index/faiss.js';
import { buildServer, closeGracefully, jsonDeeperThan, ServeOptions } from '../../src/serve/server.js';
import { signalOf } from '../../src/serve/plugins/limits.js';
import { loadStore } from '../../src/io/sentence-store.js';
import { devColumn, tinyDualModel } from '../fixtures/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'xling-serve-hostile-'));
const modelDir = join(dir, 'model');
let model: SentenceEncoderModel;
let flat: FaissIndex, ivf: FaissIndex;
let vectors: Float32Array;
const rows = ['de', 'fr', 'en'].flatMap((l) =>
  devColumn(l)
    .slice(0, 40)
    .map((s) => [l, s] as const),
);
const servers: FastifyInstance[] = [];

async function serve(o: Partial<ServeOptions> = {}): Promise<string> {
  const app = await buildServer({ model, modelDir, ...o });
  servers.push(app);
  return app.listen({ port: 0, host: '127.0.0.1' });
}
const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body),
  });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function metric(base: string, name: string): Promise<number> {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(await (await fetch(base + '/metrics')).text());
  return m ? Number(m[1]) : NaN;
}
/** Polls until f() holds (the server's counters), failing after ms. */
async function until(f: () => Promise<boolean>, what: string, ms = 20000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await f())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}
const open = (base: string) =>
  new Promise<Socket>((resolve, reject) => {
    const s = connect(Number(new URL(base).port), '127.0.0.1', () => resolve(s));
    s.on('error', reject);
  });
/** Everything the server writes to a socket until it closes it (or ms pass: then null). */
const untilClosed = (s: Socket, ms: number) =>
  new Promise<{ text: string; ms: number } | null>((resolve) => {
    const t0 = performance.now();
    let text = '';
    s.on('data', (d: Buffer) => {
      text += d.toString();
    });
    s.on('error', () => {});
    const t = setTimeout(() => {
      s.destroy();
      resolve(null);
    }, ms);
    s.on('close', () => {
      clearTimeout(t);
      resolve({ text, ms: performance.now() - t0 });
    });
  });
const errorOf = async (r: Response) => (await r.json()) as { error: string; error_type: string };

before(async () => {
  tinyDualModel(dir, modelDir);
  model = loadSentenceEncoder(modelDir);
  writeFileSync(join(dir, 'store.tsv'), rows.map(([l, s]) => `${l}\t${s}`).join('\n') + '\n');
  vectors = new Float32Array(rows.length * model.dim);
  rows.forEach(([l, s], i) => vectors.set(model.embed([s], { lang: l }), i * model.dim));
  flat = indexFactory(model.dim, 'Flat');
  flat.add(vectors);
  ivf = indexFactory(model.dim, 'IVF3,Flat');
  ivf.train(vectors);
  ivf.add(vectors);
});
after(async () => {
  for (const a of servers) await closeGracefully(a, 200);
  rmSync(dir, { recursive: true, force: true });
});

describe('xling serve: slots come back when clients go away', () => {
  it('100 requests aborted mid-body and mid-handler: zero in flight afterwards, /health 200, the full limit usable', async () => {
    const base = await serve({ maxConcurrentRequests: 20, index: flat, store: await loadStore(join(dir, 'store.tsv')) });
    const inflight = () => metric(base, 'xling_inflight_requests');
    // mid-body: headers and half a body, counted by the server, then the client closes
    for (let round = 0; round < 5; round++) {
      const socks = await Promise.all(Array.from({ length: 10 }, () => open(base)));
      for (const s of socks) s.write('POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"inputs": ["half a bo');
      await until(async () => (await inflight()) === 10, 'ten requests in flight');
      for (const s of socks) s.destroy();
      await until(async () => (await inflight()) === 0, 'the slots of aborted bodies released');
    }
    // mid-handler: whole /mine requests (hundreds of sentences each, the batcher busy), the
    // clients leave while their inputs are queued or being embedded
    const src = Array.from({ length: 256 }, (_, i) => `${rows[i % rows.length]![1]} ${i}`);
    const body = JSON.stringify({ src, trg: [...src].reverse(), k: 4 });
    for (let round = 0; round < 5; round++) {
      const socks = await Promise.all(Array.from({ length: 10 }, () => open(base)));
      const answered: boolean[] = [];
      socks.forEach((s, i) => {
        s.on('data', () => {
          answered[i] = true;
        });
        s.on('error', () => {});
        s.write(`POST /mine HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      });
      await until(
        async () => (await inflight()) === 10 - answered.filter(Boolean).length && (await metric(base, 'xling_queue_sentences')) > 0,
        'mine requests waiting for the batcher',
      );
      for (const s of socks) s.destroy();
      await until(async () => (await inflight()) === 0, 'the slots of aborted handlers released');
    }
    assert.equal((await fetch(base + '/health')).status, 200);
    assert.equal(await inflight(), 0);
    // all 20 slots are free: 20 concurrent requests, none refused
    const codes = await Promise.all(Array.from({ length: 20 }, (_, i) => post(base + '/embed', { inputs: `sentence ${i}` }).then((r) => r.status)));
    assert.deepEqual([...new Set(codes)], [200]);
    assert.equal(await inflight(), 0);
  });
});

describe('xling serve: per-request search parameters', () => {
  it('nprobe applies to its own request only (also concurrently); on a Flat index 422 naming it', async () => {
    const base = await serve({ index: ivf, store: await loadStore(join(dir, 'store.tsv')) });
    const q = Array.from(vectors.subarray(0, model.dim));
    const ids = async (body: Record<string, unknown>) => {
      const r = await post(base + '/search', { vector: q, k: 100, ...body });
      assert.equal(r.status, 200);
      return ((await r.json()) as { results: { id: number }[] }).results.map((x) => x.id);
    };
    const plain = await ids({}),
      all = await ids({ nprobe: 3 });
    assert.equal(all.length, 100, 'every list probed');
    assert.ok(plain.length < all.length, `one list probed by default: ${plain.length}`);
    assert.deepEqual(await ids({}), plain, 'a later request without nprobe is unchanged');
    const mixed = await Promise.all(Array.from({ length: 12 }, (_, i) => ids(i % 2 ? { nprobe: 3 } : {})));
    mixed.forEach((m, i) => assert.deepEqual(m, i % 2 ? all : plain, `request ${i}`));
    // the addon's per-call parameters, also under a pre-transform: the results of setNprobe, the index untouched
    const pca = indexFactory(model.dim, 'PCA16,IVF3,Flat');
    pca.train(vectors);
    pca.add(vectors);
    const qs = vectors.subarray(0, 4 * model.dim);
    const def = pca.search(qs, 50),
      per = await pca.searchAsync(qs, 50, { nprobe: 3 });
    assert.deepEqual(pca.search(qs, 50).labels, def.labels, "the index's own nprobe unchanged");
    pca.setNprobe(3);
    assert.deepEqual(pca.search(qs, 50).labels, per.labels);
    assert.notDeepEqual(def.labels, per.labels);
    assert.throws(() => flat.search(qs, 5, { nprobe: 2 }), /IVF indexes only/);
    pca.dispose();
    const fbase = await serve({ index: flat });
    const r = await post(fbase + '/search', { vector: q, nprobe: 8 });
    assert.equal(r.status, 422);
    const e = await errorOf(r);
    assert.match(e.error, /nprobe/);
    assert.doesNotMatch(e.error, /Error in|\.cpp|\//);
  });
});

describe('xling serve: the explorer map cache', () => {
  it('follows the index and store content at the same path; an unwritable cache answers 200 from memory', async () => {
    const idxPath = join(dir, 'map-index.faiss'),
      storePath = join(dir, 'map-store.tsv');
    const build = async (off: number) => {
      const sub = rows.slice(off, off + 30);
      writeFileSync(storePath, sub.map(([l, s]) => `${l}\t${s}`).join('\n') + '\n');
      const ix = indexFactory(model.dim, 'Flat');
      ix.add(vectors.slice(off * model.dim, (off + 30) * model.dim));
      ix.write(idxPath);
      return { index: ix, store: await loadStore(storePath), indexPath: idxPath, mapSample: 20 };
    };
    const texts = async (base: string) => {
      const r = await fetch(base + '/map');
      assert.equal(r.status, 200, await r.clone().text());
      return new Set(((await r.json()) as { points: { text: string }[] }).points.map((p) => p.text));
    };
    const a = await texts(await serve(await build(0)));
    assert.ok([...a].every((t) => rows.slice(0, 30).some(([, s]) => s === t)));
    // the same path and the same number of sentences, other sentences: a new map
    const b = await texts(await serve(await build(60)));
    assert.ok(
      [...b].every((t) => rows.slice(60, 90).some(([, s]) => s === t)),
      'the map of the new index, not the cached one',
    );
    // a directory where the cache file goes: 200 (twice, the same map), no paths in any answer
    rmSync(`${idxPath}.map.json`, { force: true });
    mkdirSync(`${idxPath}.map.json`);
    const writes: string[] = [],
      write = process.stderr.write;
    process.stderr.write = ((s: string) => {
      writes.push(String(s));
      return true;
    }) as typeof process.stderr.write;
    try {
      const base = await serve(await build(30));
      const r1 = await fetch(base + '/map'),
        r2 = await fetch(base + '/map');
      assert.equal(r1.status, 200);
      assert.equal(r2.status, 200);
      const t1 = await r1.text();
      assert.equal(t1, await r2.text());
      assert.ok(!t1.includes(dir));
    } finally {
      process.stderr.write = write;
    }
    assert.equal(writes.filter((w) => /map could not be cached/.test(w)).length, 1, 'logged once');
    assert.ok(!writes.join('').includes(dir), 'no absolute path in the log line');
  });
});

describe('xling serve: bounded work and time', () => {
  it('/mine bounds k and (src + trg) × k; deep JSON is refused before parsing', async () => {
    const base = await serve();
    const src = devColumn('de').slice(0, 10),
      trg = devColumn('en').slice(0, 10);
    assert.equal((await post(base + '/mine', { src, trg, k: 1000 })).status, 422);
    const big = Array.from({ length: 1024 }, (_, i) => `s${i}`);
    const r = await post(base + '/mine', { src: big, trg: big, k: 32 });
    assert.equal(r.status, 413);
    assert.match((await errorOf(r)).error, /× k/);
    assert.equal((await post(base + '/mine', { src, trg, k: 4 })).status, 200);
    // 40 levels inside an ignored field: refused (400) without parsing; 1M levels likewise, quickly
    assert.equal(jsonDeeperThan('{"a": "[[[[[[", "b": [[1]]}', 3), false, 'brackets inside strings do not count');
    assert.equal(jsonDeeperThan('{"a": "[[[[[[", "b": [[1]]}', 2), true);
    const nested = (n: number) => `{"x": ${'['.repeat(n)}${']'.repeat(n)}, "inputs": "a"}`;
    assert.equal((await post(base + '/embed', nested(20))).status, 200);
    let t = performance.now();
    const deep = await post(base + '/embed', nested(40));
    assert.equal(deep.status, 400);
    assert.match((await errorOf(deep)).error, /nested deeper than 32/);
    t = performance.now();
    assert.equal((await post(base + '/embed', nested(1_000_000))).status, 400);
    assert.ok(performance.now() - t < 1500, `1M levels answered in ${performance.now() - t} ms`);
  });

  it('the request timeout covers the handler (503) and the body (408); headers time out promptly (408)', async () => {
    // a handler that answers only once its request's time is up (its abort signal): the timeout
    // fires while it runs, whatever the machine's speed
    const app = await buildServer({ model, modelDir, requestTimeoutMs: 300, headersTimeoutMs: 200 });
    servers.push(app);
    let woken = false;
    app.get('/slow', async (req, reply) => {
      await new Promise((resolve) => signalOf(req)!.addEventListener('abort', resolve, { once: true }));
      woken = true;
      return reply;
    });
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    const slow = await fetch(base + '/slow');
    assert.equal(slow.status, 503);
    assert.equal(slow.headers.get('connection'), 'close');
    assert.deepEqual(await errorOf(slow), {
      error: "Request timeout: not answered within 0.3 s (the server's requestTimeout)",
      error_type: 'Timeout',
    });
    assert.ok(woken, "the handler's abort signal fired (its queued work is dropped)");
    // body trickle: a byte every 50 ms
    let s = await open(base);
    s.write('POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{');
    let tick = setInterval(() => {
      if (!s.destroyed) s.write(' ');
    }, 50);
    let got = await untilClosed(s, 10000);
    clearInterval(tick);
    assert.ok(got, 'closed by the server');
    assert.match(got.text, /^HTTP\/1\.1 408/);
    assert.match(got.text, /"error_type":"Timeout"/);
    assert.ok(got.ms < 5000, `${got.ms} ms`);
    // header trickle: a header line every 50 ms
    s = await open(base);
    s.write('GET /health HTTP/1.1\r\nHost: x\r\n');
    let n = 0;
    tick = setInterval(() => {
      if (!s.destroyed) s.write(`X-H${n++}: y\r\n`);
    }, 50);
    got = await untilClosed(s, 10000);
    clearInterval(tick);
    assert.ok(got, 'closed by the server');
    assert.match(got.text, /^HTTP\/1\.1 408/);
    assert.ok(got.ms < 5000, `${got.ms} ms`);
    assert.equal(await metric(base, 'xling_inflight_requests'), 0);
  });

  it('connections are capped; idle keep-alive connections are closed', async () => {
    const base = await serve({ maxConnections: 4, keepAliveTimeoutMs: 200 });
    const socks = await Promise.all(Array.from({ length: 4 }, () => open(base)));
    // the fifth is dropped by the server (no answer)
    const fifth = await open(base).catch(() => null);
    if (fifth) {
      fifth.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      const got = await untilClosed(fifth, 10000);
      assert.ok(got && !got.text.startsWith('HTTP/1.1 200'), 'not served');
    }
    for (const s of socks) s.destroy();
    await until(async () => {
      try {
        return (await fetch(base + '/health')).status === 200;
      } catch {
        return false;
      }
    }, 'a free connection');
    // keep-alive: the server closes an idle connection after keepAliveTimeout
    const s = await open(base);
    s.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    const got = await untilClosed(s, 10000);
    assert.ok(got, 'closed by the server');
    assert.match(got.text, /^HTTP\/1\.1 200/);
  });
});

describe('xling serve: TEI/OpenAI API gaps', () => {
  it('dimensions: the first N dimensions re-normalised; bad values 422', async () => {
    const base = await serve();
    const texts = devColumn('de').slice(0, 3);
    const full = (await (await post(base + '/embed', { inputs: texts, lang: 'de' })).json()) as number[][];
    const r = await post(base + '/embed', { inputs: texts, lang: 'de', dimensions: 8 });
    assert.equal(r.status, 200);
    const cut = (await r.json()) as number[][];
    cut.forEach((v, i) => {
      assert.equal(v.length, 8);
      const w = full[i]!.slice(0, 8),
        n = Math.hypot(...w);
      v.forEach((x, j) => assert.ok(Math.abs(x - w[j]! / n) < 1e-5));
      assert.ok(Math.abs(Math.hypot(...v) - 1) < 1e-5);
    });
    const o = (await (await post(base + '/v1/embeddings', { input: texts, lang: 'de', dimensions: 8 })).json()) as { data: { embedding: number[] }[] };
    assert.deepEqual(
      o.data.map((e) => e.embedding),
      cut,
    );
    const b = (await (await post(base + '/v1/embeddings', { input: texts[0], lang: 'de', dimensions: 8, encoding_format: 'base64' })).json()) as {
      data: { embedding: string }[];
    };
    const buf = Buffer.from(b.data[0]!.embedding, 'base64');
    assert.equal(buf.byteLength, 8 * 4);
    for (const bad of [0, -1, 1.5, 'x', model.dim + 1]) {
      assert.equal((await post(base + '/embed', { inputs: texts, dimensions: bad })).status, 422, `/embed dimensions ${bad}`);
      assert.equal((await post(base + '/v1/embeddings', { input: texts, dimensions: bad })).status, 422, `/v1/embeddings dimensions ${bad}`);
    }
  });

  it('token ids as inputs give the vectors of their text; ids outside the vocabulary 422', async () => {
    const base = await serve();
    const texts = devColumn('fr').slice(0, 2);
    const ids = texts.map((t) => Array.from(model.tokenizer.encode(t)));
    const want = (await (await post(base + '/embed', { inputs: texts, lang: 'fr' })).json()) as number[][];
    assert.deepEqual(await (await post(base + '/embed', { inputs: ids, lang: 'fr' })).json(), want);
    assert.deepEqual(await (await post(base + '/embed', { inputs: ids[0], lang: 'fr' })).json(), [want[0]]);
    const o = (await (await post(base + '/v1/embeddings', { input: ids, lang: 'fr' })).json()) as {
      data: { embedding: number[] }[];
      usage: { prompt_tokens: number };
    };
    assert.deepEqual(
      o.data.map((e) => e.embedding),
      want,
    );
    assert.equal(o.usage.prompt_tokens, ids[0]!.length + ids[1]!.length);
    assert.equal((await post(base + '/embed', { inputs: [[model.tokenizer.vocabSize]] })).status, 422);
    assert.equal((await post(base + '/embed', { inputs: [[-1]] })).status, 422);
  });

  it('one over-length rule on /embed and /v1/embeddings: 413 unless truncate (or --auto-truncate)', async () => {
    const base = await serve();
    const long = Array.from({ length: 2500 }, (_, i) => `w${i % 10}`)
      .join(' ')
      .slice(0, 10000);
    assert.equal((await post(base + '/embed', { inputs: [long] })).status, 413);
    assert.equal((await post(base + '/v1/embeddings', { input: [long] })).status, 413);
    assert.equal((await post(base + '/v1/embeddings', { input: [long], truncate: true })).status, 200);
    const auto = await serve({ autoTruncate: true });
    assert.equal((await post(auto + '/embed', { inputs: [long] })).status, 200);
    assert.equal((await post(auto + '/v1/embeddings', { input: [long] })).status, 200);
    assert.equal((await post(auto + '/embed', { inputs: [long], truncate: false })).status, 413);
  });

  it('405 with Allow for wrong methods on known paths; 404 for unknown paths', async () => {
    const base = await serve();
    let r = await fetch(base + '/embed');
    assert.equal(r.status, 405);
    assert.equal(r.headers.get('allow'), 'POST');
    r = await fetch(base + '/health', { method: 'POST' });
    assert.equal(r.status, 405);
    assert.match(r.headers.get('allow')!, /GET/);
    assert.equal((await fetch(base + '/v1/embeddings', { method: 'DELETE' })).status, 405);
    assert.equal((await fetch(base + '/neighbours/3', { method: 'POST' })).status, 405);
    assert.equal((await fetch(base + '/nope')).status, 404);
  });

  it('gzip and deflate bodies are decoded, the body limit applies to the decoded size', async () => {
    // made first: compressing 50 MB takes a while on a busy machine, longer than a keep-alive
    // connection stays open between two requests
    const bomb = gzipSync(JSON.stringify({ inputs: 'a'.repeat(50 << 20) }));
    const base = await serve({ bodyLimit: 64 << 10 });
    const body = JSON.stringify({ inputs: devColumn('de').slice(0, 3), lang: 'de' });
    const want = await (await post(base + '/embed', body)).json();
    for (const [enc, z] of [
      ['gzip', gzipSync],
      ['deflate', deflateSync],
    ] as const) {
      const r = await post(base + '/embed', z(body), { 'content-encoding': enc });
      assert.equal(r.status, 200, `${enc}: ${await r.clone().text()}`);
      assert.deepEqual(await r.json(), want);
    }
    // a small gzip of a body far over the limit: 413 once it is read (not a reset mid-upload)
    assert.ok(bomb.length < 64 << 10);
    const t = performance.now();
    assert.equal((await post(base + '/embed', bomb, { 'content-encoding': 'gzip' })).status, 413);
    assert.ok(performance.now() - t < 3000);
    assert.equal((await post(base + '/embed', Buffer.from('not gzip'), { 'content-encoding': 'gzip' })).status, 400);
    assert.equal((await post(base + '/embed', body, { 'content-encoding': 'br' })).status, 415);
    assert.equal((await post(base + '/embed', body)).status, 200);
  });
});

describe('xling serve: auth', () => {
  it('the explorer shell is open, the API needs the key; /health by path; Bearer case-insensitive; WWW-Authenticate', async () => {
    const base = await serve({ apiKey: 's3cret' });
    for (const p of ['/', '/app.js']) assert.notEqual((await fetch(base + p)).status, 401, p);
    assert.equal((await fetch(base + '/health?x=1')).status, 200);
    let r = await fetch(base + '/info');
    assert.equal(r.status, 401);
    assert.match(r.headers.get('www-authenticate')!, /^Bearer/);
    r = await fetch(base + '/info', { headers: { authorization: 'Bearer nope' } });
    assert.equal(r.status, 401);
    assert.match(r.headers.get('www-authenticate')!, /^Bearer.*invalid_token/);
    for (const scheme of ['Bearer', 'bearer', 'BEARER'])
      assert.equal((await fetch(base + '/info', { headers: { authorization: `${scheme} s3cret` } })).status, 200, scheme);
    assert.equal((await fetch(base + '/info', { headers: { authorization: 's3cret' } })).status, 401);
    assert.equal((await fetch(base + '/info', { headers: { authorization: 'Bearer s3cret2' } })).status, 401);
    assert.equal((await fetch(base + '/metrics')).status, 401);
  });
});

describe('xling serve: no silent acceptance', () => {
  it('non-finite and zero /search vectors 422; a body of invalid UTF-8 422', async () => {
    const base = await serve({ index: flat, store: await loadStore(join(dir, 'store.tsv')) });
    for (const v of [Array(model.dim).fill(1e308), Array(model.dim).fill(0)]) {
      const r = await post(base + '/search', { vector: v });
      assert.equal(r.status, 422);
      assert.match((await errorOf(r)).error, /vector/);
    }
    const bad = Buffer.concat([Buffer.from('{"inputs": ["caf'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"]}')]);
    const r = await post(base + '/embed', bad);
    assert.equal(r.status, 422);
    assert.match((await errorOf(r)).error, /UTF-8/);
    assert.equal((await post(base + '/embed', { inputs: ['café'] })).status, 200);
  });
});

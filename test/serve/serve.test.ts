// xling serve: TEI's documented requests answered in TEI's shapes, the OpenAI-compatible route,
// xling's routes, the same vectors as `xling embed`, limits and bad input (malformed JSON, wrong
// types, oversized bodies and inputs, a client that disconnects mid-request) with the server still
// answering, the API key, 429 beyond the concurrency limit, and a graceful SIGTERM.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FastifyInstance } from 'fastify';
import { loadSentenceEncoder } from '../../src/embed/model-dir.js';
import { SentenceEncoderModel } from '../../src/embed/model.js';
import { buildGraph } from '../../src/graph/build.js';
import { GraphReader, minimaxPath, openGraphIndex } from '../../src/graph/query.js';
import { indexFactory } from '../../src/index/faiss.js';
import { buildServer, closeGracefully } from '../../src/serve/server.js';
import { loadStore } from '../../src/io/sentence-store.js';
import { mine } from '../../src/mine/mine.js';
import { cliAsync, devColumn, tinyDualModel } from '../fixtures/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'xling-serve-'));
const modelDir = join(dir, 'model');
let model: SentenceEncoderModel;
let app: FastifyInstance;
let base = '';

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

before(async () => {
  tinyDualModel(dir, modelDir);
  model = loadSentenceEncoder(modelDir);
  // an index over dev sentences of three languages, with its store
  const store = ['de', 'fr', 'en'].flatMap((l) =>
    devColumn(l)
      .slice(0, 40)
      .map((s) => [l, s] as const),
  );
  writeFileSync(join(dir, 'store.tsv'), store.map(([l, s]) => `${l}\t${s}`).join('\n') + '\n');
  const index = indexFactory(model.dim, 'Flat');
  const v = new Float32Array(store.length * model.dim);
  store.forEach(([l, s], i) => v.set(model.embed([s], { lang: l }), i * model.dim));
  index.add(v);
  app = await buildServer({ model, modelDir, index, store: await loadStore(join(dir, 'store.tsv')), maxConcurrentRequests: 64 });
  base = await app.listen({ port: 0, host: '127.0.0.1' });
});
after(async () => {
  if (app) await closeGracefully(app, 500);
  rmSync(dir, { recursive: true, force: true });
});

describe('xling serve: TEI-compatible routes', () => {
  it("POST /embed answers TEI's documented requests in TEI's shape", async () => {
    let r = await post('/embed', { inputs: 'What is Deep Learning?' });
    assert.equal(r.status, 200);
    let v = (await r.json()) as number[][];
    assert.equal(v.length, 1);
    assert.equal(v[0]!.length, model.dim);
    assert.ok(Math.abs(Math.hypot(...v[0]!) - 1) < 1e-5, 'normalised by default');
    r = await post('/embed', { inputs: ['Today is a nice day', 'I like you'] });
    v = (await r.json()) as number[][];
    assert.equal(v.length, 2);
    // normalize: false gives the raw vector; truncate is accepted
    const raw = (await (await post('/embed', { inputs: ['I like you'], normalize: false, truncate: true })).json()) as number[][];
    assert.ok(Math.abs(Math.hypot(...raw[0]!) - 1) > 1e-3);
  });

  it('gives the vectors xling embed gives (same text, same language)', async () => {
    const sents = devColumn('de').slice(0, 5);
    const r = await post('/embed', { inputs: sents, lang: 'de' });
    assert.equal(r.headers.get('x-xling-lang'), 'de,de,de,de,de', "each input's language");
    const v = ((await r.json()) as number[][]).flat();
    const lib = model.embed(sents, { lang: 'de' });
    v.forEach((x, i) => assert.ok(Math.abs(x - lib[i]!) < 1e-5, `[${i}]`));
    // no language given: each input identified on its own (never a vote across the request),
    // centred only when confident; the header lists each input's language
    const auto = await post('/embed', { inputs: sents });
    const each = sents.map((t) => model.sentenceCenter(t).lang);
    assert.equal(auto.headers.get('x-xling-lang'), each.map((l) => l ?? 'none').join(','));
    const av = ((await auto.json()) as number[][]).flat(),
      alib = model.embed(sents, { langs: each });
    av.forEach((x, i) => assert.ok(Math.abs(x - alib[i]!) < 1e-5, `auto [${i}]`));
  });

  it('a text gets the same vector alone and among 31 others of other languages (identification per input)', async () => {
    const text = devColumn('de')[7]!;
    const others = ['fr', 'ja', 'ru', 'zh', 'es', 'pl', 'tr', 'sv'].flatMap((l) => devColumn(l).slice(0, 4)).slice(0, 31);
    const alone = (await (await post('/embed', { inputs: [text] })).json()) as number[][];
    for (const at of [0, 15, 31]) {
      const inputs = [...others.slice(0, at), text, ...others.slice(at)];
      const r = await post('/embed', { inputs });
      assert.equal(r.status, 200);
      const v = (await r.json()) as number[][];
      assert.deepEqual(v[at], alone[0], `position ${at}: bit-identical`);
      assert.equal(r.headers.get('x-xling-lang')!.split(',')[at], model.sentenceCenter(text).lang ?? 'none');
    }
    // and the same over the OpenAI route
    const o = (await (await post('/v1/embeddings', { input: [...others.slice(0, 5), text] })).json()) as { data: { embedding: number[] }[] };
    assert.deepEqual(o.data[5]!.embedding, alone[0]);
  });

  it('unknown lang values are 422 (never silently uncentred); codes are normalised; null is no centring', async () => {
    for (const lang of ['xx', '', 'de/en']) {
      const r = await post('/embed', { inputs: ['Open file'], lang });
      assert.equal(r.status, 422, `lang ${JSON.stringify(lang)}`);
      assert.match(((await r.json()) as { error: string }).error, /lang '/);
    }
    const de = devColumn('de').slice(0, 2);
    const upper = await post('/embed', { inputs: de, lang: 'DE' });
    assert.equal(upper.headers.get('x-xling-lang'), 'de,de');
    assert.deepEqual(await upper.json(), await (await post('/embed', { inputs: de, lang: 'de' })).json());
    const none = await post('/embed', { inputs: de, lang: null });
    assert.equal(none.headers.get('x-xling-lang'), 'none,none');
    assert.equal(none.headers.get('x-xling-center'), 'no-language');
    const info = (await (await fetch(base + '/info')).json()) as {
      xling: { centring: { default_lang: string; identifier: { confidence_threshold: number } | null; mean_vectors: { negligible: boolean } } };
    };
    assert.equal(info.xling.centring.default_lang, 'auto');
    assert.equal(info.xling.centring.identifier!.confidence_threshold, 0.5);
  });

  it('concurrent requests are pooled into batches; each gets its own vectors and its own language', async () => {
    const count = async () => Number(/^xling_batch_sentences_count (\d+)$/m.exec(await (await fetch(base + '/metrics')).text())![1]);
    const before = await count();
    const langs = ['de', 'fr', 'en', 'de', 'fr', 'en', 'de', 'fr'];
    const sets = langs.map((l, i) => devColumn(l).slice(5 * i, 5 * i + 5));
    const answers = await Promise.all(sets.map((inputs) => post('/embed', { inputs })));
    assert.ok((await count()) - before < langs.length, 'fewer batches than requests');
    for (const [i, r] of answers.entries()) {
      const langs = sets[i]!.map((t) => model.sentenceCenter(t).lang);
      assert.equal(r.headers.get('x-xling-lang'), langs.map((l) => l ?? 'none').join(','), `request ${i}`);
      const v = ((await r.json()) as number[][]).flat(),
        lib = model.embed(sets[i]!, { langs });
      v.forEach((x, j) => assert.ok(Math.abs(x - lib[j]!) < 1e-5, `request ${i} [${j}]`));
    }
  });

  it("POST /v1/embeddings answers as OpenAI's API (float and base64)", async () => {
    const r = await post('/v1/embeddings', { input: 'What is Deep Learning?', model: 'text-embedding-3-small' });
    assert.equal(r.status, 200);
    const j = (await r.json()) as {
      object: string;
      data: { object: string; embedding: number[]; index: number }[];
      model: string;
      usage: { prompt_tokens: number; total_tokens: number };
    };
    assert.deepEqual(Object.keys(j).sort(), ['data', 'model', 'object', 'usage']);
    assert.equal(j.object, 'list');
    assert.equal(j.model, 'text-embedding-3-small');
    assert.deepEqual(Object.keys(j.data[0]!).sort(), ['embedding', 'index', 'object']);
    assert.equal(j.data[0]!.object, 'embedding');
    assert.equal(j.data[0]!.index, 0);
    assert.equal(j.data[0]!.embedding.length, model.dim);
    assert.ok(j.usage.prompt_tokens > 0 && j.usage.total_tokens === j.usage.prompt_tokens);
    const b = (await (await post('/v1/embeddings', { input: ['What is Deep Learning?'], encoding_format: 'base64' })).json()) as {
      data: { embedding: string }[];
    };
    const buf = Buffer.from(b.data[0]!.embedding, 'base64');
    const f = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
    f.forEach((x, i) => assert.ok(Math.abs(x - j.data[0]!.embedding[i]!) < 1e-6));
    // several inputs: in order, indexed, the vectors /embed gives
    const texts = devColumn('de').slice(0, 3);
    const many = (await (await post('/v1/embeddings', { input: texts, lang: 'de' })).json()) as typeof j;
    const want = (await (await post('/embed', { inputs: texts, lang: 'de' })).json()) as number[][];
    assert.deepEqual(
      many.data.map((e) => e.index),
      [0, 1, 2],
    );
    assert.deepEqual(
      many.data.map((e) => e.embedding),
      want,
    );
  });

  it('GET /health, /info, /metrics; the OpenAPI document at /docs', async () => {
    assert.equal((await fetch(base + '/health')).status, 200);
    const info = (await (await fetch(base + '/info')).json()) as Record<string, unknown>;
    for (const k of ['model_id', 'model_dtype', 'max_concurrent_requests', 'max_input_length', 'max_batch_tokens', 'max_client_batch_size', 'version'])
      assert.ok(k in info, k);
    assert.equal((info.xling as { dim: number }).dim, model.dim);
    const m = await (await fetch(base + '/metrics')).text();
    assert.match(m, /xling_requests_total\{route="\/embed",status="200"\} \d+/);
    assert.match(m, /xling_batch_sentences_bucket/);
    assert.match(m, /xling_request_duration_seconds_bucket/);
    const doc = (await (await fetch(base + '/docs/json')).json()) as { openapi: string; paths: Record<string, unknown> };
    assert.match(doc.openapi, /^3\./);
    for (const p of ['/embed', '/v1/embeddings', '/similarity', '/search', '/mine', '/info', '/health', '/metrics']) assert.ok(p in doc.paths, p);
  });
});

describe('xling serve: xling routes', () => {
  it('/similarity, /search and /mine', async () => {
    const [de, en] = [devColumn('de'), devColumn('en')];
    const sim = (await (await post('/similarity', { inputs: { source_sentence: en[0], sentences: [de[0], de[7]] } })).json()) as number[];
    assert.equal(sim.length, 2);
    assert.ok(sim[0]! > sim[1]!, `the translation is nearer: ${sim}`);
    const pairs = (await (await post('/similarity', { pairs: [[en[0], de[0]]] })).json()) as number[];
    assert.ok(Math.abs(pairs[0]! - sim[0]!) < 1e-6);
    const s = (await (await post('/search', { text: de[3], lang: 'de', k: 5 })).json()) as {
      results: { id: number; score: number; text: string; lang: string }[];
    };
    assert.equal(s.results.length, 5);
    assert.equal(s.results[0]!.text, de[3]);
    assert.equal(s.results[0]!.lang, 'de');
    assert.ok(
      s.results.some((r) => r.lang !== 'de'),
      'translations among the neighbours',
    );
    const bad = await post('/search', { vector: [1, 2, 3] });
    assert.equal(bad.status, 422);
    const src = de.slice(0, 6),
      trg = [...en.slice(0, 6)].reverse();
    const mined = (await (await post('/mine', { src, trg, k: 2, src_lang: 'de', trg_lang: 'en' })).json()) as {
      pairs: { src: number; trg: number; score: number }[];
    };
    const lib = mine(model.embed(src, { lang: 'de' }), model.embed(trg, { lang: 'en' }), model.dim, { k: 2, margin: 'ratio', retrieval: 'max' });
    assert.deepEqual(
      mined.pairs.map((p) => [p.src, p.trg]),
      lib.map((c) => [c.src, c.trg]),
      'as xling mine scores them',
    );
    mined.pairs.forEach((p, i) => assert.ok(Math.abs(p.score - lib[i]!.score) < 1e-5));
    assert.equal(mined.pairs[0]!.trg, 5 - mined.pairs[0]!.src, 'the best-scored pair is a translation');
  });
});

describe('xling serve: bad input, limits, and the server keeps answering', () => {
  const err = async (r: Response, status: number, type?: RegExp) => {
    assert.equal(r.status, status, `${r.status}: ${await r.clone().text()}`);
    const j = (await r.json()) as { error: string; error_type: string };
    assert.equal(typeof j.error, 'string');
    assert.equal(typeof j.error_type, 'string');
    if (type) assert.match(j.error_type, type);
  };

  it("GET /v1/models and /v1/models/{id} answer as OpenAI's, with the model served", async () => {
    const list = (await (await fetch(base + '/v1/models')).json()) as { object: string; data: Record<string, unknown>[] };
    assert.equal(list.object, 'list');
    assert.equal(list.data.length, 1);
    const m = list.data[0]!;
    assert.deepEqual(Object.keys(m).sort(), ['created', 'id', 'object', 'owned_by']);
    assert.equal(m.id, 'model');
    assert.equal(m.object, 'model');
    assert.ok(Number.isInteger(m.created) && (m.created as number) > 0);
    assert.equal(typeof m.owned_by, 'string');
    assert.deepEqual(await (await fetch(base + '/v1/models/model')).json(), m);
    const other = await fetch(base + '/v1/models/gpt-4');
    assert.equal(other.status, 404);
    assert.match(((await other.json()) as { error: string }).error, /'gpt-4' not found.*'model'/);
    // the id is the one /v1/embeddings answers with
    const e = (await (await post('/v1/embeddings', { input: 'Hallo' })).json()) as { model: string };
    assert.equal(e.model, m.id);
  });

  it('no inputs and empty strings are 422 naming the field the request used; usage counts the characters a bag of n-grams reads', async () => {
    const refused = async (path: string, body: unknown, field: RegExp) => {
      const r = await post(path, body);
      assert.equal(r.status, 422, `${path} ${JSON.stringify(body)}`);
      const j = (await r.json()) as { error: string; error_type: string };
      assert.match(j.error, field, `${path} ${JSON.stringify(body)}: ${j.error}`);
    };
    await refused('/v1/embeddings', { input: [] }, /`input` cannot be empty/);
    await refused('/embed', { inputs: [] }, /`inputs` cannot be empty/);
    await refused('/v1/embeddings', { input: '' }, /`input` cannot hold an empty string/);
    await refused('/v1/embeddings', { input: ['Hallo', ''] }, /`input` cannot hold an empty string \(input 1\)/);
    await refused('/embed', { inputs: '' }, /`inputs` cannot hold an empty string/);
    await refused('/similarity', { pairs: [['', 'Hallo']] }, /`pairs` cannot hold an empty string/);
    // TEI's field sent to OpenAI's route, and the other way round
    await refused('/v1/embeddings', { inputs: ['Hallo'] }, /'input'.*the body has 'inputs'/);
    await refused('/embed', { input: ['Hallo'] }, /'inputs'.*the body has 'input'/);
    const texts = ['Hello world.', 'Open the file.'];
    const u = (await (await post('/v1/embeddings', { input: texts })).json()) as { usage: { prompt_tokens: number; total_tokens: number } };
    // the tiny model lower-cases and reads every character: 12 + 14, not its ~240 n-gram features
    assert.equal(u.usage.prompt_tokens, texts.join('').length);
    assert.equal(u.usage.total_tokens, u.usage.prompt_tokens);
  });

  it('malformed JSON 400; wrong types and empty input 422; too many inputs, oversized bodies and inputs 413', async () => {
    await err(await post('/embed', '{"inputs":'), 400);
    await err(await post('/embed', { inputs: [null, 2] }), 422, /Validation/);
    await err(await post('/embed', { inputs: 5 }), 422);
    await err(await post('/embed', { nothing: 'x' }), 422);
    await err(await post('/embed', { inputs: [] }), 422);
    await err(await post('/v1/embeddings', { input: 'x', encoding_format: 'hex' }), 422);
    await err(await post('/embed', { inputs: Array.from({ length: 33 }, () => 'x') }), 413);
    await err(await post('/embed', { inputs: ['x'.repeat(3 << 20)] }), 413);
    const long = Array.from({ length: 2500 }, (_, i) => `w${i % 10}`)
      .join(' ')
      .slice(0, 10000);
    await err(await post('/embed', { inputs: [long] }), 413, /Validation/);
    assert.equal((await post('/embed', { inputs: [long], truncate: true })).status, 200, 'truncate: true cuts it');
    await err(await fetch(base + '/nope'), 404);
    assert.equal((await post('/embed', { inputs: 'still answering' })).status, 200);
  });

  it('a client that disconnects mid-request leaves the server answering', async () => {
    const { port } = new URL(base);
    for (let i = 0; i < 5; i++) {
      await new Promise<void>((resolve) => {
        const s = connect(Number(port), '127.0.0.1', () => {
          s.write(`POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"inputs": ["half a bo`);
          setTimeout(() => {
            s.destroy();
            resolve();
          }, 20);
        });
      });
    }
    // and one that leaves while its inputs are being embedded
    const ac = new AbortController();
    const pending = fetch(base + '/embed', {
      method: 'POST',
      signal: ac.signal,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ inputs: Array.from({ length: 32 }, (_, i) => `sentence ${i} `.repeat(50)), truncate: true }),
    }).catch((e: Error) => e.name);
    setTimeout(() => ac.abort(), 2);
    await pending;
    assert.equal((await fetch(base + '/health')).status, 200);
    assert.equal((await post('/embed', { inputs: 'after the disconnects' })).status, 200);
  });

  it('API key: 401 without it, 200 with it; 429 beyond the concurrency limit', async () => {
    const locked = await buildServer({ model, modelDir, apiKey: 's3cret', maxConcurrentRequests: 1 });
    const url = await locked.listen({ port: 0, host: '127.0.0.1' });
    try {
      const call = (headers: Record<string, string>) =>
        fetch(url + '/embed', {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ inputs: Array.from({ length: 32 }, (_, i) => `a rather long sentence number ${i} `.repeat(20)), truncate: true }),
        });
      assert.equal((await call({})).status, 401);
      assert.equal((await call({ authorization: 'Bearer wrong' })).status, 401);
      assert.equal((await call({ authorization: 'Bearer s3cret' })).status, 200);
      assert.equal((await fetch(url + '/health')).status, 200, '/health needs no key');
      const codes = await Promise.all(Array.from({ length: 12 }, () => call({ authorization: 'Bearer s3cret' }).then((r) => r.status)));
      assert.ok(codes.includes(429), `some refused: ${codes}`);
      assert.ok(
        codes.every((c) => c === 200 || c === 429),
        `${codes}`,
      );
      assert.ok(codes.includes(200));
    } finally {
      await closeGracefully(locked, 500);
    }
  });

  it('SIGTERM: the request in flight finishes, then the process exits 0', async () => {
    // --log: the server logs each request as it arrives, so SIGTERM is sent once it is in flight
    const p = cliAsync(['serve', '--model', modelDir, '--port', '0', '--log']);
    let log = '';
    const arrived = new Promise<void>((resolve) =>
      p.stdout.on('data', (d: Buffer) => {
        log += d.toString();
        if (log.includes('incoming request')) resolve();
      }),
    );
    let err = '';
    const url = await new Promise<string>((resolve, reject) => {
      p.stderr.on('data', (d: Buffer) => {
        err += d.toString();
        const m = /listening on (http:\/\/\S+)/.exec(err);
        if (m) resolve(m[1]!);
      });
      p.on('exit', (c) => reject(new Error(`serve exited ${c}: ${err}`)));
    });
    const inflight = fetch(url + '/embed', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ inputs: Array.from({ length: 32 }, (_, i) => `sentence ${i} `.repeat(100)), truncate: true }),
    });
    await arrived;
    const code = new Promise<number | null>((resolve) => p.on('exit', resolve));
    p.kill('SIGTERM');
    const r = await inflight;
    assert.equal(r.status, 200);
    assert.equal(((await r.json()) as number[][]).length, 32);
    assert.equal(await code, 0, err);
    assert.match(err, /SIGTERM: finishing in-flight requests/);
  });
});

describe('xling serve --graph: neighbours and minimax paths', () => {
  let gapp: FastifyInstance;
  let gbase = '';
  let g: GraphReader;
  before(async () => {
    const out = join(dir, 'graph');
    await buildGraph({
      model: modelDir,
      out,
      sources: [{ tsv: 'data/sample/gettext.dev.tsv.gz', langs: ['en', 'de', 'fr'] }],
      k: 8,
      candidates: 32,
      trainSample: 5000,
      recallTarget: 0.95,
      filter: { minWords: 0, maxWords: 0, dedup: true },
      quiet: true,
      log: () => {},
    });
    g = new GraphReader(out);
    gapp = await buildServer({ model, modelDir, graph: g, index: openGraphIndex(out), store: g.store });
    gbase = await gapp.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    if (gapp) await closeGracefully(gapp, 500);
    g?.close();
  });

  it("GET /neighbours/:id gives the graph's row; POST /path gives the minimax trajectory for ids and texts", async () => {
    let r = await fetch(`${gbase}/neighbours/3?k=5`);
    assert.equal(r.status, 200);
    const n = (await r.json()) as { id: number; text: string; neighbours: { id: number; distance: number }[] };
    assert.equal(n.text, g.store.text(3));
    assert.deepEqual(
      n.neighbours.map((x) => x.id),
      Array.from(g.row(3).ids.slice(0, 5)),
    );
    assert.equal((await fetch(`${gbase}/neighbours/${g.size}`)).status, 422);
    // a path between two ids equals the library's
    const want = minimaxPath((i) => g.row(i), g.size, 3, 200)!;
    r = await fetch(`${gbase}/path`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ from: 3, to: 200 }) });
    const p = (await r.json()) as { found: boolean; maxStep: number; steps: { id: number; text: string }[] };
    assert.equal(p.found, want !== null);
    if (want) {
      assert.deepEqual(
        p.steps.map((s) => s.id),
        want.steps.map((s) => s.id),
      );
      assert.ok(Math.abs(p.maxStep - want.maxStep) < 1e-6);
      assert.equal(p.steps[0]!.text, g.store.text(3));
    }
    // a text snaps to its own sentence
    r = await fetch(`${gbase}/path`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ from: g.store.text(3), to: 3, lang: g.store.lang(3) }),
    });
    const self = (await r.json()) as { from: number; steps: unknown[] };
    assert.equal(self.from, 3);
    assert.equal(self.steps.length, 1);
    // ids and texts in distinct fields: from_id is an id, from_text a text (even "3"), from a JSON
    // number an id; exactly one of them per end
    const path = (body: unknown) => fetch(`${gbase}/path`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    r = await path({ from_id: 3, to_text: g.store.text(3), lang: g.store.lang(3) });
    assert.equal(r.status, 200);
    const byFields = (await r.json()) as { from: number; to: number; steps: unknown[] };
    assert.deepEqual([byFields.from, byFields.to, byFields.steps.length], [3, 3, 1]);
    assert.equal((await path({ from_id: '3', to: 3 })).status, 422, 'from_id takes numbers only');
    assert.equal((await path({ from: 3, from_id: 3, to: 4 })).status, 422, 'two fields for one end');
    assert.equal((await path({ to: 4 })).status, 422, 'no from');
    r = await path({ from_text: '3', to_id: 3 });
    assert.equal(r.status, 200);
    const asText = (await r.json()) as { from: number };
    const legacy = (await (await path({ from: '3', to: 3 })).json()) as { from: number };
    assert.equal(asText.from, legacy.from, 'from_text "3" is a text, as a string in from');
    // without a graph: 503
    assert.equal((await fetch(`${base}/neighbours/1`)).status, 503);
  });
});

// xling serve's batch path and body limits over loopback: requests with different options pooled
// into one batch (normalised or not, centred with a given language, identified per text, not
// centred, token ids, fewer dimensions, both routes) each get exactly what they get alone; the
// native formatter's worker-thread variant writes the same bytes as the synchronous one; and a body
// over the limit that the client is still sending slowly is read to its end and answered 413
// (Content-Length, chunked, Expect: 100-continue), while one declared over the drain bound is
// answered at once. No assertion depends on timing.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FastifyInstance } from 'fastify';
import { loadSentenceEncoder } from '../../src/embed/model-dir.js';
import { SentenceEncoderModel } from '../../src/embed/model.js';
import { formatJoinRows, formatJoinRowsAsync } from '../../src/kernels.js';
import { native } from '../../src/native.js';
import { buildServer, closeGracefully, SERVE_LIMITS } from '../../src/serve/server.js';
import { devColumn, tinyDualModel } from '../fixtures/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'xling-serve-batching-'));
const modelDir = join(dir, 'model');
const BODY_LIMIT = 64 << 10;
let model: SentenceEncoderModel;
let app: FastifyInstance;
let base = '';

before(async () => {
  tinyDualModel(dir, modelDir);
  model = loadSentenceEncoder(modelDir);
  app = await buildServer({ model, modelDir, bodyLimit: BODY_LIMIT });
  base = await app.listen({ port: 0, host: '127.0.0.1' });
});
after(async () => {
  if (app) await closeGracefully(app, 500);
  rmSync(dir, { recursive: true, force: true });
});

const post = (path: string, body: unknown) =>
  fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const batches = async () => Number(/^xling_batch_sentences_count (\d+)$/m.exec(await (await fetch(base + '/metrics')).text())![1]);

describe('xling serve: pooled requests', () => {
  it('requests with different options in one batch each get exactly their answer alone', async () => {
    const de = devColumn('de').slice(0, 6),
      fr = devColumn('fr').slice(0, 6),
      ja = devColumn('ja').slice(0, 3);
    const ids = Array.from(model.tokenizer.encode(de[0]!));
    const requests: [string, Record<string, unknown>][] = [
      ['/embed', { inputs: [...de.slice(0, 3), ...fr.slice(0, 3), ...ja] }],
      ['/embed', { inputs: de, normalize: false }],
      ['/embed', { inputs: fr, lang: 'fr' }],
      ['/embed', { inputs: fr, lang: 'fr', normalize: false }],
      ['/embed', { inputs: [...ja, ' '], lang: null }],
      ['/embed', { inputs: de, center: false }],
      ['/embed', { inputs: [ids, ids.slice(0, 5)] }],
      ['/embed', { inputs: [...fr, ...de], dimensions: 7 }],
      ['/v1/embeddings', { input: [...de, ...ja] }],
      ['/v1/embeddings', { input: fr, encoding_format: 'base64' }],
      ['/embed', { inputs: 'Open file' }],
      ['/embed', { inputs: ['   ', ' ', 'x'] }], // blank inputs (an empty string is refused: 422)
    ];
    const answer = async (r: Response) => ({
      status: r.status,
      lang: r.headers.get('x-xling-lang'),
      center: r.headers.get('x-xling-center'),
      body: await r.text(),
    });
    const alone: Awaited<ReturnType<typeof answer>>[] = [];
    for (const [path, body] of requests) alone.push(await answer(await post(path, body)));
    for (const a of alone) assert.equal(a.status, 200, a.body);
    // together, until some of them shared a batch (the first usually goes alone)
    let pooled = false;
    for (let attempt = 0; attempt < 20 && !pooled; attempt++) {
      const before = await batches();
      const together = await Promise.all(requests.map(([path, body]) => post(path, body).then(answer)));
      pooled = (await batches()) - before < requests.length;
      together.forEach((t, i) => assert.deepEqual(t, alone[i], `request ${i} (${JSON.stringify(requests[i]![1]).slice(0, 60)})`));
    }
    assert.ok(pooled, 'some requests shared a batch');
  });

  it("the formatter's worker-thread variant writes the synchronous one's bytes", async () => {
    assert.equal(typeof native.format.joinRowsAsync, 'function', 'the addon has joinRowsAsync (npm run build:native)');
    const d = 5,
      rows = new Float32Array(4 * d + 3).map((_, i) => Math.sin(i * 1.7) * 10 ** ((i % 9) - 4));
    rows[3] = NaN;
    rows[8] = Infinity;
    rows[9] = -0;
    rows[11] = 1e-45;
    const view = rows.subarray(3, 3 + 4 * d);
    const parts = ['{"a":[', ',', '],"é":[', ',', ']}'];
    assert.deepEqual(await formatJoinRowsAsync(view, d, parts), formatJoinRows(view, d, parts));
    assert.equal((await formatJoinRowsAsync(new Float32Array(0), d, ['[]'])).toString(), '[]');
    assert.throws(() => formatJoinRowsAsync(view, d, ['[', ']']), /parts must be an array of rows \+ 1 strings/);
    assert.throws(() => formatJoinRowsAsync(view, 3, parts), /not whole rows/);
  });
});

/** Sends a request head, then `body` in chunks (each written before the next, with pauses), and collects everything the server writes until it closes. */
async function slowUpload(head: string, chunks: Buffer[], o: { waitFor100?: boolean } = {}): Promise<{ response: string; writeErrors: string[] }> {
  const { port } = new URL(base);
  const s = await new Promise<Socket>((resolve, reject) => {
    const c = connect(Number(port), '127.0.0.1', () => resolve(c));
    c.once('error', reject);
  });
  let response = '';
  const writeErrors: string[] = [];
  const closed = new Promise<void>((resolve) => s.on('close', () => resolve()));
  s.on('error', (e) => writeErrors.push((e as NodeJS.ErrnoException).code ?? e.message));
  let seen100: () => void = () => {};
  const got100 = new Promise<void>((resolve) => {
    seen100 = resolve;
  });
  s.on('data', (b: Buffer) => {
    response += b.toString('latin1');
    if (/^HTTP\/1\.1 100 /.test(response)) seen100();
  });
  s.write(head);
  if (o.waitFor100) {
    await got100;
    response = response.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '');
  }
  for (const [i, c] of chunks.entries()) {
    if (s.destroyed) break;
    await new Promise<void>((resolve) =>
      s.write(c, (e) => {
        if (e) writeErrors.push((e as NodeJS.ErrnoException).code ?? e.message);
        resolve();
      }),
    );
    await new Promise((r) => (i % 8 === 7 ? setTimeout(r, 2) : setImmediate(r)));
  }
  await closed;
  return { response, writeErrors };
}

describe('xling serve: an oversized body still being sent', () => {
  // a JSON body three times the limit, in 4 KiB pieces
  const body = Buffer.from(JSON.stringify({ inputs: ['x'.repeat(3 * BODY_LIMIT)] }));
  const pieces = (b: Buffer) => Array.from({ length: Math.ceil(b.length / 4096) }, (_, i) => b.subarray(i * 4096, (i + 1) * 4096));
  const expect413 = (r: { response: string; writeErrors: string[] }, what: string) => {
    assert.deepEqual(r.writeErrors, [], `${what}: the upload was not cut off`);
    assert.match(r.response, /^HTTP\/1\.1 413 /, `${what}: ${r.response.slice(0, 80)}`);
    const json = JSON.parse(r.response.slice(r.response.indexOf('\r\n\r\n') + 4)) as { error: string; error_type: string };
    assert.match(json.error, /Payload too large/);
    assert.equal(json.error_type, 'Validation');
  };

  it('with Content-Length: read to its end, then 413', async () => {
    expect413(
      await slowUpload(`POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`, pieces(body)),
      'Content-Length',
    );
  });

  it('chunked: read to its end, then 413', async () => {
    const framed = pieces(body).map((c) => Buffer.concat([Buffer.from(`${c.length.toString(16)}\r\n`), c, Buffer.from('\r\n')]));
    framed.push(Buffer.from('0\r\n\r\n'));
    expect413(await slowUpload('POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n', framed), 'chunked');
  });

  it('after 100 Continue: read to its end, then 413', async () => {
    expect413(
      await slowUpload(
        `POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${body.length}\r\n\r\n`,
        pieces(body),
        { waitFor100: true },
      ),
      '100-continue',
    );
  });

  it('a body declared over the bound is answered 413 at once, without its bytes; the server keeps answering', async () => {
    const declared = SERVE_LIMITS.drainFactor * BODY_LIMIT + 1;
    const r = await slowUpload(`POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n`, []);
    assert.match(r.response, /^HTTP\/1\.1 413 /);
    assert.equal((await post('/embed', { inputs: 'still answering' })).status, 200);
  });
});

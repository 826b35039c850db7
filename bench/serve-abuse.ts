// A mixed abuse run against `xling serve` on loopback: for --minutes M, a bounded
// number of clients (--clients, default 16) send, in a seeded random mix, ordinary /embed and
// /search requests and hostile ones — bodies abandoned half-way, requests abandoned while being
// embedded, 100k-level nested JSON, gzip bombs, invalid UTF-8, zero and overflowing vectors,
// nprobe on a Flat index, oversized /mine, wrong methods, wrong API keys, header trickles. It
// records the server's resident memory (RSS) after a warm-up and at the end, every status per
// kind of request, and checks that the server ends with zero requests in flight and /health 200.
//   node dist/bench/serve-abuse.js [--model DIR] [--minutes M] [--clients N] [--json]
// Without --model, a model of configs/fast-1h.json's shape is trained for a few steps.
import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { loadSentenceEncoder } from '../src/embed/model-dir.js';
import { indexFactory } from '../src/index/faiss.js';
import { loadTable } from '../src/train/prepare.js';
import { Rng } from '../src/util/rng.js';
import { benchModel, benchRoot, jsonMode } from './common.js';

const repo = join(benchRoot, '..');
const cli = join(repo, 'dist', 'src', 'cli', 'main.js');
const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const KEY = 'abuse-key';

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

function startServer(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [cli, 'serve', '--port', '0', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (b: Buffer) => {
      err += b.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) resolve({ child, url: m[1]! });
    });
    child.on('exit', (code) => reject(new Error(`xling serve exited (${code}): ${err.slice(-2000)}`)));
  });
}

/** Raw HTTP on a socket: writes `head` (+ `body` parts every `gapMs`), and closes after `abortMs` if given; resolves with the status line's code or 'aborted'/'closed'. */
function raw(url: string, parts: string[], o: { gapMs?: number; abortMs?: number; limitMs?: number } = {}): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve) => {
    const s = connect(Number(port), '127.0.0.1');
    let text = '',
      done = false;
    const finish = (r: string) => {
      if (done) return;
      done = true;
      clearTimeout(limit);
      clearInterval(tick);
      s.destroy();
      resolve(r);
    };
    const limit = setTimeout(() => finish('client-timeout'), o.limitMs ?? 30000);
    let i = 0;
    const tick = setInterval(() => {
      if (i < parts.length && !s.destroyed) s.write(parts[i++]!);
    }, o.gapMs ?? 1);
    s.on('connect', () => {
      if (o.abortMs !== undefined) setTimeout(() => finish('aborted'), o.abortMs);
    });
    s.on('data', (d: Buffer) => {
      text += d.toString();
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (m) finish(m[1]!);
    });
    s.on('error', () => finish('closed'));
    s.on('close', () => finish('closed'));
  });
}

export async function run() {
  const minutes = Number(arg('--minutes') ?? 10),
    clients = Number(arg('--clients') ?? 16);
  const table = await loadTable(join(repo, 'data', 'sample', 'gettext.train.tsv.gz'));
  const sentences = table.rows.flatMap((r) => [...r.values()]).filter((s) => s.trim());
  const tmp = mkdtempSync(join(tmpdir(), 'xling-serve-abuse-'));
  let server: { child: ChildProcess; url: string } | undefined;
  try {
    const modelDir = benchModel(tmp);
    const model = loadSentenceEncoder(modelDir);
    const store = sentences.slice(0, 2000);
    writeFileSync(join(tmp, 'store.txt'), store.join('\n') + '\n');
    const index = indexFactory(model.dim, 'Flat');
    index.add(model.embed(store));
    index.write(join(tmp, 'index.faiss'));
    // short timeouts (a header trickle is cut after 2 s): the tuning knobs of xling serve --config
    writeFileSync(join(tmp, 'serve.json'), JSON.stringify({ requestTimeout: 5, headersTimeout: 2 }));
    server = await startServer([
      '--model',
      modelDir,
      '--index',
      join(tmp, 'index.faiss'),
      '--store',
      join(tmp, 'store.txt'),
      '--api-key',
      KEY,
      '--max-concurrent-requests',
      '64',
      '--config',
      join(tmp, 'serve.json'),
      '--map-sample',
      '500',
    ]);
    const url = server.url,
      pid = server.child.pid!;
    const auth = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
    const rng = new Rng(7);
    const batch = () => Array.from({ length: 32 }, () => sentences[Math.floor(rng.next() * sentences.length)]!);
    const post = (path: string, body: string | Uint8Array, headers: Record<string, string> = {}, signal?: AbortSignal) =>
      fetch(url + path, { method: 'POST', headers: { ...auth, ...headers }, body, signal }).then(
        async (r) => {
          await r.arrayBuffer();
          return String(r.status);
        },
        (e: Error) => (e.name === 'AbortError' ? 'aborted' : 'error'),
      );
    const bomb = gzipSync(JSON.stringify({ inputs: 'a'.repeat(64 << 20) }));
    const deep = `{"x": ${'['.repeat(100000)}${']'.repeat(100000)}, "inputs": "a"}`;
    const kinds: Record<string, () => Promise<string>> = {
      embed: () => post('/embed', JSON.stringify({ inputs: batch(), truncate: true })),
      embed_openai: () => post('/v1/embeddings', JSON.stringify({ input: batch(), truncate: true, dimensions: 64 })),
      search: () => post('/search', JSON.stringify({ text: batch()[0], k: 10 })),
      abort_mid_body: () =>
        raw(
          url,
          [
            `POST /embed HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"inputs": ["half a bo`,
          ],
          { abortMs: 20 },
        ),
      abort_mid_handler: () => {
        const ac = new AbortController();
        setTimeout(() => ac.abort(), 5 + rng.next() * 30);
        return post('/mine', JSON.stringify({ src: batch().concat(batch()), trg: batch().concat(batch()), k: 4 }), {}, ac.signal);
      },
      deep_json: () => post('/embed', deep),
      gzip_bomb: () => post('/embed', bomb, { 'content-encoding': 'gzip' }),
      invalid_utf8: () => post('/embed', Buffer.concat([Buffer.from('{"inputs": ["'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"]}')])),
      bad_vectors: () => post('/search', JSON.stringify({ vector: Array(model.dim).fill(rng.next() < 0.5 ? 0 : 1e308) })),
      nprobe_flat: () => post('/search', JSON.stringify({ text: 'x', nprobe: 8 })),
      mine_too_big: () => post('/mine', JSON.stringify({ src: Array(1024).fill('a'), trg: Array(1024).fill('b'), k: 64 })),
      wrong_method: () =>
        fetch(url + '/embed', { headers: auth }).then(
          (r) => String(r.status),
          () => 'error',
        ),
      wrong_key: () => post('/embed', JSON.stringify({ inputs: 'x' }), { authorization: 'Bearer nope' }),
      header_trickle: () => raw(url, ['GET /health HTTP/1.1\r\n', ...Array.from({ length: 200 }, (_, i) => `X-${i}: y\r\n`)], { gapMs: 100 }),
      map: () =>
        fetch(url + '/map', { headers: auth }).then(
          async (r) => {
            await r.arrayBuffer();
            return String(r.status);
          },
          () => 'error',
        ),
    };
    const names = Object.keys(kinds);
    const counts: Record<string, Record<string, number>> = {};
    const inflight = async () => Number(/^xling_inflight_requests (\S+)$/m.exec(await (await fetch(url + '/metrics', { headers: auth })).text())?.[1]);
    // warm-up: ordinary traffic and one of each kind, then the baseline
    for (let i = 0; i < 50; i++) await kinds.embed!();
    for (const n of names) await kinds[n]!();
    const rssBefore = rssMb(pid);
    const samples: [number, number][] = [[0, rssBefore]];
    const t0 = Date.now(),
      end = t0 + minutes * 60000;
    const sampler = setInterval(() => samples.push([(Date.now() - t0) / 60000, rssMb(pid)]), 10000);
    let total = 0;
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (Date.now() < end) {
          const n = names[Math.floor(rng.next() * names.length)]!;
          const r = await kinds[n]!();
          (counts[n] ??= {})[r] = (counts[n]![r] ?? 0) + 1;
          total++;
        }
      }),
    );
    clearInterval(sampler);
    const t = Date.now();
    while ((await inflight()) !== 0 && Date.now() - t < 30000) await new Promise((r) => setTimeout(r, 50));
    const rssAfter = rssMb(pid);
    const health = (await fetch(url + '/health')).status;
    return {
      name: 'serve_abuse',
      minutes,
      clients,
      requests: total,
      requests_per_s: total / (minutes * 60),
      statuses: counts,
      rss_mb_before: rssBefore,
      rss_mb_after: rssAfter,
      rss_mb_max: Math.max(...samples.map(([, v]) => v)),
      rss_ratio_after_before: rssAfter / rssBefore,
      inflight_after: await inflight(),
      health_after: health,
      rss_samples: samples.map(([m, v]) => [Number(m.toFixed(2)), Number(v.toFixed(1))]),
    };
  } finally {
    server?.child.kill('SIGTERM');
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith('serve-abuse.js')) {
  const r = await run();
  if (jsonMode()) console.log(JSON.stringify(r));
  else console.log(JSON.stringify(r, null, 1));
}

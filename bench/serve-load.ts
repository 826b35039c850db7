// Load test of `xling serve` on loopback with autocannon: throughput and p50/p99 latency of
// POST /embed (and of POST /v1/embeddings with encoding_format base64, the OpenAI Python client's
// default) at 1, 8 and 64 concurrent clients with 1 and 32 sentences per request; the
// server's best throughput against `xling embed`'s path (SentenceEncoderModel.embed, normalised
// and centred, in batches as xling embed makes them) on the same sentences in one process; and,
// with --memory-minutes M, the server's resident memory sampled over M minutes of load.
//   node dist/bench/serve-load.js [--model DIR] [--seconds S] [--memory-minutes M] [--max-batch-tokens N]
//        [--server-node-options '--max-semi-space-size=32'] [--no-base64] [--json]
// `ratio` is the best /embed throughput over the in-process path's; `ratio_base64` the same for
// /v1/embeddings in base64.
// Without --model, a model of configs/fast-1h.json's shape is trained for a few steps on the
// bundled sample (throughput does not depend on the weights).
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSentenceEncoder } from '../src/embed/model-dir.js';
import { setNumThreads } from '../src/tensor/index.js';
import { loadTable } from '../src/train/prepare.js';
import { benchModel, benchRoot, jsonMode, threadsArg } from './common.js';

interface CannonResult {
  duration: number;
  '2xx': number;
  non2xx: number;
  errors: number;
  timeouts: number;
  latency: { p50: number; p99: number; average: number };
}
type Cannon = (o: Record<string, unknown>) => Promise<CannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Cannon;

const repo = join(benchRoot, '..');
const cli = join(repo, 'dist', 'src', 'cli', 'main.js');
const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};

/** Starts `xling serve` on a free port; resolves with the child and its address once it listens. */
function startServer(model: string, threads: number, extra: string[], nodeOptions?: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [...(nodeOptions ? nodeOptions.split(' ') : []), cli, 'serve', '--model', model, '--port', '0', '--threads', String(threads), ...extra],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
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

/** CPU seconds (user + system, all threads) a process has used (Linux /proc; NaN elsewhere). */
function cpuSeconds(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return NaN;
  }
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

// truncate: true, as TEI clients send it: a few sample sentences have more n-gram features than the
// server takes (2048), which is a 413 otherwise
type Route = '/embed' | '/v1/embeddings base64';
function bodies(
  sentences: string[],
  perRequest: number,
  route: Route,
  count = 256,
): { method: string; path: string; headers: Record<string, string>; body: string }[] {
  return Array.from({ length: count }, (_, i) => {
    const texts = Array.from({ length: perRequest }, (_, j) => sentences[(i * perRequest + j) % sentences.length]!);
    return {
      method: 'POST',
      path: route === '/embed' ? '/embed' : '/v1/embeddings',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(
        route === '/embed' ? { inputs: texts, truncate: true } : { input: texts, model: 'xling', encoding_format: 'base64', truncate: true },
      ),
    };
  });
}

async function load(url: string, sentences: string[], clients: number, perRequest: number, seconds: number, route: Route = '/embed', pid?: number) {
  // CPU per sentence (the server's, and the load generator's in this process): less sensitive than
  // throughput to other work on a shared machine
  const cpu0 = cpuSeconds(pid),
    own0 = process.cpuUsage();
  const r = await autocannon({ url, connections: clients, duration: seconds, requests: bodies(sentences, perRequest, route), timeout: 60 });
  const serverCpu = cpuSeconds(pid) - cpu0,
    own = process.cpuUsage(own0);
  const sent = r['2xx'] * perRequest;
  if (r.non2xx || r.errors) throw new Error(`load ${route} ${clients}×${perRequest}: ${r.non2xx} non-2xx responses, ${r.errors} errors`);
  return {
    route,
    clients,
    sentences_per_request: perRequest,
    requests_per_s: r['2xx'] / r.duration,
    sentences_per_s: (r['2xx'] * perRequest) / r.duration,
    latency_p50_ms: r.latency.p50,
    latency_p99_ms: r.latency.p99,
    server_cpu_us_per_sentence: sent ? (serverCpu * 1e6) / sent : NaN,
    loadgen_cpu_us_per_sentence: sent ? (own.user + own.system) / sent : NaN,
  };
}

export async function run() {
  const loadStart = loadavg();
  const threads = threadsArg();
  setNumThreads(threads);
  const seconds = Number(arg('--seconds') ?? 10);
  const memoryMinutes = Number(arg('--memory-minutes') ?? 0);
  const table = await loadTable(join(repo, 'data', 'sample', 'gettext.train.tsv.gz'));
  const sentences = table.rows.flatMap((r) => [...r.values()]).filter((s) => s.trim());
  const tmp = mkdtempSync(join(tmpdir(), 'xling-serve-bench-'));
  let server: { child: ChildProcess; url: string } | undefined;
  try {
    const model = benchModel(tmp);
    // xling embed's path, in this process, on the same sentences
    const m = loadSentenceEncoder(model);
    const lang = m.identifyLanguage(sentences.slice(0, 2000))?.lang;
    m.embed(sentences.slice(0, 1000), { lang, center: true });
    // the better of two passes (a pass slowed by other work on the machine would flatter the ratio)
    let embedRate = 0,
      embedCpu = Infinity;
    for (let pass = 0; pass < 2; pass++) {
      const t0 = performance.now(),
        c0 = process.cpuUsage();
      m.embed(sentences, { lang, center: true, normalize: true });
      const c = process.cpuUsage(c0);
      embedRate = Math.max(embedRate, sentences.length / ((performance.now() - t0) / 1000));
      embedCpu = Math.min(embedCpu, (c.user + c.system) / sentences.length);
    }
    // and the command a user runs on the same sentences (ten times over, so that loading the 1 GB
    // model is a small part): process start, model load, language identification, reading and
    // writing included
    const repeat = 10;
    writeFileSync(join(tmp, 'sents.txt'), (sentences.join('\n') + '\n').repeat(repeat));
    const t1 = performance.now();
    const e = spawnSync(process.execPath, [cli, 'embed', '--model', model, '--input', join(tmp, 'sents.txt'), '--output', join(tmp, 'sents.npy'), '--quiet'], {
      encoding: 'utf8',
      env: { ...process.env, XLING_THREADS: String(threads) },
    });
    if (e.status !== 0) throw new Error(`xling embed failed: ${e.stderr.slice(-2000)}`);
    const cliRate = (repeat * sentences.length) / ((performance.now() - t1) / 1000);

    const batchTokens = arg('--max-batch-tokens');
    server = await startServer(model, threads, batchTokens ? ['--max-batch-tokens', batchTokens] : [], arg('--server-node-options'));
    await load(server.url, sentences, 8, 32, 3); // warm-up
    const runs = [];
    for (const perRequest of [1, 32])
      for (const clients of [1, 8, 64]) runs.push(await load(server.url, sentences, clients, perRequest, seconds, '/embed', server.child.pid));
    const best = Math.max(...runs.map((r) => r.sentences_per_s));
    const base64Runs = [];
    if (!process.argv.includes('--no-base64')) {
      await load(server.url, sentences, 8, 32, 3, '/v1/embeddings base64'); // warm-up
      for (const perRequest of [1, 32])
        for (const clients of [1, 8, 64])
          base64Runs.push(await load(server.url, sentences, clients, perRequest, seconds, '/v1/embeddings base64', server.child.pid));
    }
    const bestBase64 = base64Runs.length ? Math.max(...base64Runs.map((r) => r.sentences_per_s)) : null;
    // how the dynamic batcher pooled the requests over all runs (the server's /metrics)
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    const metric = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1] ?? NaN);
    const meanBatch = metric('xling_batch_sentences_sum') / metric('xling_batch_sentences_count');
    const out: Record<string, unknown> = {
      name: 'serve_load',
      threads,
      seconds_per_run: seconds,
      sentences: sentences.length,
      runs,
      embed_sents_per_s: embedRate,
      embed_cpu_us_per_sentence: embedCpu,
      embed_cli_sents_per_s: cliRate,
      serve_best_sents_per_s: best,
      ratio: best / embedRate,
      ratio_vs_embed_cli: best / cliRate,
      mean_batch_sentences: meanBatch,
      runs_base64: base64Runs,
      serve_best_base64_sents_per_s: bestBase64,
      ratio_base64: bestBase64 === null ? null : bestBase64 / embedRate,
      load_average_start: loadStart,
      load_average: loadavg(),
    };
    if (memoryMinutes > 0) {
      const samples: [number, number][] = [];
      const t1 = Date.now();
      const timer = setInterval(() => samples.push([(Date.now() - t1) / 60000, rssMb(server!.child.pid!)]), 5000);
      const r = await load(server.url, sentences, 8, 32, memoryMinutes * 60);
      clearInterval(timer);
      const after1 = samples.filter(([t]) => t >= 1).map(([, v]) => v);
      out.memory = {
        minutes: memoryMinutes,
        load: r,
        rss_mb_first: samples[0]?.[1],
        rss_mb_after_1min: after1[0],
        rss_mb_end: samples.at(-1)?.[1],
        rss_mb_max: Math.max(...samples.map(([, v]) => v)),
        growth_after_1min_mb: (samples.at(-1)?.[1] ?? NaN) - (after1[0] ?? NaN),
      };
    }
    return out;
  } finally {
    server?.child.kill('SIGTERM');
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith('serve-load.js')) {
  const r = await run();
  if (jsonMode()) console.log(JSON.stringify(r));
  else {
    for (const x of [...(r.runs as Awaited<ReturnType<typeof load>>[]), ...(r.runs_base64 as Awaited<ReturnType<typeof load>>[])])
      console.log(
        `${x.route} ${String(x.clients).padStart(2)} clients × ${String(x.sentences_per_request).padStart(2)} sentences: ${x.requests_per_s.toFixed(0)} req/s, ${x.sentences_per_s.toFixed(0)} sentences/s, p50 ${x.latency_p50_ms} ms, p99 ${x.latency_p99_ms} ms, server CPU ${x.server_cpu_us_per_sentence.toFixed(0)} µs a sentence`,
      );
    console.log(
      `xling embed's path: ${(r.embed_sents_per_s as number).toFixed(0)} sentences/s (the command: ${(r.embed_cli_sents_per_s as number).toFixed(0)}/s); server best ${(r.serve_best_sents_per_s as number).toFixed(0)} → ${(r.ratio as number).toFixed(2)}× (${(r.ratio_vs_embed_cli as number).toFixed(2)}× the command)`,
    );
    if (r.ratio_base64 !== null)
      console.log(`/v1/embeddings base64: best ${(r.serve_best_base64_sents_per_s as number).toFixed(0)} → ${(r.ratio_base64 as number).toFixed(2)}×`);
    console.log(`load average (1, 5, 15 min) at the end: ${(r.load_average as number[]).map((x) => x.toFixed(2)).join(', ')}`);
    if (r.memory) console.log(`memory: ${JSON.stringify(r.memory)}`);
  }
}

// What the job queue costs: `xling embed` of N sentences against `xling cluster embed` of the same
// file through one local worker with the same threads (a private redis-server), both timed from
// the command's start to its output, side by side. Also checks the two outputs are equal, and
// measures Redis memory per queued job (for projecting very large flows).
//   node dist/bench/cluster-embed.js [--n 1000000] [--shards 16] [--model DIR] [--json]
// Sentences: every cell of ../shared/data/gettext/train.tsv.gz (repeated up to N lines), or the
// bundled sample when the shared data is absent.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalRedis } from '../src/cluster/local-redis.js';
import { NpyRowReader } from '../src/io/npy.js';
import { loadTable } from '../src/train/prepare.js';
import { benchModel, benchRoot, jsonMode, threadsArg } from './common.js';

const repo = join(benchRoot, '..');
const cli = join(repo, 'dist', 'src', 'cli', 'main.js');
const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};

function timed(args: string[]): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`xling ${args.slice(0, 2).join(' ')} failed: ${r.stderr.slice(-2000)}`);
  return (performance.now() - t0) / 1000;
}

function maxAbsDiff(a: string, b: string): number {
  const ra = NpyRowReader.open(a),
    rb = NpyRowReader.open(b);
  try {
    if (ra.rows !== rb.rows || ra.cols !== rb.cols) return Infinity;
    let worst = 0;
    for (let s = 0; s < ra.rows; s += 65536) {
      const x = ra.readRows(s, Math.min(ra.rows, s + 65536)),
        y = rb.readRows(s, Math.min(rb.rows, s + 65536));
      for (let i = 0; i < x.length; i++) worst = Math.max(worst, Math.abs(x[i]! - y[i]!));
    }
    return worst;
  } finally {
    ra.close();
    rb.close();
  }
}

/** Redis memory per queued job: a flow of 2,000 one-line shards submitted to an empty Redis (no worker). */
async function redisBytesPerJob(model: string, input: string, tmp: string): Promise<number> {
  const redis = await startLocalRedis(join(tmp, 'redis-mem'));
  const used = async () => {
    const c = new Redis(redis.url);
    try {
      return Number(/used_memory:(\d+)/.exec(await c.info('memory'))![1]);
    } finally {
      c.disconnect();
    }
  };
  try {
    const small = join(tmp, 'small.txt');
    const jobs = 2000;
    writeFileSync(small, readFileSync(input, 'utf8').split('\n').slice(0, jobs).join('\n') + '\n');
    const before = await used();
    timed([
      'cluster',
      'embed',
      '--model',
      model,
      '--input',
      small,
      '-o',
      join(tmp, 'small.npy'),
      '--redis',
      redis.url,
      '--shards',
      String(jobs),
      '--work',
      join(tmp, 'work-mem'),
      '--lang',
      'en',
      '--detach',
      '--quiet',
    ]);
    return ((await used()) - before) / (jobs + 1);
  } finally {
    await redis.stop();
  }
}

export async function run() {
  const threads = threadsArg();
  const n = Number(arg('--n') ?? 1000000),
    shards = Number(arg('--shards') ?? 16);
  const tmp = mkdtempSync(join(tmpdir(), 'xling-cluster-bench-'));
  const shared = join(repo, '..', 'shared', 'data', 'gettext', 'train.tsv.gz');
  const table = await loadTable(existsSync(shared) ? shared : join(repo, 'data', 'sample', 'gettext.train.tsv.gz'));
  const cells = table.rows.flatMap((r) => [...r.values()]).filter((s) => s.trim());
  const input = join(tmp, 'corpus.txt');
  writeFileSync(input, Array.from({ length: n }, (_, i) => cells[i % cells.length]!).join('\n') + '\n');
  const redis = await startLocalRedis(join(tmp, 'redis'));
  const worker = spawn(process.execPath, [cli, 'worker', '--redis', redis.url, '--threads', String(threads), '--quiet'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      let err = '';
      worker.stderr!.on('data', (b: Buffer) => {
        err += b.toString();
        if (/ready on/.test(err)) resolve();
      });
      worker.once('exit', (code) => reject(new Error(`xling worker exited (${code}): ${err}`)));
    });
    const model = benchModel(tmp);
    const single = timed(['embed', '--model', model, '--input', input, '-o', join(tmp, 'single.npy'), '--threads', String(threads), '--quiet']);
    const cluster = timed([
      'cluster',
      'embed',
      '--model',
      model,
      '--input',
      input,
      '-o',
      join(tmp, 'cluster.npy'),
      '--redis',
      redis.url,
      '--shards',
      String(shards),
      '--work',
      join(tmp, 'work'),
      '--quiet',
    ]);
    const bytesPerJob = await redisBytesPerJob(model, input, tmp);
    return {
      name: 'cluster_embed',
      sentences: n,
      shards,
      threads,
      single_seconds: single,
      cluster_seconds: cluster,
      redis_bytes_per_queued_job: bytesPerJob,
      ratio: single / cluster,
      overhead: cluster / single - 1,
      max_abs_diff: maxAbsDiff(join(tmp, 'single.npy'), join(tmp, 'cluster.npy')),
    };
  } finally {
    worker.kill('SIGKILL');
    await redis.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith('cluster-embed.js')) {
  const r = await run();
  console.log(
    jsonMode()
      ? JSON.stringify(r)
      : `${r.sentences} sentences, ${r.threads} threads: xling embed ${r.single_seconds.toFixed(1)} s, xling cluster embed (1 worker, ${r.shards} shards) ${r.cluster_seconds.toFixed(1)} s → ${r.ratio.toFixed(3)}× (overhead ${(100 * r.overhead).toFixed(1)}%), max |Δ| ${r.max_abs_diff}; Redis ${r.redis_bytes_per_queued_job.toFixed(0)} bytes per queued job`,
  );
}

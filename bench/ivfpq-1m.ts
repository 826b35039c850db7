// Index build and search at scale: 1M × 1024-d random-but-clustered unit vectors, factory
// OPQ32,IVF4096,PQ32 (inner product). Reports bytes per vector, build time (through the CLI,
// exactly as a user runs it), queries/s and recall@10 at nprobe 16/64/256, and Python faiss's
// queries/s on the same index file and queries (same threads) as the side-by-side figure.
//
//   node dist/bench/ivfpq-1m.js [--n 1000000] [--queries 2000] [--dir /tmp/xling-ivfpq] [--keep]
//
// Data: 4,000 cluster centres in a 64-d latent space, points = centre + 0.6·noise, mapped to
// 1024-d by a fixed random projection, plus 0.05·isotropic noise, L2-normalised. Sentence
// embeddings have a low intrinsic dimension too; isotropic 1024-d noise would make every
// neighbour equally far and no compressed index meaningful.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { indexFactory, readIndex, setFaissThreads, SearchResult } from '../src/index/faiss.js';
import { NpyRowReader, NpyWriter } from '../src/io/npy.js';
import { embedding, manualSeed, normalize, randint, randn, setNumThreads, tidy } from '../src/tensor/index.js';
import { benchRoot, jsonMode, python, threadsArg } from './common.js';

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : dflt;
};
const log = (s: string) => process.stderr.write(`[ivfpq-1m] ${s}\n`);

/** Writes base.npy (n rows) and queries.npy (nq rows) of d-dim clustered unit vectors into dir. */
export function generate(dir: string, n: number, nq: number, d: number): void {
  manualSeed(1234);
  const latent = 64,
    clusters = 4000,
    chunk = 50000;
  const centres = randn([clusters, latent]);
  const proj = randn([latent, d]).div(Math.sqrt(latent));
  const write = (file: string, rows: number) => {
    const w = NpyWriter.open(file, d, 'float32');
    for (let i = 0; i < rows; i += chunk) {
      const m = Math.min(chunk, rows - i);
      const block = tidy(() => {
        const z = embedding(centres, randint(0, clusters, [m])).add(randn([m, latent]).mul(0.6));
        return normalize(z.matmul(proj).add(randn([m, d]).mul(0.05)), 1).toFloat32Array();
      });
      w.append(block);
    }
    w.close();
  };
  write(join(dir, 'base.npy'), n);
  write(join(dir, 'queries.npy'), nq);
  centres.dispose();
  proj.dispose();
}

export function recall(truth: SearchResult, got: SearchResult, k: number): { tenAt10: number; oneAt10: number } {
  let inter = 0,
    first = 0;
  for (let i = 0; i < truth.n; i++) {
    const t = new Set(Array.from(truth.labels.subarray(i * truth.k, i * truth.k + k)));
    const g = Array.from(got.labels.subarray(i * got.k, i * got.k + k));
    for (const l of g) if (t.has(l)) inter++;
    if (g.includes(truth.labels[i * truth.k]!)) first++;
  }
  return { tenAt10: inter / (truth.n * k), oneAt10: first / truth.n };
}

export async function run() {
  const threads = threadsArg();
  setNumThreads(threads);
  setFaissThreads(threads);
  const n = Number(arg('n', '1000000')),
    nq = Number(arg('queries', '2000')),
    d = 1024,
    k = 10;
  const dir = arg('dir', '/tmp/xling-ivfpq');
  const factory = 'OPQ32,IVF4096,PQ32';
  mkdirSync(dir, { recursive: true });
  const base = join(dir, 'base.npy'),
    queries = join(dir, 'queries.npy'),
    indexFile = join(dir, 'corpus.faiss');
  if (!existsSync(base) || NpyRowReader.open(base).rows !== n) {
    const t = performance.now();
    generate(dir, n, nq, d);
    log(`generated ${n} + ${nq} vectors in ${((performance.now() - t) / 1000).toFixed(0)}s`);
  }
  const q = NpyRowReader.open(queries);
  const xq = new Float32Array(q.readRows(0, q.rows));
  q.close();

  // exact top-10 by inner product, base added in chunks
  let t = performance.now();
  const flat = indexFactory(d, 'Flat', 'ip');
  const r = NpyRowReader.open(base);
  for (let i = 0; i < n; i += 100000) flat.add(new Float32Array(r.readRows(i, Math.min(n, i + 100000))));
  r.close();
  const truth = await flat.searchAsync(xq, k);
  flat.dispose();
  log(`exact ground truth in ${((performance.now() - t) / 1000).toFixed(0)}s`);

  // build exactly as a user would
  t = performance.now();
  const cli = join(benchRoot, '..', 'dist', 'src', 'cli', 'main.js');
  const b = spawnSync(process.execPath, [cli, 'index', 'build', '--factory', factory, '--metric', 'ip', '--train-sample', '200000', base, '-o', indexFile], {
    encoding: 'utf8',
    env: { ...process.env, XLING_THREADS: String(threads) },
    stdio: ['ignore', 'inherit', 'pipe'],
  });
  const buildSeconds = (performance.now() - t) / 1000;
  if (b.status !== 0) throw new Error(`index build failed: ${b.stderr.slice(-2000)}`);
  const trainSeconds = Number(/trained .* in ([\d.]+)s/.exec(b.stderr)?.[1] ?? NaN);
  const bytesPerVector = statSync(indexFile).size / n;
  log(`built in ${buildSeconds.toFixed(0)}s (train ${trainSeconds}s), ${bytesPerVector.toFixed(1)} bytes/vector in the file`);

  const idx = readIndex(indexFile);
  const rows: Record<string, number>[] = [];
  for (const nprobe of [16, 64, 256]) {
    idx.setNprobe(nprobe);
    await idx.searchAsync(xq.subarray(0, 100 * d), k); // warm-up
    const t0 = performance.now();
    const res = await idx.searchAsync(xq, k);
    const secs = (performance.now() - t0) / 1000;
    const rc = recall(truth, res, k);
    rows.push({ nprobe, qps: nq / secs, recall_10at10: rc.tenAt10, recall_1at10: rc.oneAt10 });
  }
  idx.dispose();

  const py = spawnSync(python, [join(benchRoot, 'py', 'ivfpq_search.py'), indexFile, queries, String(k), String(threads), '16,64,256'], { encoding: 'utf8' });
  if (py.status !== 0) throw new Error(`python side failed: ${py.stderr.slice(-2000)}`);
  const pyQps = JSON.parse(py.stdout.trim().split('\n').pop()!) as Record<string, number>;
  for (const row of rows) {
    row.python_qps = pyQps[String(row.nprobe)]!;
    row.ratio = row.qps! / row.python_qps;
  }
  if (!process.argv.includes('--keep')) rmSync(indexFile, { force: true });
  return {
    name: 'ivfpq_1m',
    factory,
    n,
    d,
    queries: nq,
    threads,
    build_seconds: buildSeconds,
    train_seconds: trainSeconds,
    bytes_per_vector_file: bytesPerVector,
    code_bytes_per_vector: 32,
    id_bytes_per_vector: 8,
    search: rows,
  };
}

if (process.argv[1]?.endsWith('ivfpq-1m.js')) {
  const res = await run();
  if (jsonMode()) console.log(JSON.stringify(res));
  else {
    console.log(
      `${res.factory}, ${res.n} × ${res.d}, ${res.threads} threads: build ${res.build_seconds.toFixed(0)} s (train ${res.train_seconds} s), ${res.bytes_per_vector_file.toFixed(1)} bytes/vector on disk`,
    );
    for (const r of res.search)
      console.log(
        `  nprobe ${r.nprobe}: ${r.qps!.toFixed(0)} q/s (Python faiss ${r.python_qps!.toFixed(0)} q/s, ${r.ratio!.toFixed(2)}×), 10-recall@10 ${r.recall_10at10!.toFixed(3)}, 1-recall@10 ${r.recall_1at10!.toFixed(3)}`,
      );
  }
}

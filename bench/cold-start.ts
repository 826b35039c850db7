// The CLI's start-up and its throughput with the default model (models/default: a product-quantised
// bag-of-n-grams dual encoder), in one run.
//
// cold_start: `xling embed` of a small input (8 sentences) side by side with the equivalent
// xling/lite script (loadModel(), embed, write the vectors), each a fresh process, alternating,
// `--rounds` times (default 7): `ratio` = the CLI's median wall time / the script's; each one's
// median CPU seconds and resident memory (peak RSS of the process, MB). The vectors of both are
// compared (max |Δ|).
//
// embed_roof: `xling embed` of 200,000 everyday-length sentences (the bundled sample's sentences,
// repeated; `--input FILE` for another) against the machine's roof measured in the same run:
// the memory bandwidth (a sum over 512 MB on the native backend's threads) for the bytes the model
// reads a sentence (its rows' PQ codes and their codebook coordinates: F · (M + 4K) for F features
// a sentence), and the GEMM rate (2880×384 @ 384×2048 on the native backend) for its dense
// 256 → 512 layer (2 · 256 · 512 flops a sentence). `ratio` = sentences/s over the binding (lower)
// roof; the goal is 0.5. Keys: sents_per_s (wall, start-up included), sents_per_cpu_s, rss_mb,
// mem_gbps, gemm_gflops, bytes_per_sent, mem_roof_sents_per_s, gemm_roof_sents_per_s, load_avg.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { readModelConfig } from '../src/embed/model-dir.js';
import { readNpy } from '../src/io/npy.js';
import { loadTable } from '../src/train/prepare.js';
import { ones, randn, setNumThreads, tidy } from '../src/tensor/index.js';
import { benchRoot, jsonMode, threadsArg } from './common.js';

const repo = join(benchRoot, '..');
const mainJs = join(repo, 'dist', 'src', 'cli', 'main.js');
const MODEL = join(repo, 'models', 'default');

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}

/**
 * A module run before a timed process: on exit it writes the process's peak resident memory (MB)
 * and CPU seconds (all its threads) to $XLING_BENCH_RSS.
 */
function rssProbe(dir: string): string {
  const f = join(dir, 'rss.mjs');
  writeFileSync(
    f,
    "import { writeFileSync } from 'node:fs';\nprocess.on('exit', () => { const c = process.cpuUsage(); writeFileSync(process.env.XLING_BENCH_RSS, JSON.stringify({ rss: process.resourceUsage().maxRSS / 1024, cpu: (c.user + c.system) / 1e6 })); });\n",
  );
  return f;
}

/** Runs node with args as a fresh process: wall seconds, CPU seconds (all its threads) and peak resident memory (MB). */
function timed(probe: string, args: string[], dir: string): { wall: number; cpu: number; rss: number } {
  const rssFile = join(dir, 'rss.txt');
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['--import', probe, ...args], {
    encoding: 'utf8',
    env: { ...process.env, XLING_BENCH_RSS: rssFile },
    maxBuffer: 1 << 26,
  });
  const wall = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`bench cold_start: node ${args.join(' ')} failed (${r.status}): ${r.stderr.slice(-2000)}`);
  const { rss, cpu } = JSON.parse(readFileSync(rssFile, 'utf8')) as { rss: number; cpu: number };
  return { wall, cpu, rss };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const SMALL = [
  'Open the file',
  'Datei öffnen',
  'Ouvrir le fichier',
  'Save the document before closing the window.',
  'Speichern Sie das Dokument, bevor Sie das Fenster schließen.',
  'ファイルを開く',
  'Сохранить как…',
  'Abrir el archivo',
];

export async function coldStart(): Promise<Record<string, number | string>> {
  const rounds = Math.max(1, Number(arg('--rounds') ?? 7));
  const dir = mkdtempSync(join(tmpdir(), 'xling-bench-cold-'));
  try {
    const probe = rssProbe(dir);
    const input = join(dir, 'small.txt');
    writeFileSync(input, SMALL.join('\n') + '\n');
    const script = join(dir, 'lite.mjs');
    writeFileSync(
      script,
      `import { readFileSync, writeFileSync } from 'node:fs';
import { loadModel } from ${JSON.stringify(join(repo, 'dist', 'src', 'lite', 'index.js'))};
const lines = readFileSync(process.argv[2], 'utf8').split('\\n').filter((l) => l !== '');
const m = await loadModel();
const v = await m.embed(lines);
writeFileSync(process.argv[3], v);
`,
    );
    const cliOut = join(dir, 'cli.npy'),
      liteOut = join(dir, 'lite.f32');
    const cli = { wall: [] as number[], cpu: [] as number[], rss: [] as number[] },
      lite = { wall: [] as number[], cpu: [] as number[], rss: [] as number[] };
    for (let r = 0; r < rounds; r++) {
      // alternate the order: a change of load mid-run hits both
      const runs: [typeof cli, string[]][] = [
        [cli, [mainJs, 'embed', '--input', input, '-o', cliOut, '--quiet']],
        [lite, [script, input, liteOut]],
      ];
      for (const [acc, args] of r % 2 ? runs.reverse() : runs) {
        const t = timed(probe, args, dir);
        acc.wall.push(t.wall);
        acc.cpu.push(t.cpu);
        acc.rss.push(t.rss);
      }
    }
    const a = readNpy(cliOut).data as Float32Array,
      b = new Float32Array(readFileSync(liteOut).buffer.slice(0));
    let diff = a.length === b.length ? 0 : Infinity;
    for (let i = 0; i < a.length && i < b.length; i++) diff = Math.max(diff, Math.abs(a[i]! - b[i]!));
    return {
      name: 'cold_start',
      sentences: SMALL.length,
      rounds,
      cli_s: median(cli.wall),
      cli_cpu_s: median(cli.cpu),
      lite_cpu_s: median(lite.cpu),
      lite_s: median(lite.wall),
      ratio: median(cli.wall) / median(lite.wall),
      cli_rss_mb: Math.max(...cli.rss),
      lite_rss_mb: Math.max(...lite.rss),
      rss_ratio: Math.max(...cli.rss) / Math.max(...lite.rss),
      max_abs_diff: diff,
      load_avg: loadavg()[0]!,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Memory read bandwidth (GB/s): the best of several sums over 512 MB on the native backend's threads. */
function memoryBandwidth(): number {
  const n = 128 * 2 ** 20;
  const x = ones([n]);
  let best = Infinity;
  try {
    for (let r = 0; r < 6; r++) {
      const t0 = performance.now();
      tidy(() => x.sum().item());
      best = Math.min(best, (performance.now() - t0) / 1000);
    }
  } finally {
    x.dispose();
  }
  return (4 * n) / best / 1e9;
}

/** The GEMM rate (GFLOP/s) of the native backend: the best of several 2880×384 @ 384×2048 products. */
function gemmRate(): number {
  const [M, K, N] = [2880, 384, 2048];
  const a = randn([M, K]),
    b = randn([K, N]);
  let best = Infinity;
  try {
    for (let r = 0; r < 12; r++) {
      const t0 = performance.now();
      tidy(() => {
        a.matmul(b).sum().item();
      });
      best = Math.min(best, (performance.now() - t0) / 1000);
    }
  } finally {
    a.dispose();
    b.dispose();
  }
  return (2 * M * K * N) / best / 1e9;
}

/** The default model's shapes: PQ bytes a row (M), coordinates (K), feature and sentence widths. */
function modelShape(): { M: number; K: number; fd: number; d: number } {
  const m = readModelConfig(MODEL).model as { dim: number; outDim: number; pq?: { bytes: number; dims: number } };
  if (!m.pq) throw new Error(`bench embed_roof: ${MODEL} is not a product-quantised export`);
  return { M: m.pq.bytes, K: m.pq.dims, fd: m.dim, d: m.outDim };
}

export async function embedRoof(): Promise<Record<string, number | string>> {
  const want = Number(arg('--sentences') ?? 200000);
  const dir = mkdtempSync(join(tmpdir(), 'xling-bench-roof-'));
  try {
    let sents: string[];
    const given = arg('--input');
    if (given)
      sents = readFileSync(given, 'utf8')
        .split('\n')
        .filter((l) => l.trim());
    else {
      const table = await loadTable(join(repo, 'data', 'sample', 'gettext.train.tsv.gz'));
      sents = table.rows.flatMap((r) => [...r.values()]).filter((s) => s.trim());
    }
    const lines = Array.from({ length: want }, (_, i) => sents[i % sents.length]!);
    const input = join(dir, 'input.txt');
    writeFileSync(input, lines.join('\n') + '\n');
    // features a sentence: the model's own tokenizer (xling/lite's, the same hashing)
    const { loadModel } = await import('../src/lite/index.js');
    const lite = await loadModel(MODEL);
    let feats = 0;
    for (const s of lines.slice(0, 20000)) feats += lite.tokenize(s).length;
    await lite.close();
    const F = feats / Math.min(lines.length, 20000);
    const { M, K, fd, d } = modelShape();
    const bytes = F * (M + 4 * K);
    setNumThreads(threadsArg());
    const mem = memoryBandwidth(),
      gemm = gemmRate();
    const t = timed(rssProbe(dir), [mainJs, 'embed', '--input', input, '-o', join(dir, 'v.npy'), '--quiet', '--threads', String(threadsArg())], dir);
    const sps = lines.length / t.wall;
    const memRoof = (mem * 1e9) / bytes,
      gemmRoof = (gemm * 1e9) / (2 * fd * d);
    return {
      name: 'embed_roof',
      sentences: lines.length,
      threads: threadsArg(),
      features_per_sent: F,
      bytes_per_sent: bytes,
      sents_per_s: sps,
      sents_per_cpu_s: lines.length / t.cpu,
      rss_mb: t.rss,
      mem_gbps: mem,
      gemm_gflops: gemm,
      mem_roof_sents_per_s: memRoof,
      gemm_roof_sents_per_s: gemmRoof,
      binding_roof: memRoof <= gemmRoof ? 'memory' : 'gemm',
      ratio: sps / Math.min(memRoof, gemmRoof),
      load_avg: loadavg()[0]!,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith('cold-start.js')) {
  const r = { cold_start: await coldStart(), embed_roof: await embedRoof() };
  console.log(jsonMode() ? JSON.stringify(r) : JSON.stringify(r, null, 2));
}

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
// repeated; `--input FILE` for another) against the machine's roofs measured in the same run, and
// the portable runtime's own parts on one thread. What a sentence of F n-gram features costs the
// default model (a product-quantised table: M code bytes a row, K coordinates; features of fd,
// vectors of d): from memory, its F rows' codes, each M bytes at a random place, so M + 63 bytes of
// 64-byte lines on average (the codebooks, packed 4 KB a subspace, the basis [fd, K] and the dense
// layer [d, fd] are under 1 MB together and stay in each core's cache); in arithmetic, the two
// dense products 2 · fd · (K + d) flops (the basis K → fd and the layer fd → d; the codebook sums,
// F · K additions, are gathers, not counted). The roofs: memory bandwidth (a sum over 512 MB on
// the native backend's threads) and the GEMM rate (2880×384 @ 384×2048), each measured twice: on
// `--threads` threads in wall time (the machine's), and on one thread in CPU time (a core's; a
// shared, loaded machine skews wall time, not CPU time). `ratio` = sentences/s over the binding
// machine roof, `ratio_cpu` = sentences per CPU-second over the binding core roof; the goal is
// 0.5. `kernel_sents_per_cpu_s` and `tokenize_sents_per_cpu_s`: the portable runtime's kernels
// (token ids in, rows out) and its tokenizer alone on one thread, the ceiling of the pipeline.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { readModelConfig } from '../src/embed/model-dir.js';
import { loadPortableSentenceEncoder } from '../src/embed/portable.js';
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
 * and CPU seconds (all its threads) to $XLING_BENCH_RSS. The peak is /proc/self/status's VmHWM
 * where there is one: getrusage's maxRSS starts a spawned process at its parent's resident size
 * (fork copies it, exec keeps it), which a bench that has loaded libtorch would add.
 */
function rssProbe(dir: string): string {
  const f = join(dir, 'rss.mjs');
  writeFileSync(
    f,
    `import { readFileSync, writeFileSync } from 'node:fs';
process.on('exit', () => {
  const c = process.cpuUsage();
  let rss = process.resourceUsage().maxRSS / 1024;
  try {
    const m = /VmHWM:\\s+(\\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m) rss = Number(m[1]) / 1024;
  } catch {}
  writeFileSync(process.env.XLING_BENCH_RSS, JSON.stringify({ rss, cpu: (c.user + c.system) / 1e6 }));
});
`,
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

const cpuSeconds = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1e6;
};

/** The best of `rounds` runs of f: [wall seconds, CPU seconds of this process]. */
function best(rounds: number, f: () => void): [number, number] {
  let wall = Infinity,
    cpu = Infinity;
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now(),
      c0 = cpuSeconds();
    f();
    wall = Math.min(wall, (performance.now() - t0) / 1000);
    cpu = Math.min(cpu, cpuSeconds() - c0);
  }
  return [wall, cpu];
}

/** Memory read bandwidth (GB/s) of a sum over 512 MB on the native backend's threads: per second of wall time, and per CPU-second on one thread. */
function memoryBandwidth(threads: number): { wall: number; cpu: number } {
  const n = 128 * 2 ** 20;
  const x = ones([n]);
  try {
    setNumThreads(threads);
    const [wall] = best(6, () => tidy(() => x.sum().item()));
    setNumThreads(1);
    const [, cpu] = best(4, () => tidy(() => x.sum().item()));
    return { wall: (4 * n) / wall / 1e9, cpu: (4 * n) / cpu / 1e9 };
  } finally {
    x.dispose();
  }
}

/** The GEMM rate (GFLOP/s) of 2880×384 @ 384×2048 products on the native backend: per second of wall time on `threads`, per CPU-second on one thread. */
function gemmRate(threads: number): { wall: number; cpu: number } {
  const [M, K, N] = [2880, 384, 2048];
  const a = randn([M, K]),
    b = randn([K, N]);
  const product = () =>
    tidy(() => {
      a.matmul(b).sum().item();
    });
  try {
    setNumThreads(threads);
    const [wall] = best(12, product);
    setNumThreads(1);
    const [, cpu] = best(8, product);
    return { wall: (2 * M * K * N) / wall / 1e9, cpu: (2 * M * K * N) / cpu / 1e9 };
  } finally {
    a.dispose();
    b.dispose();
  }
}

/** The default model's shapes: PQ bytes a row (M), coordinates (K), feature and sentence widths. */
function modelShape(): { M: number; K: number; fd: number; d: number } {
  const m = readModelConfig(MODEL).model as { dim: number; outDim: number; pq?: { bytes: number; dims: number } };
  if (!m.pq) throw new Error(`bench embed_roof: ${MODEL} is not a product-quantised export`);
  return { M: m.pq.bytes, K: m.pq.dims, fd: m.dim, d: m.outDim };
}

/** The sentences of --input, or the bundled sample's, repeated to `want`. */
async function roofInput(want: number): Promise<string[]> {
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
  return Array.from({ length: want }, (_, i) => sents[i % sents.length]!);
}

/**
 * The portable runtime's parts on one thread over up to 20,000 sentences: features a sentence,
 * and sentences per CPU-second of its tokenizer and of its kernels (token ids in, rows out).
 */
function portableParts(lines: string[]): { F: number; tokenize: number; kernel: number } {
  const before = process.env.XLING_THREADS;
  process.env.XLING_THREADS = '1';
  try {
    const m = loadPortableSentenceEncoder(MODEL);
    const part = lines.slice(0, 20000);
    let seqs: Int32Array[] = [];
    const [, tok] = best(3, () => {
      seqs = m.tokenize(part);
    });
    const [, kernel] = best(3, () => m.encoder.encode(seqs, { normalize: true }));
    return { F: seqs.reduce((a, q) => a + q.length, 0) / part.length, tokenize: part.length / tok, kernel: part.length / kernel };
  } finally {
    if (before === undefined) delete process.env.XLING_THREADS;
    else process.env.XLING_THREADS = before;
  }
}

export async function embedRoof(): Promise<Record<string, number | string>> {
  const want = Number(arg('--sentences') ?? 200000);
  const dir = mkdtempSync(join(tmpdir(), 'xling-bench-roof-'));
  try {
    const lines = await roofInput(want);
    const input = join(dir, 'input.txt');
    writeFileSync(input, lines.join('\n') + '\n');
    const parts = portableParts(lines);
    const { M, K, fd, d } = modelShape();
    const bytes = parts.F * (M + 63),
      flops = 2 * fd * (K + d);
    const threads = threadsArg();
    const mem = memoryBandwidth(threads),
      gemm = gemmRate(threads);
    const t = timed(rssProbe(dir), [mainJs, 'embed', '--input', input, '-o', join(dir, 'v.npy'), '--quiet', '--threads', String(threads)], dir);
    const sps = lines.length / t.wall,
      spc = lines.length / t.cpu;
    const roof = { mem: (mem.wall * 1e9) / bytes, gemm: (gemm.wall * 1e9) / flops };
    const core = { mem: (mem.cpu * 1e9) / bytes, gemm: (gemm.cpu * 1e9) / flops };
    return {
      name: 'embed_roof',
      sentences: lines.length,
      threads,
      features_per_sent: parts.F,
      bytes_per_sent: bytes,
      flops_per_sent: flops,
      sents_per_s: sps,
      sents_per_cpu_s: spc,
      rss_mb: t.rss,
      kernel_sents_per_cpu_s: parts.kernel,
      tokenize_sents_per_cpu_s: parts.tokenize,
      mem_gbps: mem.wall,
      gemm_gflops: gemm.wall,
      mem_gb_per_cpu_s: mem.cpu,
      gemm_gflop_per_cpu_s: gemm.cpu,
      mem_roof_sents_per_s: roof.mem,
      gemm_roof_sents_per_s: roof.gemm,
      mem_roof_sents_per_cpu_s: core.mem,
      gemm_roof_sents_per_cpu_s: core.gemm,
      binding_roof: core.mem <= core.gemm ? 'memory' : 'gemm',
      ratio: sps / Math.min(roof.mem, roof.gemm),
      ratio_cpu: spc / Math.min(core.mem, core.gemm),
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

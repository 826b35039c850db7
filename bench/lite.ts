// xling/lite (no addon: WebAssembly SIMD kernels, pure TypeScript where those are missing) side by
// side with the native embed path (`xling embed`'s: libtorch and the addon), in one run, on the same
// model and sentences: sentences/s (text in → normalised vectors out) on every sentence of the
// bundled sample, for the fp32 model and its int8 export (`xling export --dtype int8`).
//
// Model: the averaging dual encoder of configs/fast-1h.json (2^20 buckets × 256 → 512, random
// weights of the same shapes), or `--model DIR` (a trained fp32 dual model; its int8 export is made
// in a temporary directory). Native: loadSentenceEncoder on `--threads` threads (default 2). Lite:
// loadModel with `threads: 2` (two worker threads) and with one thread, the WebAssembly kernels;
// the pure-TypeScript fallback (kernel: 'js', one thread) on the first 5,000 sentences.
// Each path is timed `--rounds` times (default 3), alternating, best wall time and least CPU time
// (all threads of the process) each: on a shared machine the CPU seconds move less than the wall
// time. Keys: *_sents_per_s (wall), *_sents_per_cpu_s, `lite_{fp32,int8}_ratio` (lite on 2 worker
// threads / native, wall), `lite_{fp32,int8}_cpu_ratio` (the same per CPU-second),
// `lite_int8_vs_bar_ratio` (lite int8 on 2 workers / a goal of 20,000 sentences/s) and
// the load average at the start and the end (the machine is shared: read the figures with it).
// `--pq DIR`: also a product-quantised export (xling export --dtype pq; lite sums its rows as
// coordinates in the WebAssembly kernel embedBatchPq; native reads the rows back at load): native_pq, lite_pq_2workers, lite_pq_1thread, `lite_pq_ratio` (lite on
// 2 workers / native), `lite_pq_vs_int8_ratio` and `lite_pq_vs_bar_ratio` (/ 20,000).
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportCompact } from '../src/embed/export.js';
import { exportEncoder, loadSentenceEncoder, writeModelFiles } from '../src/embed/model-dir.js';
import { loadModel, LoadedLiteModel } from '../src/lite/index.js';
import { setNumThreads } from '../src/tensor/index.js';
import { fastDualOnSample, jsonMode, threadsArg } from './common.js';

const BAR = 20000;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}

type Embed = (s: string[]) => Promise<unknown> | unknown;

/** Wall and CPU seconds (all threads) of one call over all sentences. */
async function timeOnce(f: Embed, sentences: string[]): Promise<{ wall: number; cpu: number }> {
  const c0 = process.cpuUsage(),
    t0 = performance.now();
  await f(sentences);
  const c = process.cpuUsage(c0);
  return { wall: (performance.now() - t0) / 1000, cpu: (c.user + c.system) / 1e6 };
}

export async function run() {
  const threads = threadsArg(),
    rounds = Math.max(1, Number(arg('--rounds') ?? 3));
  setNumThreads(threads);
  const load0 = loadavg()[0]!;
  const { cfg, task, sentences } = await fastDualOnSample();
  const dir = mkdtempSync(join(tmpdir(), 'xling-bench-lite-'));
  const opened: LoadedLiteModel[] = [];
  try {
    const user = arg('--model');
    const fp32Dir = join(dir, 'fp32'),
      int8Dir = join(dir, 'int8');
    if (user) exportEncoder(user, fp32Dir);
    else writeModelFiles(fp32Dir, 'dual', task, cfg, null);
    task.module.dispose();
    exportCompact(fp32Dir, int8Dir, { dtype: 'int8' });
    const paths: Record<string, { f: Embed; sents: string[] }> = {};
    for (const [dt, d] of [
      ['fp32', fp32Dir],
      ['int8', int8Dir],
    ] as const) {
      const native = loadSentenceEncoder(d);
      paths[`native_${dt}`] = { f: (s) => native.embed(s, { center: false }), sents: sentences };
      for (const [key, o] of [
        [`lite_${dt}_2workers`, { threads: 2 }],
        [`lite_${dt}_1thread`, {}],
      ] as const) {
        const m = await loadModel(d, o);
        opened.push(m);
        if (m.kernel !== 'wasm-simd') throw new Error(`bench lite: ${key} embeds with ${m.kernel}, not the WebAssembly kernels`);
        paths[key] = { f: (s) => m.embed(s, { lang: null }), sents: sentences };
      }
      const js = await loadModel(d, { kernel: 'js' });
      opened.push(js);
      paths[`lite_${dt}_js`] = { f: (s) => js.embed(s, { lang: null }), sents: sentences.slice(0, 5000) };
    }
    const pq = arg('--pq');
    if (pq) {
      // a product-quantised export (xling export --dtype pq): lite sums coordinates (embedBatchPq)
      const native = loadSentenceEncoder(pq);
      paths.native_pq = { f: (s) => native.embed(s, { center: false }), sents: sentences };
      for (const [key, o] of [
        ['lite_pq_2workers', { threads: 2 }],
        ['lite_pq_1thread', {}],
      ] as const) {
        const m = await loadModel(pq, o);
        opened.push(m);
        if (m.dtype !== 'pq') throw new Error(`bench lite: --pq ${pq} is not a product-quantised export (dtype ${m.dtype})`);
        if (m.kernel !== 'wasm-simd') throw new Error(`bench lite: ${key} embeds with ${m.kernel}, not the WebAssembly kernels`);
        paths[key] = { f: (s) => m.embed(s, { lang: null }), sents: sentences };
      }
    }
    for (const p of Object.values(paths)) await p.f(p.sents.slice(0, 2000)); // warm-up
    const wall = new Map<string, number>(),
      cpu = new Map<string, number>();
    const keys = Object.keys(paths);
    for (let r = 0; r < rounds; r++) {
      // alternate the order: a change of load mid-run hits every path
      for (const k of r % 2 ? [...keys].reverse() : keys) {
        const t = await timeOnce(paths[k]!.f, paths[k]!.sents);
        wall.set(k, Math.min(wall.get(k) ?? Infinity, t.wall));
        cpu.set(k, Math.min(cpu.get(k) ?? Infinity, t.cpu));
      }
    }
    const r: Record<string, number | string> = {
      name: 'lite',
      sentences: sentences.length,
      model: user ? 'given' : 'fast-1h shapes, random weights',
      native_threads: threads,
      rounds,
      load_avg_start: load0,
    };
    for (const k of keys) {
      r[`${k}_sents_per_s`] = paths[k]!.sents.length / wall.get(k)!;
      r[`${k}_sents_per_cpu_s`] = paths[k]!.sents.length / cpu.get(k)!;
    }
    for (const dt of ['fp32', 'int8']) {
      r[`lite_${dt}_ratio`] = (r[`lite_${dt}_2workers_sents_per_s`] as number) / (r[`native_${dt}_sents_per_s`] as number);
      r[`lite_${dt}_cpu_ratio`] = (r[`lite_${dt}_2workers_sents_per_cpu_s`] as number) / (r[`native_${dt}_sents_per_cpu_s`] as number);
      r[`lite_${dt}_wasm_vs_js_cpu_ratio`] = (r[`lite_${dt}_1thread_sents_per_cpu_s`] as number) / (r[`lite_${dt}_js_sents_per_cpu_s`] as number);
    }
    if (pq) {
      r.lite_pq_ratio = (r.lite_pq_2workers_sents_per_s as number) / (r.native_pq_sents_per_s as number);
      r.lite_pq_vs_int8_ratio = (r.lite_pq_2workers_sents_per_s as number) / (r.lite_int8_2workers_sents_per_s as number);
      r.lite_pq_vs_bar_ratio = (r.lite_pq_2workers_sents_per_s as number) / BAR;
    }
    r.lite_int8_vs_bar_ratio = (r.lite_int8_2workers_sents_per_s as number) / BAR;
    r.lite_fp32_vs_bar_ratio = (r.lite_fp32_2workers_sents_per_s as number) / BAR;
    r.load_avg_end = loadavg()[0]!;
    return r;
  } finally {
    for (const m of opened) await m.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith('lite.js')) {
  const r = await run();
  if (jsonMode()) console.log(JSON.stringify(r));
  else {
    const f = (k: string) => `${Math.round(r[`${k}_sents_per_s`] as number)}/s (${Math.round(r[`${k}_sents_per_cpu_s`] as number)}/CPU-s)`;
    console.log(
      `embedding ${r.sentences} sentences (load average ${(r.load_avg_start as number).toFixed(1)} → ${(r.load_avg_end as number).toFixed(1)} on this machine):`,
    );
    for (const dt of ['fp32', 'int8']) {
      console.log(
        `  ${dt}: native ${f(`native_${dt}`)}, lite 2 workers ${f(`lite_${dt}_2workers`)} → ${(r[`lite_${dt}_ratio`] as number).toFixed(2)}× (per CPU-second ${(r[`lite_${dt}_cpu_ratio`] as number).toFixed(2)}×), lite 1 thread ${f(`lite_${dt}_1thread`)}, pure TypeScript ${f(`lite_${dt}_js`)}`,
      );
    }
    if (r.native_pq_sents_per_s)
      console.log(
        `  pq: native ${f('native_pq')}, lite 2 workers ${f('lite_pq_2workers')} → ${(r.lite_pq_ratio as number).toFixed(2)}×, lite 1 thread ${f('lite_pq_1thread')}`,
      );
    console.log(
      `  lite int8 on 2 workers: ${Math.round(r.lite_int8_2workers_sents_per_s as number)}/s against the ${BAR}/s goal (${(r.lite_int8_vs_bar_ratio as number).toFixed(2)}×)`,
    );
  }
}

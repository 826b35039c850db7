// Embedding throughput (sentences/s, text in → normalised vectors out) of the averaging dual
// encoder of configs/fast-1h.json, side by side with the reference's embedding path in PyTorch
// (bench/py/embed_dual.py: Python n-gram hashing + nn.EmbeddingBag), on every sentence of the
// bundled sample. Weights are random (same shapes): throughput only.
//
// The same run also times the model's int8 export (`xling export --dtype int8`: int8 n-gram rows
// with per-row scales, read by the native int8 embedding bag): the fp32 model directory and its
// export are both loaded as every command loads them (loadSentenceEncoder) and timed alternately,
// `--rounds N` times each (default 3), best round each.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportCompact } from '../src/embed/export.js';
import { loadSentenceEncoder, writeModelFiles } from '../src/embed/model-dir.js';
import { SentenceEncoderModel } from '../src/embed/model.js';
import { setNumThreads } from '../src/tensor/index.js';
import { fastDualOnSample, jsonMode, runPython, threadsArg } from './common.js';

function roundsArg(): number {
  const i = process.argv.indexOf('--rounds');
  return i > 0 ? Math.max(1, Number(process.argv[i + 1])) : 3;
}

/** Wall and CPU seconds (all threads) to embed all sentences (one call, as xling embed's batches). */
function timeEmbed(m: SentenceEncoderModel, sentences: string[]): { wall: number; cpu: number } {
  const c0 = process.cpuUsage(),
    t0 = performance.now();
  m.embed(sentences);
  const c = process.cpuUsage(c0);
  return { wall: (performance.now() - t0) / 1000, cpu: (c.user + c.system) / 1e6 };
}

export async function run() {
  const threads = threadsArg(),
    rounds = roundsArg();
  setNumThreads(threads);
  const { cfg, task, sentences } = await fastDualOnSample();
  const dir = mkdtempSync(join(tmpdir(), 'xling-bench-'));
  try {
    const fp32Dir = join(dir, 'fp32'),
      int8Dir = join(dir, 'int8');
    writeModelFiles(fp32Dir, 'dual', task, cfg, null);
    task.module.dispose();
    exportCompact(fp32Dir, int8Dir, { dtype: 'int8' });
    const fp32 = loadSentenceEncoder(fp32Dir),
      int8 = loadSentenceEncoder(int8Dir);
    for (const m of [fp32, int8]) m.embed(sentences.slice(0, 500)); // warm-up
    // best wall time of the rounds, and the least CPU time (on a shared machine the CPU seconds
    // move less than the wall time: other processes take cores, not cycles)
    const best = { fp32: Infinity, int8: Infinity },
      cpu = { fp32: Infinity, int8: Infinity };
    for (let r = 0; r < rounds; r++) {
      // alternate which goes first: a load change mid-run hits both
      const order: ('fp32' | 'int8')[] = r % 2 ? ['int8', 'fp32'] : ['fp32', 'int8'];
      for (const k of order) {
        const t = timeEmbed(k === 'fp32' ? fp32 : int8, sentences);
        best[k] = Math.min(best[k], t.wall);
        cpu[k] = Math.min(cpu[k], t.cpu);
      }
    }
    writeFileSync(
      join(dir, 'e.json'),
      JSON.stringify({ threads, buckets: cfg.features.buckets, dim: cfg.features.dim, outDim: cfg.encoder.outDim, ngrams: cfg.features.ngrams, sentences }),
    );
    const py = runPython('embed_dual.py', [join(dir, 'e.json')]);
    const n = sentences.length,
      x = n / best.fp32,
      i8 = n / best.int8;
    return {
      name: 'embed_dual',
      sentences: n,
      threads,
      rounds,
      xling_sents_per_s: x,
      int8_sents_per_s: i8,
      torch_sents_per_s: py.sents_per_s!,
      ratio: x / py.sents_per_s!,
      int8_vs_fp32_ratio: i8 / x,
      int8_vs_torch_ratio: i8 / py.sents_per_s!,
      fp32_cpu_s: cpu.fp32,
      int8_cpu_s: cpu.int8,
      int8_vs_fp32_cpu_ratio: cpu.fp32 / cpu.int8,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith('embed-dual.js')) {
  const r = await run();
  console.log(
    jsonMode()
      ? JSON.stringify(r)
      : `embedding ${r.sentences} sentences with the averaging dual encoder (${r.threads} threads, best of ${r.rounds}): xling fp32 ${r.xling_sents_per_s.toFixed(0)}/s, its int8 export ${r.int8_sents_per_s.toFixed(0)}/s (${r.int8_vs_fp32_ratio.toFixed(2)}×), reference ${r.torch_sents_per_s.toFixed(0)}/s → fp32 ${r.ratio.toFixed(2)}×, int8 ${r.int8_vs_torch_ratio.toFixed(2)}×`,
  );
}

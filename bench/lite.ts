// xling/lite (pure TypeScript, no addon) against the native embed path, in one run: sentences/s
// (text in → normalised vectors out) of the averaging dual encoder of configs/fast-1h.json (random
// weights of the same shapes) on every sentence of the bundled sample; lite on the fp32 model and
// an int8 export, on 1 and 2 worker threads.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportCompact } from '../src/embed/export.js';
import { writeModelFiles } from '../src/embed/model-dir.js';
import { SentenceEncoderModel } from '../src/embed/model.js';
import { loadModel } from '../src/lite/index.js';
import { setNumThreads } from '../src/tensor/index.js';
import { fastDualOnSample, jsonMode, threadsArg } from './common.js';

async function rate(f: (s: string[]) => Promise<unknown> | unknown, sentences: string[]): Promise<number> {
  await f(sentences.slice(0, 2000)); // warm-up
  const t0 = performance.now();
  await f(sentences);
  return sentences.length / ((performance.now() - t0) / 1000);
}

export async function run() {
  const threads = threadsArg();
  setNumThreads(threads);
  const { cfg, tok, task, sentences } = await fastDualOnSample();
  const dir = mkdtempSync(join(tmpdir(), 'xling-bench-lite-'));
  try {
    writeModelFiles(join(dir, 'fp32'), 'dual', task, cfg, null);
    exportCompact(join(dir, 'fp32'), join(dir, 'int8'), { dtype: 'int8' });
    const native = new SentenceEncoderModel(task.encoder(), tok);
    const nativeRate = await rate((s) => native.embed(s, { center: false }), sentences);
    const r: Record<string, number | string> = { name: 'lite', sentences: sentences.length, threads, native_sents_per_s: nativeRate };
    for (const [key, path, n] of [['lite_fp32', 'fp32', 1], ['lite_int8', 'int8', 1], ['lite_int8_2threads', 'int8', 2]] as const) {
      const m = await loadModel(join(dir, path), { threads: n });
      try {
        const v = await rate((s) => m.embed(s), sentences);
        r[`${key}_sents_per_s`] = v;
        r[`${key}_ratio`] = v / nativeRate;
      } finally { await m.close(); }
    }
    return r;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    task.module.dispose();
  }
}

if (process.argv[1]?.endsWith('lite.js')) {
  const r = await run();
  console.log(jsonMode() ? JSON.stringify(r) : JSON.stringify(r, null, 1));
}

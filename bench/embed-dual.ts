// Embedding throughput (sentences/s, text in → normalised vectors out) of the averaging dual
// encoder of configs/fast-1h.json, side by side with the reference's embedding path in PyTorch
// (bench/py/embed_dual.py: Python n-gram hashing + nn.EmbeddingBag), on every sentence of the
// bundled sample. Weights are random (same shapes): throughput only.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SentenceEncoderModel } from '../src/embed/model.js';
import { setNumThreads } from '../src/tensor/index.js';
import { fastDualOnSample, jsonMode, runPython, threadsArg } from './common.js';

export async function run() {
  const threads = threadsArg();
  setNumThreads(threads);
  const { cfg, tok, task, sentences } = await fastDualOnSample();
  const m = new SentenceEncoderModel(task.encoder(), tok);
  m.embed(sentences.slice(0, 500)); // warm-up
  const t0 = performance.now();
  m.embed(sentences);
  const secs = (performance.now() - t0) / 1000;
  const dir = mkdtempSync(join(tmpdir(), 'xling-bench-'));
  try {
    writeFileSync(join(dir, 'e.json'), JSON.stringify({ threads, buckets: cfg.features.buckets, dim: cfg.features.dim, outDim: cfg.encoder.outDim, ngrams: cfg.features.ngrams, sentences }));
    const py = runPython('embed_dual.py', [join(dir, 'e.json')]);
    return { name: 'embed_dual', sentences: sentences.length, threads, xling_sents_per_s: sentences.length / secs, torch_sents_per_s: py.sents_per_s!, ratio: sentences.length / secs / py.sents_per_s! };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    task.module.dispose();
  }
}

if (process.argv[1]?.endsWith('embed-dual.js')) {
  const r = await run();
  console.log(jsonMode() ? JSON.stringify(r) : `embedding ${r.sentences} sentences with the averaging dual encoder (${r.threads} threads): xling ${r.xling_sents_per_s.toFixed(0)}/s vs reference ${r.torch_sents_per_s.toFixed(0)}/s → ${r.ratio.toFixed(2)}×`);
}

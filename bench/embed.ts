// Embedding throughput (sentences/s) of the LASER encoder (BiLSTM 512 max-pool, 16k vocab):
// xling (length-sorted, token-capped batches, no-grad) vs the reference's embedding path.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LaserEncoder, LaserSentenceEncoder, LASER_DEFAULTS } from '../src/models/laser/model.js';
import { SentenceEncoderModel } from '../src/embed/model.js';
import { manualSeed, setNumThreads } from '../src/tensor/index.js';
import { jsonMode, lcg, runPython, threadsArg } from './common.js';

export async function run(n = 20000) {
  const threads = threadsArg();
  setNumThreads(threads);
  manualSeed(0);
  const V = 16000,
    rnd = lcg(5);
  // gettext-like lengths: 5–40 tokens, skewed short
  const sents = Array.from({ length: n }, () => {
    const L = 5 + Math.floor(35 * rnd() * rnd());
    return [...Array.from({ length: L - 1 }, () => 4 + Math.floor(rnd() * (V - 4))), 3];
  });
  const enc = new LaserEncoder({ ...LASER_DEFAULTS, vocabSize: V, targetLangs: ['en'] }).eval();
  const tok = { vocabSize: V, padId: 0, unkId: 1, bosId: 2, eosId: 3, encode: () => new Int32Array() };
  const m = new SentenceEncoderModel(new LaserSentenceEncoder(enc, 0), tok);
  const ids = sents.map((s) => Int32Array.from(s));
  m.embedIds(ids.slice(0, 500)); // warm-up
  const t0 = performance.now();
  m.embedIds(ids);
  const secs = (performance.now() - t0) / 1000;
  const dir = mkdtempSync(join(tmpdir(), 'xling-bench-'));
  try {
    writeFileSync(join(dir, 'e.json'), JSON.stringify({ threads, vocab: V, sents }));
    const py = runPython('embed.py', [join(dir, 'e.json')]);
    return { name: 'embed', sentences: n, threads, xling_sents_per_s: n / secs, torch_sents_per_s: py.sents_per_s!, ratio: n / secs / py.sents_per_s! };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    enc.dispose();
  }
}

if (process.argv[1]?.endsWith('embed.js')) {
  const r = await run();
  console.log(
    jsonMode()
      ? JSON.stringify(r)
      : `embedding ${r.sentences} sentences (${r.threads} threads): xling ${r.xling_sents_per_s.toFixed(0)}/s vs reference ${r.torch_sents_per_s.toFixed(0)}/s → ${r.ratio.toFixed(2)}×`,
  );
}

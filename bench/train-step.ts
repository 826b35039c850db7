// Training-step throughput (pairs/s) of the two reference configurations
// (../shared/reference/torch_reference.py), implemented with xling's nn layer, on identical
// random token batches of realistic lengths, side by side with PyTorch.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Adam, clipGradNorm } from '../src/nn/index.js';
import { manualSeed, setNumThreads } from '../src/tensor/index.js';
import { LaserModel, LASER_DEFAULTS } from '../src/models/laser/model.js';
import { padBatch } from '../src/train-data/batch.js';
import { jsonMode, lcg, runPython, threadsArg } from './common.js';

const V = 16000;

/** Batches shaped like the reference batcher's: length-sorted chunks, so lengths within a batch are close. */
function makeBatches(n: number, B: number, seed: number) {
  const rnd = lcg(seed);
  const tok = () => 4 + Math.floor(rnd() * (V - 4));
  const batches: { src: number[][]; tgt: number[][] }[] = [];
  for (let i = 0; i < n; i++) {
    const base = 6 + Math.floor(rnd() * 30); // gettext strings: 4–60 words → ~6–36 BPE tokens
    const src: number[][] = [],
      tgt: number[][] = [];
    for (let j = 0; j < B; j++) {
      const ls = Math.max(2, base + Math.floor(rnd() * 5) - 2);
      const lt = Math.max(2, Math.min(63, Math.round(ls * (0.8 + 0.4 * rnd()))));
      src.push([...Array.from({ length: ls - 1 }, tok), 3]);
      tgt.push([...Array.from({ length: lt - 1 }, tok), 3]);
    }
    batches.push({ src, tgt });
  }
  return batches;
}

export async function benchTrainStep(kind: 'laser' | 'dual', threads = threadsArg(), steps = kind === 'laser' ? 12 : 20, warmup = 3) {
  setNumThreads(threads);
  manualSeed(0);
  const B = kind === 'laser' ? 64 : 128;
  const batches = makeBatches(warmup + steps, B, kind === 'laser' ? 1 : 2);
  let step: (b: { src: number[][]; tgt: number[][] }) => number;
  let nParams = 0;
  if (kind === 'laser') {
    const model = new LaserModel({ ...LASER_DEFAULTS, vocabSize: V, targetLangs: ['en', 'es'] });
    const params = model.parameters();
    nParams = model.numParameters();
    const opt = new Adam(params, { lr: 1e-3 });
    step = (b) => {
      const src = padBatch(b.src);
      const loss = model.loss([src], [{ seqs: b.tgt, lang: 0 }], 2);
      opt.zeroGrad();
      loss.backward();
      clipGradNorm(params, 5);
      opt.step();
      const v = loss.item();
      loss.dispose();
      src.ids.dispose();
      return v;
    };
  } else {
    throw new Error('the dual encoder has its own bench: bench/train-dual.ts');
  }
  for (const b of batches.slice(0, warmup)) step(b);
  const t0 = performance.now();
  let pairs = 0;
  const losses: number[] = [];
  for (const b of batches.slice(warmup)) {
    losses.push(step(b));
    pairs += b.src.length;
    await new Promise((r) => setImmediate(r));
  }
  const seconds = (performance.now() - t0) / 1000;
  const xling = { pairs_per_s: pairs / seconds, seconds, first_loss: losses[0]!, last_loss: losses.at(-1)!, params: nParams };
  process.stderr.write(`[bench] xling ${kind}: ${xling.pairs_per_s.toFixed(1)} pairs/s\n`);

  const dir = mkdtempSync(join(tmpdir(), 'xling-bench-'));
  try {
    const f = join(dir, 'batches.json');
    writeFileSync(f, JSON.stringify({ kind, threads, vocab: V, warmup, batches }));
    const torch = runPython('train_step.py', [f]);
    return {
      name: `train_step_${kind}`,
      threads,
      batch: B,
      steps,
      xling_pairs_per_s: xling.pairs_per_s,
      torch_pairs_per_s: torch.pairs_per_s!,
      ratio: xling.pairs_per_s / torch.pairs_per_s!,
      xling_params: xling.params,
      torch_params: torch.params!,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith('train-step.js')) {
  const kinds = process.argv.includes('--laser') ? ['laser'] : process.argv.includes('--dual') ? ['dual'] : ['dual', 'laser'];
  for (const k of kinds) {
    const r = await benchTrainStep(k as 'laser' | 'dual');
    console.log(
      jsonMode()
        ? JSON.stringify(r)
        : `train step ${k} (batch ${r.batch}, ${r.threads} threads): xling ${r.xling_pairs_per_s.toFixed(1)} pairs/s, PyTorch ${r.torch_pairs_per_s.toFixed(1)} pairs/s, ratio ${r.ratio.toFixed(3)} (params ${r.xling_params} vs ${r.torch_params})`,
    );
  }
}

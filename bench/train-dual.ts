// Training-step throughput (pairs/s) of the dual encoder at the sizes of configs/fast-1h.json —
// the averaging encoder itself, and the same features under a 3-layer Transformer — side by side
// with the same model and loss in PyTorch (bench/py/train_dual.py), on identical batches: real
// translation pairs of the bundled sample, featurised once by xling and handed to both sides.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dualFamily, DualTrainConfig } from '../src/models/dual/family.js';
import { createTask } from '../src/models/dual/train.js';
import { additiveMarginLoss } from '../src/models/dual/loss.js';
import { DualEncoder } from '../src/models/dual/model.js';
import { Adam, SparseAdam } from '../src/nn/optim.js';
import { normalize } from '../src/tensor/ops.js';
import { manualSeed, setNumThreads, tidy } from '../src/tensor/index.js';
import { Tokenizer } from '../src/text/tokenizer.js';
import { TextTokenizer } from '../src/text/text-tokenizer.js';
import { loadConfig } from '../src/models/config.js';
import { encodeTable, loadTable } from '../src/train/prepare.js';
import { benchRoot, jsonMode, runPython, threadsArg } from './common.js';

export type DualBenchKind = 'averaging' | 'transformer';

/** The bench's configuration: fast-1h as committed, or its features under a Transformer body. */
function benchConfig(kind: DualBenchKind): DualTrainConfig {
  const file = join(benchRoot, '..', 'configs', 'fast-1h.json');
  if (kind === 'averaging') return loadConfig<DualTrainConfig>(file);
  const base = loadConfig<DualTrainConfig>(file);
  return loadConfig<DualTrainConfig>(file, {
    vocab: { ...base.vocab, type: 'bpe', size: 8000, sampleSentences: 60000 },
    batch: { ...base.batch, size: 128 },
    encoder: { ...base.encoder, body: 'transformer', layers: 3, heads: 4, ff: 4 * base.features.dim, maxLen: 64, pooling: ['max', 'mean'] },
  });
}

export async function benchTrainDual(kind: DualBenchKind, threads = threadsArg(), steps = kind === 'averaging' ? 20 : 10, warmup = 3) {
  setNumThreads(threads);
  const cfg = benchConfig(kind);
  const table = await loadTable(join(benchRoot, '..', 'data', 'sample', 'gettext.train.tsv.gz'));
  let tok: TextTokenizer;
  if (kind === 'averaging') tok = dualFamily.fixedTokenizer!(cfg)!;
  else
    tok = Tokenizer.train(new Map(table.langs.map((l) => [l, table.rows.map((r) => r.get(l)).filter((s): s is string => !!s)])), {
      vocabSize: cfg.vocab.size,
      sampleSentences: cfg.vocab.sampleSentences,
      seed: 1,
    });
  const corpus = encodeTable(table, tok);
  manualSeed(cfg.seed);
  const task = createTask(cfg, tok, corpus, () => {});
  const enc = (task.module as unknown as { encoder: DualEncoder }).encoder;
  const batches = Array.from({ length: warmup + steps }, () => {
    const ex = (task.nextBatch() as { batch: { examples: { src: string[]; trg: string[]; row: number }[] } }).batch.examples;
    const side = (k: 'src' | 'trg') => ex.map((e) => corpus.ids.get(e[k][0]!)![e.row]!);
    return { src: side('src'), trg: side('trg') };
  });
  const sparse = task.sparseParameters!;
  const dense = task.module.parameters().filter((p) => !sparse.includes(p));
  const opt = new Adam(dense, { lr: cfg.optim.lr, betas: cfg.optim.betas }),
    sopt = new SparseAdam(sparse, { lr: cfg.optim.sparseLr || cfg.optim.lr, betas: cfg.optim.betas });
  // the step of the trainer (src/train/trainer.ts) with this family's loss (src/models/dual/family.ts)
  const step = (b: { src: Int32Array[]; trg: Int32Array[] }) =>
    tidy(() => {
      opt.zeroGrad();
      sopt.zeroGrad();
      const B = b.src.length;
      const v = normalize(enc.forward([...b.src, ...b.trg]), 1);
      const loss = additiveMarginLoss(v.narrow(0, 0, B), v.narrow(0, B, B), cfg.loss);
      loss.backward();
      sopt.step();
      opt.step();
      return loss.item();
    });
  task.module.train();
  for (const b of batches.slice(0, warmup)) step(b);
  const t0 = performance.now();
  let pairs = 0;
  for (const b of batches.slice(warmup)) {
    step(b);
    pairs += b.src.length;
    await new Promise((r) => setImmediate(r));
  }
  const seconds = (performance.now() - t0) / 1000;
  const xlingRate = pairs / seconds;
  process.stderr.write(`[bench] xling dual ${kind}: ${xlingRate.toFixed(0)} pairs/s\n`);

  const dir = mkdtempSync(join(tmpdir(), 'xling-bench-'));
  try {
    // the feature ids, offsets and weights as raw arrays in one file (in JSON they would exceed the
    // longest string V8 can make at the fast-1h batch size); the JSON says where each one lies
    const chunks: Buffer[] = [];
    let at = 0;
    const put = (a: Int32Array | BigInt64Array | Float32Array): [number, number] => {
      chunks.push(Buffer.from(a.buffer, a.byteOffset, a.byteLength));
      at += a.byteLength;
      return [at - a.byteLength, a.length];
    };
    const side = (seqs: Int32Array[]) => {
      const b = enc.featureBags(seqs);
      return {
        ids: put(b.ids),
        offsets: put(b.offsets),
        weights: put(b.weights),
        ...(kind === 'transformer' ? { lengths: put(Int32Array.from(seqs, (s) => Math.max(1, s.length))) } : {}),
      };
    };
    const f = join(dir, 'batches.json');
    const mc = enc.cfg;
    const sides = batches.map((b) => ({ src: side(b.src), trg: side(b.trg) }));
    writeFileSync(join(dir, 'batches.bin'), Buffer.concat(chunks));
    writeFileSync(
      f,
      JSON.stringify({
        kind,
        threads,
        warmup,
        lr: cfg.optim.lr,
        margin: cfg.loss.margin,
        scale: cfg.loss.scale,
        rows: enc.embed.numEmbeddings,
        model: { dim: mc.dim, outDim: mc.outDim, initStd: mc.initStd, dropout: mc.dropout, maxLen: mc.maxLen, heads: mc.heads, ff: mc.ff, layers: mc.layers },
        data: 'batches.bin',
        batches: sides,
      }),
    );
    const torch = runPython('train_dual.py', [f]);
    return {
      name: `train_step_dual_${kind}`,
      threads,
      batch: cfg.batch.size,
      steps,
      xling_pairs_per_s: xlingRate,
      torch_pairs_per_s: torch.pairs_per_s!,
      ratio: xlingRate / torch.pairs_per_s!,
      xling_params: task.module.numParameters(),
      torch_params: torch.params!,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    task.module.dispose();
  }
}

if (process.argv[1]?.endsWith('train-dual.js')) {
  const kinds: DualBenchKind[] = process.argv.includes('--transformer')
    ? ['transformer']
    : process.argv.includes('--averaging')
      ? ['averaging']
      : ['averaging', 'transformer'];
  for (const k of kinds) {
    const r = await benchTrainDual(k);
    console.log(
      jsonMode()
        ? JSON.stringify(r)
        : `train step dual ${k} (batch ${r.batch}, ${r.threads} threads): xling ${r.xling_pairs_per_s.toFixed(0)} pairs/s, PyTorch ${r.torch_pairs_per_s.toFixed(0)} pairs/s, ratio ${r.ratio.toFixed(3)} (params ${r.xling_params} vs ${r.torch_params})`,
    );
  }
}

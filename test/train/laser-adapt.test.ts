// xling train --init: an imported LASER BiLSTM (the tiny 2-layer fixture of
// test/fixtures/laser, imported with `xling import laser`) trained further with the dual encoder's
// additive-margin loss, and hard negatives (loss.hardNegatives) for every adaptable kind (this
// LASER model and the DistilBERT fixture). The task is learnable but not solvable by the untrained
// model: "xx" is "en" with every word replaced through a fixed permutation of 120 one-piece words
// of the fixture's SentencePiece vocabulary (no shared tokens between a sentence and its
// translation). A few hundred steps must lower the dev similarity-search error by a wide margin;
// the output is a laser-lstm model (same tokenizer file) that embeds through the CLI exactly as
// in-process; --resume continues; gradients reach every weight; bad --init models are refused.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { EncodedCorpus } from '../../src/train-data/examples.js';
import { loadSentenceEncoder, readModelConfig } from '../../src/embed/model-dir.js';
import { readNpy } from '../../src/io/npy.js';
import { batchMarginLoss } from '../../src/models/dual/loss.js';
import { LaserTokenizer } from '../../src/models/laser-lstm/tokenizer.js';
import { noGrad, tidy } from '../../src/tensor/tensor.js';
import { AdaptTask, loadAdaptable, loadAdaptConfig } from '../../src/train/adapt.js';
import { encodeTableAsync, loadTable } from '../../src/train/prepare.js';
import { train } from '../../src/train/trainer.js';
import { devError as devErrorOf, ok, writeCipherSet } from '../fixtures/adapt.js';
import { cli, root } from '../fixtures/cli.js';

let dir: string;
const p = (n: string) => join(dir, n);
const devError = (model: string) => devErrorOf(model, p('dev.tsv'));

function fails(args: string[], re: RegExp): void {
  const r = cli(args);
  assert.notEqual(r.status, 0, `xling ${args.join(' ')} succeeded`);
  assert.match(r.stderr, re);
}

const maxDiff = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
};

const config = {
  batch: { size: 32 },
  optim: { lr: 1e-2, warmup: 20 },
  budget: { pairs: 9600 },
  validate: { langs: ['xx'], maxRows: 200 },
  paths: [{ kind: '1:1', src: ['xx'], trg: ['en'] }],
  checkpointEvery: 100,
  logEvery: 50,
};

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'xling-laser-adapt-'));
  const fx = join(root, 'test/fixtures/laser');
  ok(['import', 'laser', '--checkpoint', join(fx, 'tiny.pt'), '--spm', join(fx, 'spm-unigram.model'), '-o', p('init')]);
  ok(['import', 'hf', '--from', join(root, 'test/fixtures/hf/distilbert'), '-o', p('hf')]);
  // words that LASER's tokenisation keeps as one known piece
  const tok = LaserTokenizer.load(p('init/laser-tokenizer.json'), (readModelConfig(p('init')).model as { vocabSize: number }).vocabSize);
  const words = tok.file.dictionary
    .map(([piece]) => piece)
    .filter((x) => /^▁[a-z]{2,}$/.test(x))
    .map((x) => x.slice(1))
    .filter((w) => {
      const ids = tok.encode(w);
      return ids.length === 2 && ids[0] !== tok.unkId;
    })
    .slice(0, 120);
  assert.equal(words.length, 120);
  writeCipherSet(dir, words);
  writeFileSync(p('cfg.json'), JSON.stringify(config));
  writeFileSync(p('cfg-hn.json'), JSON.stringify({ ...config, loss: { hardNegatives: 3, mineEvery: 50 }, budget: { pairs: 3200 } }));
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('xling train --init of an imported LASER BiLSTM (laser-lstm)', () => {
  test("300 steps lower the dev error by a wide margin (≈0.99 → <0.3); the output is a laser-lstm model with the init model's tokenizer file and shape", (t) => {
    const before = devError(p('init'));
    assert.ok(before > 0.9, `the untrained model already finds the ciphered translations: ${before}`);
    const r = ok([
      'train',
      '--init',
      p('init'),
      '--config',
      p('cfg.json'),
      '--data',
      p('train.tsv'),
      '--dev',
      p('dev.tsv'),
      '--out',
      p('adapted'),
      '--keep-checkpoint',
    ]);
    assert.match(r.stderr, /adapting .*LASER BiLSTM 2×8×2, embeddings 3557×8, max-pool → 16, from tiny\.pt/);
    const afterErr = devError(p('adapted'));
    t.diagnostic(`dev error ${before} → ${afterErr}`);
    assert.ok(afterErr < before - 0.6 && afterErr < 0.3, `dev error ${before} → ${afterErr}: not a wide margin`);
    const saved = readModelConfig(p('adapted')),
      init = readModelConfig(p('init'));
    assert.equal(saved.kind, 'laser-lstm');
    assert.equal(saved.tokenizer, 'laser-tokenizer.json');
    assert.deepEqual(saved.tokenizerSpec, init.tokenizerSpec);
    const m = saved.model as { source: Record<string, unknown> },
      m0 = init.model as { source: Record<string, unknown> };
    assert.deepEqual({ ...m, source: null }, { ...m0, source: null });
    assert.deepEqual(m.source, { ...m0.source, adapted: 'xling train --init' });
    assert.equal(readFileSync(p('adapted/laser-tokenizer.json'), 'utf8'), readFileSync(p('init/laser-tokenizer.json'), 'utf8'));
  });

  test('the adapted model embeds through the CLI as in-process (the packed kernel over the new weights), and its vectors moved', () => {
    const texts = readFileSync(p('dev.tsv'), 'utf8')
      .trimEnd()
      .split('\n')
      .slice(1, 41)
      .map((l) => l.split('\t')[1]!);
    writeFileSync(p('s.txt'), texts.join('\n') + '\n');
    ok(['embed', '--model', p('adapted'), '--input', p('s.txt'), '-o', p('s.npy')]);
    const v = readNpy(p('s.npy')).data as Float32Array;
    const want = loadSentenceEncoder(p('adapted')).embed(texts);
    assert.ok(maxDiff(v, want) <= 1e-5, `embed vs in-process: ${maxDiff(v, want)}`);
    const base = loadSentenceEncoder(p('init')).embed(texts);
    assert.ok(maxDiff(base, want) > 1e-2, "the adapted vectors equal the init model's");
    // the packed kernel (inference) and the autograd forward (training) give the same vectors
    const a = loadAdaptable(p('adapted'));
    try {
      const seqs = texts.map((x) => a.loaded.tokenizer.encode(x));
      const packed = a.loaded.encoder.encode(seqs);
      const padded = tidy(() => a.net.forward(seqs).toFloat32Array());
      assert.ok(maxDiff(packed, padded) < 1e-5, `packed vs autograd forward: ${maxDiff(packed, padded)}`);
    } finally {
      a.loaded.dispose();
    }
  });

  test('--resume continues the finished adaptation from its kept checkpoint', () => {
    const r = ok([
      'train',
      '--init',
      p('init'),
      '--config',
      p('cfg.json'),
      '--data',
      p('train.tsv'),
      '--dev',
      p('dev.tsv'),
      '--out',
      p('adapted'),
      '--resume',
      '--budget-pairs',
      '11200',
    ]);
    assert.match(r.stderr, /resumed from step \d+ \(9600 pairs\)/);
    const log = readFileSync(p('adapted/train-log.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { pairs: number });
    assert.equal(log.at(-1)!.pairs, 11200);
    assert.ok(
      log.some((e) => e.pairs === 9600),
      "the log lost the first run's steps",
    );
    assert.equal(readModelConfig(p('adapted')).kind, 'laser-lstm');
    assert.ok(devError(p('adapted')) < 0.3);
  });

  test("gradients reach every weight (embedding rows of the batch's tokens, both directions of both LSTM layers) and equal the loss's slope", (t) => {
    const a = loadAdaptable(p('init'));
    try {
      const rows = readFileSync(p('train.tsv'), 'utf8')
        .trimEnd()
        .split('\n')
        .slice(1, 17)
        .map((l) => l.split('\t'));
      const src = rows.map((r) => a.loaded.tokenizer.encode(r[1]!)),
        trg = rows.map((r) => a.loaded.tokenizer.encode(r[0]!));
      const lossOf = () => batchMarginLoss(a.net.forward([...src, ...trg]), src.length, { margin: 0.3, scale: 20, bidirectional: true, matryoshka: [] });
      const params = a.net.module.namedParameters();
      assert.deepEqual(
        params.map(([n]) => n).sort(),
        [
          'embed.weight',
          ...[0, 1].flatMap((l) => ['', '_reverse'].flatMap((d) => ['bias_hh', 'bias_ih', 'weight_hh', 'weight_ih'].map((w) => `lstm.${w}_l${l}${d}`))),
        ].sort(),
      );
      for (const [, t] of params) t.zeroGrad();
      tidy(() => lossOf().backward());
      const grads = new Map(params.map(([n, t]) => [n, t.grad!.toFloat32Array()]));
      for (const [n, g] of grads)
        assert.ok(
          g.some((x) => x !== 0),
          `${n} received no gradient`,
        );
      // embedding rows: the tokens of the batch get gradient, the padding row and unused rows none
      const E = 8,
        emb = grads.get('embed.weight')!;
      const rowNorm = (id: number) => Math.hypot(...emb.subarray(id * E, (id + 1) * E));
      for (const id of new Set([...src, ...trg].flatMap((s) => Array.from(s)))) assert.ok(rowNorm(id) > 0, `token ${id} got no gradient`);
      assert.equal(rowNorm(1), 0, 'the padding row got gradient');
      // the loss's slope along the gradient (central difference) equals the gradient's squared norm
      const sq = [...grads.values()].reduce((acc, g) => acc + g.reduce((s, x) => s + x * x, 0), 0);
      const eps = 1e-3 / Math.sqrt(sq);
      const step = (k: number) =>
        noGrad(() =>
          tidy(() => {
            for (const [, t] of params) t.add_(t.grad!.mul(k));
          }),
        );
      const value = () => noGrad(() => tidy(() => lossOf().item()));
      step(eps);
      const up = value();
      step(-2 * eps);
      const down = value();
      step(eps);
      const slope = (up - down) / (2 * eps);
      t.diagnostic(`slope ${slope}, squared gradient norm ${sq}`);
      assert.ok(Math.abs(slope - sq) < 0.05 * sq, `finite-difference slope ${slope} vs |grad|² ${sq}`);
      for (const [, t] of params) t.zeroGrad();
    } finally {
      a.loaded.dispose();
    }
  });

  test('the packed kernel reads the live weights: after an in-place change (as an optimiser step makes) it agrees with the autograd forward again', () => {
    const a = loadAdaptable(p('init'));
    try {
      const seqs = [Int32Array.from([40, 41, 42, 2]), Int32Array.from([50, 2]), Int32Array.from([7, 8, 9, 10, 11, 2])];
      const packed = () => a.loaded.encoder.encode(seqs);
      const padded = () => tidy(() => a.net.forward(seqs).toFloat32Array());
      const v0 = packed();
      assert.ok(maxDiff(v0, padded()) < 1e-5);
      noGrad(() => {
        for (const [k, t] of a.net.module.stateDict()) if (/^lstm\.weight_(ih|hh)_l1/.test(k) || k === 'embed.weight') t.copy_(tidy(() => t.mul(2)));
      });
      a.net.weightsChanged();
      const v1 = padded();
      assert.ok(maxDiff(v0, v1) > 1e-3, 'the weight change does not change the vectors');
      assert.ok(maxDiff(packed(), v1) < 1e-5, 'the packed kernel still uses the old weights');
    } finally {
      a.loaded.dispose();
    }
  });

  test('bad --init models are refused, naming the kind and the adaptable kinds', () => {
    ok(['export', '--model', p('init'), '--dtype', 'int8', '-o', p('int8')]);
    const args = (init: string) => ['train', '--init', init, '--config', p('cfg.json'), '--data', p('train.tsv'), '--out', p('bad')];
    fails(args(p('int8')), /--init .*int8: a compact export \(int8\) cannot be trained further; give the imported model directory/);
    for (const kind of ['laser', 'dual']) {
      const r = cli(args(join(root, 'test/fixtures/vectors', kind)));
      assert.notEqual(r.status, 0);
      const m = new RegExp(`--init .*${kind}: a ${kind} model cannot be trained further yet \\(--init takes ([a-z, -]+);`).exec(r.stderr);
      assert.ok(m, r.stderr);
      assert.deepEqual(m[1]!.split(', ').sort(), ['hf-bert', 'hf-distilbert', 'hf-xlm-roberta', 'laser-lstm']);
    }
    assert.ok(!existsSync(p('bad')) && !existsSync(p('bad.partial')), 'a refused run left output behind');
  });
});

describe('xling train --init with hard negatives (loss.hardNegatives), every adaptable kind', () => {
  test('training runs: the log names the mining, the checkpoint holds the mined targets, --resume continues, the dev error falls', () => {
    const r = ok([
      'train',
      '--init',
      p('init'),
      '--config',
      p('cfg-hn.json'),
      '--data',
      p('train.tsv'),
      '--dev',
      p('dev.tsv'),
      '--out',
      p('hn'),
      '--keep-checkpoint',
    ]);
    assert.match(r.stderr, /in-batch negatives \+ 3 hard negatives mined every 50 steps over 3000 targets/);
    assert.ok(existsSync(p('hn.checkpoint/task.safetensors')), 'the mined target vectors are not in the checkpoint');
    const r2 = ok([
      'train',
      '--init',
      p('init'),
      '--config',
      p('cfg-hn.json'),
      '--data',
      p('train.tsv'),
      '--dev',
      p('dev.tsv'),
      '--out',
      p('hn'),
      '--resume',
      '--budget-pairs',
      '4800',
    ]);
    assert.match(r2.stderr, /resumed from step \d+ \(3200 pairs\)/);
    assert.ok(devError(p('hn')) < 0.5);
  });

  async function taskFor(init: string, hardNegatives: number, corpusCache: Map<string, EncodedCorpus>): Promise<AdaptTask> {
    const file = p(`cfg-task-${hardNegatives}.json`);
    writeFileSync(file, JSON.stringify({ ...config, loss: { hardNegatives, mineEvery: 1000, scale: 10 }, batch: { size: 16 } }));
    const cfg = loadAdaptConfig(file);
    const a = loadAdaptable(init);
    let corpus = corpusCache.get(init);
    if (!corpus) {
      corpus = await encodeTableAsync(await loadTable(p('dev.tsv')), a.loaded.tokenizer);
      corpusCache.set(init, corpus);
    }
    return new AdaptTask(cfg, a, corpus, init);
  }
  const close = (...ts: AdaptTask[]) => {
    for (const t of ts) {
      t.dispose();
      t.module.dispose();
    }
  };

  for (const kind of ['laser-lstm', 'hf-distilbert']) {
    test(`${kind}: mined negatives are harder than in-batch ones and raise the loss of the same batch at the same weights; a checkpoint restores them`, async (t) => {
      const init = p(kind === 'laser-lstm' ? 'init' : 'hf');
      const corpora = new Map<string, EncodedCorpus>();
      const withNeg = await taskFor(init, 4, corpora),
        plain = await taskFor(init, 0, corpora),
        restored = await taskFor(init, 4, corpora);
      try {
        withNeg.beforeStep(1);
        plain.beforeStep(1);
        restored.beforeStep(2); // (step 2: no mining round)
        const batch = withNeg.nextBatch();
        assert.deepEqual(
          plain.nextBatch().examples.map((e) => e.row),
          batch.examples.map((e) => e.row),
        );
        const lossOf = (t: AdaptTask) => tidy(() => t.loss(batch).item());
        const lNeg = lossOf(withNeg),
          lPlain = lossOf(plain);
        assert.ok(lNeg > lPlain + 0.05, `loss with mined negatives ${lNeg} vs without ${lPlain}`);
        // hard: the sources are nearer their mined negatives than the batch's other targets
        const ex = batch.examples;
        const negs = withNeg.miner.negatives(ex, () => withNeg.encoder());
        assert.equal(negs.length, 4 * ex.length);
        const enc = withNeg.encoder(),
          ids = (l: string, r: number) => corpora.get(init)!.ids.get(l)![r]!;
        const d = enc.dim;
        const sv = enc.encode(
            ex.map((e) => ids('xx', e.row)),
            { normalize: true },
          ),
          tv = enc.encode(
            ex.map((e) => ids('en', e.row)),
            { normalize: true },
          ),
          nv = enc.encode(negs, { normalize: true });
        const dot = (a: Float32Array, i: number, b: Float32Array, j: number) => {
          let s = 0;
          for (let q = 0; q < d; q++) s += a[i * d + q]! * b[j * d + q]!;
          return s;
        };
        let mined = 0,
          inBatch = 0,
          nIn = 0;
        ex.forEach((_, i) => {
          for (let k = 0; k < 4; k++) mined += dot(sv, i, nv, i * 4 + k) / (4 * ex.length);
          ex.forEach((__, j) => {
            if (j !== i) {
              inBatch += dot(sv, i, tv, j);
              nIn++;
            }
          });
        });
        t.diagnostic(`loss ${lPlain} → ${lNeg} with mined negatives; mean cosine to them ${mined}, to in-batch targets ${inBatch / nIn}`);
        assert.ok(mined > inBatch / nIn, `mean cosine to mined negatives ${mined} vs in-batch ${inBatch / nIn}`);
        // before a mining round the task has no negatives; the checkpoint's round restores them exactly
        assert.ok(Math.abs(lossOf(restored) - lPlain) < 1e-5, 'negatives without a mining round');
        const st = withNeg.checkpointState()!;
        restored.loadCheckpointState(st);
        for (const tt of st.tensors.values()) tt.dispose();
        assert.ok(Math.abs(lossOf(restored) - lNeg) < 1e-5, `restored ${lossOf(restored)} vs ${lNeg}`);
      } finally {
        close(withNeg, plain, restored);
      }
    });
  }

  test('laser-lstm: a run killed after 17 steps and resumed gives the same loss curve as one run (mining every 7 steps)', async () => {
    const file = p('cfg-curve.json');
    writeFileSync(
      file,
      JSON.stringify({ ...config, loss: { hardNegatives: 2, mineEvery: 7 }, batch: { size: 16 }, budget: { pairs: 16 * 30 }, checkpointEvery: 10 }),
    );
    const cfg = loadAdaptConfig(file);
    const open = () => loadAdaptable(p('init'));
    const first = open();
    const corpus = await encodeTableAsync(await loadTable(p('train.tsv')), first.loaded.tokenizer);
    const run = async (out: string, o: { resume?: boolean; stopAfterSteps?: number }, a = open()) => {
      const r = await train({
        config: cfg,
        corpus,
        tokenizer: a.loaded.tokenizer,
        outDir: out,
        log: () => {},
        createTask: () => new AdaptTask(cfg, a, corpus, p('init')),
        ...o,
      });
      r.task.dispose?.();
      r.task.module.dispose();
      return r.log.map((e) => e.loss);
    };
    const full = await run(p('curve-a'), {}, first);
    await run(p('curve-b'), { stopAfterSteps: 17 });
    await run(p('curve-b'), { resume: true });
    const lb = readFileSync(p('curve-b/train-log.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { loss: number }).loss);
    assert.equal(full.length, 30);
    assert.equal(lb.length, full.length);
    for (let i = 0; i < full.length; i++) assert.ok(Math.abs(full[i]! - lb[i]!) < 1e-4, `step ${i + 1}: ${full[i]} vs ${lb[i]}`);
    assert.ok(existsSync(p('curve-b/checkpoint/task.safetensors')));
  });
});

// xling train --init: an imported Hugging Face encoder (the random DistilBERT fixture, mean pooling, imported with
// `xling import hf`) trained further on parallel data with the dual encoder's additive-margin loss.
// The task is learnable but not solvable by the untrained model: "xx" is "en" with every word
// replaced through a fixed permutation of 240 words of the fixture's vocabulary (no shared tokens
// between a sentence and its translation). A few hundred steps must lower the dev
// similarity-search error by a wide margin; the output is a model of the same kind (same
// tokenizer), embeds through the CLI exactly as in-process, and --resume continues it.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadSentenceEncoder, readModelConfig } from '../../src/embed/model-dir.js';
import { readNpy } from '../../src/io/npy.js';
import { getLoader } from '../../src/models/registry.js';
import { loadModule } from '../../src/nn/serialize.js';
import { noGrad, tidy } from '../../src/tensor/tensor.js';
import { devError as devErrorOf, ok, writeCipherSet } from '../fixtures/adapt.js';
import { root } from '../fixtures/cli.js';

let dir: string;
const p = (n: string) => join(dir, n);
const devError = (model: string) => devErrorOf(model, p('dev.tsv'));

const config = {
  batch: { size: 32 },
  optim: { lr: 3e-3, warmup: 20 },
  budget: { pairs: 9600 },
  validate: { langs: ['xx'], maxRows: 200 },
  paths: [{ kind: '1:1', src: ['xx'], trg: ['en'] }],
  checkpointEvery: 100,
  logEvery: 50,
};

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'xling-hf-adapt-'));
  ok(['import', 'hf', '--from', join(root, 'test/fixtures/hf/distilbert'), '-o', p('init')]);
  const vocab = Object.keys(
    (JSON.parse(readFileSync(join(root, 'test/fixtures/hf/bert/tokenizer.json'), 'utf8')) as { model: { vocab: Record<string, number> } }).model.vocab,
  );
  const words = vocab.filter((w) => /^[a-z]{3,}$/.test(w)).slice(0, 240);
  assert.equal(words.length, 240);
  writeCipherSet(dir, words);
  writeFileSync(p('cfg.json'), JSON.stringify(config));
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('xling train --init (an imported Hugging Face encoder trained further)', () => {
  test("300 steps of the additive-margin loss lower the dev error by a wide margin (0.99 → 0.75); the output is an hf-distilbert model with the init model's tokenizer", (t) => {
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
    assert.match(r.stderr, /adapting .*distilbert 2×32/);
    const afterErr = devError(p('adapted'));
    t.diagnostic(`dev error ${before} → ${afterErr}`);
    assert.ok(afterErr < before - 0.2 && afterErr < 0.8, `dev error ${before} → ${afterErr}: not a wide margin`);
    const saved = readModelConfig(p('adapted')),
      init = readModelConfig(p('init'));
    assert.equal(saved.kind, 'hf-distilbert');
    assert.deepEqual({ ...(saved.model as object), source: '' }, { ...(init.model as object), source: '' });
    assert.match((saved.model as { source: string }).source, /adapted with xling train --init/);
    assert.equal(readFileSync(p('adapted/tokenizer.json'), 'utf8'), readFileSync(p('init/tokenizer.json'), 'utf8'));
  });

  test('the adapted model embeds through the CLI as in-process (the packed kernel over the new weights)', () => {
    const texts = readFileSync(p('dev.tsv'), 'utf8')
      .trimEnd()
      .split('\n')
      .slice(1, 41)
      .map((l) => l.split('\t')[1]!);
    writeFileSync(p('s.txt'), texts.join('\n') + '\n');
    ok(['embed', '--model', p('adapted'), '--input', p('s.txt'), '-o', p('s.npy')]);
    const v = readNpy(p('s.npy')).data as Float32Array;
    const m = loadSentenceEncoder(p('adapted'));
    const want = m.embed(texts);
    let worst = 0;
    v.forEach((x, i) => {
      worst = Math.max(worst, Math.abs(x - want[i]!));
    });
    assert.ok(worst <= 1e-5, `embed vs in-process: ${worst}`);
    const base = loadSentenceEncoder(p('init')).embed(texts);
    let moved = 0;
    base.forEach((x, i) => {
      moved = Math.max(moved, Math.abs(x - want[i]!));
    });
    assert.ok(moved > 1e-2, "the adapted vectors equal the init model's");
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
    assert.equal(readModelConfig(p('adapted')).kind, 'hf-distilbert');
    assert.ok(devError(p('adapted')) < 0.8);
  });

  test("after a weight change, weightsChanged() rebuilds the packed kernel's stacked weights (the packed and padded forwards agree again)", () => {
    const dirM = p('init'),
      saved = readModelConfig(dirM);
    const loaded = getLoader(saved.kind).loadEncoder(dirM, saved, (m, o) =>
      loadModule(m, join(dirM, 'model.safetensors'), { prefix: o?.prefix ?? 'encoder.' }),
    );
    const net = loaded.adaptable!();
    try {
      const seqs = [Int32Array.from([2, 40, 41, 42, 3]), Int32Array.from([2, 50, 3])];
      const packed = () => loaded.encoder.encode(seqs);
      // (with gradient: the padded forward stacks Q/K/V afresh; without, it too would read the cached stack)
      const padded = () => tidy(() => net.forward(seqs).toFloat32Array());
      const maxDiff = (a: Float32Array, b: Float32Array) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i]!)), 0);
      const v0 = packed();
      assert.ok(maxDiff(v0, padded()) < 1e-5);
      // change the query and key weights in place (as an optimiser step does)
      noGrad(() => {
        for (const [k, t] of net.module.stateDict()) if (/attention\.(self\.query|self\.key|q_lin|k_lin)\.weight$/.test(k)) t.copy_(tidy(() => t.mul(3)));
      });
      assert.ok(maxDiff(v0, padded()) > 1e-4, 'the weight change does not change the vectors');
      net.weightsChanged();
      assert.ok(maxDiff(packed(), padded()) < 1e-5, 'the packed kernel still uses the old weights');
    } finally {
      loaded.dispose();
    }
  });
});

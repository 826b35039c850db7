// The dual-encoder family: the native embedding bag (row-sparse gradients) and SparseAdam, hashed
// n-gram features, the additive-margin loss, training on a synthetic corpus (every body and
// pooling), hard negatives with an exact resume, and the model directory.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadSentenceEncoder, writeModelFiles } from '../../src/embed/model-dir.js';
import { SentenceEncoderModel } from '../../src/embed/model.js';
import { additiveMarginLoss } from '../../src/models/dual/loss.js';
import { dualFamily } from '../../src/models/dual/family.js';
import { collisions } from '../../src/models/dual/negatives.js';
import { createTask } from '../../src/models/dual/train.js';
import { DualEncoder } from '../../src/models/dual/model.js';
import { EmbeddingBag, SparseAdam } from '../../src/nn/index.js';
import { readSafetensors } from '../../src/io/safetensors.js';
import { embedding } from '../../src/tensor/ops.js';
import { fromArray, manualSeed, noGrad, tensor, tidy } from '../../src/tensor/index.js';
import { appendNgrams, hashString, HashedNgramTokenizer, NGRAM_ID_OFFSET, subwordNgramTable } from '../../src/text/ngrams.js';
import { parseConfig } from '../../src/models/config.js';
import { train } from '../../src/train/trainer.js';
import { DevSet, xsimOnDev } from '../../src/train/validate.js';
import { encodeRows, syntheticCorpus, WordTokenizer } from '../fixtures/synthetic.js';

describe('embedding bag with row-sparse gradients (native)', () => {
  it('sums weighted rows; the gradient is the dense one, coalesced, and matches finite differences', () => {
    manualSeed(5);
    const bag = new EmbeddingBag(50, 6, 1);
    const ids = [3, 7, 3, 49, 0, 7, 7, 12];
    const offsets = [0, 3, 3, 6, 8]; // bag 1 is empty
    const w = [0.5, 1, 2, -1, 0.25, 1, 3, 0.1];
    const W = bag.weight.toFloat32Array();
    for (const int32 of [true, false]) {
      const idT = int32 ? fromArray(Int32Array.from(ids)) : fromArray(BigInt64Array.from(ids, BigInt));
      const out = bag.forward(idT, fromArray(BigInt64Array.from(offsets, BigInt)), fromArray(Float32Array.from(w)));
      const y = out.toFloat32Array();
      for (let b = 0; b < 4; b++)
        for (let c = 0; c < 6; c++) {
          let e = 0;
          for (let j = offsets[b]!; j < offsets[b + 1]!; j++) e += w[j]! * W[ids[j]! * 6 + c]!;
          assert.ok(Math.abs(y[b * 6 + c]! - e) < 1e-5, `bag ${b} col ${c}`);
        }
      // L = Σ coef ⊙ out: the same through aten::embedding (dense gradient)
      const coef = tensor(Array.from({ length: 24 }, (_, i) => Math.sin(i + 1))).view([4, 6]);
      bag.weight.zeroGrad();
      out.mul(coef).sum().backward();
      const g = bag.weight.grad!;
      assert.equal(g.nnz(), new Set(ids).size, 'row-sparse gradient: one row per distinct id');
      const dense = g.toDense().toFloat32Array();
      bag.weight.zeroGrad();
      const rows = embedding(bag.weight, fromArray(BigInt64Array.from(ids, BigInt)));
      const bagOf = ids.map((_, j) => offsets.findIndex((o, b) => j >= o && j < offsets[b + 1]!));
      rows
        .mul(tensor(w).view([-1, 1]))
        .mul(coef.indexSelect(0, fromArray(BigInt64Array.from(bagOf, BigInt))))
        .sum()
        .backward();
      const ref = bag.weight.grad!.toFloat32Array();
      for (let i = 0; i < ref.length; i++) assert.ok(Math.abs(dense[i]! - ref[i]!) < 1e-5, `grad[${i}] ${dense[i]} vs ${ref[i]}`);
      // finite differences on a few entries (the bag is linear in the weight)
      for (const [r, c] of [
        [3, 0],
        [7, 5],
        [49, 2],
        [12, 1],
        [20, 3],
      ] as const) {
        const f = (d: number) =>
          noGrad(() =>
            tidy(() => {
              const W2 = bag.weight.clone();
              W2.select(0, r).select(0, c).add_(d);
              const o = new EmbeddingBag(50, 6, 0);
              o.weight.copy_(W2);
              return o
                .forward(idT, fromArray(BigInt64Array.from(offsets, BigInt)), fromArray(Float32Array.from(w)))
                .mul(coef)
                .sum()
                .item();
            }),
          );
        const fd = (f(1e-2) - f(-1e-2)) / 2e-2;
        assert.ok(Math.abs(fd - dense[r * 6 + c]!) < 1e-3, `d/dW[${r},${c}]: ${fd} vs ${dense[r * 6 + c]}`);
      }
      bag.weight.zeroGrad();
    }
  });

  it('SparseAdam updates only the rows of the gradient, with torch.optim.SparseAdam arithmetic', () => {
    manualSeed(6);
    const bag = new EmbeddingBag(20, 4, 1);
    const opt = new SparseAdam([bag.weight], { lr: 0.05, betas: [0.9, 0.99] });
    const p = Float64Array.from(bag.weight.toFloat32Array()),
      m = new Float64Array(80),
      v = new Float64Array(80);
    const steps = [
      [1, 5, 5, 9],
      [5, 19, 2],
      [1, 1, 1],
    ];
    steps.forEach((ids, t) => {
      bag.weight.zeroGrad();
      const out = bag.forward(fromArray(Int32Array.from(ids)), fromArray(BigInt64Array.from([0n, BigInt(ids.length)])));
      out
        .mul(tensor([1, -2, 0.5, 3]))
        .sum()
        .backward();
      opt.step();
      const g = new Float64Array(80);
      for (const r of ids)
        [1, -2, 0.5, 3].forEach((x, c) => {
          g[r * 4 + c] += x;
        });
      const step = t + 1,
        bc1 = 1 - 0.9 ** step,
        bc2 = 1 - 0.99 ** step;
      for (const r of new Set(ids))
        for (let c = 0; c < 4; c++) {
          const i = r * 4 + c;
          m[i] = 0.9 * m[i]! + 0.1 * g[i]!;
          v[i] = 0.99 * v[i]! + 0.01 * g[i]! ** 2;
          p[i]! -= (((0.05 * Math.sqrt(bc2)) / bc1) * m[i]!) / (Math.sqrt(v[i]!) + 1e-8);
        }
      const got = bag.weight.toFloat32Array();
      for (let i = 0; i < 80; i++) assert.ok(Math.abs(got[i]! - p[i]!) < 1e-5, `step ${step} [${i}]: ${got[i]} vs ${p[i]}`);
    });
  });

  it('bad ids, offsets or weights are JS errors, never a crash', () => {
    const bag = new EmbeddingBag(10, 3);
    const off = fromArray(BigInt64Array.from([0n, 2n]));
    assert.throws(() => bag.forward(fromArray(Int32Array.from([1, 10])), off), /id 10 at position 1 is out of range \[0, 10\)/);
    assert.throws(() => bag.forward(fromArray(Int32Array.from([1, -1])), off), /id -1/);
    assert.throws(() => bag.forward(fromArray(Int32Array.from([1, 2])), fromArray(BigInt64Array.from([0n, 3n]))), /end at the number of ids \(2\)/);
    assert.throws(() => bag.forward(fromArray(Int32Array.from([1, 2, 3])), fromArray(BigInt64Array.from([0n, 2n, 1n, 3n]))), /non-decreasing/);
    assert.throws(() => bag.forward(fromArray(Int32Array.from([1, 2])), off, fromArray(Float32Array.from([1]))), /perSampleWeights must be float32 \[2\]/);
    assert.throws(() => bag.forward(fromArray(Float32Array.from([1, 2])), off), /ids must be a 1-D int32\/int64/);
  });
});

describe('hashed character n-grams', () => {
  it('FNV-1a over UTF-16 units; every n-gram of the padded sentence plus one feature per word; cut at maxFeatures', () => {
    assert.equal(hashString(''), 0x811c9dc5);
    assert.equal(hashString('a'), 0xe40c292c);
    assert.equal(hashString('foobar'), 0xbf9cf968);
    const tok = new HashedNgramTokenizer({ ngrams: [1, 3], buckets: 1000, words: true, maxFeatures: 10000 }, { lowercase: true });
    const ids = tok.encode('Ab  c'); // normalised to 'ab c', padded ' ab c ' (6 units)
    // n-grams: 6 + 5 + 4, words: 2
    assert.equal(ids.length, 6 + 5 + 4 + 2);
    const expect: number[] = [];
    appendNgrams(' ab c ', 1, 3, 1000, NGRAM_ID_OFFSET, expect);
    assert.deepEqual(Array.from(ids.subarray(0, 15)), expect);
    assert.equal(ids[15], NGRAM_ID_OFFSET + (hashString('ab', 0, 2, hashString('w:')) % 1000));
    assert.deepEqual(Array.from(tok.encode('AB C')), Array.from(ids), 'normalised first (case)');
    assert.ok(ids.every((i) => i >= NGRAM_ID_OFFSET && i < tok.vocabSize));
    const short = new HashedNgramTokenizer({ ngrams: [1, 5], buckets: 1000, words: true, maxFeatures: 7 }, {});
    assert.equal(short.encode('x'.repeat(100000)).length, 7, 'a huge line is cut before hashing');
    assert.equal(short.truncated, 1);
    assert.throws(() => new HashedNgramTokenizer({ ngrams: [3, 2], buckets: 10, words: false, maxFeatures: 5 }, {}), /n-gram range/);
  });

  it('gives each subword token its n-grams (▁ read as a space), none for the specials', () => {
    const t = subwordNgramTable(['<pad>', '<unk>', '<s>', '</s>', '\u2581ab', 'c'], 1, 2, 100);
    assert.deepEqual(Array.from(t.offsets), [0, 0, 0, 0, 0, 5, 6]); // ' ab': 3 + 2; 'c': 1
    const want: number[] = [];
    appendNgrams(' ab', 1, 2, 100, 6, want);
    assert.deepEqual(Array.from(t.ids.subarray(0, 5)), want);
    assert.ok(
      Array.from(t.ids).every((i) => i >= 6 && i < 106),
      'n-gram rows follow the vocabulary',
    );
  });
});

describe('additive margin loss', () => {
  const x0 = [
      [1, 0],
      [0.6, 0.8],
      [0, 1],
    ],
    y0 = [
      [0.8, 0.6],
      [0, 1],
      [-0.6, 0.8],
    ];
  /** Mean cross entropy of the diagonal over rows (logits as plain arrays). */
  const ce = (L: number[][]) => L.reduce((a, row, i) => a - (row[i]! - Math.log(row.reduce((s, v) => s + Math.exp(v), 0))), 0) / L.length;
  const cos = (a: number[], b: number[]) => a[0]! * b[0]! + a[1]! * b[1]!;

  it('is the bidirectional in-batch softmax with the margin on the positive only', () => {
    const m = 0.3,
      s = 5;
    const S = x0.map((a, i) => y0.map((b, j) => s * (cos(a, b) - (i === j ? m : 0))));
    const St = S[0]!.map((_, j) => S.map((row) => row[j]!));
    const got = (o: { bidirectional: boolean }) => additiveMarginLoss(tensor(x0), tensor(y0), { margin: m, scale: s, ...o }).item();
    assert.ok(Math.abs(got({ bidirectional: true }) - (ce(S) + ce(St))) < 1e-5);
    assert.ok(Math.abs(got({ bidirectional: false }) - ce(S)) < 1e-5);
    // hard negatives z join the x→y softmax only
    const z = [[1, 0]];
    const Sz = S.map((row, i) => [...row, s * cos(x0[i]!, z[0]!)]);
    assert.ok(Math.abs(additiveMarginLoss(tensor(x0), tensor(y0), { margin: m, scale: s, bidirectional: true }, tensor(z)).item() - (ce(Sz) + ce(St))) < 1e-5);
    // excluded pairs (the same sentence twice) leave both softmaxes
    const Sx = S.map((row, i) => row.map((v, j) => ((i === 0 && j === 2) || (i === 2 && j === 0) ? -Infinity : v)));
    const Sxt = Sx[0]!.map((_, j) => Sx.map((row) => row[j]!));
    assert.ok(
      Math.abs(additiveMarginLoss(tensor(x0), tensor(y0), { margin: m, scale: s, bidirectional: true }, null, [2, 6]).item() - (ce(Sx) + ce(Sxt))) < 1e-5,
    );
  });

  it('collisions() names the pairs that share a source or a target text', () => {
    const a = Int32Array.from([5, 6]),
      b = Int32Array.from([7]),
      c = Int32Array.from([5, 6]);
    assert.deepEqual(
      collisions([a, b, c], [b, a, Int32Array.from([9])]).sort((p, q) => p - q),
      [2, 6],
    );
    assert.deepEqual(collisions([a, b], [a, Int32Array.from([7, 0])]), []);
    // the same corpus row in other languages: translations, not negatives
    const ys = [Int32Array.from([5]), Int32Array.from([6]), Int32Array.from([8])],
      xs = [b, a, Int32Array.from([3])];
    assert.deepEqual(collisions(xs, ys), []);
    assert.deepEqual(
      collisions(xs, ys, [4, 9, 4]).sort((p, q) => p - q),
      [2, 6],
    );
  });
});

/** The synthetic corpus with a held-out dev split, tokenised by `tok`. */
function synthetic(tok: { encode(s: string): Int32Array }) {
  const { cells, words } = syntheticCorpus(900, 1);
  const dev: DevSet = { pairs: new Map(['xx', 'yy'].map((l) => [l, { src: cells.get(l)!.slice(700, 900), en: cells.get('en')!.slice(700, 900) }])) };
  return { cells, words, train: encodeRows(cells, tok as never, 0, 700), dev };
}

const dualConfig = (extra: Record<string, unknown>) =>
  parseConfig(
    {
      model: 'dual',
      seed: 2,
      paths: [{ kind: '1:1', src: '*', trg: ['en'] }],
      features: { buckets: 4096, dim: 32, ngrams: [1, 4] },
      encoder: { outDim: 32 },
      loss: { scale: 10 },
      batch: { size: 64 },
      optim: { lr: 0.01 },
      budget: { pairs: 64 * 60 },
      checkpointEvery: 20,
      logEvery: 1000,
      ...extra,
    },
    'dual test config',
  );

describe('dual encoder family', () => {
  it('config: dual defaults, and errors that name the setting', () => {
    const c = parseConfig({ model: 'dual' }, 'c.json') as unknown as {
      vocab: { type: string };
      batch: { size: number };
      budget: object;
      loss: { margin: number };
    };
    assert.equal(c.vocab.type, 'none');
    assert.deepEqual(c.budget, { minutes: 10 });
    assert.equal(c.loss.margin, 0.3);
    assert.throws(
      () => parseConfig({ model: 'dual', encoder: { body: 'cnn' } }, 'c.json'),
      /c\.json: 'encoder\.body' must be 'none', 'transformer', 'bilstm', got "cnn"/,
    );
    assert.throws(() => parseConfig({ model: 'dual', encoder: { body: 'transformer' } }, 'c.json'), /with 'vocab\.type' 'none' a sentence is one bag/);
    assert.throws(() => parseConfig({ model: 'dual', loss: { margin: -1 } }, 'c.json'), /'loss\.margin' must be a number >= 0/);
    assert.throws(() => parseConfig({ model: 'dual', paths: [{ kind: '1:N', src: '*', trg: ['en', 'de'] }] }, 'c.json'), /1:1 paths/);
    assert.doesNotThrow(() =>
      parseConfig(
        {
          model: 'dual',
          paths: [
            { kind: '1:1', src: '*', trg: ['en'], weight: 3 },
            { kind: '1:1', src: '*', trg: '*' },
          ],
        },
        'c.json',
      ),
    );
    assert.throws(
      () => parseConfig({ model: 'jmt', paths: [{ kind: '1:1', src: '*', trg: '*' }] }, 'c.json'),
      /the jmt model trains on 1:1 paths \(one target language\)/,
    );
    assert.throws(() => parseConfig({ model: 'dual', decoder: {} }, 'c.json'), /unknown setting 'decoder'/);
    assert.throws(() => parseConfig({ model: 'nmt' }, 'c.json'), /c\.json: 'model': unknown model kind "nmt" \(known: laser, dual, jmt\)/);
    assert.throws(() => parseConfig({ model: 'dual', budget: { pairs: 0 } }, 'c.json'), /'budget' needs pairs > 0 or minutes > 0/);
  });

  it('a bag of hashed n-grams learns translation vectors far below chance', async () => {
    const cfg = dualConfig({});
    const tok = dualFamily.fixedTokenizer!(cfg)!;
    const { train: corpus, dev } = synthetic(tok);
    const dir = mkdtempSync(join(tmpdir(), 'xling-dual-'));
    try {
      manualSeed(cfg.seed);
      const before = xsimOnDev(new SentenceEncoderModel(createTask(cfg, tok, corpus, () => {}).encoder(), tok), dev);
      const { task, log } = await train({ config: cfg, corpus, tokenizer: tok, outDir: dir, log: () => {} });
      const after = xsimOnDev(new SentenceEncoderModel(task.encoder(), tok), dev);
      console.log(`# dual bag: xsim ${before.average.toFixed(1)}% → ${after.average.toFixed(1)}%`);
      assert.ok(after.average < 15 && after.average < before.average - 30, `xsim ${before.average}% → ${after.average}% (chance 99.5%)`);
      assert.ok(log.at(-1)!.loss < log[0]!.loss / 2, 'loss falls');
      // the model directory: PyTorch names, no tokenizer.json (the features are hashed), same vectors back
      writeModelFiles(dir, 'dual', task, cfg, null);
      const names = Object.keys(readSafetensors(join(dir, 'model.safetensors')).tensors).sort();
      assert.deepEqual(names, ['encoder.embed.weight', 'encoder.proj.bias', 'encoder.proj.weight']);
      assert.ok(!existsSync(join(dir, 'tokenizer.json')));
      const loaded = loadSentenceEncoder(dir);
      const sents = dev.pairs.get('xx')!.src.slice(0, 20);
      assert.deepEqual(Array.from(loaded.embed(sents)), Array.from(new SentenceEncoderModel(task.encoder(), tok).embed(sents)));
      task.module.dispose();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('subword + n-gram token features learn through every body and pooling', async () => {
    const { words } = syntheticCorpus(900, 1);
    const tok = new WordTokenizer(words);
    const { train: corpus, dev } = synthetic(tok);
    const cases: [string, Record<string, unknown>, number][] = [
      [
        'averaging, mean (fast path)',
        { encoder: { body: 'none', pooling: ['mean'], outDim: 32 }, features: { buckets: 4096, dim: 32, ngrams: [1, 4], combine: 'mean' } },
        15,
      ],
      ['averaging, max+mean+first+attention', { encoder: { body: 'none', pooling: ['max', 'mean', 'first', 'attention'], outDim: 32 } }, 15],
      [
        'Transformer, max+mean',
        { encoder: { body: 'transformer', layers: 1, heads: 2, ff: 64, pooling: ['max', 'mean'], outDim: 32 }, optim: { lr: 0.003 }, dropout: 0.1 },
        40,
      ],
      ['BiLSTM, max', { encoder: { body: 'bilstm', layers: 1, hidden: 24, pooling: ['max'], outDim: 32 } }, 40],
    ];
    for (const [name, extra, bar] of cases) {
      const cfg = dualConfig({ vocab: { type: 'bpe' }, ...extra });
      const dir = mkdtempSync(join(tmpdir(), 'xling-dual-tok-'));
      try {
        const { task } = await train({ config: cfg, corpus, tokenizer: tok, outDir: dir, log: () => {} });
        const x = xsimOnDev(new SentenceEncoderModel(task.encoder(), tok), dev).average;
        console.log(`# dual ${name}: xsim ${x.toFixed(1)}%`);
        assert.ok(x < bar, `${name}: xsim ${x.toFixed(1)}% (chance 99.5%)`);
        task.module.dispose();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });

  it('a body runs over length groups of the batch: the same vectors and gradients as one sentence at a time', () => {
    const { words } = syntheticCorpus(900, 1);
    const tok = new WordTokenizer(words);
    const { train: corpus } = synthetic(tok);
    // 1 to 40 tokens, shuffled: the batch of 100 runs as 3 length groups
    const seqs = Array.from({ length: 100 }, (_, i) =>
      tok.encode(Array.from({ length: 1 + ((i * 37) % 40) }, (_, j) => words[(i + 3 * j) % words.length]).join(' ')),
    );
    for (const body of [
      { body: 'transformer', layers: 1, heads: 2, ff: 64, pooling: ['max', 'mean'] },
      { body: 'bilstm', layers: 1, hidden: 16, pooling: ['mean'] },
    ]) {
      manualSeed(4);
      const cfg = dualConfig({ vocab: { type: 'bpe' }, encoder: { ...body, outDim: 24 } });
      const task = createTask(cfg, tok, corpus, () => {});
      const enc = (task.module as unknown as { encoder: DualEncoder }).encoder;
      enc.train();
      const w = fromArray(
        Float32Array.from({ length: 100 * 24 }, (_, i) => Math.sin(i)),
        [100, 24],
      );
      const dense = enc.namedParameters().filter(([n]) => n !== 'embed.weight');
      const grads = () =>
        dense.map(([, p]) => {
          const g = p.grad!.toFloat32Array();
          p.zeroGrad();
          return g;
        });
      const grouped = tidy(() => {
        const v = enc.forward(seqs);
        v.mul(w).sum().backward();
        return v.toFloat32Array();
      });
      const gGrouped = grads();
      const single = new Float32Array(100 * 24);
      seqs.forEach((q, i) =>
        tidy(() => {
          const v = enc.forward([q]);
          single.set(v.toFloat32Array(), i * 24);
          v.mul(w.narrow(0, i, 1))
            .sum()
            .backward();
        }),
      );
      const gSingle = grads();
      grouped.forEach((x, i) => assert.ok(Math.abs(x - single[i]!) < 1e-5, `${body.body}: value ${i}: ${x} vs ${single[i]}`));
      gGrouped.forEach((g, k) =>
        g.forEach((x, i) =>
          assert.ok(Math.abs(x - gSingle[k]![i]!) < 1e-4 * (1 + Math.abs(x)), `${body.body}: ${dense[k]![0]}[${i}]: ${x} vs ${gSingle[k]![i]}`),
        ),
      );
      w.dispose();
      task.module.dispose();
    }
  });

  it('hard negatives are mined with the current model; a resume after a kill gives the same loss curve', async () => {
    const cfg = dualConfig({ loss: { scale: 10, hardNegatives: 2, mineEvery: 7 }, budget: { pairs: 64 * 30 }, checkpointEvery: 10 });
    const tok = dualFamily.fixedTokenizer!(cfg)!;
    const { train: corpus } = synthetic(tok);
    const a = mkdtempSync(join(tmpdir(), 'xling-dual-a-')),
      b = mkdtempSync(join(tmpdir(), 'xling-dual-b-'));
    try {
      const full = await train({ config: cfg, corpus, tokenizer: tok, outDir: a, log: () => {} });
      const part = await train({ config: cfg, corpus, tokenizer: tok, outDir: b, log: () => {}, stopAfterSteps: 17 });
      part.task.module.dispose();
      part.task.dispose?.();
      const resumed = await train({ config: cfg, corpus, tokenizer: tok, outDir: b, resume: true, log: () => {} });
      const la = full.log.map((e) => e.loss),
        lb = readFileSync(join(b, 'train-log.jsonl'), 'utf8')
          .trim()
          .split('\n')
          .map((l) => (JSON.parse(l) as { loss: number }).loss);
      assert.equal(lb.length, la.length);
      for (let i = 0; i < la.length; i++) assert.ok(Math.abs(la[i]! - lb[i]!) < 1e-4, `step ${i + 1}: ${la[i]} vs ${lb[i]}`);
      assert.ok(existsSync(join(b, 'checkpoint', 'task.safetensors')), 'the mined targets are part of the checkpoint');
      // with negatives the softmax has more candidates: the loss at the start is higher than without
      const plain = await train({ config: dualConfig({ budget: { pairs: 64 } }), corpus, tokenizer: tok, outDir: join(a, 'plain'), log: () => {} });
      assert.ok(la[0]! > plain.log[0]!.loss, `first loss with hard negatives ${la[0]} > without ${plain.log[0]!.loss}`);
      for (const r of [full, resumed, plain]) {
        r.task.module.dispose();
        r.task.dispose?.();
      }
    } finally {
      rmSync(a, { recursive: true, force: true });
      rmSync(b, { recursive: true, force: true });
    }
  });

  it('normalised rows: identical sentences give identical vectors', () => {
    const cfg = dualConfig({});
    const tok = dualFamily.fixedTokenizer!(cfg)!;
    const { train: corpus } = synthetic(tok);
    manualSeed(1);
    const enc = new SentenceEncoderModel(createTask(cfg, tok, corpus, () => {}).encoder(), tok);
    const v = enc.embed(['w1 w2', 'w3', 'w1 w2']);
    const d = enc.dim;
    assert.deepEqual(Array.from(v.subarray(0, d)), Array.from(v.subarray(2 * d, 3 * d)));
    const n = Math.hypot(...v.subarray(d, 2 * d));
    assert.ok(Math.abs(n - 1) < 1e-5);
  });

  it("a sentence's vector is the same bits whatever batch embeds it (alone, in a large batch, at another position, async)", async () => {
    const cfg = dualConfig({ features: { buckets: 4096, dim: 96, ngrams: [1, 4] }, encoder: { outDim: 80 } });
    const tok = dualFamily.fixedTokenizer!(cfg)!;
    const { train: corpus } = synthetic(tok);
    manualSeed(3);
    const enc = createTask(cfg, tok, corpus, () => {}).encoder();
    const sents = Array.from({ length: 700 }, (_, i) => `w${i % 37} w${(i * 7) % 41} w${i % 11} x${i}`);
    const seqs = sents.map((s) => tok.encode(s));
    const d = enc.dim,
      all = enc.encode(seqs);
    for (const [a, b] of [
      [0, 1],
      [5, 6],
      [3, 700],
      [101, 357],
      [699, 700],
    ] as const) {
      const part = enc.encode(seqs.slice(a, b));
      assert.deepEqual(Array.from(part), Array.from(all.subarray(a * d, b * d)), `rows ${a}..${b}`);
      const t = await enc.encodeAsync(seqs.slice(a, b));
      assert.deepEqual(Array.from(t), Array.from(all.subarray(a * d, b * d)), `rows ${a}..${b}, async`);
    }
  });
});

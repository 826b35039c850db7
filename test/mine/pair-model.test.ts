// The scorer's pair model (src/mine/pair-model.ts): its words, its PCA, that it learns to tell a
// translation from a near miss on a toy language far above chance, that it is saved and read back
// exactly, and the features it adds (logit and gaps to the competitors).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  epochBatches,
  loadPairModel,
  PairExample,
  pairLogits,
  PairModel,
  PairTrainingPoint,
  PairTrainingStopped,
  pairWords,
  savePairModel,
  trainPairModel,
  wordIds,
} from '../../src/mine/scorer/pair-model.js';
import { addPairFeatures, scorerFeatures, FEATURES } from '../../src/mine/scorer/index.js';
import { Adam } from '../../src/nn/optim.js';
import { loadTensors, saveTensors } from '../../src/nn/serialize.js';
import { manualSeed, tensor } from '../../src/tensor/tensor.js';
import { Rng } from '../../src/util/rng.js';

const dir = mkdtempSync(join(tmpdir(), 'xling-pair-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('pair model', () => {
  it('words: lower-cased word-like segments (Unicode word boundaries, dictionary words in Chinese and Japanese)', () => {
    assert.deepEqual(pairWords('Copy %s to <b>File</b> 2.4, naïve'), ['copy', 's', 'to', 'b', 'file', 'b', '2.4', 'naïve']);
    assert.deepEqual(pairWords('ファイルを開く'), ['ファイル', 'を', '開く']);
    assert.deepEqual(pairWords('打开 PDF 文件'), ['打开', 'pdf', '文件']);
    // Devanagari keeps its vowel signs (marks) inside the word
    assert.deepEqual(pairWords('फ़ाइल खोलें'), ['फ़ाइल', 'खोलें']);
    assert.equal(pairWords('a '.repeat(100), 48).length, 48);
    assert.deepEqual(pairWords('... %% !!'), []);
    assert.deepEqual(
      wordIds(
        pairWords('Open the file'),
        new Map([
          ['open', 3],
          ['file', 7],
        ]),
      ),
      [3, 7],
    );
  });

  it('PCA: orthonormal components, the first along the direction of most variance', () => {
    const dim = 6,
      n = 400,
      rng = new Rng(3);
    const x = new Float32Array(n * dim);
    for (let i = 0; i < n; i++) {
      // unit-norm rows spread along (1, 1, 0, …) far more than elsewhere
      const t = rng.normal() * 3;
      for (let j = 0; j < dim; j++) x[i * dim + j] = 0.1 * rng.normal();
      x[i * dim] += t;
      x[i * dim + 1] += t;
      x[i * dim + 2] += 0.2;
    }
    const m = new PairModel({ dim, pca: 3, hidden: 4, maxWords: 8, center: false });
    m.fitPca(x, n);
    const c = m.pcaComponents.toArray();
    const col = (k: number) => Array.from({ length: dim }, (_, j) => c[j * 3 + k]!);
    const dot = (a: number[], b: number[]) => a.reduce((s, v, i) => s + v * b[i]!, 0);
    for (let a = 0; a < 3; a++) for (let b = 0; b < 3; b++) assert.ok(Math.abs(dot(col(a), col(b)) - (a === b ? 1 : 0)) < 1e-4, `${a}·${b}`);
    assert.ok(Math.abs(Math.abs(col(0)[0]!) - Math.SQRT1_2) < 0.05 && Math.abs(col(0)[0]! - col(0)[1]!) < 0.05, `first component ${col(0)}`);
    // the word table: padding row of zeros, then the projected rows
    const t = m.wordTable(x, n);
    assert.deepEqual(t.shape, [n + 1, 3]);
    assert.deepEqual(t.toArray().slice(0, 3), [0, 0, 0]);
  });

  it('learns to tell a translation from a near miss on a toy language pair, far above chance; saved and read back exactly', async () => {
    // a toy vocabulary: word i of language A and its translation i of language B are nearby vectors;
    // a near miss shares half its words with the translation
    manualSeed(5);
    const dim = 16,
      V = 60,
      rng = new Rng(11);
    const base = Array.from({ length: V }, () => Array.from({ length: dim }, () => rng.normal()));
    const vec = new Float32Array(2 * V * dim);
    for (let i = 0; i < V; i++)
      for (let j = 0; j < dim; j++) {
        vec[i * dim + j] = base[i]![j]! + 0.3 * rng.normal();
        vec[(V + i) * dim + j] = base[i]![j]! + 0.3 * rng.normal();
      }
    const sentence = () => Array.from({ length: 3 + rng.int(5) }, () => rng.int(V));
    const make = (k: number): PairExample[] =>
      Array.from({ length: k }, (_, i) => {
        const a = sentence();
        const b = i % 2 ? a.map((w, j) => (j % 2 ? rng.int(V) : w)) : rng.shuffle(a.slice());
        return { a: a.map((w) => 1 + w), b: b.map((w) => 1 + V + w), y: i % 2 ? 0 : 1 };
      });
    const train = make(3000),
      test = make(400);
    const m = new PairModel({ dim, pca: 12, hidden: 32, maxWords: 16, center: false });
    m.fitPca(vec, 2 * V);
    const table = m.wordTable(vec, 2 * V);
    const losses: number[] = [];
    await trainPairModel(m, table, train, { epochs: 4, batch: 64, lr: 3e-3, onEpoch: (_, l) => losses.push(l) });
    assert.ok(losses[3]! < losses[0]! * 0.7, `loss ${losses}`);
    const z = await pairLogits(
      m,
      table,
      test.map((x) => x.a),
      test.map((x) => x.b),
    );
    const acc = test.filter((x, i) => (z[i]! > 0 ? 1 : 0) === x.y).length / test.length;
    assert.ok(acc > 0.85, `held-out accuracy ${acc}`);
    // an empty sentence reads as one zero word (finite logits)
    assert.ok((await pairLogits(m, table, [[]], [[1 + V]])).every(Number.isFinite));
    savePairModel(m, join(dir, 'p.safetensors'));
    const back = loadPairModel(join(dir, 'p.safetensors'));
    assert.deepEqual(back.config, m.config);
    assert.deepEqual(
      Array.from(
        await pairLogits(
          back,
          back.wordTable(vec, 2 * V),
          test.map((x) => x.a),
          test.map((x) => x.b),
        ),
      ),
      Array.from(z),
    );
  });

  it('stopped by its signal within an epoch: a checkpoint there, and the resumed run ends with the weights of the uninterrupted one', async () => {
    const dim = 8,
      V = 30,
      rng = new Rng(2);
    const vec = Float32Array.from({ length: V * dim }, () => rng.normal());
    const ex: PairExample[] = Array.from({ length: 600 }, (_, i) => {
      const a = Array.from({ length: 2 + rng.int(4) }, () => 1 + rng.int(V));
      return { a, b: i % 2 ? a.slice().reverse() : a.map(() => 1 + rng.int(V)), y: i % 2 };
    });
    const fresh = () => {
      manualSeed(7);
      const m = new PairModel({ dim, pca: 6, hidden: 8, maxWords: 8, center: false });
      m.fitPca(vec, V);
      return m;
    };
    const o = { epochs: 2, batch: 32, lr: 1e-2 };
    const whole = fresh();
    const table = whole.wordTable(vec, V);
    const wholeLosses: number[] = [];
    await trainPairModel(whole, table, ex, { ...o, onEpoch: (_, l) => wholeLosses.push(l) });
    // stopped after the 22nd batch (the 3rd of the second epoch: 19 batches an epoch)
    const m = fresh(),
      stop = new AbortController();
    let batches = 0,
      at: PairTrainingPoint | null = null;
    const saveTo = (p: { epoch: number; batch: number }, opt: Adam) => {
      at = p;
      savePairModel(m, join(dir, 'ck.safetensors'));
      saveTensors(join(dir, 'ck-opt.safetensors'), opt.stateDict().tensors, { step: String(opt.stepCount) });
    };
    await assert.rejects(
      trainPairModel(m, table, ex, {
        ...o,
        onBatch: () => {
          if (++batches === 22) stop.abort();
        },
        signal: stop.signal,
        checkpoint: { everyBatches: 1000, save: saveTo },
      }),
      PairTrainingStopped,
    );
    assert.deepEqual([at!.epoch, at!.batch, at!.examples], [1, 3, 96], 'epoch 2, after 3 batches of 32');
    const m2 = loadPairModel(join(dir, 'ck.safetensors'));
    const opt2 = new Adam(m2.parameters(), { lr: 1e-2 });
    const st = loadTensors(join(dir, 'ck-opt.safetensors'));
    opt2.loadStateDict({ tensors: st.tensors, meta: { step: Number(st.metadata.step) } });
    // (the point's loss sums as the CLI keeps them: strings in the checkpoint's metadata)
    const resumedLosses: number[] = [];
    await trainPairModel(
      m2,
      m2.wordTable(vec, V),
      ex,
      { ...o, start: { ...at!, lossSum: Number(String(at!.lossSum)) }, onEpoch: (_, l) => resumedLosses.push(l) },
      opt2,
    );
    // the second epoch's mean loss over all its batches, the three done before the stop included
    assert.deepEqual(resumedLosses, [wholeLosses[1]]);
    const ids = ex.slice(0, 50);
    const z = async (x: PairModel) =>
      Array.from(
        await pairLogits(
          x,
          table,
          ids.map((e) => e.a),
          ids.map((e) => e.b),
        ),
      );
    assert.deepEqual(await z(m2), await z(whole));
    assert.notDeepEqual(await z(fresh()), await z(whole));
  });

  it('batches: every example once an epoch, seeded, lengths close within a batch', () => {
    const ex: PairExample[] = Array.from({ length: 1000 }, (_, i) => ({ a: new Array(1 + ((i * 7) % 30)).fill(1), b: [1], y: 0 }));
    const b1 = epochBatches(ex, 10, 's:0'),
      b2 = epochBatches(ex, 10, 's:0'),
      b3 = epochBatches(ex, 10, 's:1');
    assert.deepEqual(b1, b2);
    assert.notDeepEqual(b1, b3);
    assert.deepEqual(
      b1.flat().sort((x, y) => x - y),
      Array.from({ length: 1000 }, (_, i) => i),
    );
    const spread = b1.map((b) => Math.max(...b.map((i) => ex[i]!.a.length)) - Math.min(...b.map((i) => ex[i]!.a.length)));
    assert.ok(spread.reduce((s, v) => s + v, 0) / spread.length < 3, 'sorted within chunks');
  });

  it('refuses files that are not pair models, with the file named', () => {
    saveTensors(join(dir, 'other.safetensors'), { w: tensor([1, 2]) });
    assert.throws(() => loadPairModel(join(dir, 'other.safetensors')), /other\.safetensors: not an xling pair model/);
    saveTensors(join(dir, 'bad.safetensors'), { w: tensor([1, 2]) }, { format: 'xling-pair-model', config: '{"dim": -1}' });
    assert.throws(() => loadPairModel(join(dir, 'bad.safetensors')), /bad\.safetensors: its config must give dim/);
    // a pair model of a variant no longer offered (words' flags, context) is refused rather than read wrong
    saveTensors(
      join(dir, 'badctx.safetensors'),
      { w: tensor([1, 2]) },
      { format: 'xling-pair-model', config: JSON.stringify({ dim: 4, pca: 2, hidden: 2, maxWords: 4, center: true, context: 1 }) },
    );
    assert.throws(
      () => loadPairModel(join(dir, 'badctx.safetensors')),
      /badctx\.safetensors: a pair model with words' flags \(match\) or context, variants no longer supported/,
    );
    saveTensors(
      join(dir, 'short.safetensors'),
      { w: tensor([1, 2]) },
      { format: 'xling-pair-model', config: JSON.stringify({ dim: 4, pca: 2, hidden: 2, maxWords: 4, center: true }) },
    );
    assert.throws(() => loadPairModel(join(dir, 'short.safetensors')), /short\.safetensors: missing \[/);
    writeFileSync(join(dir, 'junk.safetensors'), 'not a safetensors file at all');
    assert.throws(() => loadPairModel(join(dir, 'junk.safetensors')), /junk\.safetensors/);
  });

  it('features: the logit and its lead over the best other candidate of the same source and of the same target', () => {
    const c = [
      { src: 0, trg: 0 },
      { src: 0, trg: 1 },
      { src: 1, trg: 1 },
      { src: 2, trg: 2 },
    ].map((x) => ({ ...x, features: [] as number[] }));
    addPairFeatures(c, [3, 1, 2, -1]);
    assert.deepEqual(
      c.map((x) => x.features),
      [
        [3, 2, 3 + 5],
        [1, -2, -1],
        [2, 2 + 5, 1],
        [-1, 4, 4],
      ],
    );
    assert.deepEqual(scorerFeatures(false), [...FEATURES]);
    assert.deepEqual(scorerFeatures(true).slice(-3), ['pair_logit', 'pair_gap_src', 'pair_gap_trg']);
  });
});

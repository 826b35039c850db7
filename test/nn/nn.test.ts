import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import {
  Adam,
  AdamW,
  AttentionPool,
  clipGradNorm,
  Embedding,
  LayerNorm,
  Linear,
  loadModule,
  loadTensors,
  LSTM,
  maxPool,
  meanPool,
  firstToken,
  lastToken,
  Module,
  PlateauDecay,
  saveModule,
  SGD,
  TransformerEncoder,
  TransformerEncoderLayer,
  warmupInvSqrt,
  stepDecay,
} from '../../src/nn/index.js';
import {
  crossEntropy,
  getNumThreads,
  gradCheck,
  keep,
  lstmRecurrence,
  manualSeed,
  memoryStats,
  noGrad,
  randn,
  randint,
  setDefaultDtype,
  setNumThreads,
  tensor,
  Tensor,
  tidy,
  zeros,
} from '../../src/tensor/index.js';
import { encoderTables, LASER_DEFAULTS, LaserEncoder, LaserSentenceEncoder } from '../../src/models/laser/model.js';
import { padBatch } from '../../src/train-data/batch.js';
import { SentenceEncoderModel } from '../../src/embed/model.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const fixture = join(root, 'test', 'fixtures', 'parity.safetensors');

function maxDiff(a: Tensor, b: Tensor): number {
  assert.deepEqual(a.shape, b.shape);
  const x = a.toArray(),
    y = b.toArray();
  return x.reduce((m, v, i) => Math.max(m, Math.abs(v - y[i]!)), 0);
}

function pick(all: Map<string, Tensor>, prefix: string): Map<string, Tensor> {
  const out = new Map<string, Tensor>();
  for (const [k, v] of all) if (k.startsWith(prefix + '.')) out.set(k.slice(prefix.length + 1), v);
  return out;
}

describe('parity with PyTorch (fixed weights, fixture from test/fixtures/make_parity.py)', () => {
  const { tensors: F } = loadTensors(fixture);
  it('bidirectional 2-layer LSTM with lengths (packed) and without', () => {
    const lstm = new LSTM(5, 7, { numLayers: 2, bidirectional: true });
    lstm.loadStateDict(pick(F, 'lstm'), false);
    lstm.eval();
    tidy(() => {
      const lengths = F.get('lstm.lengths')!.toArray();
      const r = lstm.forward(F.get('lstm.input')!, { lengths });
      assert.ok(maxDiff(r.output, F.get('lstm.out')!) < 1e-5, 'packed output');
      assert.ok(maxDiff(r.h, F.get('lstm.h')!) < 1e-5, 'h_n');
      assert.ok(maxDiff(r.c, F.get('lstm.c')!) < 1e-5, 'c_n');
      const full = lstm.forward(F.get('lstm.input')!);
      assert.ok(maxDiff(full.output, F.get('lstm.out_full')!) < 1e-5, 'unpacked output');
      assert.ok(maxDiff(full.h, F.get('lstm.h_full')!) < 1e-5, 'unpacked h_n');
    });
    lstm.dispose();
  });
  it('Transformer encoder (2 layers) with key padding mask', () => {
    const enc = new TransformerEncoder({ dim: 8, heads: 2, ff: 16, dropout: 0, numLayers: 2 });
    enc.loadStateDict(pick(F, 'tr'), false);
    tidy(() => {
      const y = enc.forward(F.get('tr.input')!, F.get('tr.mask')!.to('bool'));
      assert.ok(maxDiff(y, F.get('tr.out')!) < 1e-5, `transformer diff ${maxDiff(y, F.get('tr.out')!)}`);
    });
    enc.dispose();
  });
  it('embedding + layer norm + linear + cross entropy', () => {
    const emb = new Embedding(11, 4, 0),
      ln = new LayerNorm(4),
      lin = new Linear(4, 11);
    emb.loadStateDict(pick(F, 'emb'));
    ln.loadStateDict(pick(F, 'ln'));
    lin.loadStateDict(pick(F, 'lin'));
    tidy(() => {
      const logits = lin.forward(ln.forward(emb.forward(F.get('misc.ids')!)));
      assert.ok(maxDiff(logits, F.get('misc.logits')!) < 1e-5);
      const loss = crossEntropy(logits.reshape([-1, 11]), F.get('misc.tgt')!.reshape([-1]), { ignoreIndex: 0 });
      assert.ok(Math.abs(loss.item() - F.get('misc.loss')!.item()) < 1e-5);
    });
    for (const m of [emb, ln, lin]) m.dispose();
  });
  it('state dict names match PyTorch', () => {
    const names = new Set([...pick(F, 'tr').keys()].filter((k) => !['input', 'mask', 'out'].includes(k)));
    const enc = new TransformerEncoder({ dim: 8, heads: 2, ff: 16, dropout: 0, numLayers: 2 });
    assert.deepEqual(new Set(enc.stateDict().keys()), names);
    enc.dispose();
  });
});

describe('finite-difference gradients of layers (float64)', () => {
  it('Linear, LSTM (packed, bidirectional), Transformer layer, pooling', () => {
    setDefaultDtype('float64');
    try {
      manualSeed(11);
      const lin = new Linear(4, 3);
      const x = keep(randn([2, 4]).requiresGrad_());
      gradCheck(() => lin.forward(x).tanh().sum(), [x, lin.weight, lin.bias!]);

      const lstm = new LSTM(3, 4, { numLayers: 2, bidirectional: true });
      const xs = keep(randn([3, 5, 3]).requiresGrad_());
      const lengths = [5, 2, 4];
      gradCheck(() => lstm.forward(xs, { lengths }).output.pow(2).sum(), [xs, ...lstm.parameters().slice(0, 6)], { samples: 6 });

      const layer = new TransformerEncoderLayer({ dim: 8, heads: 2, ff: 12, dropout: 0 });
      const xt = keep(randn([2, 4, 8]).requiresGrad_());
      const mask = keep(
        tensor(
          [
            [0, 0, 1, 1],
            [0, 0, 0, 0],
          ],
          'bool',
        ),
      );
      gradCheck(() => layer.forward(xt, mask).pow(2).mean(), [xt, ...layer.parameters()], { samples: 4 });

      const h = keep(randn([2, 4, 3]).requiresGrad_());
      const valid = keep(
        tensor(
          [
            [1, 1, 0, 0],
            [1, 1, 1, 1],
          ],
          'bool',
        ),
      );
      const ap = new AttentionPool(3);
      gradCheck(() => maxPool(h, valid).sum(), [h]);
      gradCheck(() => meanPool(h, valid).pow(2).sum(), [h]);
      gradCheck(() => firstToken(h).pow(2).sum(), [h]);
      gradCheck(() => lastToken(h, valid).pow(2).sum(), [h]);
      gradCheck(() => ap.forward(h, valid).pow(2).sum(), [h, ...ap.parameters()]);
      for (const t of [x, xs, xt, mask, h, valid]) t.dispose();
      for (const m of [lin, lstm, layer, ap]) m.dispose();
    } finally {
      setDefaultDtype('float32');
    }
  });
  it('pooling excludes padding', () => {
    tidy(() => {
      const h = tensor([[[1], [9], [100]]]);
      const m = tensor([[1, 1, 0]], 'bool');
      assert.deepEqual(maxPool(h, m).toArray(), [9]);
      assert.deepEqual(meanPool(h, m).toArray(), [5]);
      assert.deepEqual(lastToken(h, m).toArray(), [9]);
    });
  });
});

describe('optimizers and schedules', () => {
  it('SGD with momentum matches the hand-computed update', () => {
    const p = tensor([1.0]).requiresGrad_();
    const opt = new SGD([p], { lr: 0.1, momentum: 0.9 });
    for (let i = 0; i < 2; i++) {
      opt.zeroGrad();
      tidy(() => p.mul(p).sum().backward());
      opt.step();
    }
    // g1 = 2, b = 2, p = 0.8; g2 = 1.6, b = 0.9*2+1.6 = 3.4, p = 0.8 - 0.34 = 0.46
    assert.ok(Math.abs(p.item() - 0.46) < 1e-6, String(p.item()));
  });
  it('Adam first step moves each weight by lr against the gradient sign; AdamW decays', () => {
    const p = tensor([1.0, -2.0]).requiresGrad_();
    const opt = new Adam([p], { lr: 0.01 });
    tidy(() => p.mul(p).sum().backward());
    opt.step();
    const v = p.toArray();
    assert.ok(Math.abs(v[0]! - 0.99) < 1e-6 && Math.abs(v[1]! + 1.99) < 1e-6, String(v));
    const q = tensor([1.0]).requiresGrad_();
    const w = new AdamW([q], { lr: 0.1, weightDecay: 0.5 });
    tidy(() => q.mul(0).sum().backward());
    w.step();
    assert.ok(Math.abs(q.item() - 0.95) < 1e-6, String(q.item()));
  });
  it('Adam trains a small classifier well above chance', () => {
    manualSeed(5);
    const model = new Linear(8, 4);
    const opt = new Adam(model.parameters(), { lr: 0.05 });
    const W = keep(randn([8, 4]));
    let acc = 0;
    for (let step = 0; step < 150; step++) {
      tidy(() => {
        const x = randn([64, 8]);
        const y = x.matmul(W).argmax(1);
        opt.zeroGrad();
        const logits = model.forward(x);
        crossEntropy(logits, y).backward();
        clipGradNorm(model.parameters(), 5);
        opt.step();
        acc = logits.argmax(1).eq(y).float().mean().item();
      });
    }
    assert.ok(acc > 0.8, `accuracy ${acc}`);
    W.dispose();
    model.dispose();
  });
  it('clipGradNorm scales to the max norm', () => {
    const p = tensor([3, 4]).requiresGrad_();
    tidy(() => p.mul(p).sum().mul(0.5).backward()); // grad = p, norm 5
    const n = clipGradNorm([p], 1);
    assert.ok(Math.abs(n - 5) < 1e-5);
    assert.ok(Math.abs(p.grad!.norm().item() - 1) < 1e-4);
  });
  it('schedules', () => {
    const f = warmupInvSqrt(1e-3, 100);
    assert.ok(Math.abs(f(50) - 5e-4) < 1e-12);
    assert.ok(Math.abs(f(100) - 1e-3) < 1e-12);
    assert.ok(Math.abs(f(400) - 5e-4) < 1e-12);
    assert.equal(stepDecay(1, 10, 0.5)(25), 0.25);
    const pl = new PlateauDecay(1, 0.5, 1);
    pl.observe(10);
    pl.observe(11);
    assert.equal(pl.lr, 1);
    pl.observe(12);
    assert.equal(pl.lr, 0.5);
  });
});

describe('state dicts and safetensors', () => {
  it('save → load restores identical weights; mismatches are errors', () => {
    const dir = mkdtempSync(join(tmpdir(), 'xling-nn-'));
    try {
      class Net extends Module {
        a = this.module('a', new Linear(3, 2));
        e = this.module('e', new Embedding(5, 3, 0));
      }
      const n1 = new Net(),
        n2 = new Net();
      saveModule(n1, join(dir, 'w.safetensors'));
      loadModule(n2, join(dir, 'w.safetensors'));
      for (const [k, t] of n1.stateDict()) assert.equal(maxDiff(t, n2.stateDict().get(k)!), 0, k);
      const other = new Linear(3, 3);
      assert.throws(() => loadModule(other, join(dir, 'w.safetensors')), /missing|unexpected/);
      assert.throws(
        () =>
          other.loadStateDict(
            new Map([
              ['weight', zeros([2, 2])],
              ['bias', zeros([3])],
            ]),
          ),
        /shape/,
      );
      for (const m of [n1, n2, other]) m.dispose();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('memory stays bounded', () => {
  it('5,000 small training steps keep native handles constant and RSS bounded', async () => {
    manualSeed(1);
    const emb = new Embedding(50, 16, 0);
    const lstm = new LSTM(16, 16, { bidirectional: true });
    const out = new Linear(32, 50);
    const params = [...emb.parameters(), ...lstm.parameters(), ...out.parameters()];
    const opt = new Adam(params, { lr: 1e-3 });
    const step = () =>
      tidy(() => {
        const ids = randint(1, 50, [8, 6]);
        const h = lstm.forward(emb.forward(ids), { lengths: [6, 5, 4, 6, 3, 2, 6, 1] }).output;
        const loss = crossEntropy(out.forward(h).reshape([-1, 50]), ids.reshape([-1]));
        opt.zeroGrad();
        loss.backward();
        clipGradNorm(params, 1);
        opt.step();
      });
    for (let i = 0; i < 200; i++) step();
    global.gc?.();
    const handles0 = memoryStats().handles;
    const rss0 = process.memoryUsage().rss;
    // N-API finalizers of collected handles run from the event loop: a training loop that
    // never yields would defer them, so yield now and then (the trainer does, reading data).
    for (let i = 0; i < 4800; i++) {
      step();
      if (i % 50 === 0) await new Promise((r) => setImmediate(r));
    }
    global.gc?.();
    const handles1 = memoryStats().handles;
    const rss1 = process.memoryUsage().rss;
    assert.ok(handles1 <= handles0, `no native handle leaks (${handles0} -> ${handles1})`);
    assert.ok(rss1 - rss0 < 64 * 1024 * 1024, `RSS grew by ${((rss1 - rss0) / 1048576).toFixed(1)} MiB`);
    for (const m of [emb, lstm, out]) m.dispose();
  });
});

describe('token-table LSTM inference (per-vocabulary input projections)', () => {
  it("gives forward()'s sentence vectors for max/last pooling, bi- and unidirectional, sync and async", async () => {
    manualSeed(11);
    for (const pooling of ['max', 'last'] as const)
      for (const bidirectional of [true, false]) {
        const enc = new LaserEncoder({ ...LASER_DEFAULTS, vocabSize: 300, hidden: 24, embedDim: 16, pooling, bidirectional, targetLangs: ['en'] }).eval();
        // unsorted lengths 1..13, so the kernel's sorting and order restoring are exercised
        const seqs = Array.from({ length: 29 }, (_, i) => Int32Array.from({ length: 1 + ((i * 7) % 13) }, (_, j) => 4 + ((i * 31 + j * 17) % 290)));
        const b = padBatch(seqs, 0);
        const ref = noGrad(() => enc.forward(b)).toFloat32Array();
        const tables = encoderTables(enc)!;
        // 2 threads: directions run side by side (oneDNN GEMMs); 1 thread: one after the other
        const threads0 = getNumThreads();
        for (const threads of [1, 2]) {
          setNumThreads(threads);
          const viaTables = tables.encode(b.ids, b.lengths, pooling).toFloat32Array();
          const viaAsync = (await tables.encodeAsync(b.ids, b.lengths, pooling)).toFloat32Array();
          for (let i = 0; i < ref.length; i++) {
            assert.ok(Math.abs(ref[i]! - viaTables[i]!) < 1e-5, `${pooling} bi=${bidirectional} threads=${threads} [${i}]: ${ref[i]} vs ${viaTables[i]}`);
            assert.ok(Math.abs(ref[i]! - viaAsync[i]!) < 1e-5);
          }
        }
        setNumThreads(threads0);
        // and the model-level embedder picks them for big jobs with the same result
        const m = new SentenceEncoderModel(new LaserSentenceEncoder(enc, 0), { vocabSize: 300, padId: 0 } as never);
        const big = Array.from({ length: 60 }, (_, i) => seqs[i % seqs.length]!);
        const a = m.embedIds(big, { fastPath: false }),
          t = m.embedIds(big, { fastPath: true });
        for (let i = 0; i < a.length; i++) assert.ok(Math.abs(a[i]! - t[i]!) < 1e-5);
        tables.dispose();
        enc.dispose();
        b.ids.dispose();
      }
  });

  it('rejects bad input with a clear error', () => {
    const enc = new LaserEncoder({ ...LASER_DEFAULTS, vocabSize: 50, hidden: 8, embedDim: 8, targetLangs: ['en'] }).eval();
    const tables = encoderTables(enc)!;
    const b = padBatch([Int32Array.from([4, 5, 60]), Int32Array.from([4])], 0);
    assert.throws(() => tables.encode(b.ids, b.lengths, 'max'), /token id 60 out of range/);
    assert.throws(() => tables.encode(b.ids, [3, 9], 'max'), /length 9 out of range/);
    assert.throws(() => tables.encode(b.ids, b.lengths, 'mean' as never), /pooling must be/);
    assert.equal(
      encoderTables(new LaserEncoder({ ...LASER_DEFAULTS, vocabSize: 50, hidden: 8, embedDim: 8, layers: 2, targetLangs: ['en'] })),
      null,
      '2-layer encoders take the aten::lstm path',
    );
    tables.dispose();
    enc.dispose();
  });
});

describe('LSTM recurrence node (native lstmRecurrence) against aten::lstm', () => {
  // Same weights and inputs through both implementations: outputs, final states and the gradients
  // of every input and weight must agree (float32 rounding only).
  const run = (m: LSTM, impl: 'aten' | 'recurrence', x: Tensor, o: { lengths?: number[]; h0?: [Tensor, Tensor]; rowInput?: Tensor }) =>
    tidy(() => {
      m.impl = impl;
      const leaves = [x, ...(o.h0 ?? []), ...(o.rowInput ? [o.rowInput] : []), ...m.parameters()];
      for (const t of leaves) t.zeroGrad();
      const r = m.forward(x, { ...o, paddingValue: -2 });
      // a loss that reads every output, including padded steps (their value is fixed: no gradient)
      const w = randn(r.output.shape);
      r.output.mul(w).sum().add(r.h.pow(2).sum()).add(r.c.sum().mul(0.5)).backward();
      const grads = leaves.map((t) => {
        const g = t.grad!;
        const a = g.toFloat32Array();
        g.dispose();
        return a;
      });
      return { out: r.output.toFloat32Array(), h: r.h.toFloat32Array(), c: r.c.toFloat32Array(), grads };
    });
  const close = (a: Float32Array, b: Float32Array, what: string) => {
    assert.equal(a.length, b.length, what);
    for (let i = 0; i < a.length; i++) assert.ok(Math.abs(a[i]! - b[i]!) < 2e-5 * (1 + Math.abs(b[i]!)), `${what}[${i}]: ${a[i]} vs ${b[i]}`);
  };

  it('same outputs and gradients (bi/uni, 1-2 layers, unsorted lengths, h0, per-row input, 1 and 2 threads)', () => {
    const threads0 = getNumThreads();
    const cases = [
      { bi: true, layers: 1, lengths: [3, 9, 1, 9, 5, 2, 7], h0: false, row: 0 },
      { bi: false, layers: 1, lengths: undefined, h0: true, row: 6 },
      { bi: false, layers: 1, lengths: [4, 9, 2, 9, 1, 6, 8], h0: true, row: 6 },
      { bi: true, layers: 2, lengths: [9, 8, 8, 5, 3, 3, 1], h0: true, row: 0 },
    ];
    for (const threads of [1, 2]) {
      setNumThreads(threads);
      for (const c of cases) {
        manualSeed(21);
        const I = 5,
          H = 8,
          B = 7,
          T = 9,
          D = c.bi ? 2 : 1;
        const m = new LSTM(I + c.row, H, { bidirectional: c.bi, numLayers: c.layers });
        const x = keep(randn([B, T, I]).requiresGrad_());
        const h0: [Tensor, Tensor] | undefined = c.h0
          ? [keep(randn([c.layers * D, B, H]).requiresGrad_()), keep(randn([c.layers * D, B, H]).requiresGrad_())]
          : undefined;
        const rowInput = c.row ? keep(randn([B, c.row]).requiresGrad_()) : undefined;
        manualSeed(5);
        const a = run(m, 'aten', x, { lengths: c.lengths, h0, rowInput });
        manualSeed(5);
        const r = run(m, 'recurrence', x, { lengths: c.lengths, h0, rowInput });
        const what = `threads=${threads} ${JSON.stringify(c)}`;
        close(r.out, a.out, `${what} output`);
        close(r.h, a.h, `${what} h_n`);
        close(r.c, a.c, `${what} c_n`);
        a.grads.forEach((g, i) => close(r.grads[i]!, g, `${what} gradient of leaf ${i}`));
        m.dispose();
        x.dispose();
        h0?.forEach((t) => t.dispose());
        rowInput?.dispose();
      }
    }
    setNumThreads(threads0);
  });

  it('LSTM layers use it by default; XLING_LSTM=aten selects aten::lstm', () => {
    const enc = new LaserEncoder({ ...LASER_DEFAULTS, vocabSize: 40, hidden: 8, embedDim: 8, targetLangs: ['en'] });
    assert.equal(enc.lstm.impl, process.env.XLING_LSTM === 'aten' ? 'aten' : 'recurrence');
    enc.dispose();
  });

  it('rejects bad input with a clear error instead of crashing', () => {
    const x = zeros([4, 2, 12]),
      whh = zeros([1, 12, 3]),
      h = zeros([1, 2, 3]);
    assert.throws(() => lstmRecurrence(x, whh, h, h, [5, 1]), /length 5 out of range \[1, 4\]/);
    assert.throws(() => lstmRecurrence(x, whh, h, h, [1]), /1 lengths for a batch of 2/);
    assert.throws(() => lstmRecurrence(x, zeros([1, 12, 4]), h, h, []), /w_hh must be \[D, 4H, H\]/);
    assert.throws(() => lstmRecurrence(x, whh, zeros([2, 2, 3]), h, []), /h0 and c0 must be \[1, 2, 3\]/);
    assert.throws(() => lstmRecurrence(x.to('float64'), whh, h, h, []), /float32 CPU tensors only/);
    const m = new LSTM(3, 4);
    assert.throws(() => m.forward(zeros([2, 5, 3]), { lengths: [6, 1] }), /length 6 out of range \[1, 5\]/);
    m.dispose();
  });
});

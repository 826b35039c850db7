// The int8 embedding bag (native embeddingBagInt8): bags over int8 rows with per-row
// float32 scales equal the float bag over the dequantised table, on the worker thread as on the
// caller's; bad arguments are JS errors; EmbeddingBag.setInt8 keeps the table int8 and inference-only.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inputOrderBatches, SentenceEncoderModel } from '../../src/embed/model.js';
import { DualSentenceEncoder } from '../../src/models/dual/family.js';
import { DUAL_DEFAULTS, DualEncoder } from '../../src/models/dual/model.js';
import { EmbeddingBag } from '../../src/nn/index.js';
import { HashedNgramTokenizer } from '../../src/text/ngrams.js';
import { devColumn } from '../fixtures/cli.js';
import { embeddingBag, embeddingBagInt8, embeddingBagInt8Async } from '../../src/tensor/ops.js';
import { fromArray, manualSeed, noGrad, Tensor, tidy } from '../../src/tensor/index.js';

/** A seeded table of R int8 rows × D (values over the whole range, ±127 and 0 included) and its scales. */
function table(R: number, D: number, seed: number): { q: Int8Array; scale: Float32Array } {
  let s = seed >>> 0;
  const next = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
  const q = Int8Array.from({ length: R * D }, () => Math.round(next() * 254) - 127);
  q[0] = 127;
  q[1] = -127;
  q[2] = 0;
  const scale = Float32Array.from({ length: R }, (_, r) => (r === 5 ? 0 : (0.001 + next()) / 127));
  return { q, scale };
}

/** Bags of random ids (some empty) with weights: ids, offsets [B+1], weights. */
function bags(R: number, B: number, seed: number): { ids: Int32Array; offsets: BigInt64Array; weights: Float32Array } {
  let s = seed >>> 0;
  const next = () => {
    s = (Math.imul(s, 22695477) + 1) >>> 0;
    return s / 4294967296;
  };
  const ids: number[] = [],
    offsets = [0n];
  for (let b = 0; b < B; b++) {
    const n = b % 7 === 3 ? 0 : 1 + Math.floor(next() * 40);
    for (let j = 0; j < n; j++) ids.push(Math.floor(next() * R));
    offsets.push(BigInt(ids.length));
  }
  return { ids: Int32Array.from(ids), offsets: BigInt64Array.from(offsets), weights: Float32Array.from(ids, () => next() * 2 - 0.5) };
}

const maxDiff = (a: Float32Array, b: Float32Array) => {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
};

describe('int8 embedding bag (native)', () => {
  // D = 45: vector lanes and a scalar tail; 300 bags: several per thread
  const R = 500,
    D = 45,
    B = 300;
  const { q, scale } = table(R, D, 11);
  const b = bags(R, B, 7);

  it('equals the float bag over the dequantised table (int32 and int64 ids, with and without weights)', () => {
    noGrad(() =>
      tidy(() => {
        const Q = fromArray(q, [R, D], 'int8'),
          S = fromArray(scale);
        const deq = Q.float().mul(S.unsqueeze(1));
        const offsets = fromArray(b.offsets),
          w = fromArray(b.weights);
        for (const ids of [fromArray(b.ids), fromArray(BigInt64Array.from(b.ids, (x) => BigInt(x)))]) {
          for (const weights of [w, null]) {
            const got = embeddingBagInt8(Q, S, ids, offsets, weights).toFloat32Array();
            const want = embeddingBag(deq, ids, offsets, weights).toFloat32Array();
            assert.equal(got.length, B * D);
            assert.ok(maxDiff(got, want) <= 1e-5, `max |Δ| ${maxDiff(got, want)}`);
            // and against the arithmetic spelled out: Σ w_j · scale[id] · q[id] (float64), empty bags zero
            for (const bag of [0, 3, 17, B - 1]) {
              for (let c = 0; c < D; c++) {
                let e = 0;
                for (let j = Number(b.offsets[bag]); j < Number(b.offsets[bag + 1]); j++)
                  e += (weights ? b.weights[j]! : 1) * scale[b.ids[j]!]! * q[b.ids[j]! * D + c]!;
                assert.ok(Math.abs(got[bag * D + c]! - e) <= 1e-5, `bag ${bag} column ${c}: ${got[bag * D + c]} vs ${e}`);
              }
            }
          }
        }
        const empty = embeddingBagInt8(Q, S, fromArray(new Int32Array(0)), fromArray(BigInt64Array.from([0n, 0n])), null);
        assert.deepEqual(empty.shape, [1, D]);
        assert.deepEqual(Array.from(empty.toFloat32Array()), new Array(D).fill(0));
      }),
    );
  });

  it('the worker-thread variant gives the same bits', async () => {
    const own: Tensor[] = [];
    const t = <X extends Tensor>(x: X): X => {
      own.push(x);
      return x;
    };
    try {
      const Q = t(fromArray(q, [R, D], 'int8')),
        S = t(fromArray(scale)),
        ids = t(fromArray(b.ids)),
        offsets = t(fromArray(b.offsets)),
        w = t(fromArray(b.weights));
      const sync = noGrad(() => tidy(() => embeddingBagInt8(Q, S, ids, offsets, w).toFloat32Array()));
      const [a1, a2] = await Promise.all([embeddingBagInt8Async(Q, S, ids, offsets, w), embeddingBagInt8Async(Q, S, ids, offsets, null)]);
      t(a1);
      t(a2);
      assert.deepEqual(a1.toFloat32Array(), sync);
      assert.deepEqual(
        a2.toFloat32Array(),
        noGrad(() => tidy(() => embeddingBagInt8(Q, S, ids, offsets, null).toFloat32Array())),
      );
    } finally {
      for (const x of own) x.dispose();
    }
  });

  it('refuses bad arguments with JS errors (sync and async)', async () => {
    const own: Tensor[] = [];
    const t = <X extends Tensor>(x: X): X => {
      own.push(x);
      return x;
    };
    try {
      const Q = t(fromArray(q, [R, D], 'int8')),
        S = t(fromArray(scale));
      const ids = t(fromArray(Int32Array.from([1, 2, 3]))),
        offsets = t(fromArray(BigInt64Array.from([0n, 2n, 3n])));
      const cases: [string, () => Tensor[], RegExp][] = [
        ['id out of range', () => [Q, S, t(fromArray(Int32Array.from([1, R, 3]))), offsets], /id 500 at position 1 is out of range \[0, 500\)/],
        ['negative id', () => [Q, S, t(fromArray(BigInt64Array.from([-1n, 2n, 3n]))), offsets], /id -1 at position 0 is out of range/],
        ['offsets decreasing', () => [Q, S, ids, t(fromArray(BigInt64Array.from([0n, 3n, 2n, 3n])))], /offsets must be non-decreasing/],
        [
          'offsets not ending at N',
          () => [Q, S, ids, t(fromArray(BigInt64Array.from([0n, 2n])))],
          /offsets must start at 0 and end at the number of ids \(3\)/,
        ],
        ['offsets int32', () => [Q, S, ids, t(fromArray(Int32Array.from([0, 2, 3])))], /offsets must be a 1-D int64 tensor/],
        ['float ids', () => [Q, S, t(fromArray(Float32Array.from([1, 2, 3]))), offsets], /ids must be a 1-D int32\/int64 CPU tensor/],
        ['float table', () => [t(Q.float()), S, ids, offsets], /embeddingBagInt8: table must be a 2-D int8 CPU tensor/],
        ['1-D table', () => [t(Q.view([-1])), S, ids, offsets], /table must be a 2-D int8/],
        ['scales too few', () => [Q, t(S.narrow(0, 0, R - 1)), ids, offsets], /scale must be a float32 CPU tensor \[500\]/],
        ['scales float64', () => [Q, t(S.to('float64')), ids, offsets], /scale must be a float32 CPU tensor/],
      ];
      for (const [what, args, re] of cases) {
        const a = args();
        assert.throws(() => embeddingBagInt8(a[0]!, a[1]!, a[2]!, a[3]!), re, what);
        await assert.rejects(embeddingBagInt8Async(a[0]!, a[1]!, a[2]!, a[3]!), re, `${what} (async)`);
      }
      assert.throws(() => embeddingBagInt8(Q, S, ids, offsets, t(fromArray(Float32Array.from([1, 2])))), /perSampleWeights must be float32 \[3\]/);
      // not a tensor at all, too few arguments
      assert.throws(() => (embeddingBagInt8 as unknown as (...a: unknown[]) => Tensor)(Q, S, ids, {}), /./);
      // the table is intact: a good call still works
      assert.equal(
        noGrad(() => tidy(() => embeddingBagInt8(Q, S, ids, offsets).shape[0])),
        2,
      );
    } finally {
      for (const x of own) x.dispose();
    }
  });

  it('EmbeddingBag.setInt8: the int8 table replaces the float one (no float copy), inference only', async () => {
    const bag = new EmbeddingBag(R, D, 0.1);
    assert.equal(bag.weight.dtype, 'float32');
    assert.equal(bag.parameters().length, 1);
    assert.throws(() => bag.setInt8(fromArray(q, [R, D], 'int8').float(), fromArray(scale)), /the table must be int8 \[500, 45\], got float32/);
    assert.throws(() => bag.setInt8(fromArray(q.subarray(0, (R - 1) * D), [R - 1, D], 'int8'), fromArray(scale)), /the table must be int8 \[500, 45\]/);
    bag.setInt8(fromArray(q, [R, D], 'int8'), fromArray(scale));
    try {
      // what the module holds: the int8 table and its scales, no float32 [R, D] tensor anywhere
      assert.equal(bag.weight.dtype, 'int8');
      assert.equal(bag.scale!.dtype, 'float32');
      assert.equal(bag.parameters().length, 0, 'nothing trainable');
      assert.deepEqual(
        [...bag.stateDict()].map(([k, v]) => [k, v.dtype]),
        [['weight', 'int8']],
      );
      const ids = fromArray(b.ids),
        offsets = fromArray(b.offsets),
        w = fromArray(b.weights);
      // training mode: refused, naming the reason
      assert.throws(() => bag.forward(ids, offsets, w), /int8 table \(a compact export\) is inference-only/);
      bag.eval();
      const got = noGrad(() => tidy(() => bag.forward(ids, offsets, w).toFloat32Array()));
      const want = noGrad(() =>
        tidy(() => embeddingBag(fromArray(q, [R, D], 'int8').float().mul(fromArray(scale).unsqueeze(1)), ids, offsets, w).toFloat32Array()),
      );
      assert.ok(maxDiff(got, want) <= 1e-5);
      const a = await bag.forwardAsync(ids, offsets, w);
      assert.deepEqual(a.toFloat32Array(), got);
      a.dispose();
      ids.dispose();
      offsets.dispose();
      w.dispose();
    } finally {
      bag.dispose();
    }
  });
});

describe('embedding with the averaging dual encoder: batches in input order', () => {
  it('inputOrderBatches: consecutive runs capped by sentences and total tokens (a long sentence alone)', () => {
    const seqs = [3, 1, 4, 1, 5, 9, 2, 6].map((n) => new Int32Array(n));
    assert.deepEqual(inputOrderBatches(seqs, 8, 3), [[0, 1, 2], [3, 4], [5], [6, 7]]);
    assert.deepEqual(inputOrderBatches(seqs, 100, 100), [[0, 1, 2, 3, 4, 5, 6, 7]]);
    assert.deepEqual(inputOrderBatches([], 8, 3), []);
  });

  it('the same vectors whatever the batches, fp32 and int8, sync and async', async () => {
    manualSeed(4);
    const cfg = { ...DUAL_DEFAULTS, vocabSize: 0, buckets: 4096, dim: 24, outDim: 16 };
    const tok = new HashedNgramTokenizer({ ngrams: [1, 4], buckets: 4096, words: true, maxFeatures: 256 }, { lowercase: true });
    const net = new DualEncoder(cfg);
    net.eval();
    const enc = new DualSentenceEncoder(net);
    assert.equal(enc.batchLimits?.unpadded, true);
    const m = new SentenceEncoderModel(enc, tok);
    const sents = [...devColumn('de').slice(0, 40), '', ...devColumn('zh').slice(0, 40)];
    try {
      for (const table of ['fp32', 'int8']) {
        if (table === 'int8') {
          // the float table quantised per row (as xling export --dtype int8)
          const w = net.embed.weight.toFloat32Array(),
            R = cfg.buckets + 4,
            D = cfg.dim;
          const q = new Int8Array(R * D),
            sc = new Float32Array(R);
          for (let r = 0; r < R; r++) {
            let mx = 0;
            for (let j = 0; j < D; j++) mx = Math.max(mx, Math.abs(w[r * D + j]!));
            sc[r] = Math.fround(mx / 127);
            for (let j = 0; j < D; j++) q[r * D + j] = sc[r] ? Math.round(w[r * D + j]! / sc[r]!) : 0;
          }
          net.embed.setInt8(fromArray(q, [R, D], 'int8'), fromArray(sc));
        }
        const one = m.embed(sents);
        const each = sents.map((s) => m.embed([s]));
        for (let i = 0; i < sents.length; i++) assert.deepEqual(one.subarray(i * 16, (i + 1) * 16), each[i], `${table}: sentence ${i} alone`);
        assert.deepEqual(m.embed(sents, { maxSentences: 7 }), one, `${table}: batches of 7`);
        assert.deepEqual(m.embed(sents, { maxTokens: 500 }), one, `${table}: batches of ≤ 500 features`);
        assert.deepEqual(await m.embedAsync(sents, { maxSentences: 9 }), one, `${table}: async`);
      }
      assert.equal(net.embed.weight.dtype, 'int8');
    } finally {
      net.dispose();
    }
  });
});

// The imported LASER BiLSTM's inference kernel (native lstmStackEncode via
// src/models/laser-lstm/packed.ts): multi-layer (bi)LSTM on packed sequences with the max-pool
// fused. It must give the sentence vectors of the padded reference (aten::lstm with packing, as
// LASER's LaserLstmEncoder runs) for any lengths, layers, directions, pooling and thread count;
// bad input is a clear error.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { padBatch } from '../../src/train-data/batch.js';
import { LASER_DEFAULTS, LaserEncoder } from '../../src/models/laser/model.js';
import { encodePacked, encodePackedAsync } from '../../src/models/laser-lstm/packed.js';
import { lstmStackEncode } from '../../src/tensor/kernels.js';
import { fromArray, getNumThreads, manualSeed, noGrad, setNumThreads } from '../../src/tensor/index.js';

/** A LaserEncoder whose LSTM runs aten::lstm (packed), the reference. */
function atenEncoder(o: Partial<typeof LASER_DEFAULTS> & { vocabSize: number }): LaserEncoder {
  const was = process.env.XLING_LSTM;
  process.env.XLING_LSTM = 'aten';
  try {
    const enc = new LaserEncoder({ ...LASER_DEFAULTS, targetLangs: ['en'], ...o }).eval();
    assert.equal(enc.lstm.impl, 'aten');
    return enc;
  } finally {
    if (was === undefined) delete process.env.XLING_LSTM;
    else process.env.XLING_LSTM = was;
  }
}

function seqsOf(n: number, maxLen: number, vocab: number, seed: number): Int32Array[] {
  // unsorted lengths 1..maxLen, so sorting and order restoring are exercised
  return Array.from({ length: n }, (_, i) =>
    Int32Array.from({ length: 1 + ((i * 7 + seed) % maxLen) }, (_, j) => 4 + ((i * 31 + j * 17 + seed) % (vocab - 4))),
  );
}

function worst(a: Float32Array, b: Float32Array): number {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

describe('packed multi-layer LSTM inference (lstmStackEncode)', () => {
  it("gives aten::lstm's sentence vectors: 1–3 layers, bi- and unidirectional, max/last pooling, 1, 2 and 4 threads, sync and async", async () => {
    manualSeed(5);
    const threads0 = getNumThreads();
    try {
      for (const layers of [1, 3])
        for (const bidirectional of [true, false])
          for (const pooling of ['max', 'last'] as const) {
            const enc = atenEncoder({ vocabSize: 300, hidden: 24, embedDim: 16, layers, bidirectional, pooling });
            const seqs = seqsOf(29, 13, 300, layers);
            const b = padBatch(seqs, 0);
            const ref = noGrad(() => enc.forward(b)).toFloat32Array();
            for (const threads of [1, 2, 4]) {
              setNumThreads(threads);
              const got = encodePacked(enc, seqs).toFloat32Array();
              const gotAsync = (await encodePackedAsync(enc, seqs)).toFloat32Array();
              const what = `layers=${layers} bi=${bidirectional} ${pooling} threads=${threads}`;
              assert.ok(worst(ref, got) <= 1e-6, `${what}: ${worst(ref, got)}`);
              // (a libuv worker keeps the thread count it first saw, so async may take the other mode)
              assert.ok(worst(ref, gotAsync) <= 1e-6, `${what} async: ${worst(ref, gotAsync)}`);
            }
            b.ids.dispose();
            enc.dispose();
          }
    } finally {
      setNumThreads(threads0);
    }
  });

  it('many rows (input gates computed in several chunks of steps) and ids wider than the lengths', () => {
    manualSeed(6);
    const enc = atenEncoder({ vocabSize: 500, hidden: 16, embedDim: 12, layers: 2, bidirectional: true, pooling: 'max' });
    const seqs = seqsOf(300, 41, 500, 3); // ~6,000 tokens: more than one chunk per direction
    const b = padBatch(seqs, 0);
    const ref = noGrad(() => enc.forward(b)).toFloat32Array();
    assert.ok(worst(ref, encodePacked(enc, seqs).toFloat32Array()) <= 1e-6);
    // rows sorted, ids [B, T] with T past the longest row: the extra steps are skipped
    const one = fromArray(Int32Array.from([7, 8, 9, 1, 1, 1, 5, 6, 1, 1, 1, 1]), [2, 6]);
    const w = enc.lstm.flatWeights();
    const v = lstmStackEncode(one, [3, 2], enc.embed.weight, w, 2, true, 'max').toFloat32Array();
    const r = noGrad(() => enc.forward(padBatch([Int32Array.from([7, 8, 9]), Int32Array.from([5, 6])], 0))).toFloat32Array();
    assert.ok(worst(r, v) <= 1e-6);
    b.ids.dispose();
    enc.dispose();
  });

  it('rejects bad input with a clear error', () => {
    const enc = atenEncoder({ vocabSize: 50, hidden: 8, embedDim: 8, layers: 2 });
    const w = enc.lstm.flatWeights(),
      e = enc.embed.weight;
    const ids = fromArray(Int32Array.from([4, 5, 60, 4, 1, 1]), [2, 3]);
    assert.throws(() => lstmStackEncode(ids, [3, 1], e, w, 2, true, 'max'), /token id 60 out of range \[0, 50\)/);
    assert.throws(() => lstmStackEncode(ids, [1, 3], e, w, 2, true, 'max'), /sorted by decreasing length/);
    assert.throws(() => lstmStackEncode(ids, [2, 9], e, w, 2, true, 'max'), /length 9 out of range/);
    assert.throws(() => lstmStackEncode(ids, [2, 1], e, w.slice(0, 4), 2, true, 'max'), /4 weights for 2 layers × 2 directions/);
    assert.throws(() => lstmStackEncode(ids, [2, 1], e, w, 2, false, 'max'), /weights for 2 layers × 1 directions/);
    assert.throws(() => lstmStackEncode(ids, [2, 1], e, [w[2]!, ...w.slice(1)], 2, true, 'max'), /weight 0 \(layer 0, direction 0\) must be float32 \[32, 8\]/);
    assert.throws(() => lstmStackEncode(ids, [2, 1], e, w, 2, true, 'mean' as never), /pooling must be/);
    ids.dispose();
    enc.dispose();
  });
});

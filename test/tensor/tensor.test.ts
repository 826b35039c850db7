import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  arange,
  cat,
  crossEntropy,
  dropout,
  embedding,
  fromArray,
  gradCheck,
  keep,
  layerNorm,
  manualSeed,
  memoryStats,
  noGrad,
  normalize,
  cosineSimilarity,
  randn,
  setDefaultDtype,
  stack,
  tensor,
  Tensor,
  tidy,
  where,
  zeros,
  isGradEnabled,
  callOp,
  callOpAsync,
  opId,
  ones,
  randint,
  linear,
  rowLinear,
  rowLinearAsync,
} from '../../src/tensor/index.js';

const close = (a: ArrayLike<number>, b: ArrayLike<number>, tol = 1e-5) => {
  assert.equal(a.length, b.length, 'length');
  for (let i = 0; i < a.length; i++) assert.ok(Math.abs(a[i]! - b[i]!) <= tol * (1 + Math.abs(b[i]!)), `element ${i}: ${a[i]} vs ${b[i]}`);
};

describe('tensor creation and export', () => {
  it('round-trips every typed array / dtype', () => {
    tidy(() => {
      const f = fromArray(new Float32Array([1.5, -2, 3]), [3]);
      assert.deepEqual(Array.from(f.data() as Float32Array), [1.5, -2, 3]);
      assert.equal(f.dtype, 'float32');
      const i64 = fromArray(new BigInt64Array([1n, -5n, 9007199254740993n]), [3]);
      assert.equal(i64.dtype, 'int64');
      assert.deepEqual(Array.from(i64.data() as BigInt64Array), [1n, -5n, 9007199254740993n]);
      const i32 = fromArray(new Int32Array([7, 8, 9, 10]), [2, 2]);
      assert.deepEqual(i32.shape, [2, 2]);
      assert.deepEqual(i32.toArray(), [7, 8, 9, 10]);
      const u8 = fromArray(new Uint8Array([0, 255]), [2]);
      assert.deepEqual(u8.toArray(), [0, 255]);
      const b = fromArray(new Uint8Array([1, 0, 1]), [3], 'bool');
      assert.equal(b.dtype, 'bool');
      assert.deepEqual(b.toArray(), [1, 0, 1]);
      // float16 bits: 1.0 = 0x3c00, -2.0 = 0xc000, 0.5 = 0x3800
      const h = fromArray(new Uint16Array([0x3c00, 0xc000, 0x3800]), [3]);
      assert.equal(h.dtype, 'float16');
      assert.deepEqual(h.toArray(), [1, -2, 0.5]);
      assert.deepEqual(Array.from(tensor([1, -2, 0.5]).to('float16').data() as Uint16Array), [0x3c00, 0xc000, 0x3800]);
      const bf = tensor([1, 2]).to('bfloat16');
      assert.equal(bf.dtype, 'bfloat16');
      assert.deepEqual(Array.from(bf.data() as Uint16Array), [0x3f80, 0x4000]);
      assert.deepEqual(
        tensor([
          [1, 2],
          [3, 4],
        ]).shape,
        [2, 2],
      );
    });
  });
  it('rejects byte-length mismatches and ragged arrays', () => {
    assert.throws(() => fromArray(new Float32Array(5), [2, 3]), /bytes but shape needs/);
    assert.throws(() => tensor([[1, 2], [3]]), /ragged/);
  });
});

describe('ops', () => {
  it('computes shapes, broadcasting, reductions, indexing', () => {
    tidy(() => {
      const a = tensor([
        [1, 2, 3],
        [4, 5, 6],
      ]);
      close(a.add(tensor([10, 20, 30])).toArray(), [11, 22, 33, 14, 25, 36]);
      close(a.sum(1).toArray(), [6, 15]);
      close(a.mean(0).toArray(), [2.5, 3.5, 4.5]);
      const [v, i] = a.max(1);
      close(v.toArray(), [3, 6]);
      assert.deepEqual(i.toArray(), [2, 2]);
      assert.deepEqual(a.t().contiguous().toArray(), [1, 4, 2, 5, 3, 6]);
      assert.deepEqual(a.permute([1, 0]).shape, [3, 2]);
      assert.deepEqual(a.reshape([3, 2]).toArray(), [1, 2, 3, 4, 5, 6]);
      assert.deepEqual(a.slice(1, 1, 3).toArray(), [2, 3, 5, 6]);
      assert.deepEqual(a.narrow(0, 1, 1).toArray(), [4, 5, 6]);
      assert.deepEqual(a.indexSelect(1, tensor([2, 0], 'int64')).toArray(), [3, 1, 6, 4]);
      assert.deepEqual(a.gather(1, tensor([[0], [2]], 'int64')).toArray(), [1, 6]);
      assert.deepEqual(a.maskedFill(a.gt(3), 0).toArray(), [1, 2, 3, 0, 0, 0]);
      assert.deepEqual(where(a.lt(3), a, -1).toArray(), [1, 2, -1, -1, -1, -1]);
      assert.deepEqual(cat([a, a], 0).shape, [4, 3]);
      assert.deepEqual(stack([a, a], 1).shape, [2, 2, 3]);
      assert.deepEqual(a.split(1, 0).length, 2);
      assert.deepEqual(a.matmul(a.t()).toArray(), [14, 32, 32, 77]);
      const [tv, ti] = tensor([3, 1, 4, 1, 5]).topk(2);
      assert.deepEqual(tv.toArray(), [5, 4]);
      assert.deepEqual(ti.toArray(), [4, 2]);
      assert.deepEqual(tensor([3, 1, 2]).sort()[0].toArray(), [1, 2, 3]);
      assert.deepEqual(tensor([0.1, 0.9, 0.3]).argmax().toArray(), [1]);
      close(tensor([0, 1]).softmax(0).toArray(), [1 / (1 + Math.E), Math.E / (1 + Math.E)]);
      close(tensor([1, 2]).logSoftmax(0).exp().sum().toArray(), [1]);
      close(tensor([-1, 0, 2]).relu().toArray(), [0, 0, 2]);
      close(tensor([0]).sigmoid().toArray(), [0.5]);
      close(normalize(tensor([[3, 4]])).toArray(), [0.6, 0.8]);
      close(cosineSimilarity(tensor([[1, 0]]), tensor([[1, 1]])).toArray(), [Math.SQRT1_2]);
      assert.deepEqual(arange(4).toArray(), [0, 1, 2, 3]);
      assert.deepEqual(a.expand([2, 2, 3]).shape, [2, 2, 3]);
      assert.equal(a.unsqueeze(0).ndim, 3);
    });
  });
  it('cross entropy honours ignore_index', () => {
    tidy(() => {
      const logits = tensor([
        [2, 0, 0],
        [0, 3, 0],
        [0, 0, 9],
      ]);
      const full = crossEntropy(logits, tensor([0, 1, 2], 'int64'), { reduction: 'none' }).toArray();
      const ign = crossEntropy(logits, tensor([0, 1, -100], 'int64')).item();
      close([ign], [(full[0]! + full[1]!) / 2]);
      const ign0 = crossEntropy(logits, tensor([0, 0, 2], 'int64'), { ignoreIndex: 0 }).item();
      close([ign0], [full[2]!]);
    });
  });
  it('layer norm, dropout, embedding', () => {
    tidy(() => {
      const x = tensor([[1, 2, 3, 4]]);
      const y = layerNorm(x, [4]).toArray();
      close([y.reduce((a, b) => a + b, 0)], [0], 1e-5);
      manualSeed(3);
      const d = dropout(ones([1000]), 0.5, true).toArray();
      const zerosN = d.filter((v) => v === 0).length;
      assert.ok(zerosN > 400 && zerosN < 600, `dropout zeros ${zerosN}`);
      assert.ok(d.every((v) => v === 0 || v === 2));
      assert.deepEqual(dropout(ones([3]), 0.5, false).toArray(), [1, 1, 1]);
      const w = tensor([
        [0, 0],
        [1, 2],
        [3, 4],
      ]);
      assert.deepEqual(embedding(w, tensor([2, 1], 'int64')).toArray(), [3, 4, 1, 2]);
    });
  });
  it('async op equals sync op', async () => {
    const a = randn([64, 32]);
    const s = a.matmul(a.t());
    const r = (await callOpAsync(opId('matmul'), [a, a.t()])) as Tensor;
    close(r.toArray(), s.toArray());
    for (const t of [a, s, r]) t.dispose();
  });
  it('seeds make random ops deterministic', () => {
    manualSeed(42);
    const a = tidy(() => randn([5]).toArray());
    manualSeed(42);
    const b = tidy(() => randn([5]).toArray());
    assert.deepEqual(a, b);
    const r = tidy(() => randint(0, 10, [100]).toArray());
    assert.ok(r.every((v) => v >= 0 && v < 10));
  });
});

describe('autograd', () => {
  it('backward, grad, zero-grad, no-grad', () => {
    const x = tensor([1, 2, 3]).requiresGrad_();
    tidy(() => x.mul(x).sum().backward());
    close(x.grad!.toArray(), [2, 4, 6]);
    tidy(() => x.mul(x).sum().backward());
    close(x.grad!.toArray(), [4, 8, 12]); // accumulates
    x.zeroGrad();
    assert.equal(x.grad, null);
    const y = noGrad(() => {
      assert.equal(isGradEnabled(), false);
      return x.mul(2);
    });
    assert.equal(isGradEnabled(), true);
    assert.equal(y.requiresGrad, false);
    assert.throws(() => y.sum().backward(), /does not require grad/);
    assert.throws(() => x.mul(2).backward(), /non-scalar/);
  });

  it('finite differences agree for the core ops (float64)', () => {
    setDefaultDtype('float64');
    try {
      manualSeed(7);
      const a = keep(randn([3, 4]).requiresGrad_());
      const b = keep(randn([4, 2]).requiresGrad_());
      const ids = keep(
        tensor(
          [
            [1, 2],
            [0, 1],
          ],
          'int64',
        ),
      );
      const ops: [string, () => Tensor][] = [
        ['matmul+tanh', () => a.matmul(b).tanh().sum()],
        ['softmax/log', () => a.softmax(1).mul(a).sum()],
        ['log_softmax', () => a.logSoftmax(0).select(0, 1).sum()],
        ['sigmoid*exp', () => a.sigmoid().mul(a.exp().mul(0.1)).sum()],
        ['gelu', () => a.gelu().pow(2).sum()],
        ['max pool', () => a.max(1)[0].sum()],
        ['mean/sum', () => a.mean(0).mul(a.sum(0)).sum()],
        ['layer_norm', () => layerNorm(a, [4]).mul(a).sum()],
        ['cross entropy', () => crossEntropy(a, tensor([0, 3, 1], 'int64'))],
        ['normalize', () => normalize(a).matmul(b).sum()],
        ['embedding', () => embedding(a, ids).mul(embedding(a, ids)).sum()],
        [
          'cat/transpose',
          () =>
            cat([a, a.mul(2)], 0)
              .t()
              .matmul(cat([a, a], 0))
              .sum(),
        ],
        ['where/masked', () => where(a.gt(0), a.mul(a), a.mul(-3)).sum()],
      ];
      for (const [name, f] of ops) {
        const r = gradCheck(
          f,
          [a, b].filter((t) =>
            tidy(() => {
              const o = f();
              o.backward();
              const used = t.grad !== null;
              a.zeroGrad();
              b.zeroGrad();
              return used;
            }),
          ),
        );
        assert.ok(r.checked > 0, name);
      }
      a.dispose();
      b.dispose();
      ids.dispose();
    } finally {
      setDefaultDtype('float32');
    }
  });
});

describe('memory', () => {
  it('tidy frees everything but the result, nestably; dispose is explicit', () => {
    const before = memoryStats().handles;
    const kept = tidy(() => {
      const a = randn([10, 10]);
      const inner = tidy(() => {
        const t = a.mul(2);
        a.add(1);
        return t;
      });
      a.sub(3);
      return { inner, list: [a.exp()] };
    });
    assert.equal(memoryStats().handles, before + 2);
    kept.inner.dispose();
    kept.list[0]!.dispose();
    assert.equal(memoryStats().handles, before);
    const t = zeros([2]);
    t.dispose();
    t.dispose(); // idempotent
    assert.equal(t.isDisposed, true);
    assert.throws(() => t.add(1), /disposed/);
    assert.throws(() => t.shape, /disposed/);
  });
  it('tidy disposes on throw and refuses async functions', () => {
    const before = memoryStats().handles;
    assert.throws(
      () =>
        tidy(() => {
          zeros([3]);
          throw new Error('boom');
        }),
      /boom/,
    );
    assert.equal(memoryStats().handles, before);
    assert.throws(() => tidy((() => Promise.resolve(1)) as () => unknown), /synchronous/);
  });
});

describe('rowLinear: a linear map whose rows do not depend on the batch', () => {
  it('is x·Wᵀ + b; a row gives the same bits alone, in any batch, at any position, sync or async', async () => {
    manualSeed(5);
    for (const [K, N] of [
      [96, 80],
      [7, 35],
      [256, 512],
    ]) {
      const W = keep(randn([N, K])),
        b = keep(randn([N])),
        X = keep(randn([300, K]));
      const x = X.toFloat32Array();
      const all = noGrad(() => tidy(() => rowLinear(X, W, b).toFloat32Array()));
      close(
        all,
        noGrad(() => tidy(() => linear(X, W, b).toFloat32Array())),
        1e-4,
      ); // another summation order than BLAS
      for (const [a, z] of [
        [0, 1],
        [5, 6],
        [3, 300],
        [101, 257],
        [299, 300],
      ]) {
        const part = noGrad(() => tidy(() => rowLinear(fromArray(x.slice(a * K, z * K), [z - a, K]), W, b).toFloat32Array()));
        assert.deepEqual(Array.from(part), Array.from(all.subarray(a * N, z * N)), `K ${K} N ${N} rows ${a}..${z}`);
      }
      const t = await noGrad(() => rowLinearAsync(X, W, null));
      close(
        t.toFloat32Array(),
        noGrad(() => tidy(() => linear(X, W).toFloat32Array())),
        1e-4,
      );
      t.dispose();
      W.dispose();
      b.dispose();
      X.dispose();
    }
  });
  it('bad shapes, dtypes and gradients are Errors', () => {
    tidy(() => {
      const x = randn([4, 3]),
        w = randn([5, 3]);
      assert.throws(() => rowLinear(x, randn([5, 4])), /weight must be a float32 \[N, 3\]/);
      assert.throws(() => rowLinear(x, w, randn([4])), /bias must be float32 \[5\]/);
      assert.throws(() => rowLinear(x.to('float64'), w), /x must be a 2-D float32/);
      assert.throws(() => rowLinear(x, w.clone().requiresGrad_()), /inference only/);
    });
  });
});

describe('bad input never crashes the process', () => {
  it('gives Errors with the native message', () => {
    tidy(() => {
      const a = randn([2, 3]);
      assert.throws(() => a.matmul(a), /shapes cannot be multiplied/);
      assert.throws(() => a.view([7]), /invalid for input of size 6|shape '\[7\]'/);
      assert.throws(() => a.indexSelect(1, tensor([5], 'int64')), /out of range|out of DATA bounds/i);
      assert.throws(() => a.indexSelect(1, tensor([0.5])), /Long|Int|dtype|index/i);
      assert.throws(() => cat([a, randn([3, 3])], 1), /Sizes of tensors must match/);
      assert.throws(() => crossEntropy(a, tensor([0, 9], 'int64')), /out of bounds|Target/);
      assert.throws(() => embedding(a, tensor([0, 4], 'int64')), /index out of range|out of range/);
      assert.throws(() => a.select(0, 9), /out of range/);
    });
  });
  it('survives a few hundred random bad calls', () => {
    const rnd = (() => {
      let s = 99;
      return () => {
        s = (s * 16807) % 2147483647;
        return s / 2147483647;
      };
    })();
    const pool: unknown[] = [undefined, null, 1, -1, 2.5, NaN, 'x', {}, [], [1, -2], [[]], true, () => 0, 1e20, -1e20, [1.5]];
    const names = [
      'add',
      'matmul',
      'reshape',
      'view',
      'softmax',
      'index_select',
      'gather',
      'cat',
      'embedding',
      'layer_norm',
      'lstm',
      'cross_entropy_loss',
      'topk',
      'narrow',
      'expand',
      'zeros',
      'full',
      'randn',
      'masked_fill',
      'sum',
    ];
    const overloads: Record<string, string> = { add: 'Tensor', softmax: 'int', masked_fill: 'Scalar', lstm: 'input', sum: 'dim_IntList' };
    let errors = 0;
    tidy(() => {
      const ts = [randn([2, 3]), randn([4]), zeros([0]), tensor([1, 2], 'int64'), fromArray(new Uint8Array([1]), [1], 'bool')];
      const disposed = randn([1]);
      disposed.dispose();
      const vals = [...pool, ...ts, disposed, ts.slice(0, 2)];
      for (let i = 0; i < 400; i++) {
        const name = names[Math.floor(rnd() * names.length)]!;
        const n = Math.floor(rnd() * 6);
        const args = Array.from({ length: n }, () => vals[Math.floor(rnd() * vals.length)]);
        try {
          tidy(() => {
            callOp(opId(name, overloads[name] ?? ''), args);
          });
        } catch (e) {
          assert.ok(e instanceof Error, 'an Error');
          errors++;
        }
      }
    });
    assert.ok(errors > 300, `most random calls fail cleanly (${errors})`);
  });
});

// The addon's gatherDot (native/gather_dot.cc): an approximate search's candidates scored against
// the stored rows. Against a float64 reference on float16 and float32 tables (odd widths: the
// 8-lane loop's tail), -inf for faiss's missing results, bad ids and shapes refused with an error
// naming them, and the same bits from the portable loop (XLING_GATHER_DOT_PLAIN) as from AVX2.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fromArray, gatherDot, noGrad, tidy } from '../../src/tensor/index.js';
import { root } from '../fixtures/cli.js';

function rand(n: number, seed: number): Float32Array {
  let s = seed >>> 0 || 1;
  return Float32Array.from({ length: n }, () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296 - 0.5;
  });
}

describe('gatherDot', () => {
  it('scores every candidate as the float64 reference does (float16 and float32 rows, any width), -inf for id -1', () => {
    for (const d of [1, 7, 8, 13, 128, 131]) {
      const N = 500,
        n = 37,
        K = 21;
      const table = rand(N * d, d),
        q = rand(n * d, 3 * d);
      const ids = BigInt64Array.from({ length: n * K }, (_, i) => (i % 11 === 5 ? -1n : BigInt((i * 7919 + d) % N)));
      for (const dtype of ['float32', 'float16'] as const) {
        const { got, rows } = noGrad(() =>
          tidy(() => {
            const t = fromArray(table, [N, d]).to(dtype);
            return { got: gatherDot(t, fromArray(ids, [n, K]), fromArray(q, [n, d])).toFloat32Array(), rows: t.float().toFloat32Array() };
          }),
        );
        for (let i = 0; i < n; i++)
          for (let j = 0; j < K; j++) {
            const id = Number(ids[i * K + j]);
            if (id < 0) {
              assert.equal(got[i * K + j], -Infinity);
              continue;
            }
            let s = 0;
            for (let c = 0; c < d; c++) s += rows[id * d + c]! * q[i * d + c]!;
            assert.ok(Math.abs(got[i * K + j]! - s) <= 1e-5 * (1 + Math.abs(s)), `${dtype} d=${d} [${i}, ${j}]: ${got[i * K + j]} vs ${s}`);
          }
      }
    }
  });

  it('refuses ids out of range, wrong dtypes and shapes, naming them', () => {
    noGrad(() =>
      tidy(() => {
        const t = fromArray(rand(40, 1), [10, 4]),
          q = fromArray(rand(8, 2), [2, 4]);
        assert.throws(() => gatherDot(t, fromArray(BigInt64Array.from([0n, 10n, 1n, 2n]), [2, 2]), q), /id 10 at \[0, 1\] is out of range \[0, 10\)/);
        assert.throws(() => gatherDot(t, fromArray(Int32Array.from([0, 1, 1, 2]), [2, 2]), q), /ids must be a 2-D int64/);
        assert.throws(() => gatherDot(t, fromArray(BigInt64Array.from([0n, 1n, 1n]), [3, 1]), q), /q must be \[3, 4\]/);
        assert.throws(() => gatherDot(t.to('float64'), fromArray(BigInt64Array.from([0n, 1n]), [2, 1]), q), /table must be a 2-D float16 or float32/);
        // no candidates at all: an empty [n, 0] answer
        assert.equal(gatherDot(t, fromArray(new BigInt64Array(0), [2, 0]), q).numel, 0);
      }),
    );
  });

  it("the portable loop gives the AVX2 kernel's bits (a graph built on mixed machines is one graph)", () => {
    const script = `import { fromArray, gatherDot, noGrad, tidy, setNumThreads } from ${JSON.stringify(`${root}/dist/src/tensor/index.js`)};
      setNumThreads(2);
      let s = 9; const r = () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s / 4294967296 - 0.5; };
      const N = 3000, d = 100, n = 200, K = 50;
      const table = Float32Array.from({ length: N * d }, r), q = Float32Array.from({ length: n * d }, r);
      const ids = BigInt64Array.from({ length: n * K }, () => BigInt(Math.floor((r() + 0.5) * N)));
      const out = [];
      for (const dt of ['float32', 'float16']) out.push(...noGrad(() => tidy(() => gatherDot(fromArray(table, [N, d]).to(dt), fromArray(ids, [n, K]), fromArray(q, [n, d])).toFloat32Array())));
      process.stdout.write(Buffer.from(Float32Array.from(out).buffer).toString('hex'));`;
    const run = (env: NodeJS.ProcessEnv) => {
      const p = spawnSync(process.execPath, ['--input-type=module', '-e', script], { env, encoding: 'utf8', maxBuffer: 1 << 26 });
      assert.equal(p.status, 0, p.stderr);
      return p.stdout;
    };
    const { XLING_GATHER_DOT_PLAIN: _, ...env } = process.env;
    const fast = run(env),
      plain = run({ ...env, XLING_GATHER_DOT_PLAIN: '1' });
    assert.equal(fast.length, 2 * 200 * 50 * 8);
    assert.ok(fast === plain, 'the two loops differ');
  });
});

// xling/lite's WebAssembly SIMD kernels (assembly/lite-kernels.ts → src/lite/kernels-wasm.ts)
// against its pure-TypeScript path: the same vectors (≤ 1e-6) on fp32, fp16, int8 and pruned int8
// exports, plain and centred, on one thread and on two worker threads; the fallback where the
// kernels cannot embed a model; the committed generated module is what the source compiles to.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { exportCompact } from '../../src/embed/export.js';
import { exportEncoder, loadSentenceEncoder } from '../../src/embed/model-dir.js';
import { loadModel } from '../../src/lite/index.js';
import { devColumn, root, tinyDualModel } from '../fixtures/cli.js';

const maxDiff = (a: Float32Array, b: Float32Array) => {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
};

describe('xling/lite WebAssembly kernels', () => {
  let dir = '';
  const dirs: Record<string, string> = {};
  // several batches of 16 and a tail that is not a multiple of 4; blank and odd inputs among them
  const sents = [
    ...devColumn('de').slice(0, 60),
    ...devColumn('ja').slice(0, 45),
    ...devColumn('ru').slice(0, 30),
    '',
    '   ',
    'Ünïcödé “quotes” — dash… ﬁ ＡＢＣ',
    'x'.repeat(5000),
  ];
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'xling-lite-wasm-'));
    const model = join(dir, 'tiny');
    // the model test/lite/lite.test.ts trains (the same settings: one training with XLING_TEST_CACHE)
    tinyDualModel(dir, model, { features: { buckets: 65536, dim: 32 } });
    dirs.fp32 = join(dir, 'fp32');
    exportEncoder(model, dirs.fp32);
    dirs.fp16 = join(dir, 'fp16');
    exportCompact(model, dirs.fp16, { dtype: 'fp16' });
    dirs.int8 = join(dir, 'int8');
    exportCompact(model, dirs.int8, { dtype: 'int8' });
    dirs.pruned = join(dir, 'pruned');
    exportCompact(model, dirs.pruned, { dtype: 'int8', prune: true, fallback: 64 });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('gives the pure-TypeScript vectors (≤ 1e-6; centred: ≤ 1e-6 / |v − μ|) on fp32, fp16, int8 and pruned int8 exports, plain and centred, on 1 and 2 threads', async () => {
    for (const [name, d] of Object.entries(dirs)) {
      const js = await loadModel(d, { kernel: 'js' }),
        wasm = await loadModel(d, { kernel: 'wasm' }),
        pool = await loadModel(d, { threads: 2 });
      try {
        assert.equal(js.kernel, 'js');
        assert.equal(wasm.kernel, 'wasm-simd', 'Node 20 has WebAssembly SIMD');
        assert.equal(pool.kernel, 'wasm-simd');
        assert.equal(wasm.dtype, name === 'pruned' ? 'int8' : name);
        // centring divides by |v − μ|: the float32 rounding of v (~3e-8) grows by 1 / |v − μ| for a
        // sentence near a mean (as in test/lite/lite.test.ts); the bound for centred rows takes the least |v − μ|
        const plain = await js.embed(sents, { lang: null }),
          centers = loadSentenceEncoder(d).centers;
        const minNorm = (langs: string[]) => {
          let m = Infinity;
          for (const l of langs)
            for (let i = 0; i < sents.length; i++)
              m = Math.min(m, Math.hypot(...Array.from({ length: js.dim }, (_, j) => plain[i * js.dim + j]! - centers.get(l)![j]!)));
          return m;
        };
        const bound = { plain: 1e-6, de: 1e-6 / Math.min(1, minNorm(['de'])), all: 1e-6 / Math.min(1, minNorm([...centers.keys()])) };
        const many = Array.from({ length: 700 }, (_, i) => sents[i % sents.length]! + (i % 5 ? '' : ` ${i}`)); // enough for the pool to split
        for (const [o, tol] of [
          [{ lang: null }, bound.plain],
          [{ lang: 'de', center: 'force' as const }, bound.de],
          [{ lang: 'auto-per-sentence', center: 'force' as const }, bound.all],
        ] as const) {
          const ref = await js.embed(sents, o);
          const a = await wasm.embed(sents, o);
          const dd = maxDiff(a, ref);
          console.log(`# ${name} ${JSON.stringify(o)}: max |wasm − js| ${dd.toExponential(2)} (bound ${tol.toExponential(2)})`);
          assert.ok(dd <= tol, `${name} ${JSON.stringify(o)}: ${dd}`);
          const p = await pool.embed(many, o),
            pr = await js.embed(many, o);
          assert.ok(maxDiff(p, pr) <= tol, `${name} on 2 worker threads`);
          // the same bits on one thread and on the pool (the same kernel, the same batches' arithmetic per sentence)
          assert.deepEqual(Array.from(p), Array.from(await wasm.embed(many, o)), `${name}: pool and one thread`);
        }
        // unit rows, and the rows of a sentence do not depend on its batch neighbours
        const one = await wasm.embed([sents[3]!], { lang: null });
        assert.ok(Math.abs(Math.hypot(...one) - 1) < 1e-5);
        assert.deepEqual(Array.from(one), Array.from((await wasm.embed(sents, { lang: null })).subarray(3 * wasm.dim, 4 * wasm.dim)));
        assert.equal((await wasm.embed([])).length, 0);
      } finally {
        await pool.close();
      }
    }
  });

  it("falls back to TypeScript where the kernels cannot embed a model ('auto'), and says why ('wasm')", async () => {
    // a maxFeatures above what one batch holds: the kernels decline, the vectors stay the same
    const big = join(dir, 'big');
    exportEncoder(dirs.fp32!, big);
    const cfgPath = join(big, 'config.json');
    const cfg = JSON.parse(readFileSync(cfgPath, 'utf8')) as { tokenizerSpec: { maxFeatures: number; maxLength: number } };
    cfg.tokenizerSpec.maxFeatures = cfg.tokenizerSpec.maxLength = 100000;
    writeFileSync(cfgPath, JSON.stringify(cfg));
    const auto = await loadModel(big);
    assert.equal(auto.kernel, 'js');
    const short = sents.slice(0, 20);
    assert.ok(maxDiff(await auto.embed(short, { lang: null }), await (await loadModel(dirs.fp32!)).embed(short, { lang: null })) <= 1e-6);
    await assert.rejects(loadModel(big, { kernel: 'wasm' }), /cannot embed this model with its WebAssembly kernels here \(its shapes or settings/);
    await assert.rejects(loadModel(dirs.fp32!, { kernel: 'gpu' as 'js' }), /kernel must be 'auto', 'wasm' or 'js'/);
  });

  it('the committed kernels are what scripts/build-lite-wasm.mjs compiles from assembly/lite-kernels.ts', () => {
    const r = spawnSync(process.execPath, [join(root, 'scripts', 'build-lite-wasm.mjs'), '--check'], { cwd: root, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr + r.stdout);
  });
});

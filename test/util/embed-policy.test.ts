// One embed policy for both runtimes (src/util/embed-policy.ts): the post-processing order on rows
// worked by hand; xling/lite's model and the native embed path are the same CenterPolicy (the same
// plan for the same options) and xling/lite's model is a SentenceEncoder that the native embed path
// runs over, giving lite's own vectors, on its TypeScript and its WebAssembly kernels.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { exportEncoder, loadSentenceEncoder } from '../../src/embed/model-dir.js';
import { SentenceEncoderModel } from '../../src/embed/model.js';
import { loadPortableSentenceEncoder, onKernels } from '../../src/embed/portable.js';
import { readModelBytes } from '../../src/lite/index.js';
import { LiteModel } from '../../src/lite/model.js';
import { parseSafetensors } from '../../src/lite/safetensors.js';
import { arenaMemory, Arena, instantiateKernel, kernelModule, planArena, WasmMemory } from '../../src/lite/wasm.js';
import { CenterPolicy, finishRows } from '../../src/util/embed-policy.js';
import { devColumn, tinyDualModel } from '../fixtures/cli.js';

const maxDiff = (a: Float32Array, b: Float32Array) => {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
};

describe("finishRows: normalise, subtract the row's mean, normalise again", () => {
  it('works rows of 2 values as by hand, centred rows only renormalised, normalize false keeps centred rows unnormalised', () => {
    const mu = Float32Array.from([0.6, 0]);
    // rows (3, 4) and (0, 2): unit rows (0.6, 0.8) and (0, 1); the first minus mu is (0, 0.8) → (0, 1)
    const rows = Float32Array.from([3, 4, 0, 2]);
    finishRows(rows, 2, [mu, null], true);
    assert.deepEqual(Array.from(rows), [0, 1, 0, 1]);
    const raw = Float32Array.from([3, 4, 0, 2]);
    finishRows(raw, 2, [mu, null], false);
    assert.deepEqual(
      Array.from(raw).map((x) => Math.round(x * 1e6) / 1e6),
      [0, 0.8, 0, 1],
    );
    // nothing centred, not asked: left as the encoder gave them
    const plain = Float32Array.from([3, 4]);
    finishRows(plain, 2, null, false);
    assert.deepEqual(Array.from(plain), [3, 4]);
    // already normalised by the encoder: not normalised twice (the mean subtracted from the rows as given)
    const given = Float32Array.from([1, 0]);
    finishRows(given, 2, [Float32Array.from([0.5, 0])], true, true);
    assert.deepEqual(Array.from(given), [1, 0]);
  });

  it('plans by the one rule: off, negligible means, a given code, an unknown one', () => {
    const big = new CenterPolicy(
      new Map([
        ['de', Float32Array.from([0.3, 0])],
        ['fr', Float32Array.from([0, 0.3])],
      ]),
    );
    assert.equal(big.centerPlan(['x'], { lang: 'de' }), 'de');
    assert.equal(big.centerPlan(['x'], { lang: 'de', center: false }), null);
    assert.equal(big.centerPlan(['x'], { lang: 'es' }), null);
    assert.equal(big.centerPlan(['x'], { lang: 'auto' }), null, 'no identifier: nothing identified, nothing centred');
    assert.deepEqual(big.centerPlan(['x', 'y'], { langs: ['fr', null] }), ['fr', null]);
    assert.throws(() => big.centerPlan(['x'], { langs: [] }), /0 languages for 1 sentences/);
    const small = new CenterPolicy(new Map([['de', Float32Array.from([0.01, 0])]]));
    assert.equal(small.centerPlan(['x'], { lang: 'de' }), null);
    assert.equal(small.centerPlan(['x'], { lang: 'de', center: 'force' }), 'de');
  });
});

describe('xling/lite and the native embed path share one policy', () => {
  let dir = '',
    fp32 = '';
  const sents = [...devColumn('de').slice(0, 30), ...devColumn('ja').slice(0, 30), ...devColumn('ru').slice(0, 30), '', '  '];
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'xling-policy-'));
    const model = join(dir, 'tiny');
    tinyDualModel(dir, model, { features: { buckets: 65536, dim: 32 } });
    fp32 = join(dir, 'fp32');
    exportEncoder(model, fp32);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** xling/lite's model of a directory on its WebAssembly kernels (as loadModel builds it, one thread). */
  async function wasmModel(path: string): Promise<LiteModel> {
    const module = await kernelModule(false);
    assert.ok(module, 'this Node has WebAssembly SIMD');
    let arena: Arena | null = null,
      memory: WasmMemory | null = null;
    const { bytes, config, where, lid } = await readModelBytes(path, undefined, (size, headerLen) => {
      arena = planArena(size, headerLen, 1, false);
      memory = arena && arenaMemory(arena);
      return memory && new Uint8Array(memory.buffer, arena!.base, size);
    });
    const m = new LiteModel(config as ConstructorParameters<typeof LiteModel>[0], parseSafetensors(bytes, where), where);
    m.lid = lid;
    assert.ok(m.useWasm(await instantiateKernel(module!, memory!, arena!, 0)));
    return m;
  }

  it("the same plan for the same options, and lite as the SentenceEncoder of the native embed path gives lite's own vectors", async () => {
    const native = loadSentenceEncoder(fp32);
    const portable = loadPortableSentenceEncoder(fp32);
    // the portable runtime runs lite's WebAssembly kernels; lite's pure-TypeScript path is built here
    assert.ok(onKernels(portable));
    const file = join(fp32, 'model.safetensors'),
      raw = readFileSync(file);
    const js = new LiteModel(
      portable.config as ConstructorParameters<typeof LiteModel>[0],
      parseSafetensors(new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength), file),
      file,
    );
    js.lid = portable.lid;
    assert.ok(js instanceof LiteModel && js instanceof CenterPolicy && native instanceof CenterPolicy);
    assert.equal(js.kernel, 'js');
    const wasm = await wasmModel(fp32);
    assert.deepEqual(js.languages, native.languages);
    for (const lite of [js, wasm]) {
      for (const [lang, center] of [
        ['auto', 'force'],
        ['auto-per-sentence', 'force'],
        ['de', true],
        ['ja', 'force'],
        ['auto', true],
      ] as const) {
        const plan = lite.centerPlan(sents, { lang, center });
        assert.deepEqual(plan, native.centerPlan(sents, { lang, center }), `${lang} ${center}`);
        // the native embed path (its batching and finishing) over lite's encode(), against lite's own embed
        const over = new SentenceEncoderModel(lite, portable.tokenizer, lite.centers, null, lite.lid).embed(sents, { lang, center });
        const own = lite.embedSync(sents, { lang, center });
        assert.ok(maxDiff(over, own) <= 1e-6, `${lite.kernel}, ${lang} ${center}: ${maxDiff(over, own)}`);
      }
      // per-sentence plans really differ by sentence (the mixed input's languages), and 'de' centres every row
      const per = lite.centerPlan(sents, { lang: 'auto-per-sentence', center: 'force' }) as (string | null)[];
      assert.ok(new Set(per.filter(Boolean)).size >= 2, per.join(' '));
      assert.equal(per.at(-1), null, 'a blank sentence gives no evidence');
      // a code in another spelling, 'none' and an unknown code
      assert.deepEqual(Array.from(lite.embedSync(sents, { lang: 'DE', center: 'force' })), Array.from(lite.embedSync(sents, { lang: 'de', center: 'force' })));
      assert.deepEqual(Array.from(lite.embedSync(sents, { lang: 'none' })), Array.from(lite.embedSync(sents, { lang: null })));
      assert.throws(() => lite.embedSync(sents, { lang: 'xx' }), /no mean vector for lang 'xx'/);
    }
    // encode(): rows as given or unit rows, written into the caller's array when it fits
    const ids = sents.slice(0, 5).map((s) => js.tokenize(s));
    const into = new Float32Array(5 * js.dim);
    assert.equal(wasm.encode(ids, { normalize: true, into }), into);
    assert.ok(maxDiff(into, js.encode(ids, { normalize: true })) <= 1e-6);
    for (let i = 0; i < 5; i++) assert.ok(Math.abs(Math.hypot(...into.subarray(i * js.dim, (i + 1) * js.dim)) - 1) < 1e-6);
  });
});

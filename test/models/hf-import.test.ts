// xling import hf: the fixtures of scripts/hf-fixtures.py (small random BERT, XLM-R and DistilBERT
// snapshots with sentence-transformers modules) give the reference vectors of independent PyTorch
// code (≤ 1e-5 max abs, any batch size); bad snapshots are refused with clear errors.
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadSentenceEncoder, readModelConfig } from '../../src/embed/model-dir.js';
import { SentenceEncoderModel } from '../../src/embed/model.js';
import { HfEncoder, HfModelConfig, HfSentenceEncoder } from '../../src/models/hf/model.js';
import { loadModule } from '../../src/nn/serialize.js';
import { importHfCommand } from '../../src/cli/import-hf.js';
import { readSafetensors, rawToArray } from '../../src/io/safetensors.js';
import { fromArray, noGrad, tidy } from '../../src/tensor/tensor.js';
import { packedEncoderLayers } from '../../src/tensor/kernels.js';
import { cli, root } from '../fixtures/cli.js';

const FIX = join(root, 'test/fixtures/hf');
const sentences = readFileSync(join(FIX, 'sentences.txt'), 'utf8')
  .split('\n')
  .filter((l) => l.length);
let dir: string;

function ref(name: string, key = 'vectors'): { v: Float32Array; dim: number } {
  const f = readSafetensors(join(FIX, name, 'ref.safetensors'));
  const t = f.tensors[key]!;
  return { v: rawToArray(t) as Float32Array, dim: t.shape[1]! };
}

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

/** xling import hf in-process (the CLI's exit status and output are checked below). */
async function importFixture(name: string, extra: string[] = [], out = join(dir, name)): Promise<string> {
  await importHfCommand.run(['--from', join(FIX, name), '-o', out, ...extra]);
  return out;
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'xling-hf-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('xling import hf: parity with the PyTorch reference', () => {
  for (const [name, extra] of [
    ['bert', []],
    ['xlmr', []],
    ['distilbert', ['--prompt', 'query']],
  ] as const) {
    test(`${name}: vectors within 1e-5 of the reference at batch sizes 1, 7 and all`, async () => {
      const out = await importFixture(name, [...extra]);
      const m = loadSentenceEncoder(out);
      const r = ref(name);
      assert.equal(m.dim, r.dim);
      const ids = m.tokenize(sentences);
      // the model's own vectors (its Normalize, if any), not xling's normalisation
      for (const maxSentences of [1, 7, 1000]) {
        const v = m.embedIds(ids, { normalize: false, maxSentences });
        const d = maxAbsDiff(v, r.v);
        assert.ok(d <= 1e-5, `${name}, batches of ${maxSentences}: max abs difference ${d}`);
      }
      // the embed path (tokenizer → vectors → xling's L2 normalisation) is the same direction
      const e = m.embed(sentences.slice(0, 5));
      const norm = (x: Float32Array) => Math.hypot(...x);
      for (let i = 0; i < 5; i++) {
        const a = r.v.subarray(i * r.dim, (i + 1) * r.dim),
          b = e.subarray(i * r.dim, (i + 1) * r.dim);
        const n = norm(a);
        for (let j = 0; j < r.dim; j++) assert.ok(Math.abs(a[j]! / n - b[j]!) < 1e-5);
      }
      (m.tokenizer as { dispose?: () => void }).dispose?.();
    });
  }

  test('pytorch_model.bin (torch.save zip, Q/K/V as views of one storage, an int64 buffer) and a legacy-format 2_Dense/pytorch_model.bin: within 1e-5 of the reference', async () => {
    const m = loadSentenceEncoder(await importFixture('bert-bin'));
    const r = ref('bert-bin');
    for (const maxSentences of [1, 1000]) {
      const d = maxAbsDiff(m.embedIds(m.tokenize(sentences), { normalize: false, maxSentences }), r.v);
      assert.ok(d <= 1e-5, `bert-bin, batches of ${maxSentences}: max abs difference ${d}`);
    }
    (m.tokenizer as { dispose?: () => void }).dispose?.();
  });

  test('every pooling mode of sentence-transformers (cls, max, mean, mean_sqrt_len, lasttoken)', async () => {
    const out = join(dir, 'bert');
    if (!existsSync(out)) await importFixture('bert');
    const cfg = readModelConfig(out);
    const ids = loadSentenceEncoder(out).tokenize(sentences);
    for (const mode of ['cls', 'max', 'mean', 'mean_sqrt_len', 'lasttoken'] as const) {
      // the Transformer and this pooling alone (the Dense weights stay unread)
      const net = new HfEncoder({ ...(cfg.model as HfModelConfig), pooling: [mode], dense: [], normalize: false });
      loadModule(net, join(out, 'model.safetensors'), { prefix: 'encoder.', strict: false });
      const m = new SentenceEncoderModel(new HfSentenceEncoder(net), { vocabSize: 0, padId: 0, unkId: 1, bosId: 2, eosId: 3, encode: () => new Int32Array() });
      const r = ref('bert', `pool.${mode}`);
      const d = maxAbsDiff(m.embedIds(ids, { normalize: false, maxSentences: 16 }), r.v);
      assert.ok(d <= 1e-5, `${mode}: max abs difference ${d}`);
      net.dispose();
    }
  });

  test('the packed native layers, the op-by-op padded graph and encodeAsync agree; encodeAsync leaves the event loop free', async () => {
    for (const name of ['bert', 'xlmr'] as const) {
      const out = join(dir, name);
      if (!existsSync(out)) await importFixture(name);
      const m = loadSentenceEncoder(out);
      const enc = m.encoder as HfSentenceEncoder;
      const ids = m.tokenize(sentences).slice(0, 12);
      const r = ref(name);
      const packed = enc.encode(ids);
      const graph = noGrad(() => tidy(() => enc.net.forwardPadded(ids).toFloat32Array()));
      const d = maxAbsDiff(graph, r.v.subarray(0, 12 * r.dim));
      assert.ok(d <= 1e-5, `${name}: padded graph, max abs difference ${d}`);
      assert.ok(maxAbsDiff(packed, graph) <= 1e-5);
      // with gradient enabled forward() takes the graph (autograd), so the same vectors
      const withGrad = tidy(() => {
        const v = enc.net.forward(ids);
        v.sum().backward();
        return v.detach().toFloat32Array();
      });
      assert.ok(maxAbsDiff(withGrad, graph) <= 1e-6);
      // and the gradient reaches the query weights (for fine-tuning)
      const g = enc.net.layers[0]!.q.weight.grad;
      assert.ok(g && tidy(() => g.abs().sum().item()) > 0, 'no gradient at the query weights');
      g?.dispose();
      // async: the same kernel on a worker thread; its promise cannot settle before the event loop
      // turns (a computation on the main thread would have settled it within the microtasks)
      let settled = false;
      const p = enc.encodeAsync(ids).then((t) => {
        settled = true;
        return t;
      });
      for (let i = 0; i < 10; i++) await Promise.resolve();
      assert.equal(settled, false);
      const t = await p;
      assert.deepEqual(Array.from(t), Array.from(packed));
      (m.tokenizer as { dispose?: () => void }).dispose?.();
    }
  });

  test('the packed kernel refuses bad arguments with an error (no crash)', () => {
    const x = fromArray(new Float32Array(3 * 8), [3, 8]);
    const w = (shape: number[]) => fromArray(new Float32Array(shape.reduce((a, b) => a * b, 1)), shape);
    const layer = [w([24, 8]), w([24]), w([8, 8]), w([8]), w([8]), w([8]), w([16, 8]), w([16]), w([8, 16]), w([8]), w([8]), w([8])];
    noGrad(() => {
      const ok = packedEncoderLayers(x, [1, 2], layer, 2, 1e-12, 'gelu');
      assert.deepEqual(ok.shape, [3, 8]);
      ok.dispose();
      assert.throws(() => packedEncoderLayers(x, [1, 1], layer, 2, 1e-12, 'gelu'), /lengths sum to 2 but x has 3 rows/);
      assert.throws(() => packedEncoderLayers(x, [3, 0], layer, 2, 1e-12, 'gelu'), /sequence 1 has length 0/);
      assert.throws(() => packedEncoderLayers(x, [3], layer, 3, 1e-12, 'gelu'), /not a multiple of 3 heads/);
      assert.throws(() => packedEncoderLayers(x, [3], layer.slice(0, 11), 2, 1e-12, 'gelu'), /12 weights per layer/);
      assert.throws(() => packedEncoderLayers(x, [3], [w([24, 9]), ...layer.slice(1)], 2, 1e-12, 'gelu'), /layer 0 W_qkv must be float32 \[24, 8\]/);
      // bfloat16 matrices: all four or none
      const b16 = layer.map((t, i) => (i === 0 || i === 2 || i === 6 || i === 8 ? t.to('bfloat16') : t));
      const okB = packedEncoderLayers(x, [1, 2], b16, 2, 1e-12, 'gelu');
      assert.deepEqual(okB.shape, [3, 8]);
      okB.dispose();
      assert.throws(() => packedEncoderLayers(x, [3], [b16[0]!, ...layer.slice(1)], 2, 1e-12, 'gelu'), /layer 0 W_o must be bfloat16 \[8, 8\]/);
      assert.throws(
        () => packedEncoderLayers(x, [3], [b16[0]!, b16[1]!, b16[2]!, ...b16.slice(3).map((t, i) => (i === 0 ? t.to('bfloat16') : t))], 2, 1e-12, 'gelu'),
        /layer 0 b_o must be float32 \[8\]/,
      );
      for (const i of [0, 2, 6, 8]) b16[i]!.dispose();
    });
    for (const t of [x, ...layer]) t.dispose();
  });

  test('--precision bf16: bfloat16 matrices give vectors close to the reference (not equal), async as sync; fp32 again is exact; other kinds are refused', async () => {
    for (const name of ['bert', 'xlmr'] as const) {
      const out = join(dir, name);
      if (!existsSync(out)) await importFixture(name);
      const m = loadSentenceEncoder(out, { precision: 'bf16' });
      const enc = m.encoder as HfSentenceEncoder;
      assert.equal(enc.net.precision, 'bf16');
      const r = ref(name);
      const ids = m.tokenize(sentences);
      const v = m.embedIds(ids, { normalize: false, maxSentences: 16 });
      let minCos = 1;
      for (let i = 0; i < sentences.length; i++) {
        const a = v.subarray(i * r.dim, (i + 1) * r.dim),
          b = r.v.subarray(i * r.dim, (i + 1) * r.dim);
        let dot = 0;
        for (let j = 0; j < r.dim; j++) dot += a[j]! * b[j]!;
        minCos = Math.min(minCos, dot / (Math.hypot(...a) * Math.hypot(...b)));
      }
      const d = maxAbsDiff(v, r.v);
      // bfloat16 keeps 8 significant bits: the vectors move (so the bf16 products ran), but little
      assert.ok(d > 1e-5, `${name}: bf16 vectors equal fp32's (max abs difference ${d}): the bf16 path did not run`);
      assert.ok(minCos > 0.999, `${name}: cosine to the reference ${minCos}`);
      const few = ids.slice(0, 12);
      assert.deepEqual(Array.from(await enc.encodeAsync(few)), Array.from(enc.encode(few)));
      enc.net.precision = 'fp32';
      assert.ok(maxAbsDiff(m.embedIds(ids, { normalize: false, maxSentences: 16 }), r.v) <= 1e-5);
      (m.tokenizer as { dispose?: () => void }).dispose?.();
    }
    const lx = (f: string) => join(root, 'test/fixtures/laser', f);
    assert.equal(cli(['import', 'laser', '--checkpoint', lx('tiny.pt'), '--spm', lx('spm-unigram.model'), '-o', join(dir, 'laser')]).status, 0);
    const r = cli(['embed', '--model', join(dir, 'laser'), '--input', join(FIX, 'sentences.txt'), '-o', join(dir, 'x.npy'), '--precision', 'bf16']);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /--precision bf16: .* is a laser-lstm model; bfloat16 inference is for imported Hugging Face encoders/);
    assert.equal(existsSync(join(dir, 'x.npy')), false);
  });

  test('the prompt: by name, as text, and none (other vectors); long inputs are cut with one warning', async () => {
    const byName = loadSentenceEncoder(await importFixture('distilbert', ['--prompt', 'query'], join(dir, 'd-name')));
    const asText = loadSentenceEncoder(await importFixture('distilbert', ['--prompt', 'query: '], join(dir, 'd-text')));
    const none = loadSentenceEncoder(await importFixture('distilbert', [], join(dir, 'd-none')));
    const s = sentences.slice(0, 10);
    assert.deepEqual(byName.embed(s), asText.embed(s));
    assert.ok(maxAbsDiff(byName.embed(s), none.embed(s)) > 1e-3);
    assert.deepEqual(Array.from(byName.tokenize(['x'])[0]!).length > Array.from(none.tokenize(['x'])[0]!).length, true);
    // max_seq_length 32: every id list at most 32, the longest sentences are cut
    const ids = byName.tokenize(sentences);
    assert.ok(ids.every((x) => x.length <= 32));
    assert.ok((byName.tokenizer.truncated ?? 0) > 0);
    const r = cli(['embed', '--model', join(dir, 'd-name'), '--input', join(FIX, 'sentences.txt'), '--output', join(dir, 'v.npy')]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr.match(/warning: inputs longer than 32 tokens are cut/g)?.length, 1, r.stderr);
  });
});

describe('xling import hf: bad snapshots', () => {
  function snapshot(name: string, edit: (d: string) => void): string {
    const d = join(dir, `bad-${name}-${Math.random().toString(36).slice(2)}`);
    cpSync(join(FIX, 'bert'), d, { recursive: true });
    edit(d);
    return d;
  }
  /** The command in-process (a child process per case is slow); one case below runs the CLI. */
  async function fails(from: string, pattern: RegExp, extra: string[] = []): Promise<void> {
    const out = join(dir, `out-${Math.random().toString(36).slice(2)}`);
    await assert.rejects(importHfCommand.run(['--from', from, '-o', out, ...extra]), pattern);
    assert.ok(!existsSync(out), 'no partial output');
  }
  const editJson = (f: string, fn: (j: Record<string, unknown>) => void) => {
    const j = JSON.parse(readFileSync(f, 'utf8'));
    fn(j);
    writeFileSync(f, JSON.stringify(j));
  };

  test('another model_type names the supported ones (exit status 1, nothing written)', async () => {
    const out = join(dir, 'out-gpt2');
    const r = cli([
      'import',
      'hf',
      '--from',
      snapshot('gpt2cli', (d) =>
        editJson(join(d, 'config.json'), (j) => {
          j.model_type = 'gpt2';
        }),
      ),
      '-o',
      out,
    ]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /model_type "gpt2" is not supported \(supported: bert, xlm-roberta, distilbert\)/);
    assert.ok(!existsSync(out));
    await fails(
      snapshot('gpt2', (d) =>
        editJson(join(d, 'config.json'), (j) => {
          j.model_type = 'gpt2';
        }),
      ),
      /model_type "gpt2" is not supported \(supported: bert, xlm-roberta, distilbert\)/,
    );
  });
  test('pytorch_model.bin: a broken file or one naming a Python global off the allow-list is refused, naming the file', async () => {
    await fails(
      snapshot('bin', (d) => {
        rmSync(join(d, 'model.safetensors'));
        writeFileSync(join(d, 'pytorch_model.bin'), 'PK');
      }),
      /pytorch_model\.bin/,
    );
    // a legacy pickle that would call os.system: refused, nothing executed
    const evil = Buffer.concat([Buffer.from([0x80, 0x02]), Buffer.from("cos\nsystem\n(S'true'\ntR.", 'latin1')]);
    await fails(
      snapshot('evil', (d) => {
        rmSync(join(d, 'model.safetensors'));
        writeFileSync(join(d, 'pytorch_model.bin'), evil);
      }),
      /pytorch_model\.bin.*os\.system|os\.system.*pytorch_model\.bin/s,
    );
    await fails(
      snapshot('none', (d) => rmSync(join(d, 'model.safetensors'))),
      /no model\.safetensors or pytorch_model\.bin/,
    );
  });
  test('no tokenizer.json, no config.json, no directory', async () => {
    await fails(
      snapshot('notok', (d) => rmSync(join(d, 'tokenizer.json'))),
      /no tokenizer\.json/,
    );
    await fails(
      snapshot('nocfg', (d) => rmSync(join(d, 'config.json'))),
      /no config\.json/,
    );
    await fails(join(dir, 'nowhere'), /--from .*nowhere/);
  });
  test('weights that do not match the config: named', async () => {
    await fails(
      snapshot('shape', (d) =>
        editJson(join(d, 'config.json'), (j) => {
          j.intermediate_size = 48;
        }),
      ),
      /intermediate\.dense\.weight' has shape \[64, 32\], the config gives \[48, 32\]/,
    );
    await fails(
      snapshot('layers', (d) =>
        editJson(join(d, 'config.json'), (j) => {
          j.num_hidden_layers = 3;
        }),
      ),
      /missing weights .*encoder\.layer\.2\./,
    );
  });
  test('unsupported modules and pooling modes: named', async () => {
    await fails(
      snapshot('wmean', (d) =>
        editJson(join(d, '1_Pooling/config.json'), (j) => {
          j.pooling_mode_weightedmean_tokens = true;
        }),
      ),
      /pooling_mode_weightedmean_tokens is not supported/,
    );
    await fails(
      snapshot('module', (d) =>
        editJson(join(d, 'modules.json'), (j) => {
          (j as unknown as { type: string }[])[3]!.type = 'sentence_transformers.models.LayerNorm';
        }),
      ),
      /module sentence_transformers\.models\.LayerNorm is not supported/,
    );
  });
  test('an output that is not a model directory is not replaced', async () => {
    const o = join(dir, 'userdir');
    cpSync(join(FIX, 'bert', '1_Pooling'), o, { recursive: true });
    await assert.rejects(importHfCommand.run(['--from', join(FIX, 'bert'), '-o', o]), /not an xling model directory/);
    assert.ok(existsSync(join(o, 'config.json')));
  });
});

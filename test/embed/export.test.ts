// Compact exports (xling export --dtype/--dims/--prune-unused) round trip through loadSentenceEncoder
// within their error bounds; quantised vectors (xling embed --dtype) follow quantize_embeddings;
// the Matryoshka loss is the sum of the nested prefixes' losses and keeps truncated vectors good.
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { exportEncoder, loadSentenceEncoder } from '../../src/embed/model-dir.js';
import { SentenceEncoderModel } from '../../src/embed/model.js';
import { l2normalizeRows } from '../../src/embed/vectors.js';
import type { EncodeOptions } from '../../src/models/encoder.js';
import { embeddingRanges, quantizeEmbeddings } from '../../src/embed/quantize.js';
import { CompactExportOptions, exportCompact, quantizeRowsInt8 } from '../../src/embed/export.js';
import { readNpy } from '../../src/io/npy.js';
import { RawTensor, rawFromArray, rawToArray, readSafetensors, writeSafetensors } from '../../src/io/safetensors.js';
import { dualFamily, DualSentenceEncoder } from '../../src/models/dual/family.js';
import { collisions } from '../../src/models/dual/negatives.js';
import { createTask } from '../../src/models/dual/train.js';
import { additiveMarginLoss } from '../../src/models/dual/loss.js';
import { EmbeddingBag } from '../../src/nn/layers.js';
import { normalize } from '../../src/tensor/ops.js';
import { manualSeed, noGrad, tidy } from '../../src/tensor/index.js';
import { parseConfig } from '../../src/models/config.js';
import { train } from '../../src/train/trainer.js';
import { DevSet, xsimOnDev } from '../../src/train/validate.js';
import { cli, root, tinyDualModel } from '../fixtures/cli.js';
import { encodeRows, syntheticCorpus } from '../fixtures/synthetic.js';

/** The first k of d columns of rows (as `xling export --dims k` cuts the vectors), normalised when asked. */
function firstColumns(rows: Float32Array, d: number, k: number, normalize = false): Float32Array {
  const n = rows.length / d,
    out = new Float32Array(n * k);
  for (let i = 0; i < n; i++) out.set(rows.subarray(i * d, i * d + k), i * k);
  if (normalize) l2normalizeRows(out, k);
  return out;
}

const maxDiff = (a: Float32Array, b: Float32Array) => {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
};

/** Rows of the bundled sample: sentences of `lang` (dev split, unseen in training) and of the training split. */
function sample(file: string, lang: string, n: number): string[] {
  const lines = gunzipSync(readFileSync(join(root, 'data/sample', file)))
    .toString('utf8')
    .split('\n')
    .filter(Boolean);
  const col = lines[0]!.split('\t').indexOf(lang);
  return lines
    .slice(1, 1 + n)
    .map((l) => l.split('\t')[col] ?? '')
    .filter(Boolean);
}

describe('compact exports', () => {
  let dir = '',
    model = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'xling-export-'));
    model = join(dir, 'tiny');
    // 2^16 buckets: the sample's 2000 training pairs leave some of them untouched (--prune-unused)
    tinyDualModel(dir, model, { features: { buckets: 65536, dim: 32 } });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** An export in this process (the CLI's own path is run once per test below). */
  const exp = (name: string, o?: CompactExportOptions) => {
    const out = join(dir, name);
    const lines: string[] = [];
    if (o) exportCompact(model, out, { ...o, log: (l) => lines.push(l) });
    else exportEncoder(model, out);
    return { out, stderr: lines.join('\n') };
  };

  it('fp32, fp16, int8 and --dims round trip within their error bounds, in every command', () => {
    const sents = [...sample('gettext.dev.tsv.gz', 'de', 60), ...sample('gettext.dev.tsv.gz', 'zh', 60)];
    const full = loadSentenceEncoder(model);
    const ref = full.embed(sents, { lang: 'de' });
    const plain = exp('plain'); // the default: the encoder alone, unchanged
    assert.deepEqual(Array.from(loadSentenceEncoder(plain.out).embed(sents, { lang: 'de' })), Array.from(ref));
    const fp32 = exp('fp32', { dtype: 'fp32' });
    assert.ok(maxDiff(loadSentenceEncoder(fp32.out).embed(sents, { lang: 'de' }), ref) <= 1e-6);
    const sizes: Record<string, number> = {};
    for (const dtype of ['fp16', 'int8'] as const) {
      const e = { out: join(dir, dtype) };
      const r = cli(['export', '--model', model, '-o', e.out, '--dtype', dtype]);
      assert.equal(r.status, 0, r.stderr);
      sizes[dtype] = statSync(join(e.out, 'model.safetensors')).size;
      // the language identifier travels with the export: 'auto' identifies as the full model does
      assert.equal(existsSync(join(model, 'lid.json')), existsSync(join(e.out, 'lid.json')), 'lid.json copied with the export');
      assert.deepEqual(loadSentenceEncoder(e.out).lid?.languages ?? null, full.lid?.languages ?? null);
      const v = loadSentenceEncoder(e.out).embed(sents, { lang: 'de' });
      const d = maxDiff(v, ref);
      // the error bound of the rows: fp16 keeps 11 bits, int8 rows ±scale/2 (scale = max|row|/127)
      console.log(`# ${dtype}: max |Δ| of unit vectors ${d.toExponential(2)}`);
      assert.ok(d > 0 && d < (dtype === 'fp16' ? 2e-3 : 3e-2), `${dtype}: ${d}`);
      // the same neighbours: each German row's nearest Chinese row is unchanged for nearly all
      let cos = 0;
      for (let i = 0; i < sents.length; i++) {
        let c = 0;
        for (let j = 0; j < full.dim; j++) c += v[i * full.dim + j]! * ref[i * full.dim + j]!;
        cos += c;
      }
      assert.ok(cos / sents.length > (dtype === 'fp16' ? 0.99999 : 0.999), `${dtype}: mean cosine to fp32 ${cos / sents.length}`);
    }
    sizes.fp32 = statSync(join(fp32.out, 'model.safetensors')).size;
    assert.ok(sizes.int8! < sizes.fp32 * 0.3 && sizes.fp16! < sizes.fp32 * 0.55, JSON.stringify(sizes));
    // --dims 16: the first 16 dimensions of the raw vector, re-normalised (then centred with the cut means)
    const d16 = exp('d16', { dtype: 'fp32', dims: 16 });
    const cut = loadSentenceEncoder(d16.out);
    assert.equal(cut.dim, 16);
    const raw = full.embed(sents, { normalize: false, center: false }),
      got = cut.embed(sents, { center: false });
    for (let i = 0; i < sents.length; i++) {
      const r = raw.subarray(i * 32, i * 32 + 16);
      const n = Math.hypot(...r);
      for (let j = 0; j < 16; j++) assert.ok(Math.abs(got[i * 16 + j]! - r[j]! / n) < 1e-6);
    }
    // every command reads the export: embed and eval xsim through the CLI
    const input = join(dir, 'in.txt');
    writeFileSync(input, sents.join('\n') + '\n');
    const r = cli(['embed', '--model', join(dir, 'int8'), '--input', input, '-o', join(dir, 'int8.npy'), '--lang', 'de', '--quiet']);
    assert.equal(r.status, 0, r.stderr);
    // (on the portable runtime: the native path's vectors within its bound)
    assert.ok(maxDiff(readNpy(join(dir, 'int8.npy')).data as Float32Array, loadSentenceEncoder(join(dir, 'int8')).embed(sents, { lang: 'de' })) < 1e-5);
    const x = cli([
      'eval',
      'xsim',
      '--model',
      join(dir, 'int8'),
      '--data',
      'data/sample/gettext.dev.tsv.gz',
      '--langs',
      'en,de,fr',
      '--json',
      join(dir, 'x.json'),
    ]);
    assert.equal(x.status, 0, x.stderr);
  });

  it('int8 exports stay int8 in memory (no float copy of the table) and embed as the dequantise-at-load path (≤ 1e-5)', async () => {
    const sents = [...sample('gettext.dev.tsv.gz', 'de', 60), ...sample('gettext.dev.tsv.gz', 'ja', 60), '', 'ꙮ'];
    for (const [name, o] of [
      ['i8mem', { dtype: 'int8' }],
      ['i8mem-pruned', { dtype: 'int8', prune: true, fallback: 64 }],
    ] as const) {
      const { out } = exp(name, o);
      const m8 = loadSentenceEncoder(out);
      // the model holds the int8 rows and their scales; no float32 tensor of the table's size
      const net = (m8.encoder as DualSentenceEncoder).net;
      const rows = net.embed.numEmbeddings,
        dim = net.embed.dim;
      assert.equal(net.embed.weight.dtype, 'int8');
      assert.deepEqual(net.embed.weight.shape, [rows, dim]);
      assert.equal(net.embed.scale?.dtype, 'float32');
      for (const [k, t] of net.stateDict()) assert.ok(t.dtype !== 'float32' || t.numel < rows * dim, `${k}: a float32 [${t.shape.join(', ')}] tensor`);
      // the old loader's model: the same export with its table dequantised on disk (q · scale, float32)
      const deq = join(dir, `${name}-deq`);
      cpSync(out, deq, { recursive: true });
      const file = join(deq, 'model.safetensors');
      const st = readSafetensors(file);
      const tensors: Record<string, RawTensor> = {};
      for (const [k, t] of Object.entries(st.tensors)) {
        if (k.startsWith('scale.')) continue;
        const sc = st.tensors[`scale.${k}`];
        if (!sc) {
          tensors[k] = t;
          continue;
        }
        const q = rawToArray(t) as Int8Array,
          scale = rawToArray(sc) as Float32Array,
          d = t.shape[1]!;
        tensors[k] = rawFromArray(
          Float32Array.from(q, (x, i) => Math.fround(x * scale[Math.floor(i / d)]!)),
          t.shape,
        );
      }
      writeSafetensors(file, tensors, st.metadata);
      const ref = loadSentenceEncoder(deq);
      assert.equal((ref.encoder as DualSentenceEncoder).net.embed.weight.dtype, 'float32');
      for (const opt of [{ lang: 'de' }, { center: false, normalize: false }] as const) {
        const want = ref.embed(sents, opt);
        const got = m8.embed(sents, opt),
          gotAsync = await m8.embedAsync(sents, opt);
        console.log(`# ${name} ${JSON.stringify(opt)}: int8 kernel vs dequantised table, max |Δ| ${maxDiff(got, want).toExponential(2)}`);
        assert.ok(maxDiff(got, want) <= 1e-5, `${name}: ${maxDiff(got, want)}`);
        assert.deepEqual(gotAsync, got, `${name}: embedAsync = embed`);
      }
      // the CLI (xling embed) reads the export the same way
      const input = join(dir, `${name}.txt`);
      writeFileSync(input, sents.join('\n') + '\n');
      const r = cli(['embed', '--model', out, '--input', input, '-o', join(dir, `${name}.npy`), '--lang', 'de', '--quiet']);
      assert.equal(r.status, 0, r.stderr);
      assert.ok(maxDiff(readNpy(join(dir, `${name}.npy`)).data as Float32Array, ref.embed(sents, { lang: 'de' })) <= 1e-5);
      (m8.encoder as DualSentenceEncoder).net.dispose();
      (ref.encoder as DualSentenceEncoder).net.dispose();
    }
  });

  it('--prune-unused keeps the buckets training touched; unseen n-grams fall back deterministically', () => {
    const { out, stderr } = exp('pruned', { dtype: 'fp32', prune: true, fallback: 64 });
    const cfg = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8'));
    const p = cfg.export.prune;
    assert.match(stderr, /buckets touched in training/);
    // 2000 pairs of the sample touch most, but not all, of 65536 buckets (93.6%)
    assert.ok(p.kept > 1000 && p.kept < 65536, JSON.stringify(p));
    const full = loadSentenceEncoder(model),
      pruned = loadSentenceEncoder(out);
    // sentences whose features all fall in kept buckets (trained rows) keep their vectors
    const kept = new Set(
      readSafetensors(join(out, 'model.safetensors')).tensors['prune.buckets']
        ? Array.from(new Int32Array(Uint8Array.from(readSafetensors(join(out, 'model.safetensors')).tensors['prune.buckets']!.data).buffer))
        : [],
    );
    const seen = sample('gettext.train.tsv.gz', 'fr', 400).filter((s) => Array.from(full.tokenizer.encode(s)).every((id) => kept.has(id - 4)));
    assert.ok(seen.length >= 5, `${seen.length} sentences with only kept buckets`);
    assert.ok(maxDiff(pruned.embed(seen, { lang: 'fr' }), full.embed(seen, { lang: 'fr' })) < 1e-6);
    // a string of unseen characters: only fallback rows, the same vector on every load
    const odd = ['ꙮꙮꙮ ᚠᚢᚦ 𝔵𝔶𝔷'];
    const v1 = pruned.embed(odd),
      v2 = loadSentenceEncoder(out).embed(odd);
    assert.deepEqual(Array.from(v1), Array.from(v2));
    assert.ok(v1.every(Number.isFinite));
    // smaller on disk
    assert.ok(statSync(join(out, 'model.safetensors')).size < statSync(join(model, 'model.safetensors')).size);
    // a bad flag combination is refused before any work
    const bad = cli(['export', '--model', model, '--dims', '8']);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /give -o DIR/);
    const big = cli(['export', '--model', model, '-o', join(dir, 'd99'), '--dims', '99']);
    assert.equal(big.status, 1);
    assert.match(big.stderr, /--dims: must be an integer in \[1, 32\]/);
  });

  it('--dtype pq: the n-gram table as bytes over its principal components; read back as mean + basis · z; refused where it does not apply', () => {
    const sents = [...sample('gettext.dev.tsv.gz', 'de', 60), ...sample('gettext.dev.tsv.gz', 'ja', 60), '', 'ꙮ'];
    const full = loadSentenceEncoder(model);
    const ref = full.embed(sents, { center: false });
    const out = join(dir, 'pq');
    const r = cli(['export', '--model', model, '-o', out, '--dtype', 'pq', '--pq-bytes', '16']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /principal components: 32 of 32 keep 100\.0% of the rows' variance/);
    assert.match(r.stderr, /product quantisation: 16\/16 subspaces/);
    const cfg = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8'));
    assert.deepEqual([cfg.model.pq, cfg.export.dtype], [{ bytes: 16, dims: 32 }, 'pq']);
    const st = readSafetensors(join(out, 'model.safetensors')).tensors;
    assert.equal(st['encoder.embed.weight'], undefined);
    const f32 = (k: string) => rawToArray(st[k]!) as Float32Array;
    const codes = st['pq.codes']!,
      widths = Array.from(rawToArray(st['pq.widths']!) as Int32Array);
    const rows = 4 + 65536;
    assert.deepEqual([codes.dtype, codes.shape, widths], ['U8', [rows, 16], Array(16).fill(2)]);
    // the basis is orthonormal (principal directions)
    const basis = f32('pq.basis'),
      mean = f32('pq.mean'),
      cb = f32('pq.codebooks');
    for (let a = 0; a < 32; a++)
      for (let b = a; b < 32; b++) {
        let d = 0;
        for (let i = 0; i < 32; i++) d += basis[i * 32 + a]! * basis[i * 32 + b]!;
        assert.ok(Math.abs(d - (a === b ? 1 : 0)) < 1e-4, `basis columns ${a}, ${b}: ${d}`);
      }
    // the loaded table is mean + basis · z, z the centroids the bytes name (an independent float64 read-back)
    const table = noGrad(() => tidy(() => (loadSentenceEncoder(out).encoder as DualSentenceEncoder).net.embed.weight.toFloat32Array()));
    const orig = noGrad(() => tidy(() => (full.encoder as DualSentenceEncoder).net.embed.weight.toFloat32Array()));
    let worst = 0,
      err2 = 0,
      norm2 = 0;
    for (const row of [4, 5, 1000, 40000, rows - 1]) {
      const z = Array.from({ length: 32 }, (_, k) => cb[codes.data[row * 16 + (k >> 1)]! * 32 + k]!);
      for (let i = 0; i < 32; i++) {
        let x = mean[i]!;
        for (let k = 0; k < 32; k++) x += basis[i * 32 + k]! * z[k]!;
        worst = Math.max(worst, Math.abs(x - table[row * 32 + i]!));
        err2 += (x - orig[row * 32 + i]!) ** 2;
        norm2 += orig[row * 32 + i]! ** 2;
      }
    }
    assert.ok(worst < 1e-5, `read-back ${worst}`);
    // 2 coordinates a byte: each row within ~20% of itself (k-means of 256 centroids in 2-D)
    assert.ok(Math.sqrt(err2 / norm2) < 0.2, `relative error of the rows ${Math.sqrt(err2 / norm2)}`);
    // the vectors: close to the fp32 model's (the bag averages the rows' errors)
    const v = loadSentenceEncoder(out).embed(sents, { center: false });
    let cos = 0;
    for (let i = 0; i < sents.length; i++) {
      let c = 0;
      for (let j = 0; j < 32; j++) c += v[i * 32 + j]! * ref[i * 32 + j]!;
      cos += c;
    }
    console.log(`# pq, 16 bytes over 32 components: mean cosine to fp32 ${(cos / sents.length).toFixed(5)}`);
    assert.ok(cos / sents.length > 0.98, `mean cosine to fp32 ${cos / sents.length}`);
    // half the components (the default K = 2 × bytes): fewer bytes, a smaller file
    const small = exp('pq8', { dtype: 'pq', pqBytes: 8 });
    assert.deepEqual(JSON.parse(readFileSync(join(small.out, 'config.json'), 'utf8')).model.pq, { bytes: 8, dims: 16 });
    assert.match(small.stderr, /principal components: 16 of 32 keep/);
    assert.ok(statSync(join(small.out, 'model.safetensors')).size < statSync(join(out, 'model.safetensors')).size * 0.6);
    // --pq-data: the codebooks refit on training sentences bring held-out sentences' vectors closer
    // to the fp32 model's (4 bytes over all 32 components: 8 coordinates a byte, a coarse code)
    const coarse = exp('pq4', { dtype: 'pq', pqBytes: 4, pqDims: 32 });
    const refit = join(dir, 'pq4r');
    const rr = cli([
      'export',
      '--model',
      model,
      '-o',
      refit,
      '--dtype',
      'pq',
      '--pq-bytes',
      '4',
      '--pq-dims',
      '32',
      '--pq-data',
      'data/sample/gettext.train.tsv.gz:de,ja,en,fr',
      '--pq-sentences',
      '3000',
    ]);
    assert.equal(rr.status, 0, rr.stderr);
    assert.match(rr.stderr, /3000 of \d+ sentences of --pq-data/);
    const m = /codebooks refit on 3000 sentences \(\d+ features\): their pooled coordinates' mean relative error ([\d.]+) → ([\d.]+)/.exec(rr.stderr);
    assert.ok(m && +m[2]! < +m[1]! * 0.9, rr.stderr);
    const cosTo = (d: string) => {
      const x = loadSentenceEncoder(d).embed(sents, { center: false });
      let c = 0;
      for (let i = 0; i < sents.length; i++) for (let j = 0; j < 32; j++) c += x[i * 32 + j]! * ref[i * 32 + j]!;
      return c / sents.length;
    };
    const [plainCos, refitCos] = [cosTo(coarse.out), cosTo(refit)];
    console.log(`# pq, 4 bytes over 32 components: mean cosine to fp32 ${plainCos.toFixed(4)}, refit on 3000 sentences ${refitCos.toFixed(4)}`);
    assert.ok(refitCos > plainCos, `${refitCos} vs ${plainCos}`);
    // uneven widths: 20 components over 8 bytes, the narrow subspaces first
    const uneven = exp('pq-uneven', { dtype: 'pq', pqBytes: 8, pqDims: 20 });
    assert.deepEqual(
      Array.from(rawToArray(readSafetensors(join(uneven.out, 'model.safetensors')).tensors['pq.widths']!) as Int32Array),
      [2, 2, 2, 2, 3, 3, 3, 3],
    );
    assert.equal(loadSentenceEncoder(uneven.out).embed(['ein Satz'], {}).length, 32);
    // refused before any work (usage: status 2; what the model rules out: 1): options without
    // --dtype pq, out of range, with pruning, a second quantisation
    for (const [args, re, status] of [
      [['--pq-bytes', '8'], /--pq-bytes, --pq-dims and --pq-data go with --dtype pq/, 2],
      [['--dtype', 'int8', '--pq-data', 'data/sample/gettext.train.tsv.gz'], /--pq-bytes, --pq-dims and --pq-data go with --dtype pq/, 2],
      [['--dtype', 'pq', '--pq-data', 'data/sample/nothing.tsv'], /cannot read --pq-data data\/sample\/nothing\.tsv/, 1],
      [['--dtype', 'pq'], /--pq-bytes: must be an integer in \[1, 32\] .*got 56 \(the default\)/, 1],
      [['--dtype', 'pq', '--pq-bytes', '16', '--pq-dims', '40'], /--pq-dims: must be an integer in \[16 \(--pq-bytes\), 32/, 1],
      [['--dtype', 'pq', '--pq-bytes', '8', '--pq-dims', '4'], /--pq-dims: must be an integer in \[8 \(--pq-bytes\), 32/, 1],
      [['--dtype', 'pq', '--pq-bytes', '8', '--prune-unused'], /either product quantisation or --prune-unused/, 1],
    ] as [string[], RegExp, number][]) {
      const bad = cli(['export', '--model', model, '-o', join(dir, 'pq-bad'), ...args]);
      assert.equal(bad.status, status, `${args.join(' ')}: ${bad.stderr}`);
      assert.match(bad.stderr, re);
      assert.ok(!existsSync(join(dir, 'pq-bad')));
    }
    // the options are checked against the model before --pq-data is read
    const early = cli([
      'export',
      '--model',
      model,
      '-o',
      join(dir, 'pq-bad'),
      '--dtype',
      'pq',
      '--pq-bytes',
      '99',
      '--pq-data',
      'data/sample/gettext.train.tsv.gz',
    ]);
    assert.equal(early.status, 1);
    assert.match(early.stderr, /--pq-bytes: must be an integer in \[1, 32\]/);
    assert.doesNotMatch(early.stderr, /sentences of --pq-data/);
    const again = cli(['export', '--model', out, '-o', join(dir, 'pq-bad'), '--dtype', 'int8']);
    assert.equal(again.status, 1);
    assert.match(again.stderr, /already product-quantised/);
    // a corrupt file: widths that do not cover the codebooks' columns
    const bad = join(dir, 'pq-corrupt');
    cpSync(out, bad, { recursive: true });
    const t = readSafetensors(join(bad, 'model.safetensors'));
    const w = Int32Array.from(widths);
    w[0] = 3;
    writeSafetensors(join(bad, 'model.safetensors'), { ...t.tensors, 'pq.widths': rawFromArray(w, [16]) }, t.metadata);
    assert.throws(() => loadSentenceEncoder(bad), /pq\.widths sum to 33, the codebooks have 32 columns/);
  });

  it('--prune-keep N keeps the N touched buckets that moved farthest from their initial draw', () => {
    const all = exp('pruned-all', { dtype: 'fp32', prune: true, fallback: 64 });
    const touched = JSON.parse(readFileSync(join(all.out, 'config.json'), 'utf8')).export.prune.kept as number;
    const K = Math.floor(touched / 4);
    const out = join(dir, 'keep');
    const r = cli(['export', '--model', model, '-o', out, '--prune-keep', String(K), '--fallback', '64', '--dtype', 'int8']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`${touched} of 65536 buckets touched in training .*; kept the ${K} that moved most`));
    const p = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')).export.prune;
    assert.deepEqual([p.kept, p.touched, p.buckets], [K, touched, 65536]);
    const ids = (d: string) => Array.from(new Int32Array(Uint8Array.from(readSafetensors(join(d, 'model.safetensors')).tensors['prune.buckets']!.data).buffer));
    const kept = ids(out),
      touchedIds = new Set(ids(all.out));
    assert.equal(kept.length, K);
    assert.ok(
      kept.every((b) => touchedIds.has(b)),
      'every kept bucket was touched',
    );
    // the kept buckets moved at least as far as every dropped touched one (the initial draw redrawn as the trainer does)
    const cfg = JSON.parse(readFileSync(join(model, 'config.json'), 'utf8'));
    const table = readSafetensors(join(model, 'model.safetensors')).tensors['encoder.embed.weight']!;
    const w = new Float32Array(Uint8Array.from(table.data).buffer),
      dim = table.shape[1]!;
    manualSeed(cfg.train.seed);
    const init = new EmbeddingBag(table.shape[0]!, dim, cfg.train.features.initStd);
    const w0 = noGrad(() => init.weight.toFloat32Array());
    init.weight.dispose();
    const move = (b: number) => {
      let d = 0;
      for (let j = 0; j < dim; j++) {
        const x = w[(4 + b) * dim + j]! - w0[(4 + b) * dim + j]!;
        d += x * x;
      }
      return d;
    };
    const keptSet = new Set(kept);
    const minKept = Math.min(...kept.map(move));
    const maxDropped = Math.max(...[...touchedIds].filter((b) => !keptSet.has(b)).map(move));
    assert.ok(minKept >= maxDropped && maxDropped > 0, `kept ≥ ${minKept}, dropped touched ≤ ${maxDropped}`);
    // a quarter of the touched rows: smaller, and still a working encoder on the sample's dev set
    assert.ok(statSync(join(out, 'model.safetensors')).size < 0.5 * statSync(join(all.out, 'model.safetensors')).size);
    const v = loadSentenceEncoder(out).embed(sample('gettext.dev.tsv.gz', 'de', 20), { lang: 'de' });
    assert.ok(v.every(Number.isFinite));
    // N at least the touched count: the same buckets as --prune-unused
    const same = exp('keep-all', { dtype: 'fp32', pruneKeep: touched + 10, fallback: 64 });
    assert.deepEqual(ids(same.out), ids(all.out));
    const bad = cli(['export', '--model', model, '-o', join(dir, 'k0'), '--prune-keep', '0']);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--prune-keep/);
  });

  it('xling embed --dtype int8|ubinary: quantize_embeddings semantics', () => {
    const sents = sample('gettext.dev.tsv.gz', 'en', 120);
    const input = join(dir, 'q.txt');
    writeFileSync(input, sents.join('\n') + '\n');
    const m = loadSentenceEncoder(model);
    const f = m.embed(sents, { lang: 'en' });
    const r1 = cli(['embed', '--model', model, '--input', input, '-o', join(dir, 'q8.npy'), '--lang', 'en', '--dtype', 'int8', '--quiet']);
    assert.equal(r1.status, 0, r1.stderr);
    const q = readNpy(join(dir, 'q8.npy')),
      ranges = readNpy(join(dir, 'q8.npy.ranges.npy'));
    assert.equal(q.dtype, 'int8');
    assert.deepEqual(q.shape, [sents.length, 32]);
    assert.deepEqual(ranges.shape, [2, 32]);
    // by hand: (x − min) / ((max − min) / 255) − 128, toward zero; the extremes map to −128 and 127
    const lo = Array.from({ length: 32 }, (_, j) => Math.min(...sents.map((_, i) => f[i * 32 + j]!)));
    const hi = Array.from({ length: 32 }, (_, j) => Math.max(...sents.map((_, i) => f[i * 32 + j]!)));
    const data = q.data as Int8Array;
    for (let i = 0; i < sents.length; i++)
      for (let j = 0; j < 32; j++) {
        const want = Math.trunc((f[i * 32 + j]! - lo[j]!) / ((hi[j]! - lo[j]!) / 255) - 128);
        assert.ok(Math.abs(data[i * 32 + j]! - want) <= 1, `${i},${j}: ${data[i * 32 + j]} vs ${want}`);
      }
    assert.ok(data.includes(-128) && data.includes(127));
    // queries quantised with the corpus's ranges
    const r2 = cli([
      'embed',
      '--model',
      model,
      '--input',
      input,
      '-o',
      join(dir, 'q8b.npy'),
      '--lang',
      'en',
      '--dtype',
      'int8',
      '--ranges',
      join(dir, 'q8.npy.ranges.npy'),
      '--quiet',
    ]);
    assert.equal(r2.status, 0, r2.stderr);
    assert.deepEqual(Array.from(readNpy(join(dir, 'q8b.npy')).data as Int8Array), Array.from(data));
    const r3 = cli(['embed', '--model', model, '--input', input, '-o', join(dir, 'qb.npy'), '--lang', 'en', '--dtype', 'ubinary', '--quiet']);
    assert.equal(r3.status, 0, r3.stderr);
    const b = readNpy(join(dir, 'qb.npy'));
    assert.equal(b.dtype, 'uint8');
    assert.deepEqual(b.shape, [sents.length, 4]);
    const bits = b.data as Uint8Array;
    for (let i = 0; i < sents.length; i++)
      for (let j = 0; j < 32; j++) assert.equal((bits[i * 4 + (j >> 3)]! >> (7 - (j & 7))) & 1, f[i * 32 + j]! > 0 ? 1 : 0);
    // numpy.packbits pads the last byte with zeros; 'binary' is ubinary − 128
    const odd = quantizeEmbeddings(Float32Array.from([1, -1, 1, 1, -1, -1, -1, -1, 1, 1]), 10, 'ubinary');
    assert.deepEqual(Array.from(odd), [0b10110000, 0b11000000]);
    assert.deepEqual(Array.from(quantizeEmbeddings(Float32Array.from([1, -1, 1, 1, -1, -1, -1, -1, 1, 1]), 10, 'binary')), [
      0b10110000 - 128,
      0b11000000 - 128,
    ]);
    assert.deepEqual(Array.from(embeddingRanges(Float32Array.from([1, 5, -2, 3]), 2)), [-2, 3, 1, 5]);
    const bad = cli(['embed', '--model', model, '--input', input, '-o', join(dir, 'x.npy'), '--dtype', 'ubinary', '--ranges', join(dir, 'q8.npy.ranges.npy')]);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--ranges goes with --dtype int8 or uint8/);
  });
});

describe('int8 rows', () => {
  it('per-row scales: every value within half a step', () => {
    const x = Float32Array.from({ length: 4 * 8 }, (_, i) => Math.sin(i * 1.7) * (1 + (i >> 3)));
    x.fill(0, 24, 32);
    const { q, scale } = quantizeRowsInt8(x, 4, 8);
    assert.equal(scale[3], 0);
    for (let r = 0; r < 4; r++) for (let j = 0; j < 8; j++) assert.ok(Math.abs(q[r * 8 + j]! * scale[r]! - x[r * 8 + j]!) <= scale[r]! / 2 + 1e-7);
    assert.ok(q.includes(127) || q.includes(-127));
  });
});

describe('Matryoshka loss', () => {
  const { cells } = syntheticCorpus(900, 1);
  const base = {
    model: 'dual',
    seed: 2,
    paths: [{ kind: '1:1', src: '*', trg: ['en'] }],
    features: { buckets: 4096, dim: 32, ngrams: [1, 4] },
    encoder: { outDim: 32 },
    loss: { scale: 10 },
    batch: { size: 64 },
    optim: { lr: 0.01 },
    budget: { pairs: 64 * 40 },
    checkpointEvery: 1000,
    logEvery: 1000,
  };

  it('is the sum of the losses of the nested prefixes (config checked)', () => {
    const cfg = parseConfig({ ...base, loss: { scale: 10, matryoshka: [32, 8] } }, 'm.json');
    assert.throws(() => parseConfig({ ...base, loss: { matryoshka: [64] } }, 'm.json'), /'loss\.matryoshka\[0\]' must be .*<= 32/);
    assert.throws(() => parseConfig({ ...base, loss: { matryoshka: [8, 8] } }, 'm.json'), /lists a width twice/);
    const tok = dualFamily.fixedTokenizer!(cfg)!;
    const corpus = encodeRows(cells, tok as never, 0, 700);
    manualSeed(3);
    const task = createTask(cfg, tok, corpus, () => {});
    const b = task.nextBatch();
    const got = noGrad(() => tidy(() => task.loss(b, 1).item()));
    // by hand: the same batch through the encoder, each prefix re-normalised
    const ex = (b as { examples: { src: string[]; trg: string[]; row: number }[] }).examples;
    const src = ex.map((e) => corpus.ids.get(e.src[0]!)![e.row]!),
      trg = ex.map((e) => corpus.ids.get(e.trg[0]!)![e.row]!);
    const enc = (task.module as unknown as { encoder: { forward(s: Int32Array[]): import('../../src/tensor/index.js').Tensor } }).encoder;
    const want = noGrad(() =>
      tidy(() => {
        const raw = enc.forward([...src, ...trg]);
        let sum = 0;
        for (const d of [32, 8]) {
          const v = normalize(raw.narrow(1, 0, d), 1);
          sum += additiveMarginLoss(
            v.narrow(0, 0, src.length),
            v.narrow(0, src.length, src.length),
            { margin: 0.3, scale: 10, bidirectional: true },
            null,
            collisions(
              src,
              trg,
              ex.map((e) => e.row),
            ),
          ).item();
        }
        return sum;
      }),
    );
    assert.ok(Math.abs(got - want) < 1e-4 * Math.abs(want), `${got} vs ${want}`);
    task.module.dispose();
  });

  it('training with it keeps 4-dimensional prefixes far better than without', async () => {
    const dev: DevSet = { pairs: new Map(['xx', 'yy'].map((l) => [l, { src: cells.get(l)!.slice(700, 900), en: cells.get('en')!.slice(700, 900) }])) };
    const err: Record<string, { full: number; cut: number }> = {};
    for (const [name, loss] of [
      ['plain', { scale: 10 }],
      ['matryoshka', { scale: 10, matryoshka: [32, 4] }],
    ] as const) {
      const cfg = parseConfig({ ...base, loss }, 'm.json');
      const tok = dualFamily.fixedTokenizer!(cfg)!;
      const d = mkdtempSync(join(tmpdir(), 'xling-mrl-'));
      try {
        const { task } = await train({ config: cfg, corpus: encodeRows(cells, tok as never, 0, 700), tokenizer: tok, outDir: d, log: () => {} });
        const enc = task.encoder();
        // the first 4 dimensions of the raw vectors, as --dims 4 would export them
        const cut = {
          dim: 4,
          encode: (s: Int32Array[], o?: EncodeOptions) => firstColumns(enc.encode(s), enc.dim, 4, o?.normalize),
          encodeAsync: async () => {
            throw new Error('unused');
          },
        };
        err[name] = { full: xsimOnDev(new SentenceEncoderModel(enc, tok), dev).average, cut: xsimOnDev(new SentenceEncoderModel(cut, tok), dev).average };
        task.module.dispose();
      } finally {
        rmSync(d, { recursive: true, force: true });
      }
    }
    console.log(`# matryoshka: ${JSON.stringify(err)}`);
    assert.ok(err.matryoshka!.cut < err.plain!.cut - 5, JSON.stringify(err));
    assert.ok(err.matryoshka!.full < 20, JSON.stringify(err));
  });
});

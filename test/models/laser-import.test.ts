// `xling import laser`: a random 2-layer BiLSTM in LASER's checkpoint layout, saved by
// torch.save in both formats (scripts/make-laser-fixtures.py), imported and run by xling: token ids
// and vectors equal those of independent PyTorch code following laser_encoders (≤ 1e-5 max abs,
// every sentence, any batch size); bad inputs are clear errors; every command runs on the model.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadSentenceEncoder } from '../../src/embed/model-dir.js';
import { readNpy } from '../../src/io/npy.js';
import { buildServer } from '../../src/serve/server.js';
import { cli, devColumn, root } from '../fixtures/cli.js';

const fx = join(root, 'test', 'fixtures', 'laser');
const dir = mkdtempSync(join(tmpdir(), 'xling-laser-import-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const p = (f: string) => join(dir, f);
const ref = JSON.parse(readFileSync(join(fx, 'ref.json'), 'utf8')) as { sentences: string[]; ids: number[][] };
const refVecs = readNpy(join(fx, 'ref-vectors.npy'));
const D = refVecs.shape[1]!;

function importOk(args: string[]): string {
  const r = cli(['import', 'laser', ...args]);
  assert.equal(r.status, 0, r.stderr);
  return r.stderr;
}
importOk(['--checkpoint', join(fx, 'tiny.pt'), '--spm', join(fx, 'spm-unigram.model'), '-o', p('zip')]);
importOk(['--checkpoint', join(fx, 'tiny-legacy.pt'), '--spm', join(fx, 'spm-unigram.model'), '--vocab', join(fx, 'tiny.cvocab'), '-o', p('legacy')]);

function maxAbs(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

describe('xling import laser: parity with LASER (PyTorch)', () => {
  for (const fmt of ['zip', 'legacy']) {
    it(`${fmt} checkpoint: LASER's token ids and vectors, any batch size`, () => {
      const m = loadSentenceEncoder(p(fmt));
      assert.equal(m.dim, D);
      ref.sentences.forEach((s, i) => assert.deepEqual(Array.from(m.tokenizer.encode(s)), ref.ids[i], JSON.stringify(s)));
      const want = refVecs.data as Float32Array;
      for (const bs of [1, 3, 7, 64, ref.sentences.length]) {
        let worst = 0;
        for (let b = 0; b < ref.sentences.length; b += bs) {
          const v = m.embed(ref.sentences.slice(b, b + bs), { normalize: false, center: false });
          worst = Math.max(worst, maxAbs(v, want.subarray(b * D, b * D + v.length)));
        }
        assert.ok(worst <= 1e-5, `batch size ${bs}: max abs difference ${worst}`);
      }
    });
  }

  it('xling embed gives the L2-normalised LASER vectors; no per-language centring by default', () => {
    const idx = ref.sentences.map((s, i) => [s, i] as const).filter(([s]) => s.trim() && !/[\t\n\r]/.test(s));
    writeFileSync(p('in.txt'), idx.map(([s]) => s).join('\n') + '\n');
    const r = cli(['embed', '--model', p('zip'), '--input', p('in.txt'), '-o', p('out.npy')]);
    assert.equal(r.status, 0, r.stderr);
    const got = readNpy(p('out.npy')).data as Float32Array;
    const want = refVecs.data as Float32Array;
    idx.forEach(([, i], row) => {
      const w = want.subarray(i * D, (i + 1) * D);
      const n = Math.hypot(...w);
      assert.ok(
        maxAbs(
          got.subarray(row * D, (row + 1) * D),
          Array.from(w, (x) => x / n),
        ) <= 1e-5,
        `row ${row}`,
      );
    });
    const cfg = JSON.parse(readFileSync(p('zip/config.json'), 'utf8')) as { kind: string; model: { source: { checkpoint: string } } };
    assert.equal(cfg.kind, 'laser-lstm');
    assert.equal(cfg.model.source.checkpoint, 'tiny.pt');
  });
});

describe('xling import laser: bad input', () => {
  const base = ['--spm', join(fx, 'spm-unigram.model'), '-o', p('bad')];
  const fails = (args: string[], re: RegExp) => {
    const r = cli(['import', 'laser', ...args]);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, re);
    assert.ok(!existsSync(p('bad')), 'no partial output');
  };
  it('a checkpoint without a dictionary needs --vocab', () =>
    fails(['--checkpoint', join(fx, 'tiny-legacy.pt'), ...base], /tiny-legacy\.pt: the checkpoint holds no dictionary: give .*--vocab/));
  it('a disallowed global is refused by name', () => fails(['--checkpoint', join(fx, 'evil.pt'), ...base], /evil\.pt.*posix\.system.*allow-list/));
  it('not a checkpoint / not a SentencePiece model / a bad dictionary line', () => {
    fails(['--checkpoint', join(fx, 'tiny.cvocab'), ...base], /tiny\.cvocab: not a PyTorch checkpoint/);
    fails(['--checkpoint', join(fx, 'tiny.pt'), '--spm', join(fx, 'tiny.cvocab'), '-o', p('bad')], /--spm .*tiny\.cvocab/);
    writeFileSync(p('bad.cvocab'), 'a 1\nb\n');
    fails(['--checkpoint', join(fx, 'tiny.pt'), '--vocab', p('bad.cvocab'), ...base], /bad\.cvocab:2: expected "<symbol> <count>"/);
    fails(['--spm', join(fx, 'spm-unigram.model'), '-o', p('bad')], /--checkpoint/);
  });
});

describe('every command on the imported model', () => {
  const model = p('zip');
  const de = devColumn('de').slice(0, 60),
    en = devColumn('en').slice(0, 60);
  it('--center fits per-language means from a sample', () => {
    const stderr = importOk([
      '--checkpoint',
      join(fx, 'tiny.pt'),
      '--spm',
      join(fx, 'spm-unigram.model'),
      '--center',
      join(root, 'data/sample/gettext.dev.tsv.gz'),
      '--center-sentences',
      '50',
      '-o',
      p('centred'),
    ]);
    assert.match(stderr, /per-language means of \d+ languages/);
    const m = loadSentenceEncoder(p('centred'));
    assert.ok(m.centers.has('de') && m.centers.has('en'));
    assert.equal(loadSentenceEncoder(model).centers.size, 0);
  });
  it('eval xsim, eval bucc, eval retrieval, mine', () => {
    let r = cli(['eval', 'xsim', '--model', model, '--data', 'data/sample/gettext.dev.tsv.gz', '--langs', 'en,de,fr', '--json', p('x.json')]);
    assert.equal(r.status, 0, r.stderr);
    const x = JSON.parse(readFileSync(p('x.json'), 'utf8')) as Record<string, unknown>;
    assert.ok(Object.keys(x).length > 0);
    r = cli([
      'eval',
      'bucc',
      '--src',
      'data/sample/de-en.sample.de',
      '--trg',
      'data/sample/de-en.sample.en',
      '--gold',
      'data/sample/de-en.sample.gold',
      '--model',
      model,
      '--json',
      p('b.json'),
    ]);
    assert.equal(r.status, 0, r.stderr);
    writeFileSync(p('de.txt'), de.join('\n') + '\n');
    writeFileSync(p('en.txt'), en.join('\n') + '\n');
    r = cli(['embed', '--model', model, '--input', p('de.txt'), '-o', p('de.npy')]);
    assert.equal(r.status, 0, r.stderr);
    r = cli(['embed', '--model', model, '--input', p('en.txt'), '-o', p('en.npy')]);
    assert.equal(r.status, 0, r.stderr);
    r = cli(['eval', 'retrieval', '--src-vectors', p('de.npy'), '--trg-vectors', p('en.npy'), '--json', p('r.json')]);
    assert.equal(r.status, 0, r.stderr);
    r = cli(['mine', '--src', p('de.txt'), '--trg', p('en.txt'), '--model', model, '-k', '4', '-o', p('mined.tsv')]);
    assert.equal(r.status, 0, r.stderr);
    assert.ok(readFileSync(p('mined.tsv'), 'utf8').trim().split('\n').length > 0);
  });
  it('graph build, classify train/eval', () => {
    const rows = ['en\tde', ...en.map((s, i) => `${s}\t${de[i]}`)];
    writeFileSync(p('nway.tsv'), rows.join('\n') + '\n');
    let r = cli(['graph', 'build', '--model', model, '--data', p('nway.tsv'), '--out', p('graph'), '--min-words', '0', '-k', '5', '--quiet']);
    assert.equal(r.status, 0, r.stderr);
    writeFileSync(p('docs.tsv'), en.map((s, i) => `${i % 2 ? 'net' : 'text'}\t${i}\t${s}`).join('\n') + '\n');
    r = cli(['classify', 'train', '--model', model, '--data', p('docs.tsv'), '-o', p('clf'), '--epochs', '2']);
    assert.equal(r.status, 0, r.stderr);
    r = cli(['classify', 'eval', '--model', model, '--classifier', p('clf'), '--data', p('docs.tsv'), '--json', p('c.json')]);
    assert.equal(r.status, 0, r.stderr);
  });
  it('serve: /info names the imported model and its kind; /embed gives its vectors', async () => {
    const m = loadSentenceEncoder(model);
    const app = await buildServer({ model: m, modelDir: model, maxConcurrentRequests: 4 });
    try {
      const base = await app.listen({ port: 0, host: '127.0.0.1' });
      const info = (await (await fetch(base + '/info')).json()) as { model_id: string; xling: { kind: string; dim: number } };
      assert.equal(info.model_id, 'zip');
      assert.equal(info.xling.kind, 'laser-lstm');
      assert.equal(info.xling.dim, D);
      const v = (await (
        await fetch(base + '/embed', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ inputs: [ref.sentences[0]] }) })
      ).json()) as number[][];
      const w = (refVecs.data as Float32Array).subarray(0, D),
        n = Math.hypot(...w);
      assert.ok(
        maxAbs(
          v[0]!,
          Array.from(w, (x) => x / n),
        ) <= 1e-5,
      );
    } finally {
      await app.close();
    }
  });
});

// SentencePiece .model files read in TypeScript (src/text/sentencepiece.ts) against Debian's
// python3-sentencepiece 0.1.97: ids of every sentence of the shared dev set (40 languages) for a
// unigram model (with byte fallback) and a BPE model trained with spm_train on the shared corpus.
// Expected ids: scripts/make-laser-fixtures.py (hashes of all, the ids of the first 50 rows).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SentencePieceProcessor, parseSentencePieceModel } from '../../src/text/sentencepiece.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const dir = join(root, 'test', 'fixtures', 'laser');

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (const c of new TextEncoder().encode(s)) h = Math.imul(h ^ c, 0x01000193) >>> 0;
  return h;
}

function devSentences(): string[] {
  const rows = gunzipSync(fs.readFileSync(join(root, '..', 'shared', 'data', 'gettext', 'dev.tsv.gz')))
    .toString('utf8')
    .split('\n')
    .filter((l) => l.length)
    .map((l) => l.split('\t'));
  const header = rows[0]!,
    body = rows.slice(1);
  const out: string[] = [];
  for (let j = 0; j < header.length; j++) for (const r of body) out.push(r[j] ?? '');
  return out;
}

const expected = JSON.parse(gunzipSync(fs.readFileSync(join(dir, 'spm-ids.json.gz'))).toString('utf8')) as {
  langs: string[];
  rows: number;
  full: number;
  unigram: { hash: string; ids: string[] };
  bpe: { hash: string; ids: string[] };
};
const devPath = join(root, '..', 'shared', 'data', 'gettext', 'dev.tsv.gz');

for (const kind of ['unigram', 'bpe'] as const) {
  test(`${kind}: ids identical to python3-sentencepiece on every dev sentence of all 40 languages`, {
    skip: !fs.existsSync(devPath) && 'shared dev set absent',
  }, () => {
    const sp = new SentencePieceProcessor(fs.readFileSync(join(dir, `spm-${kind}.model`)), kind);
    assert.equal(sp.proto.modelType, kind);
    const sents = devSentences();
    assert.equal(sents.length, expected.langs.length * expected.rows);
    assert.equal(expected.langs.length, 40);
    const exp = expected[kind];
    let full = 0,
      bad = 0;
    const firstBad: string[] = [];
    sents.forEach((s, i) => {
      const got = sp.encode(s).ids.join(' ');
      if (i % expected.rows < expected.full) assert.equal(got, exp.ids[full++], `sentence ${i} ${JSON.stringify(s)}`);
      if (fnv1a(got).toString(16).padStart(8, '0') !== exp.hash.slice(8 * i, 8 * i + 8)) {
        bad++;
        if (firstBad.length < 3) firstBad.push(`${i}: ${JSON.stringify(s)} → ${got}`);
      }
    });
    assert.equal(bad, 0, firstBad.join('\n'));
  });
}

test('byte fallback, unknown runs, whitespace, and the model proto', () => {
  const uni = new SentencePieceProcessor(fs.readFileSync(join(dir, 'spm-unigram.model')));
  assert.equal(uni.proto.byteFallback, true);
  assert.ok(uni.proto.normalizer.precompiledCharsmap.length > 1000, 'nmt_nfkc charsmap');
  // a character outside the vocabulary → its UTF-8 bytes as <0xXX> pieces
  const e = uni.encode('𓀀');
  assert.deepEqual(e.pieces.slice(-4), ['<0xF0>', '<0x93>', '<0x80>', '<0x80>']);
  assert.deepEqual(uni.encode('  a   b  ').pieces, uni.encode('a b').pieces);
  assert.deepEqual(uni.encode('').ids, []);
  assert.deepEqual(uni.encode('   ').ids, []);
  // NFKC through the charsmap: full-width letters become ASCII
  assert.deepEqual(uni.encode('ＡＢＣ').ids, uni.encode('ABC').ids);
  const bpe = new SentencePieceProcessor(fs.readFileSync(join(dir, 'spm-bpe.model')));
  assert.equal(bpe.proto.byteFallback, false);
  // without byte fallback, a run of unknown characters is one <unk>
  const u = bpe.encode('𓀀𓀁');
  assert.equal(u.ids.filter((i) => i === bpe.unkId).length, 1);
  assert.throws(() => parseSentencePieceModel(Uint8Array.from([0x0a, 0x50, 1]), 'bad.model'), /bad\.model: .*beyond the end/);
  assert.throws(() => new SentencePieceProcessor(new Uint8Array(0), 'empty.model'), /empty\.model: no pieces/);
});

test("LASER's preprocessing: non-printing → space, Moses punctuation (perl parity), lower-case, pieces", async () => {
  const { laserPreprocess, mosesNormalize } = await import('../../src/text/moses.js');
  const ref = JSON.parse(fs.readFileSync(join(dir, 'ref.json'), 'utf8')) as { sentences: string[]; preprocessed: string[]; pieces: string[][] };
  const sp = new SentencePieceProcessor(fs.readFileSync(join(dir, 'spm-unigram.model')));
  ref.sentences.forEach((s, i) => {
    assert.equal(laserPreprocess(s), ref.preprocessed[i], JSON.stringify(s));
    assert.deepEqual(sp.encode(ref.preprocessed[i]!).pieces, ref.pieces[i], JSON.stringify(s));
  });
  // the substitutions themselves (sacremoses' tests, perl parity, LASER's ‘ ‚ overrides)
  assert.equal(mosesNormalize('The United States in 1805 (color map)                 _Facing_West.'), 'The United States in 1805 (color map) _Facing_West.');
  assert.equal(mosesNormalize('„Hello“ – ‘quoted’ ‚x’ it’s'), '"Hello" - "quoted" "x" it\'s');
  assert.equal(mosesNormalize('1\u00a0000 and 50 %'), '1.000 and 50%');
  assert.equal(mosesNormalize('"Hi", he said.'), 'Hi," he said.'.replace(/^/, '"'));
  assert.equal(laserPreprocess('A\tB\u200bC\u0007'), 'a b c');
});

// SentencePiece WORD and CHAR models (src/text/sentencepiece.ts) against Debian's
// python3-sentencepiece 0.1.97: ids of every sentence of the shared dev set (40 languages) for a
// word model (nmt_nfkc normaliser) and a char model (identity normaliser, rare characters left
// out), both trained with spm_train. Expected ids: scripts/make-spm-word-char-fixtures.py (hashes of
// all, the ids of the first 10 rows of each language).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { SentencePieceProcessor } from '../../src/text/sentencepiece.js';
import { root } from '../fixtures/cli.js';

const dir = join(root, 'test', 'fixtures', 'laser');
const devPath = join(root, '..', 'shared', 'data', 'gettext', 'dev.tsv.gz');

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (const c of new TextEncoder().encode(s)) h = Math.imul(h ^ c, 0x01000193) >>> 0;
  return h;
}

const expected = JSON.parse(gunzipSync(fs.readFileSync(join(dir, 'spm-ids-word-char.json.gz'))).toString('utf8')) as {
  langs: string[];
  rows: number;
  full: number;
  word: { hash: string; ids: string[] };
  char: { hash: string; ids: string[] };
};

for (const kind of ['word', 'char'] as const) {
  test(`${kind}: ids identical to python3-sentencepiece on every dev sentence of all 40 languages`, {
    skip: !fs.existsSync(devPath) && 'shared dev set absent',
  }, () => {
    const sp = new SentencePieceProcessor(fs.readFileSync(join(dir, `spm-${kind}.model`)), kind);
    assert.equal(sp.proto.modelType, kind);
    const rows = gunzipSync(fs.readFileSync(devPath))
      .toString('utf8')
      .split('\n')
      .filter((l) => l.length)
      .map((l) => l.split('\t'));
    const header = rows[0]!,
      body = rows.slice(1);
    const sents: string[] = [];
    for (let j = 0; j < header.length; j++) for (const r of body) sents.push(r[j] ?? '');
    assert.equal(expected.langs.length, 40);
    assert.equal(sents.length, expected.langs.length * expected.rows);
    const exp = expected[kind];
    let full = 0,
      bad = 0,
      unk = 0;
    const firstBad: string[] = [];
    sents.forEach((s, i) => {
      const ids = sp.encode(s).ids;
      unk += ids.filter((x) => x === sp.unkId).length;
      const got = ids.join(' ');
      if (i % expected.rows < expected.full) assert.equal(got, exp.ids[full++], `sentence ${i} ${JSON.stringify(s)}`);
      if (fnv1a(got).toString(16).padStart(8, '0') !== exp.hash.slice(8 * i, 8 * i + 8)) {
        bad++;
        if (firstBad.length < 3) firstBad.push(`${i}: ${JSON.stringify(s)} → ${got}`);
      }
    });
    assert.equal(bad, 0, firstBad.join('\n'));
    assert.ok(unk > 0, 'the fixture exercises unknown pieces');
  });
}

test('word and char pieces: whole words after ▁, single characters, runs of unknowns merged', () => {
  const word = new SentencePieceProcessor(fs.readFileSync(join(dir, 'spm-word.model')));
  const w = word.encode('the file');
  assert.deepEqual(w.pieces, ['▁the', '▁file']);
  assert.ok(!w.ids.includes(word.unkId));
  const u = word.encode('the qqqzzz xxxyyy file');
  assert.deepEqual(u.pieces, ['▁the', '▁qqqzzz▁xxxyyy', '▁file']);
  assert.equal(u.ids[1], word.unkId);
  const char = new SentencePieceProcessor(fs.readFileSync(join(dir, 'spm-char.model')));
  assert.deepEqual(char.encode('ab c').pieces, ['▁', 'a', 'b', '▁', 'c']);
  // identity normaliser: full-width letters stay themselves (unlike nmt_nfkc)
  assert.notDeepEqual(char.encode('ＡＢ').pieces, char.encode('AB').pieces);
});

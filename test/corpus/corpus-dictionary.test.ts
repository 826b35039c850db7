// Bilingual dictionaries as translation sources (src/corpus/dictionary.ts): Ding's `de-en` lines
// and EDICT's EUC-JP entries, made here in the layouts of Debian's trans-de-en and edict packages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dingPairs, dingReader, edictPair, edictReader, stripDictionaryAnnotations } from '../../src/corpus/dictionary.js';
import type { SourceProblem, SourceReader } from '../../src/corpus/types.js';
import { corpusRows } from '../fixtures/corpus.js';

const tmp = mkdtempSync(join(tmpdir(), 'xling-corpus-dict-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

async function read(reader: SourceReader, file: string): Promise<{ pairs: [string, string][][]; problems: SourceProblem[] }> {
  const problems: SourceProblem[] = [];
  const pairs = [];
  for await (const u of reader.read(file, { onProblem: (p) => problems.push(p) })) pairs.push([...u.texts]);
  return { pairs, problems };
}

const DING = [
  '# Version :: devel 2023-01-30',
  '# License :: GPL Version 2 or later; GNU General Public License',
  'Freizeit {f} | Was machst du in deiner Freizeit? :: free time; spare time; leisure time | What do you do in your free time?',
  'Banknote {f}; Schein {m} [ugs.] | Banknoten {pl}; Scheine {pl} | einen großen Schein in Kleingeld wechseln :: banknote; note; bank bill [Am.] | banknotes; notes | to change a large banknote for (smaller notes and) coins [Br.]; to break a large bill into coins [Am.]',
  'gehen {vi} | gehend | gegangen | er/sie geht :: to go | going | gone | he/she goes',
  'die Aussage verweigern {v} :: to refuse to give evidence',
  'Ist da jemand? :: Is anyone there?',
  '',
].join('\n');

test('Ding entries: example sentences and phrases of three words or more, first synonyms, annotations removed; words, plurals and conjugations left out', () => {
  assert.deepEqual(dingPairs(DING.split('\n')[2]!), [['Was machst du in deiner Freizeit?', 'What do you do in your free time?']]);
  assert.deepEqual(dingPairs(DING.split('\n')[3]!), [['einen großen Schein in Kleingeld wechseln', 'to change a large banknote for coins']]);
  assert.deepEqual(dingPairs(DING.split('\n')[4]!), []);
  assert.deepEqual(dingPairs('Anstoß {m} | Welche Mannschaft hat Anstoß? :: kick-off'), [], 'sub-entry counts differ: only the headword, a single word');
  assert.equal(stripDictionaryAnnotations('So what was the point (of the story) [Br.] ?'), 'So what was the point?');
  assert.equal(stripDictionaryAnnotations('a (nested (very)) note'), 'a note');
});

test('a Ding file named de-en is read into German–English units; a line without " :: " is reported, a file without entries refused', async () => {
  const dir = join(tmp, 'trans');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'de-en');
  writeFileSync(file, DING + 'kein Eintrag hier\n');
  assert.ok(dingReader.accepts(file, readFileSync(file).subarray(0, 4096)));
  assert.ok(!dingReader.accepts(join(dir, 'README'), Buffer.from(DING)), 'the name gives the languages');
  const { pairs, problems } = await read(dingReader, file);
  assert.deepEqual(pairs, [
    [
      ['de', 'Was machst du in deiner Freizeit?'],
      ['en', 'What do you do in your free time?'],
    ],
    [
      ['de', 'einen großen Schein in Kleingeld wechseln'],
      ['en', 'to change a large banknote for coins'],
    ],
    [
      ['de', 'die Aussage verweigern'],
      ['en', 'to refuse to give evidence'],
    ],
    [
      ['de', 'Ist da jemand?'],
      ['en', 'Is anyone there?'],
    ],
  ]);
  assert.equal(problems.length, 1);
  assert.equal(problems[0]!.line, 8);
  assert.match(problems[0]!.message, /" :: "/);
  const empty = join(tmp, 'empty', 'de-en');
  mkdirSync(join(tmp, 'empty'));
  writeFileSync(empty, '# Version :: x\n# nothing else\n');
  await assert.rejects(read(dingReader, empty), /de-en: no dictionary entries/);
});

// EUC-JP bytes (written by iconv) of an EDICT header and three entries: a common word, a common
// word usually written in kana, and an uncommon word (no (P)).
const EDICT_EUC = Buffer.from(
  'a1a1a1a9a1a9a1a9202f45444943542c2045444943545f5355422850292c20454449435432204a6170616e6573652d456e676c69736820456c656374726f6e69632044696374696f6e6172792046696c65732f436f7079726967687420456c656374726f6e69632044696374696f6e617279205265736561726368202620446576656c6f706d656e742047726f7570202d20323032312f437265617465643a20323032312d30322d30332f0ab1d8205ba4a8a4ad5d202f286e29202831292073746174696f6e2f286e292028322920737461676520286f662061206a6f75726e6579292f2850292f0ac2b6a4ec205ba4bda4ec5d202f28706e292028756b2920746861742028696e6469636174696e6720616e206974656d206f7220706572736f6e206e65617220746865206c697374656e6572292f69742f2850292f0ab3bfccc4205ba4a2a4e1a4a45d202f286e292063726f616b696e67206f662066726f67732f0a',
  'hex',
);

test('EDICT (EUC-JP): common words only, the first gloss without its tags, the kana reading for words usually written in kana', async () => {
  assert.deepEqual(edictPair('駅 [えき] /(n) (1) station/(n) (2) stage (of a journey)/(P)/'), ['駅', 'station']);
  assert.deepEqual(edictPair('其れ [それ] /(pn) (uk) that (indicating an item)/it/(P)/'), ['それ', 'that']);
  assert.equal(edictPair('蛙鳴 [あめい] /(n) croaking of frogs/'), undefined);
  const dir = join(tmp, 'edict');
  mkdirSync(dir);
  const file = join(dir, 'edict');
  writeFileSync(file, EDICT_EUC);
  assert.ok(edictReader.accepts(file, EDICT_EUC.subarray(0, 4096)));
  const { pairs, problems } = await read(edictReader, file);
  assert.deepEqual(problems, []);
  assert.deepEqual(pairs, [
    [
      ['ja', '駅'],
      ['en', 'station'],
    ],
    [
      ['ja', 'それ'],
      ['en', 'that'],
    ],
  ]);
  // a byte sequence that is not EUC-JP: the file is refused with its line
  const bad = join(tmp, 'edict-bad');
  mkdirSync(bad);
  writeFileSync(join(bad, 'edict'), Buffer.concat([EDICT_EUC, Buffer.from([0xb1, 0x0a])]));
  await assert.rejects(read(edictReader, join(bad, 'edict')), /edict:5: invalid EUC-JP/);
});

test('xling corpus over a Debian-like tree with both dictionaries: one N-way corpus through English', async () => {
  const root = join(tmp, 'pkg');
  mkdirSync(join(root, 'usr/share/trans'), { recursive: true });
  mkdirSync(join(root, 'usr/share/edict'), { recursive: true });
  writeFileSync(join(root, 'usr/share/trans/de-en'), DING);
  writeFileSync(join(root, 'usr/share/edict/edict'), EDICT_EUC);
  const out = join(tmp, 'dict.tsv.gz');
  const built = await corpusRows([root], out);
  const s = built.summary;
  const problems = built.problems.map((p) => `${p.file}: ${p.message}`);
  assert.deepEqual(problems, []);
  const head = built.rows[0]!;
  assert.deepEqual(head.filter((h) => !h.startsWith('#')).sort(), ['de', 'en', 'ja']);
  const rows = new Map(built.rows.slice(1).map((r) => [r[head.indexOf('en')]!, r]));
  assert.equal(rows.get('Is anyone there?')?.[head.indexOf('de')], 'Ist da jemand?');
  assert.equal(rows.get('station')?.[head.indexOf('ja')], '駅');
  assert.equal(s.rows, 6);
});

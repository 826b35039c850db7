// MegaGlest language files as translation sources (src/corpus/megaglest.ts), made here in the
// layout of Debian's megaglest-data: the interface in data/lang, a tutorial's texts with a prefix,
// a tech tree whose English file is `…_default.lng`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { megaglestLanguage, megaglestReader, parseLng } from '../../src/corpus/megaglest.js';
import type { SourceProblem } from '../../src/corpus/types.js';
import { corpusRows } from '../fixtures/corpus.js';

const tmp = mkdtempSync(join(tmpdir(), 'xling-corpus-megaglest-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

const ROOT = join(tmp, 'usr/share/games/megaglest');
function write(path: string, lines: string[]): string {
  const file = join(ROOT, path);
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, lines.join('\r\n') + '\r\n');
  return file;
}

write('data/lang/english.lng', [
  '; This is the main MegaGlest localization file (INI format)',
  '',
  'ConnectedToServer=Connected to the server',
  'Hint=Hint:\\n%s',
  'SelectIdle=To select idle workers, press the #HotKeySelectIdleHarvesterUnit# key.',
  'NotConnected=Not connected at all',
  'Timeout=Timeout waiting for message.',
]);
const gaelic = write('data/lang/gaelic.lng', [
  '; Scottish Gaelic',
  'ConnectedToServer=Ceangailte ris an fhrithealaiche',
  'Hint=Gliocas:\\n%s',
  'SelectIdle=Brùth #HotKeySelectIdleHarvesterUnit# airson obraichean a thaghadh.',
  'NotConnected=Not connected at all',
  'this line is no entry',
  'Unknown=Chan eil seo sa Bheurla',
]);
write('data/lang/irish.lng', ['ConnectedToServer=Ceangailte leis an bhfreastalaí', 'Timeout=Thar am ag fanacht le teachtaireacht.']);
write('tutorials/1_basic/1_basic_english.lng', ['TUTORIAL_NAME=#1 Basic Tutorial', 'Welcome=Welcome to the basic MegaGlest tutorial.\\nHave fun!']);
write('tutorials/1_basic/1_basic_uzbek.lng', ["Welcome=MegaGlest o'yinining asosiy qo'llanmasiga xush kelibsiz.\\nOmad!"]);
write('techs/megapack/lang/megapack_default.lng', ['; TechTree', 'UnitName_archer=the archer of the north']);
write('techs/megapack/lang/megapack_albanian.lng', ['UnitName_archer=harkëtari i veriut']);

test('language files: names to codes, key=value entries with line breaks, comments; a line that is no entry reported', () => {
  assert.deepEqual(
    [
      'data/lang/english.lng',
      'gaelic.lng',
      'irish.lng',
      'x/chinese-taiwan.lng',
      'hint/hint_portuguese-brazil.lng',
      'megapack_default.lng',
      'nko.lng',
      'klingon.lng',
    ].map(megaglestLanguage),
    ['en', 'gd', 'ga', 'zh_tw', 'pt_br', 'en', 'nqo', undefined],
  );
  const problems: number[] = [];
  const m = parseLng('; comment\nA=one\\ntwo\nnot an entry\nB = x=y\nA=again\n', (line) => problems.push(line));
  assert.deepEqual(
    [...m],
    [
      ['A', 'one\ntwo'],
      ['B', ' x=y'],
    ],
  );
  assert.deepEqual(problems, [3]);
  assert.ok(megaglestReader.accepts(gaelic, Buffer.from('; Scottish Gaelic\r\nA=b\r\n')));
  assert.ok(!megaglestReader.accepts(gaelic, Buffer.from('LANG\u0000\u0001\u0002binary')), "another game's compiled .lng");
});

test('a file is paired with its folder’s English by key; placeholders and hot keys dropped, untranslated entries left out', async () => {
  const problems: SourceProblem[] = [];
  const units = [];
  for await (const u of megaglestReader.read(gaelic, { onProblem: (p) => problems.push(p) })) units.push([...u.texts]);
  assert.deepEqual(units, [
    [
      ['en', 'Connected to the server'],
      ['gd', 'Ceangailte ris an fhrithealaiche'],
    ],
  ]);
  assert.deepEqual(
    problems.map((p) => [p.line, p.message]),
    [[6, 'not a key=value line; skipped']],
  );
});

test('xling corpus over the game tree: interface, tutorial and tech tree in one N-way corpus; a folder without English reported', async () => {
  write('scenarios/lonely/lonely_irish.lng', ['A=Dia duit a chara liom']);
  const built = await corpusRows([tmp], join(tmp, 'mg.tsv.gz'));
  const head = built.rows[0]!;
  assert.deepEqual(head, ['en', 'ga', 'gd', 'sq', 'uz', '#source']);
  const rows = new Map(built.rows.slice(1).map((r) => [r[0]!, r.slice(1, 5)]));
  assert.deepEqual(rows.get('Connected to the server'), ['Ceangailte leis an bhfreastalaí', 'Ceangailte ris an fhrithealaiche', '', '']);
  assert.deepEqual(rows.get('Timeout waiting for message.'), ['Thar am ag fanacht le teachtaireacht.', '', '', '']);
  assert.deepEqual(rows.get('the archer of the north'), ['', '', 'harkëtari i veriut', '']);
  assert.deepEqual(rows.get('Welcome to the basic MegaGlest tutorial.'), ['', '', '', "MegaGlest o'yinining asosiy qo'llanmasiga xush kelibsiz."]);
  assert.equal(built.rows.length - 1, 4);
  const missing = built.problems.filter((p) => /lonely_irish\.lng/.test(p.file));
  assert.equal(missing.length, 1);
  assert.match(missing[0]!.message, /no lonely_english\.lng beside it/);
});

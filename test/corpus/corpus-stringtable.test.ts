// FreeOrion's string tables as translation sources (src/corpus/stringtable.ts). The fixtures in
// test/fixtures/corpus-stringtable/game/stringtables/ are written in the format of the game's
// tables: a first line naming the language (in English or in itself), comments, one-line and
// '''-delimited multi-line texts, an identifier with a comment after it, an #include line; and the
// faults: a line that is no identifier, an identifier defined twice, a ''' never closed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseStringTable, stringTableLanguage, stringTableReader } from '../../src/corpus/stringtable.js';
import type { SourceProblem } from '../../src/corpus/types.js';
import { corpusRows } from '../fixtures/corpus.js';

const FIX = 'test/fixtures/corpus-stringtable/game/stringtables';
const tmp = mkdtempSync(join(tmpdir(), 'xling-corpus-stringtable-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

async function read(file: string): Promise<{ pairs: [string, string, string][]; problems: [number | undefined, string][]; docs: Set<string | undefined> }> {
  const problems: SourceProblem[] = [];
  const pairs: [string, string, string][] = [];
  const docs = new Set<string | undefined>();
  for await (const u of stringTableReader.read(file, { onProblem: (p) => problems.push(p) })) {
    const [[l1, t1], [l2, t2]] = [...u.texts];
    assert.equal(l1, 'en');
    assert.equal(u.kind, 'prose');
    pairs.push([t1!, l2!, t2!]);
    docs.add(u.doc);
  }
  return { pairs, problems: problems.map((p) => [p.line, p.message]), docs };
}

test('a table parsed: one-line and multi-line texts, comments and #include lines skipped, a comment after an identifier', () => {
  const t = parseStringTable('en.txt', readFileSync(join(FIX, 'en.txt'), 'utf8'), () => assert.fail('no problem expected'));
  assert.equal(t.name, 'English');
  assert.equal(t.entries.get('CANCEL'), 'Cancel the order');
  assert.equal(t.entries.get('SP_FARMER_DESC'), 'The farmers live in small villages by the river.\nThey trade grain for tools with their neighbours.\n');
  assert.equal(t.entries.get('TECH_ROADS_DESC'), 'Roads let carts reach the market before noon. A good road doubles the trade of a village.');
  assert.equal(t.entries.get('AI_NAMES'), 'The north wind and the south wind');
  assert.equal(t.entries.size, 9);
  assert.throws(() => parseStringTable('x.txt', '# no name\nKEY\ntext\n', () => {}), /x\.txt:1: the first line must name the table's language/);
});

test("a translated table paired with the folder's English by identifier: paragraphs paired when both sides have as many, placeholders dropped, faults reported", async () => {
  const { pairs, problems, docs } = await read(join(FIX, 'ru.txt'));
  assert.deepEqual(pairs, [
    ['Cancel the order', 'ru', 'Отменить приказ'],
    ['The farmers live in small villages by the river.', 'ru', 'Фермеры живут в маленьких деревнях у реки.'],
    ['They trade grain for tools with their neighbours.', 'ru', 'Они меняют зерно на инструменты у соседей.'],
    // one English paragraph, two Russian ones: paired whole
    [
      'Roads let carts reach the market before noon. A good road doubles the trade of a village.',
      'ru',
      'Дороги позволяют телегам добраться до рынка до полудня. Хорошая дорога удваивает торговлю деревни. Это важно.',
    ],
    // %1%, %planet% and [[SP_FARMER]] are placeholders: those three entries give nothing
    ['Heavy rain floods the lower fields tonight.', 'ru', 'Сильный дождь затопит нижние поля этой ночью.'],
    ['The north wind and the south wind', 'ru', 'Северный ветер и южный ветер'],
  ]);
  assert.deepEqual(problems, [
    [32, '"bad key with spaces" is not an identifier'],
    [35, 'CANCEL is defined twice (the first is kept)'],
  ]);
  assert.equal(docs.size, 5, 'one document per entry (the two paragraphs of one entry share it)');
  const de = await read(join(FIX, 'de.txt'));
  assert.deepEqual(de.pairs, [['Heavy rain floods the lower fields tonight.', 'de', 'Starker Regen flutet heute Nacht die unteren Felder.']]);
  assert.deepEqual(de.problems, [[6, "the text of SP_FARMER_DESC opens ''' and never closes it"]]);
  assert.deepEqual((await read(join(FIX, 'en.txt'))).pairs, [], 'the English table is the other side of every pair');
});

test('the language from the first line (an English name or the language’s own), else the file name; a table without English beside it is refused', async () => {
  assert.equal(stringTableLanguage('x/cz.txt', 'Czech'), 'cs');
  assert.equal(stringTableLanguage('x/fr.txt', 'Français'), 'fr');
  assert.equal(stringTableLanguage('x/es.txt', 'Espanol'), 'es');
  assert.equal(stringTableLanguage('x/ru.txt', 'Русский'), 'ru');
  assert.equal(stringTableLanguage('x/pl.txt', 'Polish language pack'), 'pl');
  const dir = join(tmp, 'lonely/stringtables');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'it.txt'), 'Italiano\n\nCANCEL\nAnnulla l’ordine\n');
  await assert.rejects(read(join(dir, 'it.txt')), /en\.txt: no such file; string tables are paired with the English table of their folder/);
  writeFileSync(join(dir, 'xx.txt'), 'Klingon\n\nCANCEL\nqIl\n');
  await assert.rejects(read(join(dir, 'xx.txt')), /xx\.txt:1: "Klingon" names no language xling knows, nor does the file name/);
  writeFileSync(join(dir, 'en.txt'), 'English\n\nCANCEL\nCancel the order\n\nnot an identifier\nText\n');
  assert.deepEqual(
    (await read(join(dir, 'en.txt'))).problems,
    [[6, '"not an identifier" is not an identifier']],
    "the English table's own faults are reported",
  );
  writeFileSync(join(dir, 'sv.txt'), Buffer.from([0x53, 0x76, 0x65, 0x6e, 0x73, 0x6b, 0x61, 0x0a, 0xff, 0x0a]));
  await assert.rejects(read(join(dir, 'sv.txt')), /sv\.txt:\d+: invalid UTF-8/);
  assert.equal(stringTableReader.accepts(join(FIX, 'ru.txt'), Buffer.alloc(0)), true);
  assert.equal(stringTableReader.accepts(join(tmp, 'notes/ru.txt'), Buffer.alloc(0)), false, 'only files of a stringtables folder');
});

test('xling corpus over the folder: rows through English with both languages', async () => {
  const out = join(tmp, 'st.tsv.gz');
  const { rows, problems } = await corpusRows([FIX], out);
  assert.deepEqual(rows[0], ['en', 'de', 'ru', '#source']);
  const rain = rows.find((r) => r[0] === 'Heavy rain floods the lower fields tonight.');
  assert.deepEqual(rain?.slice(0, 3), [
    'Heavy rain floods the lower fields tonight.',
    'Starker Regen flutet heute Nacht die unteren Felder.',
    'Сильный дождь затопит нижние поля этой ночью.',
  ]);
  assert.equal(problems.length, 3);
});

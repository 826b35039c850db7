// Ren'Py translation files as translation sources (src/corpus/renpy.ts). The fixtures in
// test/fixtures/corpus-renpy/ are written in the layout Ren'Py's "generate translations" writes
// (game/tl/LANGUAGE/*.rpy: dialogue blocks with the original statement as a comment, a strings
// block of old/new pairs), with the cases a translated game holds: narration, a speaker, a speaker
// given as a string, voice lines, text tags, a split line, an untranslated block, an interpolated
// variable, escapes, a string over two lines; and the faults: a new without an old, a string never
// closed, a folder that is not a language, two languages in one file, bytes that are not UTF-8.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { langFromName } from '../../src/corpus/langs.js';
import { renpyReader, renpyText, sayText } from '../../src/corpus/renpy.js';
import type { SourceProblem } from '../../src/corpus/types.js';
import { corpusRows } from '../fixtures/corpus.js';

const FIX = 'test/fixtures/corpus-renpy/walk';
const TL = join(FIX, 'game/tl');
const tmp = mkdtempSync(join(tmpdir(), 'xling-corpus-renpy-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

async function read(file: string): Promise<{ pairs: [string, string, string][]; docs: Set<string | undefined>; problems: SourceProblem[] }> {
  const problems: SourceProblem[] = [];
  const pairs: [string, string, string][] = [];
  const docs = new Set<string | undefined>();
  for await (const u of renpyReader.read(file, { onProblem: (p) => problems.push(p) })) {
    const [[l1, t1], [l2, t2]] = [...u.texts];
    assert.equal(l1, 'en');
    assert.equal(u.kind, 'message');
    pairs.push([t1!, l2!, t2!]);
    docs.add(u.doc);
  }
  return { pairs, docs, problems };
}

test('say statements: the what of `who "what"`, `"what"` and `"who" "what"`; other statements say nothing', () => {
  assert.equal(sayText('e "Hello there." nointeract'), 'Hello there.');
  assert.equal(sayText('"Narration only."'), 'Narration only.');
  assert.equal(sayText('"Mother" "Come down."'), 'Come down.');
  assert.equal(sayText(`e 'Single quotes.'`), 'Single quotes.');
  assert.equal(sayText('e "An \\"escaped\\" quote."'), 'An "escaped" quote.');
  assert.equal(sayText('voice "a.ogg"'), undefined);
  assert.equal(sayText('play music "theme.ogg"'), undefined);
  assert.equal(sayText('show eileen happy'), undefined);
  assert.equal(sayText('pass'), undefined);
  assert.equal(sayText('e "never closed'), undefined);
});

test("Ren'Py text: tags removed, doubled braces and brackets literal, interpolations are placeholders", () => {
  assert.equal(renpyText('I {i}really{/i} waited{w=0.5} for you.{nw}'), 'I really waited for you.');
  assert.equal(renpyText('Open the {{settings} menu'), 'Open the {settings} menu');
  assert.equal(renpyText('A [[bracket]] and 100%% sure'), 'A [bracket]] and 100% sure');
  assert.equal(renpyText('Good morning, [player]!'), undefined);
  assert.equal(renpyText('{#weekday}Monday'), 'Monday');
  assert.equal(renpyText('## A comment of the interface template.'), 'A comment of the interface template.');
});

test('a translated game file: each dialogue block and each old/new pair, cleaned; faults reported with their lines', async () => {
  const { pairs, docs, problems } = await read(join(TL, 'japanese/script.rpy'));
  assert.deepEqual(pairs, [
    ['The rain stopped just before the bus came.', 'ja', 'バスが来る直前に雨が止んだ。'],
    ['Do you want to walk home together?', 'ja', '一緒に歩いて帰らない？'],
    ['I waited for you at the station.', 'ja', '駅で待っていたよ。'],
    ['Dinner is ready, come down now.', 'ja', 'ご飯できたよ、降りてきて。'],
    // the split line (two statements for one) and the untranslated block (pass) give nothing; the
    // interpolated [player] is a placeholder
    ['She said "thank you" and smiled at me.', 'ja', '彼女は「ありがとう」と言って、私に微笑んだ。'],
    // "Open the {{settings} menu" reads as "Open the {settings} menu", which the corpus's
    // cleaning drops as it drops every {name} placeholder
    ['Start a new game', 'ja', '新しいゲームを始める'],
  ]);
  assert.deepEqual([...docs], ['walk/script.rpy']);
  assert.deepEqual(
    problems.map((p) => [p.line, p.message]),
    [
      [66, 'new without an old before it'],
      [70, 'new without a closed string literal'],
    ],
  );
});

test('languages from the folder names games give them; the game\u2019s own language gives nothing; a folder that is no language is refused', async () => {
  assert.equal(langFromName('schinese'), 'zh');
  assert.equal(langFromName('tchinese'), 'zh_tw');
  assert.equal(langFromName('japanese'), 'ja');
  assert.equal(langFromName('norwegian_bokmal'), 'nb');
  assert.equal(langFromName('Brazilian Portuguese'), 'pt_br');
  assert.equal(langFromName('pt_BR'), 'pt_br');
  assert.equal(langFromName('piglatin'), undefined);
  const zh = await read(join(TL, 'schinese/script.rpy'));
  assert.deepEqual(
    zh.pairs.map((p) => p[1]),
    ['zh', 'zh', 'zh'],
  );
  assert.deepEqual((await read(join(TL, 'None/common.rpym'))).pairs, []);
  await assert.rejects(read(join(TL, 'piglatin/script.rpy')), /piglatin\/script\.rpy: "piglatin" is not a language name or code xling knows/);
});

test('two languages in one file, and bytes that are not UTF-8, are errors naming the file', async () => {
  const dir = join(tmp, 'g/game/tl/french');
  mkdirSync(dir, { recursive: true });
  const two = join(dir, 'two.rpy');
  writeFileSync(
    two,
    'translate french a_1:\n\n    # "Yes, I know that."\n    "Oui, je le sais."\n\ntranslate german a_2:\n\n    # "Yes, I know that."\n    "Ja, das weiß ich."\n',
  );
  await assert.rejects(read(two), /two\.rpy:6: blocks of two languages in one file \(french, german\)/);
  const bad = join(dir, 'bad.rpy');
  writeFileSync(bad, Buffer.concat([Buffer.from('translate french a_1:\n\n    # "Yes."\n    "Oui '), Buffer.from([0xff, 0xfe]), Buffer.from('"\n')]));
  await assert.rejects(read(bad), /bad\.rpy:\d+: invalid UTF-8/);
  assert.equal(renpyReader.accepts(join(dir, 'bad.rpy'), Buffer.alloc(0)), true);
  assert.equal(renpyReader.accepts(join(tmp, 'g/game/script.rpy'), Buffer.alloc(0)), false, 'a game script outside tl/ is no translation');
});

test('xling corpus over a game folder: N-way rows through English, the two languages of one line in one row', async () => {
  const out = join(tmp, 'renpy.tsv.gz');
  const { rows, problems } = await corpusRows([FIX], out);
  assert.deepEqual(rows[0], ['en', 'ja', 'zh', '#source']);
  const byEn = new Map(rows.slice(1).map((r) => [r[0], r]));
  assert.deepEqual(byEn.get('The rain stopped just before the bus came.')?.slice(0, 3), [
    'The rain stopped just before the bus came.',
    'バスが来る直前に雨が止んだ。',
    '公交车来之前雨就停了。',
  ]);
  assert.deepEqual(byEn.get('Start a new game')?.slice(0, 3), ['Start a new game', '新しいゲームを始める', '开始新游戏']);
  assert.deepEqual(byEn.get('Dinner is ready, come down now.')?.slice(0, 3), ['Dinner is ready, come down now.', 'ご飯できたよ、降りてきて。', '']);
  assert.equal(rows.length - 1, 6, 'six English texts: five of the Japanese file, none more from the Chinese one');
  assert.ok(
    problems.some((p) => /piglatin/.test(p.file) || /piglatin/.test(p.message)),
    'the piglatin folder is reported',
  );
});

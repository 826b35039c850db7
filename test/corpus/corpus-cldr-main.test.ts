// CLDR locale data as a translation source (src/corpus/cldr-main.ts): a small common/main folder
// made here in LDML's layout (UTS #35), with the shapes the reader must leave out (alt forms,
// unconfirmed drafts, patterns, inherited values, sub-locales, root).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cldrMainReader } from '../../src/corpus/cldr-main.js';
import type { SourceProblem } from '../../src/corpus/types.js';
import { corpusRows } from '../fixtures/corpus.js';

const tmp = mkdtempSync(join(tmpdir(), 'xling-cldr-main-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

const ldml = (identity: string, body: string): string =>
  `<?xml version="1.0" encoding="UTF-8" ?>\n<!DOCTYPE ldml SYSTEM "../../common/dtd/ldml.dtd">\n<ldml>\n<identity><version number="$Revision$"/>${identity}</identity>\n${body}\n</ldml>\n`;

const body = (v: Record<string, string>): string => `
<localeDisplayNames>
  <languages>
    <language type="de">${v.de}</language>
    <language type="de" alt="variant">${v.deAlt}</language>
    <language type="ace">${v.ace}</language>
  </languages>
  <territories>
    <territory type="DE">${v.DE}</territory>
    <territory type="001">${v.world}</territory>
  </territories>
</localeDisplayNames>
<dates>
  <calendars>
    <calendar type="chinese"><months><monthContext type="format"><monthWidth type="wide"><month type="1">${v.chinese1}</month></monthWidth></monthContext></months></calendar>
    <calendar type="gregorian">
      <months><monthContext type="format"><monthWidth type="wide"><month type="4">${v.april}</month></monthWidth></monthContext></months>
      <days><dayContext type="format"><dayWidth type="wide"><day type="sun">${v.sunday}</day></dayWidth></dayContext></days>
    </calendar>
  </calendars>
  <fields>
    <field type="day">
      <displayName>${v.day}</displayName>
      <relative type="-1">${v.yesterday}</relative>
      <relativeTime type="future"><relativeTimePattern count="one">${v.inDays}</relativeTimePattern></relativeTime>
    </field>
    <field type="week"><relative type="1" draft="unconfirmed">${v.nextWeek}</relative></field>
  </fields>
</dates>
<units><unitLength type="long"><unit type="length-kilometer"><displayName>${v.km}</displayName><unitPattern count="one">{0} ${v.km}</unitPattern></unit></unitLength></units>`;

const EN = {
  de: 'German',
  deAlt: 'Deutsch (variant)',
  ace: 'Achinese',
  DE: 'Germany',
  world: 'World',
  chinese1: 'First Month',
  april: 'April',
  sunday: 'Sunday',
  day: 'day',
  yesterday: 'yesterday',
  inDays: 'in {0} day',
  nextWeek: 'next week',
  km: 'kilometers',
};
const RU = {
  de: 'немецкий',
  deAlt: 'немецкий (вариант)',
  ace: 'ачехский',
  DE: 'Германия',
  world: 'весь мир',
  chinese1: 'первый месяц',
  april: 'апреля',
  sunday: 'воскресенье',
  day: 'день',
  yesterday: 'вчера',
  inDays: 'через {0} день',
  nextWeek: 'на следующей неделе',
  km: 'километры',
};

function makeMain(dir: string): string {
  const main = join(dir, 'common', 'main');
  mkdirSync(main, { recursive: true });
  writeFileSync(join(main, 'en.xml'), ldml('<language type="en"/>', body(EN)));
  writeFileSync(join(main, 'ru.xml'), ldml('<language type="ru"/>', body(RU)));
  // a sub-locale folding into its parent's code, and root: nothing
  writeFileSync(join(main, 'ru_UA.xml'), ldml('<language type="ru"/><territory type="UA"/>', body({ ...RU, DE: 'ФРГ' })));
  writeFileSync(join(main, 'root.xml'), ldml('<language type="root"/>', body(EN)));
  return main;
}

async function read(file: string): Promise<[string, string][][]> {
  const problems: SourceProblem[] = [];
  const out = [];
  for await (const u of cldrMainReader.read(file, { onProblem: (p) => problems.push(p) })) out.push([...u.texts]);
  assert.deepEqual(problems, []);
  return out;
}

test('CLDR locale data: language and country names, Gregorian month and weekday, date fields and unit names paired with en.xml; alt forms, drafts, patterns and other calendars left out', async () => {
  const main = makeMain(join(tmp, 'a'));
  const ru = join(main, 'ru.xml');
  assert.ok(cldrMainReader.accepts(ru, readFileSync(ru).subarray(0, 4096)));
  const got = (await read(ru)).map((u) => `${u[0]![1]} = ${u[1]![1]}`);
  assert.deepEqual(got, [
    'German = немецкий',
    'Germany = Германия',
    'April = апреля',
    'Sunday = воскресенье',
    'day = день',
    'yesterday = вчера',
    'kilometers = километры',
  ]);
  assert.deepEqual(await read(join(main, 'ru_UA.xml')), [], 'a sub-locale folds into ru: nothing');
  assert.deepEqual(await read(join(main, 'root.xml')), []);
  assert.deepEqual(await read(join(main, 'en.xml')), []);
});

test('CLDR locale data: a folder without en.xml and a file without <identity> are errors; xling corpus writes the rows', async () => {
  const lone = join(tmp, 'b', 'main');
  mkdirSync(lone, { recursive: true });
  writeFileSync(join(lone, 'ru.xml'), ldml('<language type="ru"/>', body(RU)));
  await assert.rejects(read(join(lone, 'ru.xml')), /en\.xml: no such file/);
  writeFileSync(join(lone, 'xx.xml'), '<?xml version="1.0"?>\n<ldml><localeDisplayNames/></ldml>\n');
  await assert.rejects(read(join(lone, 'xx.xml')), /no <identity>/);

  const main = makeMain(join(tmp, 'c'));
  const out = join(tmp, 'cldr.tsv.gz');
  const built = await corpusRows([main], out);
  const s = built.summary;
  const problems = built.problems.map((p) => `${p.file}: ${p.message}`);
  assert.deepEqual(problems, []);
  const head = built.rows[0]!;
  assert.deepEqual(head.filter((h) => !h.startsWith('#')).sort(), ['en', 'ru']);
  const yesterday = built.rows.find((r) => r[head.indexOf('en')] === 'yesterday');
  assert.equal(yesterday?.[head.indexOf('ru')], 'вчера');
  assert.equal(s.rows, 7);
});

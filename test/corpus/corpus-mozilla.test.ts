// Mozilla language packs as translation sources (src/corpus/mozilla.ts), made here in the layout
// of Debian's firefox-esr and firefox-esr-l10n-kab unpacked into one tree: the English Fluent files
// in the application's two omni.ja archives, the Kabyle ones in the pack's XPI; terms resolved,
// variables and access keys left out, a damaged archive refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import AdmZip from 'adm-zip';
import { applicationArchives, mozillaLangpackReader, parseFluent, patternText } from '../../src/corpus/mozilla.js';
import { packageGroups } from '../../src/corpus/debian.js';
import type { SourceProblem } from '../../src/corpus/types.js';
import { corpusRows } from '../fixtures/corpus.js';

const tmp = mkdtempSync(join(tmpdir(), 'xling-corpus-mozilla-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
const APP = join(tmp, 'usr/lib/firefox-esr');

function zip(file: string, entries: Record<string, string>): string {
  const z = new AdmZip();
  for (const [name, text] of Object.entries(entries)) z.addFile(name, Buffer.from(text, 'utf8'));
  mkdirSync(join(file, '..'), { recursive: true });
  z.writeZip(file);
  return file;
}

zip(join(APP, 'omni.ja'), {
  'localization/en-US/toolkit/about.ftl': 'crash-title = Crash Reports\ndelete-confirm = Are you sure you want to delete them?\n',
});
zip(join(APP, 'browser/omni.ja'), {
  'localization/en-US/branding/brand.ftl': '-brand-short-name = Firefox\n-vendor = Mozilla\n',
  'localization/en-US/browser/tabs.ftl': [
    'close-tab = Close this tab now',
    'restart-note = { -brand-short-name } will restart to finish the update.',
    'tabs-count = You have { $count } open tabs in this window',
    'save-button =',
    '    .label = Save the page as a file',
    '    .accesskey = S',
    'untranslated = This text stays in English here',
    '',
  ].join('\n'),
});
const pack = zip(join(APP, 'browser/extensions/langpack-kab@firefox-esr.mozilla.org.xpi'), {
  'localization/kab/branding/brand.ftl': '-brand-short-name = Firefox\n',
  'localization/kab/browser/tabs.ftl': [
    'close-tab = Mdel iccer-agi tura',
    'restart-note = { -brand-short-name } ad yales asekker akken ad yemmed uleqqem.',
    'tabs-count = Tesεiḍ { $count } n waccaren yeldin deg usfaylu-agi',
    'save-button =',
    '    .label = Sekles asebter d afaylu',
    '    .accesskey = K',
    'untranslated = This text stays in English here',
    'this line { is not Fluent',
    '',
  ].join('\n'),
  'localization/kab/toolkit/about.ftl': 'crash-title = Ineqqisen n uɣelluy ara yettwaznen\n',
  'chrome/kab/locale/kab/global/intl.properties': 'general.useragent.locale=kab\n',
  // a locale ICU has no name for is read all the same (Songhai)
  'localization/son/toolkit/about.ftl': 'delete-confirm = War ga naŋ kaŋ war ga ŋey tuusu?\n',
});

test('Fluent patterns: plain text and terms read; variables make a message unreadable; access keys are not messages', () => {
  const f = parseFluent('-b = Firefox\na = { -b } is { "" }here\nb = { $n } tabs\nc =\n    .label = Open\n    .accesskey = O\n');
  assert.deepEqual([...f.messages.keys()], ['a', 'b', 'c.label']);
  assert.equal(patternText(f.messages.get('a')!, f.terms), 'Firefox is here');
  assert.equal(patternText(f.messages.get('b')!, f.terms), undefined);
  assert.deepEqual(applicationArchives(pack), [join(APP, 'browser/omni.ja'), join(APP, 'omni.ja')]);
  assert.ok(mozillaLangpackReader.accepts(pack, Buffer.from('PK\u0003\u0004', 'latin1')));
  assert.ok(!mozillaLangpackReader.accepts(join(APP, 'omni.ja'), Buffer.from('PK\u0003\u0004', 'latin1')));
});

test('a pack is paired with its application’s English by file and id; what did not parse is reported', async () => {
  const problems: SourceProblem[] = [];
  const units = [];
  for await (const u of mozillaLangpackReader.read(pack, { onProblem: (p) => problems.push(p) })) units.push([u.doc, ...u.texts.values()]);
  assert.deepEqual(units, [
    ['browser/tabs.ftl', 'Close this tab now', 'Mdel iccer-agi tura'],
    ['browser/tabs.ftl', 'Firefox will restart to finish the update.', 'Firefox ad yales asekker akken ad yemmed uleqqem.'],
    ['browser/tabs.ftl', 'Save the page as a file', 'Sekles asebter d afaylu'],
    ['toolkit/about.ftl', 'Crash Reports', 'Ineqqisen n uɣelluy ara yettwaznen'],
    ['toolkit/about.ftl', 'Are you sure you want to delete them?', 'War ga naŋ kaŋ war ga ŋey tuusu?'],
  ]);
  assert.equal(problems.length, 1);
  assert.match(problems[0]!.file, /langpack-kab@firefox-esr\.mozilla\.org\.xpi:localization\/kab\/browser\/tabs\.ftl$/);
  assert.match(problems[0]!.message, /1 entries that are not Fluent skipped/);
});

test('a damaged pack and a pack without its application are refused; the packages unpack into one tree', async () => {
  const bad = join(tmp, 'other/langpack-de@x.xpi');
  mkdirSync(join(bad, '..'), { recursive: true });
  writeFileSync(bad, Buffer.concat([Buffer.from('PK\u0003\u0004', 'latin1'), Buffer.alloc(40, 7)]));
  await assert.rejects(async () => {
    for await (const _ of mozillaLangpackReader.read(bad, { onProblem: () => {} }));
  }, /no omni\.ja of its application in the folders above it/);
  writeFileSync(join(tmp, 'other/omni.ja'), 'not a zip');
  await assert.rejects(async () => {
    for await (const _ of mozillaLangpackReader.read(bad, { onProblem: () => {} }));
  }, /other\/omni\.ja: not a readable zip archive/);
  rmSync(join(tmp, 'other'), { recursive: true });
  assert.deepEqual(
    [
      ...packageGroups([
        'firefox-esr',
        'firefox-esr-l10n-kab',
        'firefox-esr-l10n-hy-am',
        'thunderbird',
        'thunderbird-l10n-kab',
        'gimp-help-de',
        'gimp-help-en',
        'pidgin-data',
      ]),
    ],
    [
      ['firefox-esr', 'firefox-esr'],
      ['firefox-esr-l10n-kab', 'firefox-esr'],
      ['firefox-esr-l10n-hy-am', 'firefox-esr'],
      ['thunderbird', 'thunderbird'],
      ['thunderbird-l10n-kab', 'thunderbird'],
      ['gimp-help-de', 'gimp-help'],
      ['gimp-help-en', 'gimp-help'],
      ['pidgin-data', 'pidgin-data'],
    ],
  );
});

test('xling corpus over the tree: one N-way corpus of the pack’s messages', async () => {
  const built = await corpusRows([tmp], join(tmp, 'moz.tsv.gz'));
  assert.deepEqual(built.rows[0], ['en', 'kab', 'son', '#source']);
  const rows = new Map(built.rows.slice(1).map((r) => [r[0]!, r[1]!]));
  assert.equal(built.rows.find((r) => r[0] === 'Are you sure you want to delete them?')?.[2], 'War ga naŋ kaŋ war ga ŋey tuusu?');
  assert.equal(rows.get('Firefox will restart to finish the update.'), 'Firefox ad yales asekker akken ad yemmed uleqqem.');
  assert.equal(rows.get('Save the page as a file'), 'Sekles asebter d afaylu');
});

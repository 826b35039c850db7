// MediaWiki message files as translation sources (src/corpus/mediawiki.ts), made here in the
// layout of Debian's mediawiki package: the core's messages in languages/i18n, an extension's
// in its own i18n folder, a nested i18n folder (an API's messages).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanWikiMessage, mediawikiLanguage, mediawikiReader, messageEntries } from '../../src/corpus/mediawiki.js';
import type { SourceProblem } from '../../src/corpus/types.js';
import { corpusRows } from '../fixtures/corpus.js';

const tmp = mkdtempSync(join(tmpdir(), 'xling-corpus-mediawiki-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

const ROOT = join(tmp, 'usr/share/mediawiki');
function write(path: string, json: unknown): string {
  const file = join(ROOT, path);
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, typeof json === 'string' ? json : JSON.stringify(json, null, '\t'));
  return file;
}

const meta = { '@metadata': { authors: ['Someone'] } };
write('languages/i18n/en.json', {
  ...meta,
  'search-nonefound': 'There were no results matching the query.',
  'edit-conflict': 'Someone else has changed this page since you started editing it.',
  nchanges: '$1 {{PLURAL:$1|change|changes}}',
  'help-link': 'See [[Help:Contents|the help pages]] for more.',
  sidebar: '\n* navigation\n** mainpage|mainpage-description',
  'bold-note': "The page is '''protected''' from editing.",
  'only-en': 'A message nobody has translated yet.',
});
write('languages/i18n/qqq.json', { ...meta, 'search-nonefound': 'Shown when a search finds nothing.' });
const yi = write('languages/i18n/yi.json', {
  ...meta,
  'search-nonefound': 'ס׳זענען נישטא קיין רעזולטאטן וואס פאסן צו דער פראגע.',
  'edit-conflict': 'Someone else has changed this page since you started editing it.',
  nchanges: '$1 {{PLURAL:$1|ענדערונג|ענדערונגען}}',
  'help-link': 'זעט [[Help:Contents|די הילף בלעטער]].',
  'bold-note': "דער בלאט איז '''געשיצט''' פון רעדאקטירן.",
});
write('languages/i18n/kk-cyrl.json', { ...meta, 'search-nonefound': 'Сұранымға сәйкес нәтиже табылмады.' });
write('languages/i18n/kk-latn.json', { ...meta, 'search-nonefound': 'Suranımğa säykes nätïje tabılmadı.' });
write('languages/i18n/sr-el.json', { ...meta, 'search-nonefound': 'Nema rezultata koji odgovaraju upitu.' });
write('languages/i18n/de-formal.json', { ...meta, 'edit-conflict': 'Jemand anders hat diese Seite geändert, seit Sie mit der Bearbeitung begonnen haben.' });
write('extensions-core/Cite/i18n/en.json', { ...meta, 'cite-error': 'The reference has no text of its own.' });
write('extensions-core/Cite/i18n/kab.json', { ...meta, 'cite-error': 'Tamsisɣelt ur tesɛi ara aḍris-is.' });
write('extensions-core/Cite/i18n/api/en.json', { ...meta, 'apihelp-summary': 'Returns the references of a page.' });
write('extensions-core/Cite/i18n/api/ceb.json', { ...meta, 'apihelp-summary': 'Ibalik ang mga reperensiya sa usa ka panid.' });
write('extensions-core/Broken/i18n/en.json', { ...meta, 'broken-x': 'Something that breaks the folder.' });
write('extensions-core/Broken/i18n/war.json', '{"broken-x": "Usa nga butang", ');
write('extensions-core/NoEnglish/i18n/tl.json', { 'lonely-msg': 'Walang Ingles dito sa folder na ito.' });
write('resources/lib/i18n/de.json', { nested: { deep: { msg: 'Eine verschachtelte Meldung' } } });

test('MediaWiki codes to corpus codes: scripts the language is written in kept, other scripts, registers, regions and documentation left out', () => {
  const codes = [
    'en',
    'yi',
    'kab',
    'pt-br',
    'zh-hant',
    'zh-hk',
    'sr-ec',
    'sr-el',
    'kk-cyrl',
    'kk-latn',
    'ku-latn',
    'ku-arab',
    'ug-arab',
    'be-tarask',
    'de-formal',
    'de-at',
    'en-gb',
    'qqq',
    'qqx',
    'xx',
  ];
  assert.deepEqual(
    codes.map((c) => mediawikiLanguage(`i18n/${c}.json`)),
    [
      'en',
      'yi',
      'kab',
      'pt_br',
      'zh_tw',
      'zh_tw',
      'sr',
      'sr_latn',
      'kk',
      undefined,
      'ku',
      undefined,
      'ug',
      'be_tarask',
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ],
  );
  assert.equal(mediawikiLanguage('i18n/README.md'), undefined);
});

test('wikitext: parameters, templates, links and lists dropped; bold and italic quotes and HTML removed; nested keys joined', () => {
  assert.equal(cleanWikiMessage("The page is '''protected''' from ''editing''."), 'The page is protected from editing.');
  assert.equal(cleanWikiMessage('Read <strong>this</strong> first.'), 'Read this first.');
  for (const m of [
    '$1 changes',
    '{{PLURAL:$1|change|changes}}',
    'See [[Help:Contents]].',
    'Go to [https://example.org the site].',
    '* item',
    'a\n# list',
    '__NOTOC__ text',
  ])
    assert.equal(cleanWikiMessage(m), undefined, m);
  assert.deepEqual(
    [...messageEntries({ '@metadata': { authors: [] }, a: 'x', b: { c: 'y', d: ['z'] } })],
    [
      ['a', 'x'],
      ['b.c', 'y'],
    ],
  );
});

test('a file is paired with its folder’s en.json by key; untranslated and wikitext messages left out', async () => {
  const units = [];
  for await (const u of mediawikiReader.read(yi, { onProblem: () => {} })) units.push([...u.texts]);
  assert.deepEqual(units, [
    [
      ['en', 'There were no results matching the query.'],
      ['yi', 'ס׳זענען נישטא קיין רעזולטאטן וואס פאסן צו דער פראגע.'],
    ],
    [
      ['en', 'The page is protected from editing.'],
      ['yi', 'דער בלאט איז געשיצט פון רעדאקטירן.'],
    ],
  ]);
  assert.ok(mediawikiReader.accepts(yi, Buffer.from('{\n\t"@metadata"')));
  assert.ok(!mediawikiReader.accepts(yi, Buffer.from('[1, 2]')), 'a JSON array is no message file');
  assert.ok(!mediawikiReader.accepts(join(ROOT, 'languages/yi.json'), Buffer.from('{}')), 'outside an i18n folder');
});

test('xling corpus over the package tree: core, extensions and nested folders in one N-way corpus; a broken file and a folder without English reported', async () => {
  const built = await corpusRows([ROOT], join(tmp, 'mw.tsv.gz'));
  assert.deepEqual(built.rows[0], ['en', 'ceb', 'kab', 'kk', 'sr_latn', 'yi', '#source']);
  const rows = new Map(built.rows.slice(1).map((r) => [r[0]!, r.slice(1, 6)]));
  assert.deepEqual(rows.get('There were no results matching the query.'), [
    '',
    '',
    'Сұранымға сәйкес нәтиже табылмады.',
    'Nema rezultata koji odgovaraju upitu.',
    'ס׳זענען נישטא קיין רעזולטאטן וואס פאסן צו דער פראגע.',
  ]);
  assert.deepEqual(rows.get('The reference has no text of its own.'), ['', 'Tamsisɣelt ur tesɛi ara aḍris-is.', '', '', '']);
  assert.deepEqual(rows.get('Returns the references of a page.'), ['Ibalik ang mga reperensiya sa usa ka panid.', '', '', '', '']);
  assert.equal(built.rows.length - 1, 4);
  const problems = (re: RegExp): SourceProblem[] => built.problems.filter((p) => re.test(p.file));
  assert.equal(problems(/Broken.i18n.war\.json/).length, 1);
  assert.match(problems(/Broken.i18n.war\.json/)[0]!.message, /not a JSON message file/);
  assert.equal(problems(/NoEnglish/).length, 0, 'a folder without en.json is no MediaWiki folder: its files are not taken');
});

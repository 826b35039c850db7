// xling corpus: gettext catalogs (.po, .mo), cleaning, language codes, the N-way / pairs writer,
// the dev split, merging N-way TSVs, bad files reported and skipped, the CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { buildCorpus } from '../../src/corpus/build.js';
import { cleanMessage, sentences, stripAccelerators, stripMarkup } from '../../src/corpus/clean.js';
import { gettextReader, isNameCatalog } from '../../src/corpus/gettext.js';
import { normalizeLang } from '../../src/corpus/langs.js';
import { LANG_CODE, readNWayTsv } from '../../src/train-data/corpus.js';

const FIX = 'test/fixtures/corpus/gettext';
const CLI = 'dist/src/cli/main.js';
const tmp = mkdtempSync(join(tmpdir(), 'xling-corpus-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

async function units(file: string): Promise<[string, string][][]> {
  const out: [string, string][][] = [];
  const problems: string[] = [];
  for await (const u of gettextReader.read(file, { onProblem: (p) => problems.push(p.message) })) out.push([...u.texts]);
  assert.deepEqual(problems, []);
  return out;
}

function tsv(path: string): string[][] {
  const raw = readFileSync(path);
  const text = raw[0] === 0x1f && raw[1] === 0x8b ? gunzipSync(raw).toString('utf8') : raw.toString('utf8');
  return text
    .split('\n')
    .filter((l) => l)
    .map((l) => l.split('\t'));
}

test('language codes of catalogs, headers and CLDR normalised to the corpus codes', () => {
  const cases: [string, string | undefined][] = [
    ['pt_BR', 'pt_br'],
    ['pt-BR', 'pt_br'],
    ['zh_CN', 'zh'],
    ['zh_Hans', 'zh'],
    ['zh_TW', 'zh_tw'],
    ['zh_HK', 'zh_tw'],
    ['zh_Hant', 'zh_tw'],
    ['es_ES', 'es'],
    ['de_DE.UTF-8', 'de'],
    ['de_DE@euro', 'de'],
    ['sr@latin', 'sr_latn'],
    ['sr_Latn', 'sr_latn'],
    ['en_US', 'en'],
    ['en_GB', 'en_gb'],
    ['en@quot', 'en_quot'],
    ['ca@valencia', 'ca_valencia'],
    ['no', 'nb'],
    ['nb_NO', 'nb'],
    ['C', undefined],
    ['LC_MESSAGES', undefined],
    ['kok@roman', 'kok_roman'],
    ['kok_roman', 'kok_roman'],
    ['sr@ije', 'sr_ije'],
    ['sr@ijekavianlatin', 'sr_ijekavianlatin'],
    ['sr@averyveryverylongmodifier', undefined],
    ['uz_Cyrl', 'uz'],
    ['LC_MESSAGES', undefined],
  ];
  for (const [raw, want] of cases) assert.equal(normalizeLang(raw), want, raw);
  // every code normalises to itself
  for (const [, want] of cases) if (want) assert.equal(normalizeLang(want), want, want);
  // and every code it gives is one a corpus header may carry
  for (const [, want] of cases) if (want) assert.match(want, LANG_CODE);
});

test('cleaning: accelerators, markup, placeholders, whitespace', () => {
  assert.equal(stripAccelerators('_Open the file'), 'Open the file');
  assert.equal(stripAccelerators('Save &As…'), 'Save As…');
  assert.equal(stripAccelerators('ファイルを開く(_O)'), 'ファイルを開く');
  assert.equal(stripAccelerators('Re~name'), 'Rename');
  assert.equal(stripAccelerators('snake_case_name stays'), 'snake_case_name stays', 'two underscores: not an accelerator');
  assert.equal(stripAccelerators('Tom && Jerry'), 'Tom & Jerry');
  assert.equal(stripMarkup('<b>Save</b> the <span weight="bold">document</span>'), 'Save the document');
  assert.equal(stripMarkup('You see <color_red>blood</color> on the floor'), 'You see blood on the floor');
  assert.equal(stripMarkup('Hello <npcname>, how are you'), undefined, 'an unpaired unknown tag is a placeholder');
  for (const p of ['%s files', '%d items', '%1$s and %2$s', '%(name)s left', 'Hello {0}', 'Hello {name}', 'Path $HOME here', 'a %.2f ratio'])
    assert.equal(cleanMessage(p), undefined, p);
  assert.equal(cleanMessage('100% sure of it'), '100% sure of it');
  assert.equal(cleanMessage('Line one\nline  two&amp;three'), 'Line one line two&three');
  assert.deepEqual(sentences('The door is locked. You need a key.', 'en'), ['The door is locked.', 'You need a key.']);
  assert.deepEqual(sentences('ドアには鍵がかかっている。鍵が必要だ。', 'ja'), ['ドアには鍵がかかっている。', '鍵が必要だ。']);
});

test('a .po catalog: plural forms, contexts, fuzzy, obsolete and untranslated entries, markup, accelerators, placeholders', async () => {
  const got = await units(`${FIX}/po/de.po`);
  assert.deepEqual(got, [
    [
      ['en', 'Open the file'],
      ['de', 'Datei öffnen'],
    ],
    [
      ['en', 'Save the document now'],
      ['de', 'Das Dokument jetzt speichern'],
    ],
    [
      ['en', 'The door is locked. You need a key.'],
      ['de', 'Die Tür ist verschlossen. Du brauchst einen Schlüssel.'],
    ],
    [
      ['en', 'One apple is on the table'],
      ['de', 'Ein Apfel liegt auf dem Tisch'],
    ],
    [
      ['en', 'Many apples are on the table'],
      ['de', 'Viele Äpfel liegen auf dem Tisch'],
    ],
    [
      ['en', 'Where is the station?'],
      ['de', 'Wo ist der Bahnhof?'],
    ], // msgctxt greeting
    [
      ['en', 'Where is the station?'],
      ['de', 'Wo ist der Bahnhof?'],
    ], // msgctxt question
  ]);
});

test('a .mo catalog (msgfmt) reads as its .po; the language from the path; one-form plurals pair the singular', async () => {
  const got = await units(`${FIX}/locale/ja/LC_MESSAGES/demo.mo`);
  const sorted = got.map((u) => JSON.stringify(u)).sort();
  assert.deepEqual(
    sorted,
    [
      [
        ['en', 'One apple is on the table'],
        ['ja', 'テーブルの上にリンゴがある'],
      ],
      [
        ['en', 'Open the file'],
        ['ja', 'ファイルを開く'],
      ],
      [
        ['en', 'The door is locked. You need a key.'],
        ['ja', 'ドアには鍵がかかっている。鍵が必要だ。'],
      ],
      [
        ['en', 'Where is the station?'],
        ['ja', '駅はどこですか？'],
      ],
    ]
      .map((u) => JSON.stringify(u))
      .sort(),
  );
});

test("iso-codes' lists of names (countries, languages, currencies) are phrases: one-word names kept; its subdivisions and other catalogs keep the message rule", async () => {
  assert.ok(isNameCatalog('/usr/share/locale/de/LC_MESSAGES/iso_3166-1.mo'));
  assert.ok(isNameCatalog('iso-codes/iso_4217/de.po'));
  assert.ok(!isNameCatalog('/usr/share/locale/de/LC_MESSAGES/iso_3166-2.mo'));
  assert.ok(!isNameCatalog('/usr/share/locale/de/LC_MESSAGES/iso_639-3.mo'));
  assert.ok(!isNameCatalog('/usr/share/locale/de/LC_MESSAGES/gramps.mo'));
  const root = join(tmp, 'iso');
  const po = (entries: [string, string][]) =>
    'msgid ""\nmsgstr "Language: kk\\nContent-Type: text/plain; charset=UTF-8\\n"\n\n' + entries.map(([a, b]) => `msgid "${a}"\nmsgstr "${b}"\n`).join('\n');
  for (const [domain, entries] of [
    [
      'iso_3166-1',
      [
        ['Germany', 'Германия'],
        ['United Kingdom', 'Ұлыбритания'],
      ],
    ],
    ['iso_3166-2', [['Bavaria', 'Бавария']]],
    [
      'app',
      [
        ['Open', 'Ашу'],
        ['Open the file', 'Файлды ашу'],
      ],
    ],
  ] as [string, [string, string][]][]) {
    mkdirSync(join(root, domain), { recursive: true });
    writeFileSync(join(root, domain, 'kk.po'), po(entries));
  }
  const out = join(tmp, 'iso.tsv');
  await buildCorpus({ sources: [root], out, quiet: true, minLangRows: 1 });
  assert.deepEqual(
    tsv(out)
      .slice(1)
      .map((r) => `${r[0]}=${r[1]}`)
      .sort(),
    ['Germany=Германия', 'Open the file=Файлды ашу', 'United Kingdom=Ұлыбритания'],
  );
});

test('bad catalogs are reported and skipped; the run goes on', async () => {
  const dir = join(tmp, 'bad');
  cpSync(FIX, dir, { recursive: true });
  writeFileSync(join(dir, 'po', 'it.po'), 'msgid "unterminated\nmsgstr "x"\n');
  mkdirSync(join(dir, 'locale', 'ru', 'LC_MESSAGES'), { recursive: true });
  const mo = readFileSync(`${FIX}/locale/ja/LC_MESSAGES/demo.mo`);
  writeFileSync(join(dir, 'locale', 'ru', 'LC_MESSAGES', 'demo.mo'), mo.subarray(0, 40)); // truncated
  writeFileSync(
    join(dir, 'po', 'nolang.po'),
    'msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\nmsgid "A string without a language"\nmsgstr "Eine Zeichenkette"\n',
  );
  const problems: string[] = [];
  const s = await buildCorpus({
    sources: [dir],
    out: join(tmp, 'bad.tsv'),
    quiet: true,
    minLangRows: 1,
    onProblem: (p) => problems.push(`${p.file}: ${p.message}`),
  });
  assert.equal(problems.length, 3, problems.join('\n'));
  assert.ok(
    problems.some((p) => /it\.po.*gettext catalog/.test(p)),
    problems.join('\n'),
  );
  assert.ok(
    problems.some((p) => /ru\/LC_MESSAGES\/demo\.mo/.test(p)),
    problems.join('\n'),
  );
  assert.ok(
    problems.some((p) => /nolang\.po.*no language/.test(p)),
    problems.join('\n'),
  );
  assert.deepEqual(s.langs, ['en', 'de', 'fr', 'ja']);
  assert.ok(s.rows > 0);
});

test('N-way TSV through English: grouped by the English text, sentences split where every language agrees, the most frequent translation, #source', async () => {
  const out = join(tmp, 'c.tsv.gz');
  const s = await buildCorpus({ sources: [FIX], out, quiet: true, minLangRows: 1 });
  const rows = tsv(out);
  assert.deepEqual(rows[0], ['en', 'de', 'fr', 'ja', '#source']);
  const byEn = new Map(rows.slice(1).map((r) => [r[0]!, r]));
  const src = 'gettext'; // a folder's provenance: its name (a package's, when it is an extracted package)
  assert.deepEqual(byEn.get('Open the file'), ['Open the file', 'Datei öffnen', 'Ouvrir le fichier', 'ファイルを開く', src]);
  assert.deepEqual(byEn.get('Where is the station?'), ['Where is the station?', 'Wo ist der Bahnhof?', 'Où est la gare ?', '駅はどこですか？', src]);
  // two sentences in every language: two rows
  assert.deepEqual(byEn.get('The door is locked.'), [
    'The door is locked.',
    'Die Tür ist verschlossen.',
    'La porte est fermée à clé.',
    'ドアには鍵がかかっている。',
    src,
  ]);
  assert.deepEqual(byEn.get('You need a key.'), ['You need a key.', 'Du brauchst einen Schlüssel.', 'Il te faut une clé.', '鍵が必要だ。', src]);
  assert.equal(byEn.has('The door is locked. You need a key.'), false);
  assert.deepEqual(byEn.get('Many apples are on the table'), ['Many apples are on the table', 'Viele Äpfel liegen auf dem Tisch', '', '', src]);
  assert.equal(rows.length - 1, s.rows);
  assert.equal(s.rows, 7);
  assert.equal(s.bySource[src]!['ja'], 5);
  // the trainer's reader takes it (#source is not a language)
  const it = readNWayTsv(out);
  let n = 0;
  let r = await it.next();
  while (!r.done) {
    n++;
    assert.equal(r.value.cells.has('#source'), false);
    r = await it.next();
  }
  assert.deepEqual(r.value.langs, ['en', 'de', 'fr', 'ja']);
  assert.equal(n, 7);
});

test('pairs format; merging an N-way TSV with a catalog; dev rows held out by document never occur in training', async () => {
  const out = join(tmp, 'p.tsv');
  await buildCorpus({ sources: [`${FIX}/po`], out, format: 'pairs', quiet: true, minLangRows: 1 });
  const rows = tsv(out);
  assert.deepEqual(rows[0], ['lang1', 'lang2', 'text1', 'text2', '#source']);
  assert.ok(rows.some((r) => r[0] === 'en' && r[1] === 'de' && r[2] === 'Open the file' && r[3] === 'Datei öffnen'));
  assert.ok(
    rows.every((r, i) => i === 0 || r[0] === 'en' || r[1] === 'en'),
    'through English',
  );

  // an N-way TSV merged with the catalogs: a row of the TSV and a catalog entry with the same English text become one row
  const extra = join(tmp, 'extra.tsv');
  writeFileSync(
    extra,
    'en\tit\tsr_ije\t#source\nOpen the file\tApri il file\t\tmine\nA row of its own here\tUna riga tutta sua\t\tmine\nDog\tCane\tPas\tmine\nFirst one. Then two.\tPrima uno. Poi due.\t\tmine\n',
  );
  const merged = join(tmp, 'm.tsv');
  await buildCorpus({ sources: [extra, `${FIX}/po`], out: merged, quiet: true, minLangRows: 1 });
  const m = tsv(merged);
  assert.deepEqual(m[0], ['en', 'de', 'fr', 'it', 'sr_ije', '#source']);
  // a built corpus's rows are taken as they are: a one-word row kept, a two-sentence row not split again
  assert.deepEqual(
    m.find((r) => r[0] === 'Dog'),
    ['Dog', '', '', 'Cane', 'Pas', 'extra.tsv'],
  );
  assert.ok(m.some((r) => r[0] === 'First one. Then two.' && r[3] === 'Prima uno. Poi due.'));
  assert.deepEqual(
    m.find((r) => r[0] === 'Open the file'),
    ['Open the file', 'Datei öffnen', 'Ouvrir le fichier', 'Apri il file', '', 'extra.tsv,po'],
  );

  // dev: a document (the message's program file) is held out whole, in every language
  const dev = join(tmp, 'dev.tsv'),
    train = join(tmp, 'train.tsv');
  const s = await buildCorpus({ sources: [FIX], out: train, devOut: dev, devFraction: 0.5, quiet: true, minLangRows: 1 });
  const d = tsv(dev),
    t = tsv(train);
  assert.ok(s.devRows > 0 && s.rows > 0, `dev ${s.devRows}, train ${s.rows}`);
  const trainTexts = new Set(
    t.slice(1).flatMap((r) =>
      r
        .slice(0, -1)
        .filter((c) => c)
        .map((c) => c.toLowerCase()),
    ),
  );
  for (const r of d.slice(1)) for (const c of r.slice(0, -1)) if (c) assert.equal(trainTexts.has(c.toLowerCase()), false, c);
  assert.equal(d.length - 1 + t.length - 1, 7);
});

test('xling corpus: summary, --stats, usage and input errors with no output', () => {
  const out = join(tmp, 'cli.tsv'),
    stats = join(tmp, 'cli.json');
  const r = spawnSync(process.execPath, [CLI, 'corpus', FIX, '-o', out, '--stats', stats, '--min-lang-rows', '1', '--quiet'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /\[corpus\] 3 files, \d+ units → 7 rows, 4 languages/);
  const js = JSON.parse(readFileSync(stats, 'utf8')) as { rows: number; langs: string[] };
  assert.equal(js.rows, 7);
  assert.deepEqual(js.langs, ['en', 'de', 'fr', 'ja']);
  for (const [args, code, re] of [
    [['corpus', '-o', join(tmp, 'x.tsv')], 2, /give at least one SOURCE/],
    [['corpus', join(tmp, 'missing'), '-o', join(tmp, 'x.tsv')], 1, /missing: no such file or folder/],
    [['corpus', FIX, '-o', join(tmp, 'x.tsv'), '--dev-fraction', '0.1'], 2, /--dev-fraction needs --dev-out/],
    [['corpus', FIX, '-o', join(tmp, 'x.tsv'), '--format', 'csv'], 2, /--format/],
    [['corpus', '--debian', 'Not_A_Package', '-o', join(tmp, 'x.tsv')], 1, /not a Debian package name/],
  ] as const) {
    const e = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
    assert.equal(e.status, code, `${args.join(' ')}: ${e.stderr}`);
    assert.match(e.stderr, re);
    assert.equal(existsSync(join(tmp, 'x.tsv')), false);
  }
});

test('the general harvest names no held-out package', () => {
  const list = ['configs/general-corpus.txt', 'configs/everyday-corpus.txt']
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n')
    .split('\n')
    .map((l) => l.replace(/#.*/, '').trim())
    .filter((l) => l);
  const shared = [
    'apt',
    'aptitude-common',
    'cinnamon-l10n',
    'coreutils',
    'debconf-i18n',
    'diffutils',
    'dpkg',
    'e2fsprogs-l10n',
    'evolution-data-server-common',
    'findutils',
    'freeciv-data',
    'gcc-12-locales',
    'gedit-common',
    'gettext',
    'gimp',
    'gimp-data',
    'git-man',
    'gnome-control-center-data',
    'gnucash-common',
    'gnupg-l10n',
    'grep',
    'inkscape',
    'kdevelop-l10n',
    'krita-l10n',
    'libc-l10n',
    'libosinfo-l10n',
    'libvirt-l10n',
    'make',
    'minetest-data',
    'nano',
    'nautilus-data',
    'sed',
    'supertuxkart-data',
    'tar',
    'util-linux-locales',
    'vim-runtime',
    'vlc-l10n',
    'warzone2100-data',
    'wget',
    'widelands-data',
    'xfce4-session',
    'wesnoth-data',
    'freedroidrpg-data',
  ];
  assert.ok(list.length >= 5);
  for (const spec of list) {
    const p = spec.replace(/:.*$/, '');
    assert.equal(shared.includes(p), false, p);
    assert.equal(p.startsWith('libreoffice-l10n-'), false, p);
    assert.match(p, /^[a-z0-9][a-z0-9+.-]+$/);
  }
});

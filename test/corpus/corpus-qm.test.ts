// Qt .qm files as translation sources (src/corpus/qm.ts). The fixtures in
// test/fixtures/corpus-qm/ were written by GNU msgfmt --qt from the .po files beside them (an
// independent writer of the format); the faulty files are cut or patched from them here, and the
// two shapes msgfmt does not write (numerus forms, a stripped file) are assembled field by field.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseQm, QM_MAGIC, qmLanguage, qmReader } from '../../src/corpus/qm.js';
import type { SourceProblem } from '../../src/corpus/types.js';
import { corpusRows } from '../fixtures/corpus.js';

const FIX = 'test/fixtures/corpus-qm';
const tmp = mkdtempSync(join(tmpdir(), 'xling-corpus-qm-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

async function read(file: string): Promise<{ units: { texts: [string, string][]; doc?: string; kind: string }[]; problems: SourceProblem[] }> {
  const problems: SourceProblem[] = [];
  const units = [];
  for await (const u of qmReader.read(file, { onProblem: (p) => problems.push(p) })) units.push({ texts: [...u.texts], doc: u.doc, kind: u.kind });
  return { units, problems };
}

/** A .qm file assembled from message fields (tag, payload), for the shapes msgfmt does not write. */
function assemble(messages: [number, Buffer | null][][]): Buffer {
  const parts: Buffer[] = [];
  for (const m of messages) {
    for (const [tag, data] of m) {
      if (tag === 5) {
        parts.push(Buffer.from([tag]), data!);
        continue;
      } // obsolete field: four bytes, no length
      const len = Buffer.alloc(4);
      len.writeUInt32BE(data === null ? 0xffffffff : data.length);
      parts.push(Buffer.from([tag]), len, data ?? Buffer.alloc(0));
    }
    parts.push(Buffer.from([1]));
  }
  const body = Buffer.concat(parts);
  const head = Buffer.alloc(5);
  head[0] = 0x69;
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([QM_MAGIC, head, body]);
}
const u16 = (s: string): Buffer => Buffer.from(s, 'utf16le').swap16();

test('a .qm file written by msgfmt --qt: source texts paired with translations, markup and accelerators removed, placeholders dropped', async () => {
  const { units, problems } = await read(join(FIX, 'app_de.qm'));
  assert.deepEqual(problems, []);
  const got = units.map((u) => JSON.stringify(u)).sort();
  assert.deepEqual(
    got,
    [
      {
        texts: [
          ['en', 'Where is the station?'],
          ['de', 'Wo ist der Bahnhof?'],
        ],
        doc: 'TravelDialog',
        kind: 'message',
      },
      {
        texts: [
          ['en', 'Open the file now'],
          ['de', 'Die Datei jetzt öffnen'],
        ],
        doc: 'MainWindow',
        kind: 'message',
      },
      // no context: one of 1,000 slices by the English text (the same in every language)
      {
        texts: [
          ['en', 'Tom wants to sing with us.'],
          ['de', 'Tom möchte mit uns singen.'],
        ],
        doc: units.find((u) => u.texts[0]![1].startsWith('Tom'))!.doc,
        kind: 'message',
      },
    ]
      .map((u) => JSON.stringify(u))
      .sort(),
  );
  assert.match(units.find((u) => u.texts[0]![1].startsWith('Tom'))!.doc!, /^#\d+$/);
  // the same English text without a context has the same document in another language's file
  const zh = await read(join(FIX, 'zh_TW.qm'));
  assert.deepEqual(
    zh.units.map((u) => u.texts),
    [
      [
        ['en', 'Where is the station?'],
        ['zh_tw', '車站在哪裡？'],
      ],
    ],
  );
});

test('.qm languages: the Language section, else the file name; English variants give nothing', async () => {
  assert.equal(qmLanguage('/x/gcompris_zh_TW.qm'), 'zh_tw');
  assert.equal(qmLanguage('/x/stellarium/pt_BR.qm'), 'pt_br');
  assert.equal(qmLanguage('/x/app-sr@latin.qm'), 'sr_latn');
  assert.equal(qmLanguage('/x/app_de.qm'), 'de');
  assert.equal(qmLanguage('/x/qt_pt_BR.qm'), 'pt_br');
  assert.equal(qmLanguage('/x/en_GB.qm'), 'en_gb');
  assert.equal(qmLanguage('/x/ca@valencia.qm'), 'ca_valencia');
  assert.equal(qmLanguage('/x/app_de.qm', 'fr_FR'), 'fr');
  assert.equal(qmLanguage('/x/translations.qm'), undefined);
  assert.deepEqual((await read(join(FIX, 'en_GB.qm'))).units, []);
  const noLang = join(tmp, 'translations.qm');
  copyFileSync(join(FIX, 'zh_TW.qm'), noLang);
  await assert.rejects(read(noLang), /translations\.qm: no language/);
});

test('numerus messages are left out; a message without a translation is skipped', async () => {
  const file = join(tmp, 'app_fr.qm');
  writeFileSync(
    file,
    assemble([
      [
        [6, Buffer.from('You have one new message')],
        [3, u16('Vous avez un nouveau message')],
        [3, u16('Vous avez des nouveaux messages')],
      ],
      [
        [6, Buffer.from('Nothing here yet')],
        [3, null],
      ],
      [
        [7, Buffer.from('Dialog')],
        [6, Buffer.from('Close the window')],
        [8, Buffer.from('a button')],
        [5, Buffer.alloc(4)],
        [3, u16('Fermer la fenêtre')],
      ],
    ]),
  );
  const { units } = await read(file);
  assert.deepEqual(units, [
    {
      texts: [
        ['en', 'Close the window'],
        ['fr', 'Fermer la fenêtre'],
      ],
      doc: 'Dialog',
      kind: 'message',
    },
  ]);
});

test('bad .qm files are errors naming the file and the byte; a stripped file is refused; the corpus run goes on', async () => {
  const good = readFileSync(join(FIX, 'app_de.qm'));
  const cut = join(tmp, 'cut_de.qm');
  writeFileSync(cut, good.subarray(0, good.length - 40));
  await assert.rejects(read(cut), /cut_de\.qm: section 0x69 at byte \d+ runs past the end of the file/);
  const magic = join(tmp, 'magic_de.qm');
  writeFileSync(magic, Buffer.concat([Buffer.from('not a qm file at all'), good.subarray(20)]));
  assert.equal(qmReader.accepts(magic, readFileSync(magic)), false);
  await assert.rejects(read(magic), /magic_de\.qm: not a Qt \.qm file/);
  const unknown = join(tmp, 'tag_de.qm');
  writeFileSync(
    unknown,
    assemble([
      [
        [6, Buffer.from('Hello there, friend')],
        [42, Buffer.alloc(0)],
      ],
    ]),
  );
  await assert.rejects(read(unknown), /tag_de\.qm: unknown message field tag 42 at byte 45/);
  const long = join(tmp, 'long_de.qm');
  const l = assemble([
    [
      [6, Buffer.from('Hello there, friend')],
      [3, u16('Hallo, mein Freund')],
    ],
  ]);
  l.writeUInt32BE(0x7fffffff, 21 + 1 + 4 + 19 + 1);
  writeFileSync(long, l);
  await assert.rejects(read(long), /long_de\.qm: message field at byte \d+ runs past its section/);
  const stripped = join(tmp, 'stripped_de.qm');
  writeFileSync(stripped, assemble([[[3, u16('Hallo')]], [[3, u16('Tschüss')]]]));
  await assert.rejects(read(stripped), /stripped_de\.qm: its 2 messages keep no source text/);
  assert.deepEqual(parseQm('x.qm', QM_MAGIC).messages, []);

  // through the corpus builder: the good files give their rows, the bad one is reported
  const dir = join(tmp, 'tree');
  mkdirSync(dir);
  for (const f of ['app_de.qm', 'zh_TW.qm', 'en_GB.qm']) copyFileSync(join(FIX, f), join(dir, f));
  copyFileSync(cut, join(dir, 'cut_de.qm'));
  const out = join(tmp, 'qm.tsv.gz');
  const built = await corpusRows([dir], out);
  const s = built.summary;
  const problems = built.problems.map((p) => `${p.file}: ${p.message}`);
  assert.equal(problems.length, 1, problems.join('\n'));
  assert.match(problems[0]!, /cut_de\.qm/);
  const head = built.rows[0]!;
  assert.deepEqual(head.filter((h) => !h.startsWith('#')).sort(), ['de', 'en', 'zh_tw']);
  const station = built.rows.find((r) => r[head.indexOf('en')] === 'Where is the station?');
  assert.ok(station, built.rows.map((r) => r.join('\t')).join('\n'));
  assert.equal(station[head.indexOf('de')], 'Wo ist der Bahnhof?');
  assert.equal(station[head.indexOf('zh_tw')], '車站在哪裡？');
  assert.equal(s.rows, 3);
});

// The corpus readers of translation files: TMX, XLIFF 1.2 and 2.0, Moses two-file corpora and CLDR
// annotations, on small fixtures (test/fixtures/corpus/) whose units are asserted exactly, bad
// files refused with the file and line named, and a large TMX read in bounded memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import { once } from 'node:events';
import type { SourceProblem, SourceReader, TranslationUnit } from '../../src/corpus/types.js';
import { tmxReader } from '../../src/corpus/tmx.js';
import { xliffReader } from '../../src/corpus/xliff.js';
import { mosesReader } from '../../src/corpus/moses.js';
import { cldrReader, cldrLang } from '../../src/corpus/cldr.js';
import { readHead, rootElement } from '../../src/corpus/xml.js';

const FIX = path.join(process.cwd(), 'test', 'fixtures', 'corpus');
const fx = (...p: string[]): string => path.join(FIX, ...p);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'xling-corpus-formats-'));
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));
const t = (...p: string[]): string => path.join(tmp, ...p);

interface Plain {
  texts: Record<string, string>;
  source: string;
  doc?: string;
  kind: string;
}
const plain = (u: TranslationUnit): Plain => ({ texts: Object.fromEntries(u.texts), source: u.source, doc: u.doc, kind: u.kind });

async function readAll(reader: SourceReader, file: string, source?: string): Promise<{ units: Plain[]; problems: SourceProblem[] }> {
  const problems: SourceProblem[] = [];
  const units: Plain[] = [];
  for await (const u of reader.read(file, { source, onProblem: (p) => problems.push(p) })) units.push(plain(u));
  return { units, problems };
}

async function refused(reader: SourceReader, file: string, re: RegExp): Promise<void> {
  await assert.rejects(readAll(reader, file), (e: Error) => {
    assert.match(e.message, re);
    return true;
  });
}

const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

test('TMX: units of three languages, inline codes dropped, <hi> kept, entities decoded, problems reported', async () => {
  const file = fx('sample.tmx');
  const { units, problems } = await readAll(tmxReader, file);
  const u = (texts: Record<string, string>): Plain => ({ texts, source: file, doc: file, kind: 'prose' });
  assert.deepEqual(units, [
    u({ en: 'Fish & chips <3 café ☺', de: 'Fisch & Pommes <3 Café ☺', fr: 'Poisson-frites "maison"' }),
    u({ en: 'Press Save now.', de: 'Jetzt Speichern drücken.', fr: 'Appuyez sur Enregistrer.' }),
    u({ en: 'Old <lang> attribute', pt_br: 'Atributo antigo' }),
    // tu 6 (en-US and en-GB only) is English alone; tu 7's EN-GB stands for English; tu 8 has one translated text
    u({ en: 'The Council shall act unanimously.', es: 'El Consejo se pronunciará por unanimidad.', zh_tw: '理事會應一致行動。' }),
  ]);
  assert.deepEqual(problems, [
    { file, line: 23, message: 'a <tu> with one <tuv>; skipped' },
    { file, line: 28, message: 'a <tuv> without xml:lang; its <tu> skipped' },
  ]);
  // the order of the languages is the file's
  assert.deepEqual(Object.keys(units[0]!.texts), ['en', 'de', 'fr']);
  // provenance given by the caller
  const named = await readAll(tmxReader, file, 'pkg-1.0');
  assert.equal(named.units[0]!.source, 'pkg-1.0');
  assert.equal(named.units[0]!.doc, file);
});

test('TMX: a fault repeated in every <tu> is reported ten times, then counted once', async () => {
  const file = t('mono.tmx');
  const tus = Array.from({ length: 25 }, (_, i) => `<tu><tuv xml:lang="en"><seg>Line ${i}</seg></tuv></tu>`).join('\n');
  fs.writeFileSync(
    file,
    `<tmx version="1.4"><header/><body>\n${tus}\n<tu><tuv xml:lang="en"><seg>a</seg></tuv><tuv xml:lang="x-none"><seg>b</seg></tuv></tu>\n</body></tmx>\n`,
  );
  const { units, problems } = await readAll(tmxReader, file);
  assert.deepEqual(units, []);
  assert.deepEqual(problems, [
    ...Array.from({ length: 10 }, (_, i) => ({ file, line: i + 2, message: 'a <tu> with one <tuv>; skipped' })),
    { file, line: 27, message: 'a <tuv> with xml:lang="x-none", not a language code; its <tu> skipped' },
    { file, message: '15 more like the above (one variant) not reported one by one' },
  ]);
});

test('TMX: gzip and UTF-16 files read the same units', async () => {
  const file = fx('sample.tmx');
  const want = (await readAll(tmxReader, file)).units.map((u) => u.texts);
  const gz = t('sample.tmx.gz');
  fs.writeFileSync(gz, gzipSync(fs.readFileSync(file)));
  assert.deepEqual(
    (await readAll(tmxReader, gz)).units.map((u) => u.texts),
    want,
  );
  const utf16 = t('utf16.tmx');
  const text = fs.readFileSync(file, 'utf8').replace('encoding="UTF-8"', 'encoding="UTF-16"');
  fs.writeFileSync(utf16, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]));
  assert.deepEqual(
    (await readAll(tmxReader, utf16)).units.map((u) => u.texts),
    want,
  );
  assert.equal(rootElement(readHead(utf16)), 'tmx');
  // a declaration saying UTF-16 over UTF-8 bytes (no BOM) is read as UTF-8
  const mislabelled = t('mislabelled.tmx');
  fs.writeFileSync(mislabelled, text);
  assert.deepEqual(
    (await readAll(tmxReader, mislabelled)).units.map((u) => u.texts),
    want,
  );
});

test('XLIFF 1.2: trans-units with targets, <g>/<mrk> text kept, codes dropped, alt-trans and untranslated skipped', async () => {
  const file = fx('sample12.xlf');
  const { units, problems } = await readAll(xliffReader, file);
  assert.deepEqual(units, [
    { texts: { en: 'Open the file…', de: 'Die Datei öffnen…' }, source: file, doc: `${file}#ui/strings.properties`, kind: 'prose' },
    { texts: { en: 'Click here & wait.', de: 'Klicken Sie hier & warten Sie.' }, source: file, doc: `${file}#ui/strings.properties`, kind: 'prose' },
    { texts: { en: 'Help', zh_tw: '說明' }, source: file, doc: `${file}#help.html`, kind: 'prose' },
  ]);
  assert.deepEqual(problems, [{ file, line: 27, message: 'a <trans-unit> without <source>; skipped' }]);
});

test('XLIFF 2.0: a unit per segment, <pc>/<mrk> text kept, <ph/>/<sc/>/<ec/> and originalData dropped, translate="no" skipped', async () => {
  const file = fx('sample20.xlf');
  const { units, problems } = await readAll(xliffReader, file);
  const doc = `${file}#app/messages.json`;
  assert.deepEqual(units, [
    { texts: { en: 'You have  new messages.', fr: 'Vous avez  nouveaux messages.' }, source: file, doc, kind: 'prose' },
    { texts: { en: 'Open settings now.', fr: 'Ouvrez les paramètres maintenant.' }, source: file, doc, kind: 'prose' },
    { texts: { en: 'Quit & save', fr: 'Quitter & enregistrer' }, source: file, doc, kind: 'prose' },
  ]);
  assert.deepEqual(problems, []);
});

test('XLIFF: a target in no language, a bad language code and a missing source-language are errors naming the file and line', async () => {
  const noTrg = t('no-trg.xlf');
  fs.writeFileSync(
    noTrg,
    '<xliff version="1.2">\n<file original="a" source-language="en">\n<body>\n<trans-unit id="1">\n<source>A</source>\n<target>B</target>\n</trans-unit>\n</body>\n</file>\n</xliff>\n',
  );
  await refused(xliffReader, noTrg, new RegExp(`^${esc(noTrg)}:6: a <target> in no language`));
  const badLang = t('bad-lang.xlf');
  fs.writeFileSync(badLang, '<xliff version="2.0" srcLang="en" trgLang="not a code">\n<file id="f"/>\n</xliff>\n');
  await refused(xliffReader, badLang, new RegExp(`^${esc(badLang)}:1: <xliff trgLang="not a code">: not a language code`));
  const noSrc = t('no-src.xlf');
  fs.writeFileSync(noSrc, '<xliff version="1.2">\n<file original="a" target-language="de"/>\n</xliff>\n');
  await refused(xliffReader, noSrc, new RegExp(`^${esc(noSrc)}:2: <file> has no source-language`));
  const notXliff = t('other.xlf');
  fs.writeFileSync(notXliff, '<?xml version="1.0"?>\n<html><body/></html>\n');
  await refused(xliffReader, notXliff, new RegExp(`^${esc(notXliff)}:2: not an XLIFF file`));
});

test('Moses: NAME.L1-L2 pairs and NAME.L1/NAME.L2 sets read once, from the first language, line by line', async () => {
  const de = fx('moses', 'books.de-en.de'),
    en = fx('moses', 'books.de-en.en');
  assert.equal(mosesReader.accepts(de, readHead(de)), true);
  assert.equal(mosesReader.accepts(en, readHead(en)), false); // read with books.de-en.de
  const { units, problems } = await readAll(mosesReader, de);
  const doc = fx('moses', 'books.de-en');
  assert.deepEqual(units, [
    { texts: { de: 'Guten Morgen.', en: 'Good morning.' }, source: de, doc, kind: 'prose' },
    { texts: { de: 'Das Haus ist klein.', en: 'The house is small.' }, source: de, doc, kind: 'prose' },
  ]);
  assert.deepEqual(problems, []);
  assert.deepEqual((await readAll(mosesReader, en)).units, []);

  const talks = fx('moses', 'talks.en');
  assert.equal(mosesReader.accepts(talks, readHead(talks)), true);
  assert.equal(mosesReader.accepts(fx('moses', 'talks.fr'), readHead(fx('moses', 'talks.fr'))), false);
  const three = await readAll(mosesReader, talks, 'ted');
  assert.deepEqual(three.units, [
    { texts: { en: 'Hello', fr: 'Bonjour', pt_br: 'Olá' }, source: 'ted', doc: fx('moses', 'talks'), kind: 'prose' },
    { texts: { en: 'Thank you', fr: 'Merci', pt_br: 'Obrigado' }, source: 'ted', doc: fx('moses', 'talks'), kind: 'prose' },
  ]);

  // names that are not a set: one file alone, extensions that are not ISO 639-1 codes
  fs.writeFileSync(t('alone.de-en.de'), 'x\n');
  fs.writeFileSync(t('notes.txt'), 'x\n');
  fs.writeFileSync(t('notes.csv'), 'x\n');
  for (const f of ['alone.de-en.de', 'notes.txt', 'notes.csv']) assert.equal(mosesReader.accepts(t(f), readHead(t(f))), false, f);
});

test('Moses: gzip members, mismatched line counts and invalid UTF-8 refused naming the files', async () => {
  fs.mkdirSync(t('gz'));
  fs.writeFileSync(t('gz', 'c.en-fr.en'), gzipSync('one\ntwo\n'));
  fs.writeFileSync(t('gz', 'c.en-fr.fr.gz'), gzipSync('un\ndeux\n'));
  assert.deepEqual(
    (await readAll(mosesReader, t('gz', 'c.en-fr.en'))).units.map((u) => u.texts),
    [
      { en: 'one', fr: 'un' },
      { en: 'two', fr: 'deux' },
    ],
  );

  fs.mkdirSync(t('bad'));
  fs.writeFileSync(t('bad', 'm.en-fr.en'), 'one\ntwo\nthree\n');
  fs.writeFileSync(t('bad', 'm.en-fr.fr'), 'un\ndeux\n');
  let seen = 0;
  await assert.rejects(
    (async () => {
      for await (const _ of mosesReader.read(t('bad', 'm.en-fr.en'), { onProblem() {} })) seen++;
    })(),
    (e: Error) => {
      assert.equal(e.message, `line counts differ: ${t('bad', 'm.en-fr.en')} has 3 lines, ${t('bad', 'm.en-fr.fr')} has 2 lines`);
      return true;
    },
  );
  assert.equal(seen, 0, 'no unit is given before the counts are compared');

  fs.writeFileSync(t('bad', 'u.en-fr.en'), 'one\ntwo\n');
  fs.writeFileSync(t('bad', 'u.en-fr.fr'), Buffer.concat([Buffer.from('un\nd'), Buffer.from([0xe9]), Buffer.from('ux\n')]));
  await refused(mosesReader, t('bad', 'u.en-fr.en'), new RegExp(`^${esc(t('bad', 'u.en-fr.fr'))}:2: invalid UTF-8`));
});

test('CLDR: tts names paired with en.xml of the same folder; root, English and folded sub-locales yield nothing', async () => {
  const de = fx('cldr', 'annotations', 'de.xml');
  const { units, problems } = await readAll(cldrReader, de);
  const u = (texts: Record<string, string>, file: string): Plain => ({ texts, source: file, doc: file, kind: 'phrase' });
  // ← is inherited (↑↑↑) in de, 🦖 has no English name: not paired; keyword lists not read
  assert.deepEqual(units, [u({ en: 'thumbs up', de: 'Daumen hoch' }, de), u({ en: 'cat', de: 'Katze' }, de), u({ en: 'ampersand', de: 'Und-Zeichen' }, de)]);
  assert.deepEqual(problems, []);
  const zh = fx('cldr', 'annotations', 'zh_Hant.xml');
  assert.deepEqual((await readAll(cldrReader, zh)).units, [u({ en: 'thumbs up', zh_tw: '讚' }, zh), u({ en: 'left arrow', zh_tw: '向左箭頭' }, zh)]);
  for (const f of ['root.xml', 'en.xml', 'de_CH.xml']) assert.deepEqual((await readAll(cldrReader, fx('cldr', 'annotations', f))).units, [], f);
  // annotationsDerived pairs with annotationsDerived/en.xml; CLDR's pt is Brazilian
  const pt = fx('cldr', 'annotationsDerived', 'pt.xml');
  assert.deepEqual((await readAll(cldrReader, pt)).units, [
    u({ en: 'thumbs up: medium skin tone', pt_br: 'polegar para cima: pele morena' }, pt),
    u({ en: 'flag: Germany', pt_br: 'bandeira: Alemanha' }, pt),
  ]);
  assert.equal(cldrLang('pt', undefined, 'PT'), 'pt');
  assert.equal(cldrLang('pt', undefined, 'AO'), undefined);
  assert.equal(cldrLang('sr', 'Latn'), 'sr_latn');
  assert.equal(cldrLang('zh', 'Hant', 'HK'), 'zh_tw');
  assert.equal(cldrLang('es', undefined, '419'), undefined);
  assert.equal(cldrLang('en', undefined, 'GB'), undefined);

  assert.equal(cldrReader.accepts(de, readHead(de)), true);
  assert.equal(cldrReader.accepts(fx('sample12.xlf'), readHead(fx('sample12.xlf'))), false);
  // an LDML file outside an annotations folder (main/de.xml) is not an annotation file
  fs.mkdirSync(t('main'));
  fs.copyFileSync(de, t('main', 'de.xml'));
  assert.equal(cldrReader.accepts(t('main', 'de.xml'), readHead(t('main', 'de.xml'))), false);
});

test('CLDR: a folder without en.xml is one clear error', async () => {
  fs.mkdirSync(t('annotations'));
  fs.copyFileSync(fx('cldr', 'annotations', 'de.xml'), t('annotations', 'de.xml'));
  await refused(
    cldrReader,
    t('annotations', 'de.xml'),
    new RegExp(`^${esc(t('annotations', 'en.xml'))}: no such file; CLDR annotations are paired with the English names of en.xml`),
  );
});

test('accepts: by extension and root element', () => {
  const tmxXml = t('memory.xml');
  fs.writeFileSync(tmxXml, '<?xml version="1.0"?>\n<!-- exported -->\n<!DOCTYPE tmx SYSTEM "tmx14.dtd">\n<tmx version="1.4"><header/><body/></tmx>\n');
  assert.equal(tmxReader.accepts(tmxXml, readHead(tmxXml)), true);
  assert.equal(xliffReader.accepts(tmxXml, readHead(tmxXml)), false);
  assert.equal(tmxReader.accepts(fx('sample.tmx'), readHead(fx('sample.tmx'))), true);
  assert.equal(tmxReader.accepts('x.tmx.gz', Buffer.from([0x1f, 0x8b])), true);
  assert.equal(tmxReader.accepts(fx('sample12.xlf'), readHead(fx('sample12.xlf'))), false);
  for (const f of ['a.xlf', 'a.xliff', 'a.XLIF']) assert.equal(xliffReader.accepts(f, Buffer.alloc(0)), true, f);
  const xlfXml = t('strings.xml');
  fs.writeFileSync(xlfXml, '\ufeff<xliff version="2.0" srcLang="en"/>');
  assert.equal(xliffReader.accepts(xlfXml, readHead(xlfXml)), true);
  assert.equal(cldrReader.accepts(xlfXml, readHead(xlfXml)), false);
  assert.equal(mosesReader.accepts(fx('sample.tmx'), readHead(fx('sample.tmx'))), false);
});

test('bad XML refused naming the file and line: truncated, entity declarations, undefined entities, bytes invalid in UTF-8, empty', async () => {
  const lines = fs.readFileSync(fx('sample.tmx'), 'utf8').split('\n');
  const truncated = t('truncated.tmx');
  fs.writeFileSync(truncated, lines.slice(0, 20).join('\n'));
  await refused(tmxReader, truncated, new RegExp(`^${esc(truncated)}:20:\\d+: unclosed tag`));

  const bomb = t('bomb.tmx');
  fs.writeFileSync(
    bomb,
    '<?xml version="1.0"?>\n<!DOCTYPE tmx [\n <!ENTITY a "aaaaaaaaaa">\n <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">\n <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">\n]>\n<tmx version="1.4"><body><tu><tuv xml:lang="en"><seg>&c;</seg></tuv><tuv xml:lang="de"><seg>&c;</seg></tuv></tu></body></tmx>\n',
  );
  await refused(tmxReader, bomb, new RegExp(`^${esc(bomb)}:6: the DOCTYPE declares entities; refused`));

  const external = t('external.xlf');
  fs.writeFileSync(
    external,
    '<?xml version="1.0"?>\n<!DOCTYPE xliff [ <!ENTITY secret SYSTEM "file:///etc/passwd"> ]>\n<xliff version="1.2"><file original="a" source-language="en" target-language="de"><body><trans-unit id="1"><source>&secret;</source><target>x</target></trans-unit></body></file></xliff>\n',
  );
  await refused(xliffReader, external, new RegExp(`^${esc(external)}:2: the DOCTYPE declares entities; refused`));

  const undef = t('undef.tmx');
  fs.writeFileSync(undef, '<tmx version="1.4"><body>\n<tu><tuv xml:lang="en"><seg>&nbsp;</seg></tuv></tu></body></tmx>\n');
  await refused(tmxReader, undef, new RegExp(`^${esc(undef)}:2:\\d+: undefined entity`));

  const latin1 = t('latin1.tmx');
  const text = lines.join('\n').replace('Poisson-frites', 'Poisson-frit\u00e9s');
  const at = text.split('\n').findIndex((l) => l.includes('frités')) + 1;
  fs.writeFileSync(latin1, Buffer.from(text, 'latin1'));
  await refused(tmxReader, latin1, new RegExp(`^${esc(latin1)}:${at}: bytes invalid in UTF-8`));

  const empty = t('empty.tmx');
  fs.writeFileSync(empty, '');
  await refused(tmxReader, empty, new RegExp(`^${esc(empty)}: empty file`));
  await refused(tmxReader, t('missing.tmx'), new RegExp(`^${esc(t('missing.tmx'))}: no such file`));

  const notTmx = t('not.tmx');
  fs.writeFileSync(notTmx, '<?xml version="1.0"?>\n<xliff version="1.2"/>\n');
  await refused(tmxReader, notTmx, new RegExp(`^${esc(notTmx)}:2: not a TMX file`));
});

test('TMX: 200,000 units streamed in bounded memory, all given before the (truncated) end is reached', async () => {
  const N = 200_000;
  const big = t('big.tmx');
  const out = fs.createWriteStream(big);
  out.write('<?xml version="1.0" encoding="UTF-8"?>\n<tmx version="1.4"><header srclang="en"/><body>\n');
  for (let i = 0; i < N; i++) {
    const ok = out.write(
      `<tu tuid="${i}"><tuv xml:lang="en"><seg>Sentence number ${i} with <ph>&lt;b/&gt;</ph>some padding text to make it longer.</seg></tuv>` +
        `<tuv xml:lang="de"><seg>Satz Nummer ${i} mit etwas F&#252;lltext, damit er l&#228;nger wird.</seg></tuv></tu>\n`,
    );
    if (!ok) await once(out, 'drain');
  }
  out.end('</body>\n'); // no </tmx>: the error at the end comes after every unit was given
  await once(out, 'finish');
  const size = fs.statSync(big).size;
  assert.ok(size > 40e6, `file of ${size} bytes`);

  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const base = process.memoryUsage().heapUsed;
  let n = 0,
    peak = 0;
  const t0 = Date.now();
  await assert.rejects(
    async () => {
      for await (const u of tmxReader.read(big, { onProblem: (p) => assert.fail(p.message) })) {
        if (n === 0)
          assert.deepEqual(Object.fromEntries(u.texts), {
            en: 'Sentence number 0 with some padding text to make it longer.',
            de: 'Satz Nummer 0 mit etwas Fülltext, damit er länger wird.',
          });
        n++;
        if (n % 20_000 === 0) {
          gc?.();
          peak = Math.max(peak, process.memoryUsage().heapUsed - base);
        }
      }
    },
    (e: Error) => {
      assert.match(e.message, new RegExp(`^${esc(big)}:${N + 4}:\\d+: unclosed tag: tmx`));
      return true;
    },
  );
  assert.equal(n, N);
  console.log(
    `read ${N} units (${(size / 1e6).toFixed(0)} MB) in ${((Date.now() - t0) / 1000).toFixed(1)} s; heap grew by at most ${(peak / 1e6).toFixed(1)} MB`,
  );
  // the file's text alone is > 40 MB (UTF-16 in memory: twice that); one unit and one 64 KiB chunk's events are a few MB
  assert.ok(peak < 16e6, `heap grew by ${(peak / 1e6).toFixed(1)} MB while reading a ${(size / 1e6).toFixed(0)} MB TMX`);
});

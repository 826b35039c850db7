// The reader of translated document sets (src/corpus/docs.ts): Mallard pages in C/ de/ fr/,
// DocBook articles in en/ de/, HTML pages named NAME.<lang>.html, all small fixtures under
// test/fixtures/corpus/docs/ whose units are asserted exactly; broken and hostile files reported
// and skipped while the rest is read; block pairing by id scope where a translation's structure
// differs; paragraphs of different sentence counts paired whole, skipped, or aligned with
// alignSentences (a deterministic lexicon embedder: a German word has its English word's vector).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { SourceProblem } from '../../src/corpus/types.js';
import {
  emptyDocumentSetStats,
  findDocumentSets,
  isDocumentSet,
  looksUntranslated,
  pairSentences,
  readDocumentSet,
  singleGapPairs,
  splitSentences,
  type DocSetContext,
} from '../../src/corpus/docs.js';
import { htmlBlocks, xmlBlocks } from '../../src/corpus/doc-blocks.js';
import type { SentenceEmbedder } from '../../src/align/align.js';
import { hashSeed, Rng } from '../../src/util/rng.js';

const FIX = path.join(process.cwd(), 'test', 'fixtures', 'corpus', 'docs');
const fx = (...p: string[]): string => path.join(FIX, ...p);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'xling-corpus-docs-'));
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

interface Plain {
  texts: Record<string, string>;
  doc?: string;
}

async function readAll(root: string, extra: Partial<DocSetContext> = {}) {
  const problems: SourceProblem[] = [];
  const stats = emptyDocumentSetStats();
  const units: Plain[] = [];
  const sources = new Set<string>();
  for await (const u of readDocumentSet(root, { onProblem: (p) => problems.push(p), stats, ...extra })) {
    assert.equal(u.kind, 'prose');
    sources.add(u.source);
    units.push({ texts: Object.fromEntries(u.texts), doc: u.doc });
  }
  return { units, problems, stats, sources };
}

test('layouts: per-language folders (C/ or en/) and NAME.<lang>.html files are document sets; others are not', () => {
  assert.equal(isDocumentSet(fx('mallard')), true);
  assert.equal(isDocumentSet(fx('docbook')), true);
  assert.equal(isDocumentSet(fx('html')), true);
  assert.equal(isDocumentSet(fx('mallard', 'C')), false);
  assert.equal(isDocumentSet(FIX), false);
  assert.equal(isDocumentSet(fx('html', 'printing.en.html')), false);
  assert.equal(isDocumentSet(path.join(tmp, 'absent')), false);
  // only English, or a language folder sharing no file with English: not a set
  fs.mkdirSync(path.join(tmp, 'only-en', 'en'), { recursive: true });
  fs.writeFileSync(path.join(tmp, 'only-en', 'en', 'a.html'), '<p>Hello there.</p>');
  fs.mkdirSync(path.join(tmp, 'only-en', 'de'));
  fs.writeFileSync(path.join(tmp, 'only-en', 'de', 'b.html'), '<p>Hallo.</p>');
  assert.equal(isDocumentSet(path.join(tmp, 'only-en')), false);
  assert.deepEqual(
    findDocumentSets(FIX)
      .map((p) => path.relative(FIX, p))
      .sort(),
    ['docbook', 'html', 'mallard'],
  );
});

test('Mallard: units through English with every language of a block; info, screens, code-only items, generated link text and untranslated paragraphs left out; a broken page reported', async () => {
  const { units, problems, stats, sources } = await readAll(fx('mallard'), { source: 'gnome-user-docs' });
  assert.deepEqual([...sources], ['gnome-user-docs']);
  assert.deepEqual(units, [
    {
      doc: 'help/intro.page',
      texts: { en: 'Learn how the desktop works.', de: 'Erfahren Sie, wie die Arbeitsumgebung funktioniert.', fr: 'Découvrez comment fonctionne le bureau.' },
    },
    { doc: 'help/intro.page', texts: { en: 'Getting started', de: 'Erste Schritte', fr: 'Premiers pas' } },
    {
      doc: 'help/intro.page',
      texts: { en: 'Open the Activities overview.', de: 'Öffnen Sie die Übersicht Aktivitäten.', fr: 'Ouvrez la vue d’ensemble des Activités.' },
    },
    {
      doc: 'help/intro.page',
      texts: {
        en: 'Then type settings and press Enter.',
        de: 'Geben Sie dann settings ein und drücken Sie die Eingabetaste.',
        fr: 'Saisissez ensuite settings et appuyez sur Entrée.',
      },
    },
    {
      doc: 'help/intro.page',
      texts: { en: 'Click Network in the sidebar.', de: 'Klicken Sie in der Seitenleiste auf Netzwerk.', fr: 'Cliquez sur Réseau dans la barre latérale.' },
    },
    // sections.page: the "suspend" section has two paragraphs in English, one in German: the
    // page title and the "battery" section still pair (their id scopes have the same blocks), and
    // so does the section's title (before the paragraph that is missing); which English paragraph
    // the German one stands for the structure does not say: neither pairs
    { doc: 'help/sections.page', texts: { en: 'Power settings', de: 'Energieeinstellungen' } },
    { doc: 'help/sections.page', texts: { en: 'Suspend', de: 'Bereitschaft' } },
    { doc: 'help/sections.page', texts: { en: 'Battery', de: 'Akku' } },
    { doc: 'help/sections.page', texts: { en: 'The battery icon shows the charge left.', de: 'Das Akkusymbol zeigt die verbleibende Ladung an.' } },
  ]);
  const broken = problems.filter((p) => p.file.endsWith(path.join('de', 'help', 'broken.page')));
  assert.equal(broken.length, 1);
  assert.equal(broken[0]!.line, 3);
  assert.match(broken[0]!.message, /skipped: .*close tag/);
  const structure = problems.filter((p) => p.file.endsWith(path.join('de', 'help', 'sections.page')));
  assert.equal(structure.length, 1);
  assert.match(structure[0]!.message, /^2 of 6 blocks not paired: the structure differs .*\(5 blocks against 6\)/);
  assert.equal(stats.files, 3);
  assert.equal(stats.badFiles, 1);
  assert.deepEqual([...stats.languages].sort(), ['de', 'fr']);
  assert.equal(stats.skippedStructure, 2);
  assert.equal(stats.skippedCode, 2); // the nmcli item, in de and fr
  assert.equal(stats.skippedUntranslated, 2); // the last paragraph, in de and fr
  assert.equal(stats.sentencesDropped, 2); // the note naming a link by its generated text, in de and fr
  assert.equal(stats.units, units.length);
  assert.match(
    problems.at(-1)!.message,
    /^document set: 9 units from 3 files in 2 languages; translated blocks paired \d+, skipped 6 \(structure differs 2, code only 2, same as English 2, sentences not pairable 0\)/,
  );
});

test('DocBook: info metadata and translator credits skipped, footnotes their own block, programlisting, filename-only items and xref sentences left out; a DOCTYPE declaring entities refused', async () => {
  const { units, problems } = await readAll(fx('docbook'));
  assert.deepEqual(
    units.map((u) => u.texts),
    [
      { en: 'Backup guide', de: 'Leitfaden zur Datensicherung' },
      { en: 'How to keep copies of your files.', de: 'Wie Sie Kopien Ihrer Dateien aufbewahren.' },
      { en: 'Why backups matter', de: 'Warum Sicherungen wichtig sind' },
      { en: 'Disks fail without warning.', de: 'Festplatten fallen ohne Vorwarnung aus.' },
      { en: 'A copy on another disk keeps your work safe.', de: 'Eine Kopie auf einer anderen Festplatte schützt Ihre Arbeit.' },
      { en: 'Or every day.', de: 'Oder jeden Tag.' },
      { en: 'Run tar once a week and keep the archive elsewhere.', de: 'Führen Sie tar einmal pro Woche aus und bewahren Sie das Archiv woanders auf.' },
      { en: 'Use an external disk.', de: 'Verwenden Sie eine externe Festplatte.' },
      { en: 'Restoring files', de: 'Dateien wiederherstellen' },
      { en: 'Unpack the archive into an empty folder.', de: 'Entpacken Sie das Archiv in einen leeren Ordner.' },
    ],
  );
  assert.ok(units.every((u) => u.doc === 'guide.xml'));
  const bomb = problems.find((p) => p.file.endsWith(path.join('de', 'entities.xml')));
  assert.ok(bomb, JSON.stringify(problems));
  assert.match(bomb.message, /DOCTYPE with an internal subset \(entity definitions\) is refused/);
});

test('HTML (NAME.<lang>.html): head, nav, footer, pre and code-only blocks left out; a paragraph of 2 English sentences and 1 German one is one unit, one of 4 and 5 is skipped without an aligner', async () => {
  const { units, stats } = await readAll(fx('html'));
  assert.deepEqual(units, [
    { doc: 'printing.html', texts: { en: 'Printing a document', de: 'Ein Dokument drucken' } },
    {
      doc: 'printing.html',
      texts: { en: 'Choose File then Print. The print dialog opens.', de: 'Wählen Sie Datei und dann Drucken, um den Druckdialog zu öffnen.' },
    },
    { doc: 'printing.html', texts: { en: 'Pick a printer.', de: 'Wählen Sie einen Drucker.' } },
    { doc: 'printing.html', texts: { en: 'Set the number of copies.', de: 'Legen Sie die Anzahl der Kopien fest.' } },
    { doc: 'printing.html', texts: { en: 'Paper sizes', de: 'Papierformate' } },
    { doc: 'printing.html', texts: { en: 'A4 is common in Europe.', de: 'A4 ist in Europa üblich.' } },
  ]);
  assert.equal(stats.skippedSentences, 1);
  assert.equal(stats.skippedCode, 2);
});

test('a folder above document sets reads each, documents named by their path from it', async () => {
  const { units } = await readAll(FIX);
  const docs = [...new Set(units.map((u) => u.doc))];
  assert.deepEqual(docs, ['docbook/guide.xml', 'html/printing.html', 'mallard/help/intro.page', 'mallard/help/sections.page']);
  assert.equal(units.length, 10 + 6 + 9);
});

test('reads sharing a stats object add their counts to it; each read reports its own', async () => {
  const stats = emptyDocumentSetStats();
  const reports: string[] = [];
  for (const set of ['mallard', 'html']) {
    for await (const _ of readDocumentSet(fx(set), {
      onProblem: (p) => {
        if (p.message.startsWith('document set:')) reports.push(p.message);
      },
      stats,
    })) {
      /* read */
    }
  }
  assert.equal(stats.units, 9 + 6);
  assert.equal(stats.files, 3 + 1);
  assert.deepEqual([...stats.languages].sort(), ['de', 'fr']);
  assert.match(reports[0]!, /^document set: 9 units from 3 files in 2 languages/);
  assert.match(reports[1]!, /^document set: 6 units from 1 files in 1 languages/);
});

test('a root that cannot be read, or holds no document set, is an Error naming it', async () => {
  const none = path.join(tmp, 'no-such-folder');
  await assert.rejects(readAll(none), (e: Error) => e.message.startsWith(none) && /cannot read/.test(e.message));
  const empty = path.join(tmp, 'empty');
  fs.mkdirSync(empty);
  await assert.rejects(readAll(empty), (e: Error) => e.message.startsWith(empty) && /no document set found/.test(e.message));
  await assert.rejects(readAll(fx('html', 'printing.en.html')), /not a folder/);
});

test('a file whose bytes are not its encoding, and a page of another XML vocabulary, are reported and skipped', async () => {
  const root = path.join(tmp, 'bad');
  for (const l of ['en', 'de', 'fr']) fs.mkdirSync(path.join(root, l), { recursive: true });
  const page = (title: string, p: string) => `<page xmlns="http://projectmallard.org/1.0/" id="x"><title>${title}</title><p>${p}</p></page>`;
  fs.writeFileSync(path.join(root, 'en', 'x.page'), page('Sound settings', 'Change the volume here.'));
  fs.writeFileSync(path.join(root, 'de', 'x.page'), Buffer.concat([Buffer.from(page('Klang', 'Lautst')), Buffer.from([0xe4, 0x72]), Buffer.from('ke.')]));
  fs.writeFileSync(path.join(root, 'fr', 'x.page'), '<svg xmlns="http://www.w3.org/2000/svg"><text>Son</text></svg>');
  fs.writeFileSync(path.join(root, 'en', 'y.page'), page('Screen', 'Set the brightness.'));
  fs.writeFileSync(path.join(root, 'de', 'y.page'), page('Bildschirm', 'Stellen Sie die Helligkeit ein.'));
  const { units, problems } = await readAll(root);
  assert.deepEqual(
    units.map((u) => u.texts),
    [
      { en: 'Screen', de: 'Bildschirm' },
      { en: 'Set the brightness.', de: 'Stellen Sie die Helligkeit ein.' },
    ],
  );
  assert.match(problems.find((p) => p.file === path.join(root, 'de', 'x.page'))!.message, /not valid utf-8/);
  assert.match(problems.find((p) => p.file === path.join(root, 'fr', 'x.page'))!.message, /neither Mallard .* nor DocBook/);
});

test('blocks: nested blocks close before their parent, inline text kept, LibreOffice system switches give their default variant, chrome dropped', () => {
  const html = `<html><body><div class="docnav"><p>Next chapter...</p></div>
    <ul><li>Open the menu<ul><li>Pick an item.</li></ul> and close it.</li></ul>
    <p>Press <span class="switchinline"><span hidden="true" id="MAC1">Command</span><span hidden="true" id="default1">Ctrl</span></span>+O.</p>
    <span class="switch"><span hidden="true" id="CALC2"><p>Only in Calc.</p></span></span>
    <div class="para">Publican puts paragraphs in divisions.</div>
    <h2>6.2.1. Initialization</h2></body></html>`;
  assert.deepEqual(
    htmlBlocks(html).map((b) => [b.path.replace('html/body/', ''), b.text]),
    [
      ['ul/li/ul/li', 'Pick an item.'],
      ['ul/li', 'Open the menu and close it.'],
      ['p', 'Press Ctrl+O.'],
      ['p', 'Only in Calc.'],
      ['div', 'Publican puts paragraphs in divisions.'],
      ['h2', 'Initialization'],
    ],
  );
  const { format, blocks } = xmlBlocks(`<page xmlns="http://projectmallard.org/1.0/"><section id="sect-power"><p>Run <code>ls</code> now.</p><code>ls -l</code>
    <p>Press <keyseq><key>Ctrl</key><key>P</key></keyseq> or choose <guiseq><gui>File</gui> <gui>Print</gui></guiseq>.</p></section></page>`);
  assert.equal(format, 'mallard');
  assert.deepEqual(
    blocks.map((b) => [b.path, b.scope, b.text, b.code]),
    [
      ['page/section/p', 'sect-power', 'Run ls now.', false],
      ['page/section/p', 'sect-power', 'Press Ctrl+P or choose File ▸ Print.', false],
    ],
  );
  // ids a formatter numbers by position make no scope
  assert.deepEqual(
    htmlBlocks('<body id="top"><div id="id-1.9.17"><p>Text.</p></div><p id="par_id3145090">More.</p></body>').map((b) => b.scope),
    ['top', 'par_id3145090'],
  );
});

test('blocks around one run added or removed pair; where the structure cannot say which blocks changed, they do not', () => {
  const g = (a: string, b: string) => singleGapPairs([...a], [...b]);
  assert.deepEqual(g('abc', 'abc'), [
    [0, 0],
    [1, 1],
    [2, 2],
  ]);
  // a list item (L) removed between paragraphs: all the others pair
  assert.deepEqual(g('hpLp', 'hpp'), [
    [0, 0],
    [1, 1],
    [3, 2],
  ]);
  assert.deepEqual(g('hpULp', 'hpUp'), [
    [0, 0],
    [1, 1],
    [2, 2],
    [4, 3],
  ]);
  // one of two paragraphs removed: the heading pairs, the paragraphs are ambiguous
  assert.deepEqual(g('hppt', 'hpt'), [
    [0, 0],
    [3, 2],
  ]);
  assert.deepEqual(g('tpptp', 'tptp'), [
    [0, 0],
    [3, 2],
    [4, 3],
  ]);
  // changes in two places, or a substitution: nothing
  assert.deepEqual(g('hpqr', 'hqpr'), []);
  assert.deepEqual(g('hLpLp', 'hpp'), []);
});

test('sentences: Intl.Segmenter by language; equal counts pair one to one, short paragraphs whole, long ones not at all without an aligner', async () => {
  assert.deepEqual(splitSentences('Das ist z.B. gut. Ja!', 'de'), ['Das ist z.B. gut.', 'Ja!']);
  assert.deepEqual(splitSentences('打开设置。点击网络。', 'zh'), ['打开设置。', '点击网络。']);
  assert.deepEqual(await pairSentences(['A b.', 'C d.'], ['E f.', 'G h.'], 'de', undefined), [
    { start: 0, end: 1, text: 'E f.' },
    { start: 1, end: 2, text: 'G h.' },
  ]);
  assert.deepEqual(await pairSentences(['A b.', 'C d.'], ['打开。', '设置。', '网络。'], 'zh', undefined), [{ start: 0, end: 2, text: '打开。设置。网络。' }]);
  assert.equal(await pairSentences(['1.', '2.', '3.', '4.'], ['1.', '2.', '3.'], 'de', undefined), undefined);
  assert.equal(
    looksUntranslated(
      'The database must be refreshed with the apt update command (Section 6.2.1).',
      'The database must be refreshed with the apt update command (Bagian 6.2.1).',
    ),
    true,
  );
  assert.equal(looksUntranslated('Check the tray first.', 'Prüfen Sie zuerst das Fach.'), false);
});

// A German word has its English word's direction (plus a little noise of its own); a text is the
// normalised sum of its words: a translation and its source point the same way.
const LEXICON: Record<string, string> = {
  der: 'the',
  das: 'the',
  den: 'the',
  drucker: 'printer',
  braucht: 'needs',
  papier: 'paper',
  prüfen: 'check',
  zuerst: 'first',
  fach: 'tray',
  reinigen: 'clean',
  glas: 'glass',
  schließen: 'close',
  deckel: 'lid',
  drucken: 'print',
  dann: 'then',
  erneut: 'again',
  wählen: 'choose',
  datei: 'file',
  druckdialog: 'dialog',
  öffnen: 'opens',
};

function lexiconEmbedder(d = 32, noise = 0.1): SentenceEmbedder {
  const unit = (w: string) => {
    const r = new Rng(hashSeed(w));
    return Float32Array.from({ length: d }, () => r.normal());
  };
  return {
    dim: d,
    async embed(texts) {
      const out = new Float32Array(texts.length * d);
      texts.forEach((t, k) => {
        for (const w of t.toLowerCase().match(/\p{L}+/gu) ?? []) {
          if (w === 'sie' || w === 'and') continue;
          const base = unit(LEXICON[w] ?? w),
            own = unit(`own:${w}`);
          for (let x = 0; x < d; x++) out[k * d + x]! += base[x]! + noise * own[x]!;
        }
        let s = 0;
        for (let x = 0; x < d; x++) s += out[k * d + x]! ** 2;
        for (let x = 0; x < d; x++) out[k * d + x]! /= Math.sqrt(s) || 1;
      });
      return out;
    },
  };
}

test('with an embedder, a paragraph of 4 English and 5 German sentences is aligned: 1:1 groups and a 1:2 group joined with a space', async () => {
  const { units, stats } = await readAll(fx('html'), { align: lexiconEmbedder() });
  const printer = units.filter((u) => /printer needs|tray|glass|print again/.test(u.texts['en']!));
  assert.deepEqual(
    printer.map((u) => u.texts),
    [
      { en: 'The printer needs paper.', de: 'Der Drucker braucht Papier.' },
      { en: 'Check the tray first.', de: 'Prüfen Sie zuerst das Fach.' },
      { en: 'Clean the glass and close the lid.', de: 'Reinigen Sie das Glas. Schließen Sie den Deckel.' },
      { en: 'Then print again.', de: 'Drucken Sie dann erneut.' },
    ],
  );
  assert.equal(stats.skippedSentences, 0);
  // the paragraph of 2 English sentences and 1 German one aligns as one 2:1 group: the whole-paragraph rule's unit
  assert.deepEqual(units.find((u) => u.texts['en']!.startsWith('Choose'))!.texts, {
    en: 'Choose File then Print. The print dialog opens.',
    de: 'Wählen Sie Datei und dann Drucken, um den Druckdialog zu öffnen.',
  });
  // a threshold no group meets keeps none of the aligned paragraphs' sentences
  const strict = await readAll(fx('html'), { align: lexiconEmbedder(), alignMaxCost: -1 });
  assert.equal(strict.units.filter((u) => /printer needs|tray|glass|print again/.test(u.texts['en']!)).length, 0);
  assert.ok(strict.stats.alignDropped >= 4);
});

// Tux Paint stamp descriptions as a translation source (src/corpus/tuxpaint.ts). The fixture in
// test/fixtures/corpus-tuxpaint/ follows the package's layout (usr/share/tuxpaint/stamps/FOLDER/NAME.txt:
// the English description, then LANG.utf8=TEXT lines), with the cases a stamp file holds: regional
// and @-modifier codes, an English variant, an empty translation, trailing spaces, CRLF lines, a
// line that is no translation, a file that is not UTF-8, and files beside them that are not stamps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tuxpaintStampReader } from '../../src/corpus/tuxpaint.js';
import type { SourceProblem } from '../../src/corpus/types.js';
import { corpusRows } from '../fixtures/corpus.js';

const STAMPS = 'test/fixtures/corpus-tuxpaint/usr/share/tuxpaint/stamps';
const tmp = mkdtempSync(join(tmpdir(), 'xling-corpus-tuxpaint-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

const accepts = (f: string) => tuxpaintStampReader.accepts(f, readFileSync(f));

test('stamp files are recognised by their LANG.utf8= lines; other text files are not', () => {
  assert.ok(accepts(join(STAMPS, 'animals/mammals/cats/kitten.txt')));
  assert.ok(accepts(join(STAMPS, 'animals/mammals/cats/tiger.txt')), 'CRLF lines');
  assert.ok(!accepts(join(STAMPS, 'README.txt')));
  assert.ok(!accepts(join(STAMPS, 'food/fruit/apple.dat')));
});

test('a stamp description: English with every translation, codes normalised, variants and empty lines left out', async () => {
  const problems: SourceProblem[] = [];
  const units = [];
  for await (const u of tuxpaintStampReader.read(join(STAMPS, 'animals/mammals/cats/kitten.txt'), { onProblem: (p) => problems.push(p) })) units.push(u);
  assert.equal(units.length, 1);
  const u = units[0]!;
  assert.deepEqual(Object.fromEntries(u.texts), {
    en: 'A white kitten.',
    de: 'Ein weißes Kätzchen.',
    fr: 'Un chaton blanc.',
    pt_br: 'Um gatinho branco.',
    sr_latn: 'Bela maca.',
    am: 'ነጭ የድመት ግልገል',
  });
  assert.equal(u.doc, 'animals/mammals/cats', 'the document is the stamp folder');
  assert.equal(u.kind, 'phrase');
  assert.deepEqual(
    problems.map((p) => [p.line, p.message]),
    [[9, 'not a LANG.utf8=TEXT line; skipped']],
  );
});

test('a stamp folder read by xling corpus: rows per stamp, a file that is not UTF-8 reported and skipped', async () => {
  const { rows, problems } = await corpusRows([STAMPS], join(tmp, 'stamps.tsv.gz'));
  const header = rows[0]!;
  const byEn = new Map(rows.slice(1).map((r) => [r[0]!, Object.fromEntries(header.map((l, i) => [l, r[i]]))]));
  assert.equal(byEn.get('A tiger.')!.fr, 'Un tigre.');
  assert.equal(byEn.get('An apple.')!.es, 'Una manzana.');
  assert.equal(byEn.get('A white kitten.')!.am, 'ነጭ የድመት ግልገል');
  assert.ok(!byEn.has('A pear.'), 'the file that is not UTF-8 gives nothing');
  assert.ok(
    problems.some((p) => p.file.endsWith('pear.txt') && /invalid UTF-8|not UTF-8/.test(p.message)),
    JSON.stringify(problems),
  );
  assert.ok(!rows.flat().some((c) => c.includes('\uFFFD')));
});

// What xling corpus says of a run (src/corpus/summary.ts): a skipped entry's line, and the summary
// of the corpus built, sources sorted by name and languages by rows.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CorpusSummary } from '../../src/corpus/build.js';
import { emptyDocumentSetStats } from '../../src/corpus/docs.js';
import { corpusSummaryText, problemText } from '../../src/corpus/summary.js';

const summary = (o: Partial<CorpusSummary>): CorpusSummary => ({
  files: 3,
  units: 40,
  rows: 12,
  devRows: 2,
  langs: ['en', 'de', 'fr'],
  bySource: { 'po/b': { fr: 3, de: 9 }, 'a.tmx': { de: 4 } },
  dropped: {},
  problems: 0,
  documents: emptyDocumentSetStats(),
  ...o,
});

test('a skipped entry: FILE[:LINE]: why', () => {
  assert.equal(problemText({ file: 'x.po', line: 7, message: 'bad header' }), 'x.po:7: bad header');
  assert.equal(problemText({ file: 'x.mo', message: 'not a catalog' }), 'x.mo: not a catalog');
});

test('the summary: totals, rows per source and language, what was left out, the problems', () => {
  assert.equal(corpusSummaryText(summary({}), 'c.tsv'), '[corpus] 3 files, 40 units → 12 rows, 3 languages → c.tsv\n  a.tmx: de 4\n  po/b: de 9, fr 3\n');
  const full = corpusSummaryText(summary({ dropped: { short: 2, 'English length': 5 }, problems: 1 }), 'c.tsv', 'dev.tsv');
  assert.equal(
    full,
    '[corpus] 3 files, 40 units → 12 rows (+ 2 dev rows in dev.tsv), 3 languages → c.tsv\n' +
      '  a.tmx: de 4\n  po/b: de 9, fr 3\n' +
      '  left out: English length 5; short 2\n' +
      '  1 problems reported above (each a file or an entry skipped)\n',
  );
});

// scripts/tail-corpora.mjs: a corpus with some languages emptied, and the same with at most N rows
// of them from another N-way TSV (the tail simulation of bench/RESULTS.md, "More sources").
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { after, describe, it } from 'node:test';

const dir = mkdtempSync(join(tmpdir(), 'xling-tail-corpora-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const corpus = join(dir, 'corpus.tsv.gz');
writeFileSync(
  corpus,
  gzipSync(
    ['en\tde\tis\t#source', 'Open the file\tDatei öffnen\tOpna skrána\tpo', 'A white kitten.\t\tHvítur kettlingur.\tstamps', 'Save\tSpeichern\t\tpo'].join(
      '\n',
    ) + '\n',
  ),
);
const other = join(dir, 'mw.tsv.gz');
const otherRows = ['en\tis\tde', 'Save\tVista\tSichern'];
for (let i = 0; i < 6; i++) otherRows.push(`Message ${i}\tSkilaboð ${i}\t`);
writeFileSync(other, gzipSync(otherRows.join('\n') + '\n'));

const run = (...a: string[]) => spawnSync(process.execPath, ['scripts/tail-corpora.mjs', ...a], { encoding: 'utf8' });
const read = (f: string) =>
  gunzipSync(readFileSync(f))
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split('\t'));

describe('scripts/tail-corpora.mjs', () => {
  it('empties the languages, then gives each back at most --cap rows of the other file, the same rows every time', () => {
    const out = join(dir, 'out');
    const r = run(corpus, other, out, '--langs', 'is', '--cap', '3');
    assert.equal(r.status, 0, r.stderr);
    const none = read(join(out, 'none.tsv.gz'));
    assert.deepEqual(none, [
      ['en', 'de', 'is', '#source'],
      ['Open the file', 'Datei öffnen', '', 'po'],
      ['Save', 'Speichern', '', 'po'],
    ]);
    const extra = read(join(out, 'extra.tsv.gz'));
    assert.deepEqual(extra.slice(0, 1), none.slice(0, 1));
    const withIs = extra.filter((row) => row[2] !== '' && row[0] !== 'en');
    assert.equal(withIs.length, 3);
    for (const row of withIs) {
      const src = otherRows.find((l) => l.startsWith(`${row[0]}\t`))!.split('\t');
      assert.equal(row[2], src[1], 'the text of the other file');
      assert.ok(row[3]!.split(',').includes('mw.tsv.gz'), `source ${row[3]}`);
    }
    const again = join(dir, 'again');
    assert.equal(run(corpus, other, again, '--langs', 'is', '--cap', '3').status, 0);
    assert.deepEqual(read(join(again, 'extra.tsv.gz')), extra);
  });

  it('merges a row of the other file into the row with the same English text, keeping its other languages', () => {
    const out = join(dir, 'all');
    assert.equal(run(corpus, other, out, '--langs', 'is', '--cap', '10').status, 0);
    const extra = read(join(out, 'extra.tsv.gz'));
    assert.equal(extra.length, 1 + 2 + 6, 'header, the two rows left, six new ones');
    assert.deepEqual(
      extra.filter((row) => row[0] === 'Save'),
      [['Save', 'Speichern', 'Vista', 'po,mw.tsv.gz']],
    );
    assert.deepEqual(
      extra.filter((row) => row[3] === 'mw.tsv.gz').sort((a, b) => a[0]!.localeCompare(b[0]!)),
      [0, 1, 2, 3, 4, 5].map((i) => [`Message ${i}`, '', `Skilaboð ${i}`, 'mw.tsv.gz']),
    );
  });

  it('refuses a language that is not a column of both files, writing nothing', () => {
    const out = join(dir, 'bad');
    const r = run(corpus, other, out, '--langs', 'is,fr');
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--langs: .*corpus\.tsv\.gz has no column for fr/);
    assert.ok(!existsSync(join(out, 'none.tsv.gz')));
    assert.match(run(corpus, other, out, '--langs', 'is', '--cap', '0').stderr, /--cap: expected a positive integer, got 0/);
  });
});

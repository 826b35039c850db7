// Two training corpora that make some languages of a built corpus into "tail" languages, to
// measure what a small source does for a language that has nothing else (bench/RESULTS.md, "More
// sources"): NONE.tsv.gz is the corpus with every cell of those languages emptied (rows left with
// no translation dropped); EXTRA.tsv.gz is NONE plus at most --cap rows of each of those languages
// from another N-way TSV (chosen by a hash of the language and the English text, so the same
// arguments give the same rows), merged into the row with the same English text or added as a new
// row, its source named by the file in #source.
//   node scripts/tail-corpora.mjs CORPUS.tsv.gz OTHER.tsv.gz OUT_DIR --langs is,lv,… [--cap 1600]
// writes OUT_DIR/none.tsv.gz and OUT_DIR/extra.tsv.gz. The languages must be columns of both files.
import { createHash } from 'node:crypto';
import { createWriteStream, mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { readLines } from '../dist/src/io/lines.js';

const args = process.argv.slice(2);
const opt = (k, d) => {
  const i = args.indexOf(k);
  return i >= 0 ? args[i + 1] : d;
};
const [corpus, other, out] = args;
const usage = 'usage: node scripts/tail-corpora.mjs CORPUS.tsv.gz OTHER.tsv.gz OUT_DIR --langs is,lv,… [--cap 1600]';
const fail = (msg) => {
  console.error(msg);
  process.exit(2);
};
if (!corpus || !other || !out || [corpus, other, out].some((a) => a.startsWith('--')) || !opt('--langs')) fail(usage);
const langs = opt('--langs').split(',');
const cap = Number(opt('--cap', '1600'));
if (!Number.isInteger(cap) || cap < 1) fail(`--cap: expected a positive integer, got ${opt('--cap')}`);

async function readTsv(file) {
  let head = null;
  const rows = [];
  try {
    for await (const { line, no } of readLines(file)) {
      if (line === '') continue;
      const cells = line.split('\t');
      if (!head) head = cells;
      else if (cells.length !== head.length) fail(`${file}:${no}: ${cells.length} columns, the header has ${head.length}`);
      else rows.push(cells);
    }
  } catch (e) {
    fail(e.message);
  }
  if (!head) fail(`${file}: empty file`);
  return { head, rows };
}

function columns(file, head) {
  const missing = langs.filter((l) => !head.includes(l));
  if (missing.length) fail(`--langs: ${file} has no column for ${missing.join(' ')}`);
  return langs.map((l) => head.indexOf(l));
}

async function writeTsv(file, head, rows) {
  const lines = (function* () {
    yield `${head.join('\t')}\n`;
    for (const r of rows) yield `${r.join('\t')}\n`;
  })();
  await pipeline(Readable.from(lines), createGzip({ level: 6 }), createWriteStream(file));
}

const c = await readTsv(corpus);
const o = await readTsv(other);
const cCols = columns(corpus, c.head);
const oCols = columns(other, o.head);
const en = c.head.indexOf('en');
const oEn = o.head.indexOf('en');
const srcCol = c.head.indexOf('#source');
if (en < 0 || oEn < 0) fail('both files need an en column');
const text = (r) => r.some((v, i) => v !== '' && i !== en && !c.head[i].startsWith('#'));

let emptied = 0;
for (const r of c.rows)
  for (const i of cCols)
    if (r[i]) {
      r[i] = '';
      emptied++;
    }
const rows = c.rows.filter(text);
mkdirSync(out, { recursive: true });
await writeTsv(join(out, 'none.tsv.gz'), c.head, rows);

// at most `cap` rows of each language from the other file, the lowest hashes of (language, English)
const byEnglish = new Map(rows.map((r) => [r[en], r]));
const name = basename(other);
let added = 0,
  merged = 0,
  cells = 0;
langs.forEach((lang, k) => {
  const h = (r) => createHash('sha1').update(`${lang}\t${r[oEn]}`).digest('hex');
  const have = o.rows.filter((r) => r[oCols[k]] && r[oEn]).map((r) => [h(r), r]);
  have.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  for (const [, r] of have.slice(0, cap)) {
    let row = byEnglish.get(r[oEn]);
    if (!row) {
      row = c.head.map((col) => (col === 'en' ? r[oEn] : col === '#source' ? name : ''));
      rows.push(row);
      byEnglish.set(r[oEn], row);
      added++;
    } else if (srcCol >= 0 && !row[srcCol].split(',').includes(name)) {
      row[srcCol] = row[srcCol] ? `${row[srcCol]},${name}` : name;
      merged++;
    }
    row[cCols[k]] = r[oCols[k]];
    cells++;
  }
});
await writeTsv(join(out, 'extra.tsv.gz'), c.head, rows);
console.log(
  `none.tsv.gz: ${rows.length - added} rows (${emptied} cells of ${langs.join(' ')} emptied); extra.tsv.gz: ${rows.length} rows, ` +
    `${cells} cells from ${name} (${added} new rows, ${merged} merged into a row with the same English)`,
);

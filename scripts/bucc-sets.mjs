// BUCC-format mining sets from an N-way parallel TSV (a header of language codes, one row per
// meaning; the layout of ../shared/data/gettext/dev.tsv.gz and ../shared/data/dialogue/dev.tsv.gz),
// built as ../shared/data/gettext/mining is: for each xx-en pair, the rows translated into both
// are shuffled (a hash of the row and the pair) and dealt into gold pairs (a quarter), sentences
// kept only on the xx side and sentences kept only on the en side (three eighths each), so that
// about 40% of each side's sentences have their translation on the other side. `--pivot LANG` deals
// xx-LANG pairs instead (any two columns, e.g. de-fr). Each side's file
// is `id<TAB>sentence` ordered by id (ids are random: the order gives nothing away), the gold file
// `xx_id<TAB>en_id`.
//   node scripts/bucc-sets.mjs TSV OUT_DIR --langs de,fr,… [--pivot en] [--split dev] [--max-rows N]
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadNWayTsv } from '../dist/src/train-data/corpus.js';

const args = process.argv.slice(2);
const opt = (k, d) => {
  const i = args.indexOf(k);
  return i >= 0 ? args[i + 1] : d;
};
const [tsv, out] = args;
const usage = 'usage: node scripts/bucc-sets.mjs TSV OUT_DIR --langs de,fr,… [--pivot en] [--split dev] [--max-rows N]';
if (!tsv || !out || tsv.startsWith('--') || out.startsWith('--') || !opt('--langs')) {
  console.error(usage);
  process.exit(2);
}
const split = opt('--split', 'dev');
const pv = opt('--pivot', 'en');
const maxRows = Number(opt('--max-rows', '1000000'));
if (!Number.isInteger(maxRows) || maxRows < 8) {
  console.error(`--max-rows: expected an integer ≥ 8, got ${opt('--max-rows')}`);
  process.exit(2);
}

const { langs: cols, rows } = await loadNWayTsv(tsv);
if (!cols.includes(pv)) {
  console.error(`--pivot: ${tsv}'s header has no '${pv}' column (${cols.join(' ')})`);
  process.exit(2);
}
const h = (s) => createHash('sha1').update(s).digest();
const langs = opt('--langs').split(',');
// every language checked before anything is written
for (const xx of langs)
  if (xx === pv || cols.indexOf(xx) < 0) {
    console.error(`--langs: ${xx} is not a column of ${tsv} other than ${pv} (${cols.join(' ')})`);
    process.exit(2);
  }
mkdirSync(out, { recursive: true });
const summary = [];
for (const xx of langs) {
  const both = rows.map((r, i) => ({ i, s: (r.get(xx) ?? '').trim(), t: (r.get(pv) ?? '').trim() })).filter((r) => r.s && r.t);
  both.sort((a, b) => Buffer.compare(h(`${xx}-${pv}:${a.i}`), h(`${xx}-${pv}:${b.i}`)));
  const use = both.slice(0, maxRows);
  const g = Math.floor(use.length / 4),
    u = Math.floor((use.length - g) / 2);
  const gold = use.slice(0, g),
    srcOnly = use.slice(g, g + u),
    trgOnly = use.slice(g + u, g + 2 * u);
  const id = (lang, r) => `${lang}-${h(`${lang}:${xx}-${pv}:${r.i}`).toString('hex').slice(0, 9)}`;
  const side = (lang, rs, key) =>
    rs
      .map((r) => [id(lang, r), r[key]])
      .sort((a, b) => (a[0] < b[0] ? -1 : 1))
      .map((x) => x.join('\t'))
      .join('\n') + '\n';
  const p = `${xx}-${pv}.${split}`;
  writeFileSync(join(out, `${p}.${xx}`), side(xx, [...gold, ...srcOnly], 's'));
  writeFileSync(join(out, `${p}.${pv}`), side(pv, [...gold, ...trgOnly], 't'));
  writeFileSync(
    join(out, `${p}.gold`),
    gold
      .map((r) => `${id(xx, r)}\t${id(pv, r)}`)
      .sort()
      .join('\n') + '\n',
  );
  summary.push(`${xx}-${pv}: ${g} gold pairs, ${g + u} sentences a side`);
}
console.log(summary.join('\n'));

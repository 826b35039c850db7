// Regenerates data/sample/ from ../shared/data (deterministic): a small slice of the gettext
// corpus for tests and the demo. Usage: node scripts/make-sample.mjs [../shared/data]
import { createReadStream, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { createGunzip, gzipSync } from 'node:zlib';
import { createInterface } from 'node:readline';
import { join } from 'node:path';

const src = process.argv[2] ?? '../shared/data';
const out = 'data/sample';
const LANGS = ['en', 'de', 'fr', 'es', 'ru', 'zh', 'ja', 'it', 'pt_br', 'pl', 'cs', 'sv', 'tr'];

async function readTsv(path) {
  const rl = createInterface({ input: createReadStream(path).pipe(createGunzip()), crlfDelay: Infinity });
  let head = null;
  const rows = [];
  for await (const line of rl) {
    const cols = line.split('\t');
    if (!head) {
      head = cols;
      continue;
    }
    rows.push(Object.fromEntries(head.map((h, i) => [h, cols[i] ?? ''])));
  }
  return rows;
}
// FNV-1a: a stable pseudo-random order
const hash = (s) => {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 16777619) >>> 0;
  }
  return h;
};
const tsv = (rows, n) => gzipSync([LANGS.join('\t'), ...rows.slice(0, n).map((r) => LANGS.map((l) => r[l] ?? '').join('\t'))].join('\n') + '\n', { level: 9 });

mkdirSync(out, { recursive: true });
const train = (await readTsv(join(src, 'gettext/train.tsv.gz'))).filter((r) => LANGS.filter((l) => r[l]).length >= 9);
train.sort((a, b) => hash(a.en) - hash(b.en));
writeFileSync(join(out, 'gettext.train.tsv.gz'), tsv(train, 4000));
const dev = (await readTsv(join(src, 'gettext/dev.tsv.gz'))).filter((r) => LANGS.every((l) => r[l]));
writeFileSync(join(out, 'gettext.dev.tsv.gz'), tsv(dev, 300));
// BUCC-format mining sample: the first 600 lines of each side of de-en and the gold among them
for (const side of ['de', 'en']) {
  const lines = readFileSync(join(src, `gettext/mining/de-en.dev.${side}`), 'utf8')
    .split('\n')
    .filter(Boolean)
    .slice(0, 600);
  writeFileSync(join(out, `de-en.sample.${side}`), lines.join('\n') + '\n');
}
const ids = (side) =>
  new Set(
    readFileSync(join(out, `de-en.sample.${side}`), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('\t')[0]),
  );
const de = ids('de'),
  en = ids('en');
const gold = readFileSync(join(src, 'gettext/mining/de-en.dev.gold'), 'utf8')
  .split('\n')
  .filter((l) => {
    const [a, b] = l.split('\t');
    return de.has(a) && en.has(b);
  });
writeFileSync(join(out, 'de-en.sample.gold'), gold.join('\n') + '\n');
console.log(`train ${Math.min(4000, train.length)} rows, dev ${Math.min(300, dev.length)} rows, de-en gold ${gold.length} pairs`);

// The DDTP part of the real-sentence graph (bench/README.md, "The k-nn graph"): every package description of the shared DDTP
// files (docs.dev.xx-en: both sides; classify.*: the text column) split into sentences, distinct
// per language, one LANG.txt per language, for `xling graph build --data LANG=OUT/ddtp.LANG.txt`.
//   node scripts/ddtp-sentences.mjs OUT [--ddtp ../shared/data/ddtp]     (after the build: uses dist/)
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { splitSentences } from '../dist/src/text/sentences.js';

const args = process.argv.slice(2);
const out = args[0];
const i = args.indexOf('--ddtp');
const D = i >= 0 ? args[i + 1] : '../shared/data/ddtp';
if (!out || out.startsWith('--')) {
  console.error('usage: node scripts/ddtp-sentences.mjs OUT [--ddtp DIR]');
  process.exit(2);
}
mkdirSync(out, { recursive: true });
const by = new Map();
const add = (lang, doc) => {
  if (!by.has(lang)) by.set(lang, new Set());
  for (const s of splitSentences(doc)) {
    const t = s.trim().replace(/\s+/g, ' ');
    if (t) by.get(lang).add(t);
  }
};
for (const f of readdirSync(D).sort()) {
  let m;
  if ((m = f.match(/^docs\.dev\.(\w+)-en\.tsv\.gz$/))) {
    for (const l of gunzipSync(readFileSync(join(D, f)))
      .toString('utf8')
      .split('\n')) {
      const c = l.split('\t');
      if (c.length >= 3) {
        add(m[1], c[1]);
        add('en', c[2]);
      }
    }
  } else if ((m = f.match(/^classify\.(?:dev|train)\.(\w+)\.tsv$/) ?? f.match(/^classify\.dev\.(en)-for-\w+\.tsv$/))) {
    for (const l of readFileSync(join(D, f), 'utf8').split('\n')) {
      const c = l.split('\t');
      if (c.length >= 3) add(m[1], c[2]);
    }
  }
}
let total = 0;
for (const [lang, s] of [...by].sort()) {
  total += s.size;
  writeFileSync(join(out, `ddtp.${lang}.txt`), [...s].join('\n') + '\n');
  console.log(`${lang}\t${s.size}`);
}
console.log(`total\t${total}`);

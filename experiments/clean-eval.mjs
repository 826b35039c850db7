// Cleaning a noisy parallel corpus with xling scorer score (the task of Bicleaner and of
// the WMT parallel corpus filtering tasks): for each xx-en pair of an N-way TSV, N rows are drawn
// and half of them spoilt the ways crawled corpora are — the target of a random other row
// (misaligned), of the row next to it in the file (adjacent_row), the target cut to the first
// half of its words (truncated), the English on both sides (untranslated), the row's sentence in another
// language instead of xx (wrong_language). Each system scores every line (xling scorer score:
// cosine, the ratio margin, each scorer; each without filters, and with the filters that drop
// identical sides and other languages: the settings files WORK/unfiltered*.json and WORK/filtered*.json,
// given with --config, with --block as the settings' block and cosine as the margin 'absolute'); reported: average precision of the true pairs, F1 at the
// F1-optimal threshold, and the share of each kind of noise kept at that threshold.
//   node experiments/clean-eval.mjs MODEL --data TSV --langs de,fr,… [--scorer NAME=DIR …] [--rows 1000] [--block N] [--work DIR] [--json FILE]
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';

const args = process.argv.slice(2);
const opt = (k, d) => {
  const i = args.indexOf(k);
  return i >= 0 ? args[i + 1] : d;
};
const all = (k) => args.flatMap((a, i) => (a === k ? [args[i + 1]] : []));
const model = args[0];
const data = opt('--data'),
  langs = opt('--langs', '').split(',').filter(Boolean);
if (!model || model.startsWith('--') || !data || !langs.length) {
  console.error(
    'usage: node experiments/clean-eval.mjs MODEL --data TSV --langs de,fr,… [--scorer NAME=DIR …] [--rows 1000] [--block N] [--work DIR] [--json FILE]',
  );
  process.exit(2);
}
const rowsPer = Number(opt('--rows', '1000')),
  work = opt('--work', 'clean-eval'),
  json = opt('--json'),
  block = opt('--block') ? { block: Number(opt('--block')) } : {};
const scorers = all('--scorer').map((s) => {
  const i = s.indexOf('=');
  return [s.slice(0, i), s.slice(i + 1)];
});
mkdirSync(work, { recursive: true });
// xling scorer score's settings (configs/scorer-mine.json's keys): without filters (scorer score drops
// identical sides unless told not to), and with identical sides and other languages dropped; cosine
// is the margin setting 'absolute'
const settingsFiles = new Set();
const settingsFile = (filtered, margin) => {
  const file = join(work, `${filtered ? 'filtered' : 'unfiltered'}${margin ? `.${margin}` : ''}.json`);
  if (!settingsFiles.has(file)) {
    const filters = filtered ? { dropIdentical: true, lid: true } : { dropIdentical: false };
    writeFileSync(file, JSON.stringify({ ...block, ...(margin ? { margin } : {}), filters }, null, 1) + '\n');
    settingsFiles.add(file);
  }
  return file;
};

// a seeded generator (mulberry32)
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const text = (f) => (f.endsWith('.gz') ? gunzipSync(readFileSync(f)) : readFileSync(f)).toString('utf8');
const [head, ...table] = text(data)
  .trimEnd()
  .split('\n')
  .map((l) => l.split('\t'));
const col = (l) => {
  const c = head.indexOf(l);
  if (c < 0) throw new Error(`${data}: no column ${l}`);
  return c;
};
const KINDS = ['misaligned', 'adjacent_row', 'truncated', 'untranslated', 'wrong_language'];

function corpus(xx) {
  const xi = col(xx),
    ei = col('en');
  const idx = table.map((_, i) => i).filter((i) => table[i][xi] && table[i][ei]);
  const r = rng([...xx].reduce((h, ch) => h * 31 + ch.charCodeAt(0), 7));
  const pick = [...idx]
    .sort(() => 0)
    .map((i) => [r(), i])
    .sort((a, b) => a[0] - b[0])
    .slice(0, rowsPer)
    .map(([, i]) => i);
  const others = head.map((l, c) => [l, c]).filter(([l]) => l !== xx && l !== 'en');
  return pick.map((i, n) => {
    const src = table[i][xi],
      en = table[i][ei];
    let kind = n % 2 === 0 ? 'ok' : KINDS[((n - 1) / 2) % KINDS.length];
    if (kind === 'truncated' && en.split(/\s+/).length < 6) kind = 'misaligned';
    if (kind === 'adjacent_row') {
      const j = idx[idx.indexOf(i) + 1] ?? idx[idx.indexOf(i) - 1];
      if (table[j][ei] === en) kind = 'misaligned';
      else return [src, table[j][ei], kind];
    }
    if (kind === 'wrong_language') {
      const has = others.filter(([, c]) => table[i][c] && table[i][c] !== src);
      if (has.length) {
        const [, c] = has[Math.floor(r() * has.length)];
        return [table[i][c], en, kind];
      }
      kind = 'misaligned';
    }
    if (kind === 'misaligned') {
      let j;
      do j = idx[Math.floor(r() * idx.length)];
      while (table[j][ei] === en);
      return [src, table[j][ei], kind];
    }
    if (kind === 'truncated') {
      const w = en.split(/\s+/);
      return [src, w.slice(0, Math.ceil(w.length / 2)).join(' '), kind];
    }
    if (kind === 'untranslated') return [en, en, kind];
    return [src, en, 'ok'];
  });
}

function xling(a) {
  const r = spawnSync(process.execPath, ['dist/src/cli/main.js', ...a], { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0) {
    console.error(`xling ${a.join(' ')}\n${r.stderr}`);
    process.exit(1);
  }
  return r;
}

/** AP of the true pairs, F1 at the best threshold, and the share of each noise kind at or above it. */
function measure(rows) {
  const s = [...rows].sort((a, b) => b.score - a.score);
  const pos = s.filter((x) => x.kind === 'ok').length;
  let tp = 0,
    ap = 0,
    best = { f1: -1, at: 0 };
  s.forEach((x, i) => {
    if (x.kind === 'ok') {
      tp++;
      ap += tp / (i + 1);
    }
    if (i + 1 < s.length && s[i + 1].score === x.score) return;
    const f1 = (2 * tp) / (i + 1 + pos);
    if (f1 > best.f1) best = { f1, at: i + 1, threshold: x.score };
  });
  const kept = s.slice(0, best.at);
  const share = Object.fromEntries(
    KINDS.map((k) => {
      const n = rows.filter((x) => x.kind === k).length;
      return [k, n ? kept.filter((x) => x.kind === k).length / n : null];
    }),
  );
  return { ap: ap / pos, f1: best.f1, threshold: best.threshold, kept: share };
}

const systems = [['cosine', [], 'absolute'], ['margin', []], ...scorers.map(([n, d]) => [n, ['--scorer', d]])];
const results = {};
for (const xx of langs) {
  const lines = corpus(xx);
  const file = join(work, `${xx}-en.tsv`);
  writeFileSync(file, lines.map((l) => l.join('\t')).join('\n') + '\n');
  results[xx] = {};
  for (const [name, extra, margin] of systems)
    for (const filtered of [false, true]) {
      const out = join(work, `${xx}-en.${name}${filtered ? '.filtered' : ''}.tsv`);
      const settings = ['--config', settingsFile(filtered, margin)];
      xling(['scorer', 'score', '--input', file, '--model', model, '--src-lang', xx, '--trg-lang', 'en', ...extra, ...settings, '-o', out]);
      const rows = readFileSync(out, 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => {
          const c = l.split('\t');
          return { kind: c[2], score: Number(c[3]) };
        });
      results[xx][`${name}${filtered ? '+filters' : ''}`] = measure(rows);
      process.stderr.write(
        `[clean-eval] ${xx}-en ${name}${filtered ? '+filters' : ''}: AP ${(100 * results[xx][`${name}${filtered ? '+filters' : ''}`].ap).toFixed(1)}\n`,
      );
    }
}
if (json) writeFileSync(json, JSON.stringify(results, null, 1) + '\n');
const names = Object.keys(results[langs[0]]);
const pct = (x) => (x === null || x === undefined ? '–' : (100 * x).toFixed(1));
console.log(`| pair | ${names.map((n) => `${n}: AP / F1`).join(' | ')} |\n|---|${names.map(() => '---').join('|')}|`);
for (const xx of langs) console.log(`| ${xx}-en | ${names.map((n) => `${pct(results[xx][n].ap)} / ${pct(results[xx][n].f1)}`).join(' | ')} |`);
console.log(
  `| mean | ${names.map((n) => `${pct(langs.reduce((s, l) => s + results[l][n].ap, 0) / langs.length)} / ${pct(langs.reduce((s, l) => s + results[l][n].f1, 0) / langs.length)}`).join(' | ')} |`,
);
console.log(`\nnoise kept at the F1-optimal threshold (mean over the pairs, %):\n| system | ${KINDS.join(' | ')} |\n|---|${KINDS.map(() => '---').join('|')}|`);
for (const n of names)
  console.log(
    `| ${n} | ${KINDS.map((k) => {
      const v = langs.map((l) => results[l][n].kept[k]).filter((x) => x !== null);
      return v.length ? pct(v.reduce((a, b) => a + b, 0) / v.length) : '–';
    }).join(' | ')} |`,
  );

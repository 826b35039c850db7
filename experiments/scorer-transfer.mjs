// The mining scorer on sets it was not made for: every BUCC-format triple `xx-yy.<split>.{xx,yy,gold}`
// of SETS (e.g. made by scripts/bucc-sets.mjs from another domain's dev TSV, or for language pairs
// the scorer was not trained on) evaluated with `xling eval bucc` by margin alone and by each
// scorer, F1 (%) at each run's F1-optimal threshold. With --calibration DIR (the --work directory
// of experiments/scorer-eval.mjs, whose `<pair>.margin.json` and `<pair>.<name>.json` hold thresholds
// chosen on the shared mining sets), also F1 and precision at those thresholds, as a user mining a
// new domain with a threshold from dev would get (`--threshold-from`).
// --no-self-tables: eval bucc is given the setting "selfTables": false (WORK/settings.json, --config): a
// scorer without the pair's word tables then leaves its word-alignment features empty instead of
// training tables on the set's own pairs.
//   node experiments/scorer-transfer.mjs MODEL SETS --scorer NAME=DIR [--scorer NAME=DIR …] [--calibration DIR] [--work DIR] [--no-self-tables]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const opt = (k, d) => {
  const i = args.indexOf(k);
  return i >= 0 ? args[i + 1] : d;
};
const usage =
  'usage: node experiments/scorer-transfer.mjs MODEL SETS --scorer NAME=DIR [--scorer NAME=DIR …] [--calibration DIR] [--work DIR] [--no-self-tables]';
const [model, sets] = args;
if (!model || !sets || model.startsWith('--') || sets.startsWith('--')) {
  console.error(usage);
  process.exit(2);
}
const scorers = args
  .flatMap((a, i) => (a === '--scorer' ? [args[i + 1] ?? ''] : []))
  .map((s) => {
    const j = s.indexOf('=');
    if (j <= 0 || j === s.length - 1 || s.slice(0, j) === 'margin') {
      console.error(`--scorer: expected NAME=DIR (NAME not 'margin'), got '${s}'\n${usage}`);
      process.exit(2);
    }
    return { name: s.slice(0, j), dir: s.slice(j + 1) };
  });
const cal = opt('--calibration');
const noSelf = args.includes('--no-self-tables');
const work = opt('--work', join(sets, 'transfer'));
mkdirSync(work, { recursive: true });
// eval bucc's settings (configs/scorer-mine.json's keys)
const config = join(work, 'settings.json');
writeFileSync(config, JSON.stringify({ selfTables: !noSelf }, null, 1) + '\n');

function xling(a) {
  const r = spawnSync(process.execPath, ['dist/src/cli/main.js', ...a], { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0) {
    console.error(`xling ${a.join(' ')}\n${r.stderr}`);
    process.exit(1);
  }
  return r.stderr;
}
const golds = readdirSync(sets)
  .filter((f) => /^[a-z_]+-[a-z_]+\.[^.]+\.gold$/.test(f))
  .sort();
if (!golds.length) {
  console.error(`${sets}: no xx-yy.<split>.gold files`);
  process.exit(1);
}
const table = [];
for (const g of golds) {
  const [p, split] = g.split('.');
  const [sl, tl] = p.split('-');
  const base = [
    'eval',
    'bucc',
    '--src',
    join(sets, `${p}.${split}.${sl}`),
    '--trg',
    join(sets, `${p}.${split}.${tl}`),
    '--gold',
    join(sets, g),
    '--model',
    model,
    '--src-lang',
    sl,
    '--trg-lang',
    tl,
  ];
  const row = { pair: p };
  for (const s of [{ name: 'margin', dir: null }, ...scorers]) {
    const json = join(work, `${p}.${s.name}.json`);
    const calFile = cal ? join(cal, `${p}.${s.name === 'margin' ? 'margin' : s.name}.json`) : null;
    const useCal = calFile && existsSync(calFile);
    const err = xling([...base, ...(s.dir ? ['--scorer', s.dir, '--config', config] : []), ...(useCal ? ['--threshold-from', calFile] : []), '--json', json]);
    const r = JSON.parse(readFileSync(json, 'utf8'));
    row[s.name] = { f1: r.f1, threshold: r.threshold, at: r.at_threshold ?? null, tables: !/has no word tables/.test(err) };
  }
  table.push(row);
}
const pct = (x) => (100 * x).toFixed(1);
const names = ['margin', ...scorers.map((s) => s.name)];
console.log(`| pair | ${names.join(' | ')}${cal ? ` | ${names.map((n) => `${n} at the calibrated threshold: F1 (P)`).join(' | ')}` : ''} |`);
console.log(`|---|${names.map(() => '---').join('|')}${cal ? `|${names.map(() => '---').join('|')}` : ''}|`);
for (const r of table) {
  const cells = names.map((n) => `${pct(r[n].f1)}${n !== 'margin' && !r[n].tables ? '*' : ''}`);
  const calCells = cal ? names.map((n) => (r[n].at ? `${pct(r[n].at.f1)} (${pct(r[n].at.precision)})` : '—')) : [];
  console.log(`| ${r.pair} | ${[...cells, ...calCells].join(' | ')} |`);
}
const mean = (f) => table.reduce((s, r) => s + f(r), 0) / table.length;
console.log(
  `| mean | ${names.map((n) => pct(mean((r) => r[n].f1))).join(' | ')}${cal ? ` | ${names.map((n) => (table.every((r) => r[n].at) ? pct(mean((r) => r[n].at.f1)) : '—')).join(' | ')}` : ''} |`,
);
if (table.some((r) => scorers.some((s) => !r[s.name].tables)))
  console.log(
    `\n\\* the scorer has no word tables for that pair (${noSelf ? 'its word-alignment features are empty' : "they are trained on the set's own pairs: the setting selfTables"}).`,
  );
writeFileSync(join(work, 'table.json'), JSON.stringify(table, null, 1) + '\n');

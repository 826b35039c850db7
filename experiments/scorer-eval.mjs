// The second-stage mining scorer on the shared BUCC-format dev sets: each xx-en set is
// split into two halves by a hash of the ids (a gold pair stays whole); the scorer is trained on
// half a (xling scorer train --bucc, split a) and, without gold, on the parallel training TSV
// (--parallel), and every pair's half b is evaluated by raw cosine (the research's baseline) and
// margin alone, and with each scorer.
// Both scorers take their word tables from every row of the parallel TSV (xling scorer train
// --tables; never a sentence of the sets they are trained or evaluated on); --gold-tables keeps the
// gold scorer's tables on half a's gold pairs and the parallel one's on 5,000 rows (as before).
// --pair-model: the parallel scorer also trains its pair model (xling scorer train --pair-model;
// --pair-rows N a language pair and the other --pair-* options become the settings' pairModel keys),
// and the gold scorer takes it (--pair-from). The hyperparameters go to xling scorer train in a
// settings file written to WORK/scorer-train.json (--config), and --assignment to eval bucc in
// WORK/mine.json. (The pair model's --pair-context and --pair-match variants and the --siblings
// features were removed from xling, and with them from this driver.)
//   node experiments/scorer-eval.mjs MODEL [--mining DIR] [--parallel TSV] [--rows N] [--work DIR] [--gold-tables] [--assignment greedy|exchange] [--pair-model [--pair-rows N] [--pair-max-words N] [--pair-negatives N] [--pair-epochs N] [--pair-hidden N] [--pair-pca N]] [--self-head]
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const opt = (k, d) => {
  const i = args.indexOf(k);
  return i >= 0 ? args[i + 1] : d;
};
const model = args[0];
if (!model || model.startsWith('--')) {
  console.error(
    'usage: node experiments/scorer-eval.mjs MODEL [--mining DIR] [--parallel TSV] [--rows N] [--work DIR] [--gold-tables] [--assignment greedy|exchange] [--pair-model [--pair-rows N] [--pair-max-words N] [--pair-negatives N] [--pair-epochs N] [--pair-hidden N] [--pair-pca N]] [--self-head]',
  );
  process.exit(2);
}
const removed = ['--pair-context', '--pair-match', '--siblings'].filter((o) => args.includes(o));
if (removed.length) {
  console.error(`${removed.join(', ')}: removed from xling scorer train (no gain on the dev sets)`);
  process.exit(2);
}
const mining = opt('--mining', '../shared/data/gettext/mining');
const parallel = opt('--parallel', '../shared/data/gettext/train.tsv.gz');
const rows = opt('--rows', '2000');
const work = opt('--work', 'scorer-eval');
const tables = args.includes('--gold-tables') ? [] : ['--tables', parallel];
mkdirSync(join(work, 'halves'), { recursive: true });
// eval bucc's settings (configs/scorer-mine.json's keys): the scorer's one-to-one assignment
const mineConfig = join(work, 'mine.json');
writeFileSync(mineConfig, JSON.stringify({ assignment: opt('--assignment', 'greedy') }, null, 1) + '\n');
const assignment = ['--config', mineConfig];

const half = (id) => (createHash('sha1').update(id).digest()[0] & 1 ? 'b' : 'a');
const read = (f) =>
  readFileSync(f, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split('\t'));
const pairs = readdirSync(mining)
  .filter((f) => f.endsWith('.gold'))
  .map((f) => f.split('.')[0])
  .sort();
for (const p of pairs) {
  const [sl, tl] = p.split('-');
  const split = readdirSync(mining)
    .find((f) => f.startsWith(`${p}.`) && f.endsWith('.gold'))
    .split('.')[1];
  const S = read(join(mining, `${p}.${split}.${sl}`)),
    T = read(join(mining, `${p}.${split}.${tl}`)),
    G = read(join(mining, `${p}.${split}.gold`));
  const trgHalf = new Map(G.map(([s, t]) => [t, half(s)]));
  for (const h of ['a', 'b']) {
    writeFileSync(
      join(work, 'halves', `${p}.${h}.${sl}`),
      S.filter(([id]) => half(id) === h)
        .map((r) => r.join('\t'))
        .join('\n') + '\n',
    );
    writeFileSync(
      join(work, 'halves', `${p}.${h}.${tl}`),
      T.filter(([id]) => (trgHalf.get(id) ?? half(id)) === h)
        .map((r) => r.join('\t'))
        .join('\n') + '\n',
    );
    writeFileSync(
      join(work, 'halves', `${p}.${h}.gold`),
      G.filter(([s]) => half(s) === h)
        .map((r) => r.join('\t'))
        .join('\n') + '\n',
    );
  }
}

function xling(a) {
  const r = spawnSync(process.execPath, ['dist/src/cli/main.js', ...a], { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0) {
    console.error(`xling ${a.join(' ')}\n${r.stderr}`);
    process.exit(1);
  }
  return r;
}
const langPairs = pairs.map((p) => p).join(',');
const pairModel = args.includes('--pair-model');
// xling scorer train's settings (configs/scorer.json's keys): the pair model's size and training as
// given (its rows: 15000 a pair unless --pair-rows), and --self-head: both scorers also fit the
// self-tables regression
const pairKeys = {
  '--pair-rows': 'rows',
  '--pair-max-words': 'maxWords',
  '--pair-negatives': 'negatives',
  '--pair-epochs': 'epochs',
  '--pair-hidden': 'hidden',
  '--pair-pca': 'pca',
};
const trainSettings = { selfHead: args.includes('--self-head') };
if (pairModel)
  trainSettings.pairModel = Object.fromEntries(
    Object.entries(pairKeys)
      .filter(([o]) => args.includes(o))
      .map(([o, k]) => [k, Number(opt(o))]),
  );
const trainConfig = join(work, 'scorer-train.json');
writeFileSync(trainConfig, JSON.stringify(trainSettings, null, 1) + '\n');
const trainCfg = ['--config', trainConfig];
const pairTrain = pairModel ? ['--pair-model'] : [];
const pairFrom = pairModel ? ['--pair-from', join(work, 'scorer-parallel')] : [];
xling([
  'scorer',
  'train',
  '--model',
  model,
  '--parallel',
  parallel,
  '--pairs',
  langPairs,
  '--rows',
  rows,
  ...tables,
  ...pairTrain,
  ...trainCfg,
  '-o',
  join(work, 'scorer-parallel'),
  '--json',
  join(work, 'scorer-parallel.json'),
]);
xling([
  'scorer',
  'train',
  '--model',
  model,
  '--bucc',
  join(work, 'halves'),
  '--split',
  'a',
  ...tables,
  ...pairFrom,
  ...trainCfg,
  '-o',
  join(work, 'scorer-gold'),
  '--json',
  join(work, 'scorer-gold.json'),
]);

const table = [];
for (const p of pairs) {
  const [sl, tl] = p.split('-');
  const base = [
    '--src',
    join(work, 'halves', `${p}.b.${sl}`),
    '--trg',
    join(work, 'halves', `${p}.b.${tl}`),
    '--gold',
    join(work, 'halves', `${p}.b.gold`),
    '--model',
    model,
    '--src-lang',
    sl,
    '--trg-lang',
    tl,
  ];
  const f1 = (extra, name) => {
    xling(['eval', 'bucc', ...base, ...extra, '--json', join(work, `${p}.${name}.json`)]);
    return JSON.parse(readFileSync(join(work, `${p}.${name}.json`), 'utf8')).f1;
  };
  table.push({
    pair: p,
    cosine: f1(['--margin', 'absolute'], 'cosine'),
    margin: f1([], 'margin'),
    gold: f1(['--scorer', join(work, 'scorer-gold'), ...assignment], 'gold'),
    parallel: f1(['--scorer', join(work, 'scorer-parallel'), ...assignment], 'parallel'),
  });
}
const pct = (x) => (100 * x).toFixed(1);
console.log('| pair (half b) | cosine only | margin only | scorer, gold half a | scorer, parallel TSV |');
console.log('|---|---|---|---|---|');
for (const r of table) console.log(`| ${r.pair} | ${pct(r.cosine)} | ${pct(r.margin)} | ${pct(r.gold)} | ${pct(r.parallel)} |`);
const mean = (k) => table.reduce((s, r) => s + r[k], 0) / table.length;
console.log(`| mean | ${pct(mean('cosine'))} | ${pct(mean('margin'))} | ${pct(mean('gold'))} | ${pct(mean('parallel'))} |`);
writeFileSync(join(work, 'table.json'), JSON.stringify(table, null, 1) + '\n');

// Paired bootstrap of BUCC F1 differences: how sure a gain over a baseline is on sets of a few
// hundred gold pairs. Each system's mined pairs of every language pair (`xling mine … --threshold 0`:
// score in the first column, source and target ids in the last two) are read from
// DIR/<pair>.<system>.tsv; each system's threshold is its F1-optimal one on the whole set and stays
// fixed; source sentences are resampled with replacement (a pair counts as often as its source is
// drawn), the same draw for every system. Prints each system's F1, and the 95% interval of its gain
// over the first system, per language pair and for the mean over the pairs.
//   node experiments/bucc-bootstrap.mjs --sets DIR --split b --mined DIR --systems margin,parallel,gold [--pairs de-en,…] [--draws 1000] [--seed 1]
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const opt = (k, d) => {
  const i = args.indexOf(k);
  return i >= 0 ? args[i + 1] : d;
};
const sets = opt('--sets'),
  mined = opt('--mined'),
  split = opt('--split', 'test'),
  systems = (opt('--systems') ?? '').split(',').filter(Boolean);
if (!sets || !mined || systems.length < 2) {
  console.error(
    'usage: node experiments/bucc-bootstrap.mjs --sets DIR --split S --mined DIR --systems BASELINE,SYSTEM[,…] [--pairs de-en,…] [--draws N] [--seed N]',
  );
  process.exit(2);
}
const draws = Number(opt('--draws', '1000'));
const pairs =
  opt('--pairs')?.split(',') ??
  readdirSync(sets)
    .filter((f) => f.endsWith(`.${split}.gold`))
    .map((f) => f.split('.')[0])
    .sort();

// mulberry32: a small seeded generator (the draws are reproducible)
let state = Number(opt('--seed', '1')) >>> 0;
const random = () => {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

const lines = (f) =>
  readFileSync(f, 'utf8')
    .split('\n')
    .filter((l) => l.length);
const bestThreshold = (rows, gold) => {
  const sorted = rows.slice().sort((a, b) => b.score - a.score);
  let tp = 0,
    best = { f1: 0, threshold: Infinity };
  sorted.forEach((r, i) => {
    if (gold.has(r.key)) tp++;
    const p = tp / (i + 1),
      rec = tp / gold.size,
      f1 = tp ? (2 * p * rec) / (p + rec) : 0;
    if (f1 > best.f1) best = { f1, threshold: r.score };
  });
  return best;
};
const f1At = (rows, gold, threshold, weight) => {
  let tp = 0,
    fp = 0,
    ng = 0;
  for (const g of gold) ng += weight.get(g.split('\t')[0]) ?? 0;
  for (const r of rows) {
    if (r.score < threshold) continue;
    const w = weight.get(r.src) ?? 0;
    if (gold.has(r.key)) tp += w;
    else fp += w;
  }
  if (!tp) return 0;
  const p = tp / (tp + fp),
    rec = tp / ng;
  return (2 * p * rec) / (p + rec);
};

const data = pairs.map((pair) => {
  const [src] = pair.split('-');
  const gold = new Set(lines(join(sets, `${pair}.${split}.gold`)).map((l) => l.split('\t').slice(0, 2).join('\t')));
  const sources = lines(join(sets, `${pair}.${split}.${src}`)).map((l) => l.split('\t')[0]);
  const sys = systems.map((s) => {
    const rows = lines(join(mined, `${pair}.${s}.tsv`))
      .filter((l) => !l.startsWith('#'))
      .map((l) => {
        const c = l.split('\t');
        return { score: Number(c[0]), src: c[c.length - 2], key: `${c[c.length - 2]}\t${c[c.length - 1]}` };
      });
    return { rows, ...bestThreshold(rows, gold) };
  });
  return { pair, gold, sources, sys };
});

const gains = data.map(() => systems.map(() => [])),
  meanGains = systems.map(() => []);
for (let d = 0; d < draws; d++) {
  const mean = systems.map(() => 0);
  data.forEach(({ gold, sources, sys }, p) => {
    const weight = new Map();
    for (let i = 0; i < sources.length; i++) {
      const s = sources[Math.floor(random() * sources.length)];
      weight.set(s, (weight.get(s) ?? 0) + 1);
    }
    const f = sys.map((x) => f1At(x.rows, gold, x.threshold, weight));
    f.forEach((v, k) => {
      gains[p][k].push(v - f[0]);
      mean[k] += v / data.length;
    });
  });
  mean.forEach((v, k) => meanGains[k].push(v - mean[0]));
}
const interval = (v) => {
  const s = v.slice().sort((a, b) => a - b);
  return `${(100 * s[Math.floor(0.025 * s.length)]).toFixed(1)} … ${(100 * s[Math.floor(0.975 * s.length)]).toFixed(1)}`;
};
const pct = (x) => (100 * x).toFixed(1);
console.log(
  `| pair | ${systems.join(' | ')} | ${systems
    .slice(1)
    .map((s) => `${s} − ${systems[0]} (95%)`)
    .join(' | ')} |`,
);
console.log(`|${'---|'.repeat(2 * systems.length)}`);
data.forEach(({ pair, sys }, p) =>
  console.log(
    `| ${pair} | ${sys.map((x) => pct(x.f1)).join(' | ')} | ${systems
      .slice(1)
      .map((_, k) => interval(gains[p][k + 1]))
      .join(' | ')} |`,
  ),
);
console.log(
  `| mean | ${systems.map((_, k) => pct(data.reduce((a, d) => a + d.sys[k].f1, 0) / data.length)).join(' | ')} | ${systems
    .slice(1)
    .map((_, k) => interval(meanGains[k + 1]))
    .join(' | ')} |`,
);

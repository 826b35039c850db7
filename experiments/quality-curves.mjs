// Dev error against training minutes for several training runs, from their train-log.jsonl
// (validation points: `validate.every` > 0 and --dev at training time), as one SVG (log y axis)
// and a JSON of the points. Usage:
//   node experiments/quality-curves.mjs OUT.svg "label=RUN_DIR" ["label2=RUN_DIR2" …]
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { lineChart } from 'xling';

const [out, ...runs] = process.argv.slice(2);
if (!out || !runs.length) {
  console.error('usage: node experiments/quality-curves.mjs OUT.svg "label=RUN_DIR" …');
  process.exit(2);
}
const series = runs.map((r) => {
  const eq = r.indexOf('=');
  const [name, dir] = [r.slice(0, eq), r.slice(eq + 1)];
  const log = readFileSync(join(dir, 'train-log.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
    .filter((e) => e.xsim !== undefined);
  if (!log.length) throw new Error(`${dir}/train-log.jsonl: no validation points (train with validate.every > 0 and --dev)`);
  return { name, points: log.map((e) => [e.seconds / 60, e.xsim]) };
});
writeFileSync(
  out,
  lineChart({
    series,
    yLog: true,
    title: 'Dev similarity-search error vs training time (2 cores)',
    xLabel: 'training minutes (preparation included, validation excluded)',
    yLabel: 'error % (12 languages, X→en and en→X)',
    xDomain: [0, 60],
    hlines: [
      { y: 6.6, label: 'PyTorch n-gram recipe, 10 min' },
      { y: 2.9, label: 'PyTorch n-gram recipe, 30 min' },
    ],
  }),
);
writeFileSync(
  out.replace(/\.svg$/, '.json'),
  JSON.stringify(Object.fromEntries(series.map((s) => [s.name, s.points.map(([m, e]) => [+m.toFixed(2), +e.toFixed(2)])])), null, 1) + '\n',
);
for (const s of series) console.log(`${s.name}: ${s.points.map(([m, e]) => `${m.toFixed(1)}m ${e.toFixed(2)}%`).join(', ')}`);

// Ablations at equal work (same number of training pairs): BiLSTM-max vs BiLSTM-last pooling,
// and 1:1 paths (X→en, en→es) vs a 1:N path (X→{en, es} in one step). Usage:
//   node experiments/ablation.mjs [train.tsv.gz] [dev.tsv.gz] [pairs] [base-config]
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync, copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const [train = 'data/sample/gettext.train.tsv.gz', dev = 'data/sample/gettext.dev.tsv.gz', pairs = '24000', baseCfg = 'configs/tiny-sample.json'] =
  process.argv.slice(2);
const base = JSON.parse(readFileSync(baseCfg, 'utf8'));
const variants = {
  'BiLSTM-max, 1:1': {},
  'BiLSTM-last, 1:1': { encoder: { ...base.encoder, pooling: 'last' } },
  'BiLSTM-max, 1:N': { paths: [{ kind: '1:N', src: '*', trg: ['en', 'es'] }] },
};
const out = 'runs/ablation';
mkdirSync(out, { recursive: true });
const rows = [];
let tok = null;
for (const [name, over] of Object.entries(variants)) {
  const dir = join(out, name.replace(/[^a-z0-9]+/gi, '-'));
  mkdirSync(dir, { recursive: true });
  if (tok) copyFileSync(tok, join(dir, 'tokenizer.json')); // same vocabulary for every variant
  const cfg = { ...base, ...over, budget: { pairs: Number(pairs) }, validate: { ...base.validate, every: 0 } };
  writeFileSync(join(dir, 'config.in.json'), JSON.stringify(cfg, null, 1));
  const t0 = Date.now();
  const r = spawnSync(
    process.execPath,
    ['dist/src/cli/main.js', 'train', '--config', join(dir, 'config.in.json'), '--data', train, '--dev', dev, '--out', dir, '--resume'],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
  if (r.status !== 0) process.exit(r.status ?? 1);
  if (!tok && existsSync(join(dir, 'tokenizer.json'))) tok = join(dir, 'tokenizer.json');
  const x = JSON.parse(readFileSync(join(dir, 'dev-xsim.json'), 'utf8'));
  rows.push(`| ${name} | ${pairs} | ${x.average.toFixed(2)} | ${((Date.now() - t0) / 1000).toFixed(0)} |`);
}
const table = ['| variant | training pairs | dev xsim error % (avg X→en, en→X) | seconds |', '|---|---|---|---|', ...rows].join('\n');
writeFileSync(join(out, 'table.md'), table + '\n');
console.log(table);

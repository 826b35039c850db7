// The main demo, with no training step: xling's default model (models/default, used whenever no
// --model is given) measured on the bundled sample's held-out rows (similarity-search error and
// its heat map), nearest translations of English sentences across languages, and parallel
// sentences mined from a German-English sample and scored against its gold pairs.
// XLING_DEMO_DIR sets the output directory (default runs/demo).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { defaultModelPath, loadSentenceEncoder } from '../dist/src/index.js';
import { loadNWayTsv } from '../dist/src/train-data/corpus.js';

const out = process.env.XLING_DEMO_DIR ?? 'runs/demo';
mkdirSync(out, { recursive: true });
const cli = (args) => {
  console.log(`\n$ xling ${args.join(' ')}`);
  const r = spawnSync(process.execPath, ['dist/src/cli/main.js', ...args], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
};
const t0 = performance.now();

// 1. similarity-search error between languages on the 300 held-out rows, and its heat map
cli(['eval', 'xsim', '--data', 'data/sample/gettext.dev.tsv.gz', '--langs', 'en,de,fr,es,ru,zh,ja', '--svg', `${out}/xsim.svg`, '--json', `${out}/xsim.json`]);

// 2. nearest translations, from the library: English queries against each language's held-out sentences
const model = loadSentenceEncoder(defaultModelPath());
const dev = await loadNWayTsv('data/sample/gettext.dev.tsv.gz');
const d = model.dim;
const queries = dev.rows.slice(0, 4).map((r) => r.get('en'));
const qv = model.embed(queries, { lang: 'en' }); // unit vectors, centred with the model's English mean
const nearest = (v, i, cv, n) => {
  let best = -2,
    arg = -1;
  for (let j = 0; j < n; j++) {
    let s = 0;
    for (let k = 0; k < d; k++) s += v[i * d + k] * cv[j * d + k];
    if (s > best) {
      best = s;
      arg = j;
    }
  }
  return { arg, best };
};
for (const lang of ['de', 'fr', 'zh', 'ru']) {
  const cands = dev.rows.map((r) => r.get(lang));
  const cv = model.embed(cands, { lang });
  console.log(`\nnearest ${lang} sentence for each English query (among ${cands.length}):`);
  queries.forEach((q, i) => {
    const { arg, best } = nearest(qv, i, cv, cands.length);
    console.log(`  ${arg === i ? '✓' : '✗'} ${best.toFixed(3)}  ${q}  →  ${cands[arg]}`);
  });
}

// 3. mining: margin-scored German-English pairs among 600 + 600 sentences (BUCC layout: id<TAB>sentence)
const src = 'data/sample/de-en.sample.de',
  trg = 'data/sample/de-en.sample.en',
  gold = 'data/sample/de-en.sample.gold';
cli(['mine', '--src', src, '--trg', trg, '--src-lang', 'de', '--trg-lang', 'en', '-o', `${out}/mined.tsv`]);
const text = (f) =>
  new Map(
    readFileSync(f, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t')),
  );
const de = text(src),
  en = text(trg);
const goldPairs = new Set(readFileSync(gold, 'utf8').trimEnd().split('\n'));
const mined = readFileSync(`${out}/mined.tsv`, 'utf8')
  .trimEnd()
  .split('\n')
  .map((l) => l.split('\t'));
console.log(`\nthe best of ${mined.length} mined pairs (✓: a gold pair of the sample):`);
for (const [score, s, t] of mined.slice(0, 6))
  console.log(`  ${goldPairs.has(`${s}\t${t}`) ? '✓' : ' '} ${Number(score).toFixed(3)}  ${de.get(s)}  →  ${en.get(t)}`);
cli(['eval', 'bucc', '--src', src, '--trg', trg, '--gold', gold, '--src-lang', 'de', '--trg-lang', 'en', '--json', `${out}/bucc.json`]);

console.log(`\nheat map ${out}/xsim.svg (the table above); mined pairs ${out}/mined.tsv`);
console.log('your own model: xling corpus (training data from your translations, docs/corpus.md), then xling train --config configs/general.json');
console.log(`demo done in ${((performance.now() - t0) / 1000).toFixed(0)} s`);

// The main demo: train a small multilingual encoder on the bundled gettext sample, measure its
// similarity-search error, then find translations of English sentences across languages.
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { loadSentenceEncoder } from '../dist/src/embed/model-dir.js';
import { loadNWayTsv } from '../dist/src/data/corpus.js';

const out = process.env.XLING_DEMO_DIR ?? 'runs/demo';
mkdirSync('runs', { recursive: true });
const cli = (args) => {
  console.log(`\n$ xling ${args.join(' ')}`);
  const r = spawnSync(process.execPath, ['dist/src/cli/main.js', ...args], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
};

cli(['train', '--config', 'configs/tiny-sample.json', '--data', 'data/sample/gettext.train.tsv.gz', '--dev', 'data/sample/gettext.dev.tsv.gz', '--out', out]);
cli(['eval', 'xsim', '--model', out, '--data', 'data/sample/gettext.dev.tsv.gz', '--langs', 'en,de,fr,es,ru,zh,ja', '--svg', `${out}/xsim.svg`, '--json', `${out}/xsim.json`]);

// Nearest translations: English queries against each language's dev sentences.
const model = loadSentenceEncoder(out);
const dev = await loadNWayTsv('data/sample/gettext.dev.tsv.gz');
const d = model.dim;
const queries = dev.rows.slice(0, 4).map((r) => r.get('en'));
const qv = model.embed(queries, { lang: 'en' }); // per-language centring (the model's mean vectors)
for (const lang of ['de', 'fr', 'zh', 'ru']) {
  const cands = dev.rows.map((r) => r.get(lang));
  const cv = model.embed(cands, { lang });
  console.log(`\nnearest ${lang} sentence for each English query (among ${cands.length}):`);
  queries.forEach((q, i) => {
    let best = -2, arg = -1;
    for (let j = 0; j < cands.length; j++) {
      let s = 0;
      for (let k = 0; k < d; k++) s += qv[i * d + k] * cv[j * d + k];
      if (s > best) { best = s; arg = j; }
    }
    console.log(`  ${arg === i ? '✓' : '✗'} ${best.toFixed(3)}  ${q}  →  ${cands[arg]}`);
  });
}
console.log(`\nmodel in ${out}/ (config.json, model.safetensors, tokenizer.json); heat map ${out}/xsim.svg`);

// Cross-lingual document classification table: for each model, a classifier trained on English
// document vectors (classify.train.en.tsv, as `xling classify train`), tested on every
// classify.dev.xx.tsv (transfer) and on classify.dev.en-for-xx.tsv (the same documents in English:
// the in-language upper bound), as `xling classify eval`. Markdown on stdout, JSON beside --json.
// Usage:
//   node experiments/classify-table.mjs [--dir ../shared/data/ddtp] [--type mlp|perceptron] [--json F] "label=MODEL_DIR" …
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CLASSIFIER_DEFAULTS,
  documentVectors,
  evaluateClassifier as evaluate,
  loadSentenceEncoder,
  predictClasses as predict,
  readLabelledDocs,
  trainClassifier,
} from 'xling';
import { scriptOptions } from './options.mjs';

const { args, opt } = scriptOptions();
const dir = opt('--dir', '../shared/data/ddtp'),
  type = opt('--type', 'mlp'),
  json = opt('--json');
if (!args.length) {
  console.error('usage: node experiments/classify-table.mjs [--dir D] [--type mlp|perceptron] [--json F] "label=MODEL_DIR" …');
  process.exit(2);
}
const langs = readdirSync(dir)
  .map((f) => /^classify\.dev\.([a-z_]+)\.tsv$/.exec(f)?.[1])
  .filter((l) => l && !l.startsWith('en'))
  .sort();
const pct = (x) => (100 * x).toFixed(1);
const results = {};
for (const spec of args) {
  const eq = spec.indexOf('=');
  const [label, modelDir] = eq > 0 ? [spec.slice(0, eq), spec.slice(eq + 1)] : [spec, spec];
  const model = loadSentenceEncoder(modelDir);
  const train = await readLabelledDocs(join(dir, 'classify.train.en.tsv'));
  const classes = [...new Set(train.labels)].sort();
  const clf = trainClassifier(
    documentVectors(model, train.texts, { lang: 'en' }),
    Int32Array.from(train.labels, (l) => classes.indexOf(l)),
    classes,
    { ...CLASSIFIER_DEFAULTS, type },
  );
  const accuracy = async (file, lang) => {
    const d = await readLabelledDocs(join(dir, file));
    return evaluate(
      Int32Array.from(d.labels, (l) => classes.indexOf(l)),
      predict(clf, documentVectors(model, d.texts, { lang })),
      classes,
    ).accuracy;
  };
  const rows = {};
  for (const xx of langs) rows[xx] = { transfer: await accuracy(`classify.dev.${xx}.tsv`, xx), upper: await accuracy(`classify.dev.en-for-${xx}.tsv`, 'en') };
  results[label] = rows;
  const gaps = langs.map((l) => rows[l].upper - rows[l].transfer);
  console.error(`${label}: mean transfer ${pct(langs.reduce((s, l) => s + rows[l].transfer, 0) / langs.length)}%, worst gap ${pct(Math.max(...gaps))} points`);
}
const labels = Object.keys(results);
console.log(`| language | ${labels.map((l) => `${l}: xx / en upper bound (gap)`).join(' | ')} |\n|---|${labels.map(() => '---').join('|')}|`);
for (const xx of langs)
  console.log(
    `| ${xx} | ${labels
      .map((l) => {
        const r = results[l][xx];
        return `${pct(r.transfer)} / ${pct(r.upper)} (${pct(r.upper - r.transfer)})`;
      })
      .join(' | ')} |`,
  );
const mean = (l, k) => langs.reduce((s, x) => s + results[l][x][k], 0) / langs.length;
console.log(
  `| **mean** | ${labels.map((l) => `${pct(mean(l, 'transfer'))} / ${pct(mean(l, 'upper'))} (${pct(mean(l, 'upper') - mean(l, 'transfer'))})`).join(' | ')} |`,
);
console.log(
  `| languages within 10 points | ${labels.map((l) => `${langs.filter((x) => results[l][x].upper - results[l][x].transfer <= 0.1).length} of ${langs.length}`).join(' | ')} |`,
);
if (json) writeFileSync(json, JSON.stringify({ classifier: type, languages: langs, results }, null, 1) + '\n');

// The JMT paper's Table 1 on this data, at equal CPU minutes: Sent-Avg, JMT-Sent-Avg, Sent-LSTM,
// JMT-Sent-LSTM and the no-mono variants (skip-gram without the sentences that have no English
// side). For each: dev similarity-search error, and document classification across languages —
// en→de (an MLP trained on classify.train.en.tsv, tested on classify.dev.de.tsv) and de→en (trained
// on the even-numbered documents of classify.dev.de.tsv, tested on the English versions of the odd
// ones — the file is sorted by class, so a first/second-half split would share no class —
// classify.dev.en-for-de.tsv). Usage (TABLE.md and results.json into OUT_DIR; models in OUT_DIR/runs):
//   node experiments/jmt-ablation.mjs MINUTES OUT_DIR [--only name,name] [--data TSV] [--dev TSV] [--ddtp DIR]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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
const data = opt('--data', '../shared/data/gettext/train.tsv.gz');
const dev = opt('--dev', '../shared/data/gettext/dev.tsv.gz');
const ddtp = opt('--ddtp', '../shared/data/ddtp');
const only = opt('--only', '').split(',').filter(Boolean);
const [minutes, outDir] = args;
if (!minutes || !outDir) {
  console.error('usage: node experiments/jmt-ablation.mjs MINUTES OUT_DIR [--only a,b]');
  process.exit(2);
}
const variants = {
  'Sent-Avg': { encoder: { type: 'avg' }, skipgram: { enabled: false } },
  'JMT-Sent-Avg': { encoder: { type: 'avg' } },
  'JMT-Sent-Avg no-mono': { encoder: { type: 'avg' }, skipgram: { extraMono: false } },
  'Sent-LSTM': { skipgram: { enabled: false } },
  'JMT-Sent-LSTM': {},
  'JMT-Sent-LSTM no-mono': { skipgram: { extraMono: false } },
};
mkdirSync(join(outDir, 'runs'), { recursive: true });
const resultsFile = join(outDir, 'results.json');
const results = existsSync(resultsFile) ? JSON.parse(readFileSync(resultsFile, 'utf8')) : {};

const accuracy = async (model, trainDocs, testFile, testLang, trainLang, select = () => true) => {
  const t = await readLabelledDocs(testFile);
  const keep = t.labels.map((_, i) => select(i));
  const texts = t.texts.filter((_, i) => keep[i]),
    labels = t.labels.filter((_, i) => keep[i]);
  // the classes of both sides: a class missing from a small training half is then a wrong answer, not a crash
  const classes = [...new Set([...trainDocs.labels, ...labels])].sort();
  const clf = trainClassifier(
    documentVectors(model, trainDocs.texts, { lang: trainLang }),
    Int32Array.from(trainDocs.labels, (l) => classes.indexOf(l)),
    classes,
    CLASSIFIER_DEFAULTS,
  );
  return evaluate(
    Int32Array.from(labels, (l) => classes.indexOf(l)),
    predict(clf, documentVectors(model, texts, { lang: testLang })),
    classes,
  ).accuracy;
};

for (const [name, over] of Object.entries(variants)) {
  if (only.length > 0 && !only.includes(name)) continue;
  if (results[name]) {
    console.error(`${name}: done`);
    continue;
  }
  const dir = join(outDir, 'runs', name.replace(/[^a-z0-9]+/gi, '-'));
  const cfg = { model: 'jmt', seed: 1, ...over, center: { perLang: 1000 } };
  writeFileSync(`${dir}.json`, JSON.stringify(cfg, null, 1));
  // a variant trained before (the evaluation failed or was stopped) is evaluated, not trained again
  if (!existsSync(join(dir, 'dev-xsim.json'))) {
    const r = spawnSync(
      process.execPath,
      ['dist/src/cli/main.js', 'train', '--config', `${dir}.json`, '--data', data, '--dev', dev, '--out', dir, '--budget-minutes', minutes, '--quiet'],
      { stdio: ['ignore', 'inherit', 'inherit'] },
    );
    if (r.status !== 0) process.exit(r.status ?? 1);
  }
  const model = loadSentenceEncoder(dir);
  const xsim = JSON.parse(readFileSync(join(dir, 'dev-xsim.json'), 'utf8')).average;
  const en = await readLabelledDocs(join(ddtp, 'classify.train.en.tsv'));
  const de = await readLabelledDocs(join(ddtp, 'classify.dev.de.tsv'));
  const deEven = { labels: de.labels.filter((_, i) => i % 2 === 0), texts: de.texts.filter((_, i) => i % 2 === 0) };
  results[name] = {
    xsim,
    en_de: await accuracy(model, en, join(ddtp, 'classify.dev.de.tsv'), 'de', 'en'),
    de_en: await accuracy(model, deEven, join(ddtp, 'classify.dev.en-for-de.tsv'), 'en', 'de', (i) => i % 2 === 1),
  };
  writeFileSync(resultsFile, JSON.stringify(results, null, 1) + '\n');
  console.error(`${name}: ${JSON.stringify(results[name])}`);
}
const pct = (x) => (100 * x).toFixed(1);
const rows = Object.entries(results).map(([n, r]) => `| ${n} | ${pct(r.en_de)} | ${pct(r.de_en)} | ${r.xsim.toFixed(2)} |`);
writeFileSync(
  join(outDir, 'TABLE.md'),
  `JMT ablation, ${minutes} CPU minutes each (2 threads)\n\n| variant | en→de accuracy | de→en accuracy | dev similarity-search error % |\n|---|---|---|---|\n${rows.join('\n')}\n`,
);
console.log(readFileSync(join(outDir, 'TABLE.md'), 'utf8'));

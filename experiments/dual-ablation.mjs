// Ablations of the dual encoder at equal CPU time (Yang et al. 2019, Table 1 and the margin figure):
// one direction (DE) vs both (BiDE) vs BiDE + additive margin; the margin swept over 0–0.8 with
// the mean cosine of positive pairs and of the hardest in-batch negative on dev; hard negatives;
// pooling variants (subword + n-gram tokens, averaging body). Each variant is `xling train` with
// the base configuration changed as named and the same --budget-minutes, run one after the other.
// Usage (writes TABLE.md, results.json and margin.svg into OUT_DIR; trained models in OUT_DIR/runs):
//   node experiments/dual-ablation.mjs configs/fast-1h.json 10 OUT_DIR [--only name,name] \
//        [--data ../shared/data/gettext/train.tsv.gz] [--dev ../shared/data/gettext/dev.tsv.gz]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { arange, fromArray, lineChart, loadSentenceEncoder, noGrad, tidy, xsimOnDev } from 'xling';
import { coreDevSets } from './dev-sets.mjs';
import { scriptOptions } from './options.mjs';

const { args, opt } = scriptOptions();
const data = opt('--data', '../shared/data/gettext/train.tsv.gz');
const devFile = opt('--dev', '../shared/data/gettext/dev.tsv.gz');
const dialogueFile = opt('--dialogue', '../shared/data/dialogue/dev.tsv.gz');
const only = opt('--only', '').split(',').filter(Boolean);
const [baseFile, minutes, outDir] = args;
if (!baseFile || !minutes || !outDir) {
  console.error('usage: node experiments/dual-ablation.mjs BASE.json MINUTES OUT_DIR [--only a,b]');
  process.exit(2);
}
const base = JSON.parse(readFileSync(baseFile, 'utf8'));
const merge = (a, b) => {
  const o = { ...a };
  for (const [k, v] of Object.entries(b)) o[k] = v && typeof v === 'object' && !Array.isArray(v) && a[k] && typeof a[k] === 'object' ? merge(a[k], v) : v;
  return o;
};
const margins = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8];
const subword = { vocab: { type: 'bpe', size: 16000 }, encoder: { body: 'none' } };
const variants = [
  ['DE (x→y only), margin 0.3', { loss: { bidirectional: false, margin: 0.3 } }],
  ...margins.map((m) => [`BiDE, margin ${m}`, { loss: { bidirectional: true, margin: m } }]),
  ['BiDE, margin 0.3, 1 hard negative (mined every 200 steps)', { loss: { bidirectional: true, margin: 0.3, hardNegatives: 1, mineEvery: 200 } }],
  ['subword + n-gram tokens, mean pooling', merge(subword, { encoder: { pooling: ['mean'] } })],
  ['subword + n-gram tokens, max pooling', merge(subword, { encoder: { pooling: ['max'] } })],
  ['subword + n-gram tokens, max+mean+first+attention', merge(subword, { encoder: { pooling: ['max', 'mean', 'first', 'attention'] } })],
].filter(([name]) => only.length === 0 || only.some((o) => name.includes(o)));

const { gettext: dev, dialogue } = await coreDevSets(devFile, dialogueFile);

/** Mean cosine of dev translation pairs and of each source's hardest non-translation (over all dev targets). */
function cosines(model) {
  let pos = 0,
    neg = 0,
    n = 0;
  for (const [l, p] of dev.pairs) {
    const m = p.src.length,
      d = model.dim;
    const X = model.embed(p.src, { lang: l, center: false }),
      Y = model.embed(p.en, { lang: 'en', center: false });
    const [diag, hardest] = noGrad(() =>
      tidy(() => {
        const S = fromArray(X, [m, d])
          .matmul(fromArray(Y, [m, d]).t())
          .view([-1]);
        const onDiag = arange(0, m * m, m + 1);
        return [S.indexSelect(0, onDiag).toFloat32Array(), S.indexFill(0, onDiag, -Infinity).view([m, m]).max(1)[0].toFloat32Array()];
      }),
    );
    for (let i = 0; i < m; i++) {
      pos += diag[i];
      neg += hardest[i];
      n++;
    }
  }
  return { positive: pos / n, hardestNegative: neg / n };
}

mkdirSync(join(outDir, 'runs'), { recursive: true });
const resultsFile = join(outDir, 'results.json');
const results = existsSync(resultsFile) ? JSON.parse(readFileSync(resultsFile, 'utf8')) : {};
for (const [name, change] of variants) {
  if (results[name]) {
    console.error(`[ablation] ${name}: done already`);
    continue;
  }
  const slug = name.replace(/[^a-z0-9.]+/gi, '-').toLowerCase();
  const cfgFile = join(outDir, 'runs', `${slug}.json`),
    dir = join(outDir, 'runs', slug);
  writeFileSync(cfgFile, JSON.stringify(merge(base, change), null, 1));
  console.error(`[ablation] ${name}: training ${minutes} minutes`);
  const t0 = performance.now();
  const r = spawnSync(
    process.execPath,
    ['dist/src/cli/main.js', 'train', '--config', cfgFile, '--data', data, '--out', dir, '--budget-minutes', String(minutes), '--quiet', '--force'],
    { encoding: 'utf8', stdio: ['ignore', 'inherit', 'pipe'] },
  );
  if (r.status !== 0) throw new Error(`${name}: xling train failed:\n${r.stderr.slice(-2000)}`);
  const seconds = (performance.now() - t0) / 1000;
  const log = readFileSync(join(dir, 'train-log.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const model = loadSentenceEncoder(dir);
  const raw = xsimOnDev(model, dev, { center: false }).average,
    centred = xsimOnDev(model, dev).average;
  const dial = xsimOnDev(model, dialogue, { center: false }).average;
  results[name] = {
    change,
    pairs: log.at(-1).pairs,
    steps: log.length,
    seconds: +seconds.toFixed(0),
    xsim: +raw.toFixed(2),
    xsimCentred: +centred.toFixed(2),
    dialogue: +dial.toFixed(2),
    ...cosines(model),
  };
  console.error(`[ablation] ${name}: ${JSON.stringify(results[name])}`);
  writeFileSync(resultsFile, JSON.stringify(results, null, 1) + '\n');
  rmSync(join(dir, 'checkpoint'), { recursive: true, force: true }); // 3 GB of optimiser state each
}

const rows = Object.entries(results);
const table = [
  `Base: \`${baseFile}\`, ${minutes} minutes of \`xling train\` each (preparation included), one after the other on 2 cores.`,
  `Dev: ${devFile} (12 core languages, X→en and en→X averaged); dialogue: ${dialogueFile} (8 languages). Cosines on the gettext dev pairs: positive = translation, hardest negative = the most similar non-translation among all dev targets.`,
  '',
  '| variant | pairs trained | gettext dev error % | centred | dialogue error % | mean cos positive | mean cos hardest negative |',
  '|---|---|---|---|---|---|---|',
  ...rows.map(
    ([n, r]) =>
      `| ${n} | ${r.pairs} | ${r.xsim.toFixed(2)} | ${r.xsimCentred.toFixed(2)} | ${r.dialogue.toFixed(2)} | ${r.positive.toFixed(3)} | ${r.hardestNegative.toFixed(3)} |`,
  ),
].join('\n');
writeFileSync(join(outDir, 'TABLE.md'), table + '\n');
console.log(table);
const sweep = margins.map((m) => [m, results[`BiDE, margin ${m}`]]).filter(([, r]) => r);
if (sweep.length) {
  writeFileSync(
    join(outDir, 'margin.svg'),
    lineChart({
      title: 'Additive margin: cosine of translations vs hardest non-translations (dev)',
      xLabel: 'margin m',
      yLabel: 'mean cosine',
      series: [
        { name: 'positive pairs', points: sweep.map(([m, r]) => [m, r.positive]) },
        { name: 'hardest negative', points: sweep.map(([m, r]) => [m, r.hardestNegative]) },
        { name: 'gap', points: sweep.map(([m, r]) => [m, r.positive - r.hardestNegative]), dashed: true },
      ],
    }),
  );
}

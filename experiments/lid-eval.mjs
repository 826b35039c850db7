// Accuracy of the language identifier (xling's LanguageIdentifier) on the gettext dev set: per language, per
// sentence length (characters) and by confidence (calibration), trained as `xling train` trains it
// (on the training corpus's languages). Usage:
//   node experiments/lid-eval.mjs [--train ../shared/data/gettext/train.tsv.gz] [--dev ../shared/data/gettext/dev.tsv.gz]
//        [--model DIR (use its lid.json instead of training)] [--top-k 1000] [--json out.json]
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { LanguageIdentifier, LID_CONFIDENCE, lidTrainingText, loadLanguageIdentifier, loadNWayTsv } from 'xling';

const { values: a } = parseArgs({
  options: {
    train: { type: 'string', default: '../shared/data/gettext/train.tsv.gz' },
    dev: { type: 'string', default: '../shared/data/gettext/dev.tsv.gz' },
    model: { type: 'string' },
    'top-k': { type: 'string', default: '1000' },
    json: { type: 'string' },
  },
});

let lid;
const t0 = performance.now();
if (a.model) lid = loadLanguageIdentifier(a.model);
else lid = LanguageIdentifier.train(await lidTrainingText([a.train]), { topK: Number(a['top-k']) });
const trainS = (performance.now() - t0) / 1000;
const size = Buffer.byteLength(JSON.stringify(lid.toJSON()));
const dev = await loadNWayTsv(a.dev);
const BUCKETS = [
  [1, 20],
  [21, 40],
  [41, 80],
  [81, 160],
  [161, Infinity],
];
const per = new Map(),
  byLen = BUCKETS.map(() => ({ n: 0, ok: 0 })),
  cal = Array.from({ length: 10 }, () => ({ n: 0, ok: 0, conf: 0 }));
let n = 0,
  ok = 0,
  confident = 0,
  confidentOk = 0;
const t1 = performance.now();
for (const row of dev.rows)
  for (const [l, t] of row) {
    if (!lid.languages.includes(l)) continue;
    const r = lid.identify(t);
    const right = !!r && r.lang === l,
      c = r?.confidence ?? 0;
    n++;
    if (right) ok++;
    if (c >= LID_CONFIDENCE) {
      confident++;
      if (right) confidentOk++;
    }
    const p = per.get(l) ?? { n: 0, ok: 0, confident: 0, confidentOk: 0, wrong: new Map() };
    p.n++;
    if (right) p.ok++;
    if (c >= LID_CONFIDENCE) {
      p.confident++;
      if (right) p.confidentOk++;
    }
    if (!right && r) p.wrong.set(r.lang, (p.wrong.get(r.lang) ?? 0) + 1);
    per.set(l, p);
    const len = [...t].length,
      b = BUCKETS.findIndex(([lo, hi]) => len >= lo && len <= hi);
    byLen[b].n++;
    if (right) byLen[b].ok++;
    const k = Math.min(9, Math.floor(c * 10));
    cal[k].n++;
    cal[k].conf += c;
    if (right) cal[k].ok++;
  }
const perS = (performance.now() - t1) / 1000;
const pct = (x, y) => (y ? ((100 * x) / y).toFixed(1) : '–');
console.log(
  `identifier: ${lid.languages.length} languages, ${lid.features} n-gram features, lid.json ${(size / 1024).toFixed(0)} kB, calibration T=${lid.calibration.temperature.toFixed(3)} β=${lid.calibration.lengthPower}; trained in ${trainS.toFixed(1)} s`,
);
console.log(
  `dev: ${n} sentences, accuracy ${pct(ok, n)}%; confidence ≥ ${LID_CONFIDENCE}: ${pct(confident, n)}% of sentences, ${pct(confidentOk, confident)}% of them right; ${(n / perS).toFixed(0)} sentences/s`,
);
console.log('\n| language | sentences | accuracy | confident | right when confident | most confused with |\n| --- | ---: | ---: | ---: | ---: | --- |');
for (const l of [...per.keys()].sort()) {
  const p = per.get(l);
  const conf = [...p.wrong]
    .sort((x, y) => y[1] - x[1])
    .slice(0, 2)
    .map(([w, c]) => `${w} (${c})`)
    .join(', ');
  console.log(`| ${l} | ${p.n} | ${pct(p.ok, p.n)}% | ${pct(p.confident, p.n)}% | ${pct(p.confidentOk, p.confident)}% | ${conf} |`);
}
console.log('\n| length (characters) | sentences | accuracy |\n| --- | ---: | ---: |');
BUCKETS.forEach(([lo, hi], i) => console.log(`| ${lo}–${hi === Infinity ? '' : hi} | ${byLen[i].n} | ${pct(byLen[i].ok, byLen[i].n)}% |`));
console.log('\n| confidence | sentences | mean confidence | accuracy |\n| --- | ---: | ---: | ---: |');
cal.forEach((c, i) => {
  if (c.n) console.log(`| ${(i / 10).toFixed(1)}–${((i + 1) / 10).toFixed(1)} | ${c.n} | ${(c.conf / c.n).toFixed(3)} | ${(c.ok / c.n).toFixed(3)} |`);
});
const ece = cal.reduce((acc, c) => acc + (c.n ? Math.abs(c.conf / c.n - c.ok / c.n) * c.n : 0), 0) / n;
console.log(`\nexpected calibration error (10 bins): ${ece.toFixed(4)}`);
if (a.json)
  writeFileSync(
    a.json,
    JSON.stringify(
      {
        languages: lid.languages.length,
        features: lid.features,
        bytes: size,
        accuracy: ok / n,
        confident: confident / n,
        accuracy_confident: confidentOk / confident,
        ece,
        per_language: Object.fromEntries([...per].map(([l, p]) => [l, { sentences: p.n, accuracy: p.ok / p.n }])),
        by_length: BUCKETS.map(([lo, hi], i) => ({ lo, hi: hi === Infinity ? null : hi, sentences: byLen[i].n, accuracy: byLen[i].ok / byLen[i].n })),
      },
      null,
      2,
    ) + '\n',
  );

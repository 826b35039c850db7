// Per-language similarity-search error on everyday-length text: the rows of a harvest's held-out
// documents (xling corpus --dev-out) whose English has at most --max-words words (dialogue lines,
// dictionary phrases and example sentences, children's instructions, short interface texts), every
// language with at least --min-rows such rows, at most --max-rows a language. Two ways of embedding:
// raw vectors (centre: none) and as `xling embed` does without --lang (each language's sentences
// identified by the model's language identifier and centred with that language's mean when the
// identifier is confident). X→en and en→X errors averaged; the macro average over languages.
// Rows whose English a training corpus holds (--exclude TRAIN.tsv.gz, repeatable) are left out, so
// models trained on different harvests are measured on the same held-out rows.
// Usage: node experiments/everyday-eval.mjs MODEL_DIR --general DEV.tsv.gz [--exclude TRAIN.tsv.gz …]
//        [--max-words 15] [--min-rows 50] [--max-rows 1000] [--json OUT.json]
import { writeFileSync } from 'node:fs';
import { loadSentenceEncoder, xsimOnDev } from 'xling';
import { everydayDevSet } from './dev-sets.mjs';
import { scriptOptions } from './options.mjs';

const { args, opt, all } = scriptOptions();
const excludes = all('--exclude');
const generalFile = opt('--general', null);
const maxWords = Number(opt('--max-words', '15'));
const minRows = Number(opt('--min-rows', '50'));
const maxRows = Number(opt('--max-rows', '1000'));
const jsonFile = opt('--json', null);
const [modelDir] = args;
if (!modelDir || args.length > 1 || !generalFile) {
  console.error('usage: node experiments/everyday-eval.mjs MODEL_DIR --general DEV.tsv.gz [--exclude TRAIN.tsv.gz …] [--json OUT.json]');
  process.exit(2);
}

const { rows, pairs } = await everydayDevSet(generalFile, excludes, { maxWords, minRows, maxRows });

const model = loadSentenceEncoder(modelDir);
const round = (x) => +x.toFixed(2);
const out = { rows, langs: {} };
for (const [mode, center] of [
  ['raw', false],
  ['embed', true],
]) {
  // 'embed': each side identified as xling embed identifies a whole input file
  const one = (l, p) => {
    const set = { pairs: new Map([[l, p]]) };
    if (!center) return xsimOnDev(model, set, { center: false }).langs[l];
    const X = model.embed(p.src, { lang: 'auto' }),
      Y = model.embed(p.en, { lang: 'auto' });
    return xsimPair(X, Y, p.src.length, model.dim);
  };
  let sum = 0;
  for (const [l, p] of pairs) {
    const r = one(l, p);
    const e = round((r.l2en + r.en2l) / 2);
    out.langs[l] = { ...(out.langs[l] ?? { n: p.src.length }), [mode]: e };
    sum += e;
  }
  out[mode] = round(sum / pairs.size);
}

function xsimPair(X, Y, n, d) {
  let xy = 0,
    yx = 0;
  const best = (A, B, i) => {
    let b = -1,
      bs = -Infinity;
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let k = 0; k < d; k++) s += A[i * d + k] * B[j * d + k];
      if (s > bs) {
        bs = s;
        b = j;
      }
    }
    return b;
  };
  for (let i = 0; i < n; i++) {
    if (best(X, Y, i) !== i) xy++;
    if (best(Y, X, i) !== i) yx++;
  }
  return { l2en: (100 * xy) / n, en2l: (100 * yx) / n };
}

console.log(`everyday rows (English ≤ ${maxWords} words): ${rows}; ${pairs.size} languages with ≥ ${minRows}`);
console.log(`macro average error: raw ${out.raw}%, as embed (identified, centred) ${out.embed}%`);
console.log(
  Object.entries(out.langs)
    .map(([l, v]) => `${l} ${v.raw}/${v.embed} (${v.n})`)
    .join(', '),
);
if (jsonFile) writeFileSync(jsonFile, JSON.stringify(out, null, 1) + '\n');

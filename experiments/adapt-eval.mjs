// experiments/core-eval.mjs's two figures (gettext dev, 12 languages; game-dialogue dev, 8 languages;
// X→en and en→X averaged, raw) on the first N rows of each language pair, for models too slow to
// embed the whole dev sets on a small machine (the `xling train --init` adaptation table in
// bench/RESULTS.md). Usage: node experiments/adapt-eval.mjs MODEL_DIR [--max-rows 200] [--json OUT.json]
import { writeFileSync } from 'node:fs';
import { defaultConfig, devSetOf, loadNWayTsv, loadSentenceEncoder, xsimOnDev } from 'xling';
import { DIALOGUE_LANGS } from './dev-sets.mjs';
import { scriptOptions } from './options.mjs';

const { args, opt } = scriptOptions();
const maxRows = Number(opt('--max-rows', '200'));
const jsonFile = opt('--json', null);
const [modelDir] = args;
if (!modelDir || args.length > 1 || !(maxRows > 0)) {
  console.error('usage: node experiments/adapt-eval.mjs MODEL_DIR [--max-rows N] [--json OUT.json]');
  process.exit(2);
}

// the sets of experiments/dev-sets.mjs (coreDevSets), cut to maxRows rows per language
const sets = {
  gettext: devSetOf(await loadNWayTsv('../shared/data/gettext/dev.tsv.gz'), defaultConfig().validate.langs, 200, maxRows),
  dialogue: devSetOf(await loadNWayTsv('../shared/data/dialogue/dev.tsv.gz'), DIALOGUE_LANGS, 200, maxRows),
};
const model = loadSentenceEncoder(modelDir);
const out = {};
for (const [name, set] of Object.entries(sets)) {
  const t0 = performance.now();
  out[name] = { raw: +xsimOnDev(model, set, { center: false }).average.toFixed(2), langs: set.pairs.size, rows: maxRows };
  console.log(`${name} (${set.pairs.size} languages, first ${maxRows} rows): ${out[name].raw}% in ${((performance.now() - t0) / 1000).toFixed(0)}s`);
}
if (jsonFile) writeFileSync(jsonFile, JSON.stringify(out) + '\n');

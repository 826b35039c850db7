// scripts/core-eval.mjs's two figures (gettext dev, 12 languages; game-dialogue dev, 8 languages;
// X→en and en→X averaged, raw) on the first N rows of each language pair, for models too slow to
// embed the whole dev sets on a busy machine (the `xling train --init` adaptation table in
// bench/RESULTS.md). Usage: node scripts/adapt-eval.mjs MODEL_DIR [--max-rows 200] [--json OUT.json]
import { writeFileSync } from 'node:fs';
import { loadSentenceEncoder } from '../dist/src/embed/model-dir.js';
import { xsimOnDev } from '../dist/src/train/validate.js';
import { GENERIC_DEFAULTS } from '../dist/src/models/config.js';
import { devSetOf, loadTable } from '../dist/src/train/prepare.js';
// scripts/dev-sets.mjs's dialogue languages (that file imports src/, which holds no .js)
const DIALOGUE_LANGS = ['de', 'fr', 'es', 'ru', 'it', 'pt_br', 'cs', 'sv'];

const args = process.argv.slice(2);
const opt = (name, def) => { const i = args.indexOf(name); return i >= 0 ? args.splice(i, 2)[1] : def; };
const maxRows = Number(opt('--max-rows', '200'));
const jsonFile = opt('--json', null);
const [modelDir] = args;
if (!modelDir || args.length > 1 || !(maxRows > 0)) { console.error('usage: node scripts/adapt-eval.mjs MODEL_DIR [--max-rows N] [--json OUT.json]'); process.exit(2); }

// the sets of scripts/dev-sets.mjs (coreDevSets), cut to maxRows rows per language
const sets = {
  gettext: devSetOf(await loadTable('../shared/data/gettext/dev.tsv.gz'), GENERIC_DEFAULTS.validate.langs, 200, maxRows),
  dialogue: devSetOf(await loadTable('../shared/data/dialogue/dev.tsv.gz'), DIALOGUE_LANGS, 200, maxRows),
};
const model = loadSentenceEncoder(modelDir);
const out = {};
for (const [name, set] of Object.entries(sets)) {
  const t0 = performance.now();
  out[name] = { raw: +xsimOnDev(model, set, { center: false }).average.toFixed(2), langs: set.pairs.size, rows: maxRows };
  console.log(`${name} (${set.pairs.size} languages, first ${maxRows} rows): ${out[name].raw}% in ${((performance.now() - t0) / 1000).toFixed(0)}s`);
}
if (jsonFile) writeFileSync(jsonFile, JSON.stringify(out) + '\n');

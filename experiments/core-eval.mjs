// The two dev figures the training recipes are compared on, for one model directory: similarity-search error on the
// gettext dev set (12 core languages) and on the game-dialogue dev set (8 languages, another
// domain), X→en and en→X averaged, raw and with per-language centring.
// Usage: node experiments/core-eval.mjs MODEL_DIR [--json OUT.json]
//        [--dev ../shared/data/gettext/dev.tsv.gz] [--dialogue ../shared/data/dialogue/dev.tsv.gz]
import { writeFileSync } from 'node:fs';
import { loadSentenceEncoder, xsimOnDev } from 'xling';
import { coreDevSets } from './dev-sets.mjs';
import { scriptOptions } from './options.mjs';

const { args, opt } = scriptOptions();
const devFile = opt('--dev', '../shared/data/gettext/dev.tsv.gz');
const dialogueFile = opt('--dialogue', '../shared/data/dialogue/dev.tsv.gz');
const jsonFile = opt('--json', null);
const [modelDir] = args;
if (!modelDir || args.length > 1) {
  console.error('usage: node experiments/core-eval.mjs MODEL_DIR [--json OUT.json]');
  process.exit(2);
}

const sets = await coreDevSets(devFile, dialogueFile);
const model = loadSentenceEncoder(modelDir);
const round = (x) => +x.toFixed(2);
const out = {};
for (const [name, set] of Object.entries(sets)) {
  out[name] = { raw: round(xsimOnDev(model, set, { center: false }).average), centred: round(xsimOnDev(model, set).average) };
  console.log(`${name}: ${out[name].raw}% (centred ${out[name].centred}%)`);
}
if (jsonFile) writeFileSync(jsonFile, JSON.stringify(out) + '\n');

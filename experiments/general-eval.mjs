// The figures of the general model's card for one model directory: similarity-search error (X→en
// and en→X averaged) on the gettext dev set (software messages, the trainer's 12 languages), the
// game-dialogue dev set (8 languages) and a general dev set made by xling corpus --dev-out (held-out
// documents of the harvest: game texts and documentation; every language with at least --min-rows
// rows), raw vectors (none of these models centres by default).
// Usage: node experiments/general-eval.mjs MODEL_DIR --general DEV.tsv.gz [--json OUT.json] [--min-rows 200]
//        [--dev ../shared/data/gettext/dev.tsv.gz] [--dialogue ../shared/data/dialogue/dev.tsv.gz]
import { writeFileSync } from 'node:fs';
import { devSetOf, loadNWayTsv, loadSentenceEncoder, xsimOnDev } from 'xling';
import { coreDevSets } from './dev-sets.mjs';
import { scriptOptions } from './options.mjs';

const { args, opt } = scriptOptions();
const devFile = opt('--dev', '../shared/data/gettext/dev.tsv.gz');
const dialogueFile = opt('--dialogue', '../shared/data/dialogue/dev.tsv.gz');
const generalFile = opt('--general', null);
const minRows = Number(opt('--min-rows', '200'));
const jsonFile = opt('--json', null);
const [modelDir] = args;
if (!modelDir || args.length > 1 || !generalFile) {
  console.error('usage: node experiments/general-eval.mjs MODEL_DIR --general DEV.tsv.gz [--json OUT.json]');
  process.exit(2);
}

const sets = await coreDevSets(devFile, dialogueFile);
const general = await loadNWayTsv(generalFile);
const langs = general.langs.filter((l) => l !== 'en' && general.rows.filter((r) => r.has(l) && r.has('en')).length >= minRows);
sets.general = devSetOf(general, langs, minRows, 100000);
const model = loadSentenceEncoder(modelDir);
const round = (x) => +x.toFixed(2);
const out = {};
for (const [name, set] of Object.entries(sets)) {
  const r = xsimOnDev(model, set, { center: false });
  out[name] = {
    error: round(r.average),
    langs: Object.fromEntries(Object.entries(r.langs).map(([l, v]) => [l, { n: v.n, error: round((v.l2en + v.en2l) / 2) }])),
  };
  console.log(
    `${name}: ${out[name].error}%  (${Object.entries(out[name].langs)
      .map(([l, v]) => `${l} ${v.error}`)
      .join(', ')})`,
  );
}
if (jsonFile) writeFileSync(jsonFile, JSON.stringify(out, null, 1) + '\n');

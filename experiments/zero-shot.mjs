// Zero-shot probe (the k-nn graph paper, section 5.4): similarity-search error against English for
// languages held out of training (`xling train --exclude-langs …`) next to related languages that
// were trained, on the gettext dev set, with and without per-language centring (a held-out
// language has no mean vector of its own: it is not centred).
// Usage: node experiments/zero-shot.mjs MODEL_DIR held,out,langs related,langs [--dev TSV] [--json OUT]
import { writeFileSync } from 'node:fs';
import { devSetOf, loadNWayTsv, loadSentenceEncoder, xsimOnDev } from 'xling';
import { scriptOptions } from './options.mjs';

const { args, opt } = scriptOptions();
const devFile = opt('--dev', '../shared/data/gettext/dev.tsv.gz'),
  json = opt('--json', null);
const [modelDir, heldOut, related] = args;
if (!modelDir || !heldOut || !related) {
  console.error('usage: node experiments/zero-shot.mjs MODEL_DIR held,out related,langs [--dev TSV] [--json OUT]');
  process.exit(2);
}
const model = loadSentenceEncoder(modelDir);
const table = await loadNWayTsv(devFile);
const rows = [];
for (const [group, langs] of [
  ['held out', heldOut.split(',')],
  ['trained', related.split(',')],
]) {
  for (const l of langs) {
    const dev = devSetOf(table, [l], 200, 1000);
    const raw = xsimOnDev(model, dev, { center: false }),
      centred = xsimOnDev(model, dev);
    rows.push({ lang: l, group, pairs: dev.pairs.get(l)?.src.length ?? 0, xsim: +raw.average.toFixed(2), xsimCentred: +centred.average.toFixed(2) });
    console.error(`${l} (${group}): ${raw.average.toFixed(2)}% (centred ${centred.average.toFixed(2)}%)`);
  }
}
const table_ = [
  '| language | in training | dev pairs | error % (X→en, en→X) | centred |',
  '|---|---|---|---|---|',
  ...rows.map((r) => `| ${r.lang} | ${r.group === 'trained' ? 'yes' : '**no**'} | ${r.pairs} | ${r.xsim.toFixed(2)} | ${r.xsimCentred.toFixed(2)} |`),
].join('\n');
console.log(table_);
if (json) writeFileSync(json, JSON.stringify({ model: modelDir, dev: devFile, rows }, null, 1) + '\n');

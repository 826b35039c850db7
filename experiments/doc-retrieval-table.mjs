// Document retrieval P@1 on ../shared/data/ddtp/docs.dev.xx-en.tsv.gz for every language, both
// directions, by cosine and by ratio margin, with document vectors = the mean of sentence vectors
// (xling's documentVectors). Each side is centred with its own language's mean vector when the model
// has one (as `xling embed --lang`); the same figures as `xling eval retrieval --docs FILE --model M`
// for each file. Usage:
//   node experiments/doc-retrieval-table.mjs MODEL_DIR [MODEL_DIR2 …] [--dir ../shared/data/ddtp] > table.md
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { documentRetrieval, documentVectors, loadSentenceEncoder, readParallelDocs } from 'xling';

const args = process.argv.slice(2);
const di = args.indexOf('--dir');
const dir = di >= 0 ? args.splice(di, 2)[1] : '../shared/data/ddtp';
if (!args.length) {
  console.error('usage: node experiments/doc-retrieval-table.mjs MODEL_DIR [MODEL_DIR2 …] [--dir ../shared/data/ddtp]');
  process.exit(2);
}
const files = readdirSync(dir)
  .filter((f) => /^docs\.dev\..+-en\.tsv\.gz$/.test(f))
  .sort();
const pct = (x) => (100 * x).toFixed(1);
for (const modelDir of args) {
  const model = loadSentenceEncoder(modelDir);
  console.log(`\n${modelDir}\n\n| language | docs | cosine xx→en | cosine en→xx | margin xx→en | margin en→xx |\n|---|---|---|---|---|---|`);
  const avg = [0, 0, 0, 0];
  for (const f of files) {
    const xx = f.split('.')[2].replace(/-en$/, '');
    const { src, trg } = await readParallelDocs(join(dir, f));
    const X = documentVectors(model, src, { lang: xx }),
      Y = documentVectors(model, trg, { lang: 'en' });
    const cos = documentRetrieval(X, Y, model.dim),
      mar = documentRetrieval(X, Y, model.dim, { margin: true });
    const row = [cos.forward.p1, cos.backward.p1, mar.forward.p1, mar.backward.p1];
    row.forEach((v, i) => {
      avg[i] += v / files.length;
    });
    console.log(`| ${xx} | ${src.length} | ${row.map(pct).join(' | ')} |`);
  }
  console.log(`| **average** | | ${avg.map(pct).join(' | ')} |`);
}

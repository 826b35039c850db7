// Examples from a built graph in the style of Schwenk, Kiela & Douze (2019): multilingual
// paraphrase lists (a new sentence's nearest sentences of the collection, every language) and
// minimax trajectories between two sentences (snapped to the collection; edges walked both ways). Loads the graph and the
// model once; writes Markdown (and the same as JSON next to it).
//   node experiments/graph-examples.mjs GRAPH_DIR OUT.md [--model DIR] [-k 12]
// The queries and the sentence pairs are the lists below (English, written for this; not in the corpus).
import { writeFileSync } from 'node:fs';
import { GraphReader, loadSentenceEncoder, minimaxPath, neighboursOfText, openGraphIndex as openIndex, snap } from 'xling';
import { scriptOptions } from './options.mjs';

const { args, opt } = scriptOptions();
const modelDir = opt('--model', undefined),
  k = Number(opt('-k', '12'));
const [graphDir, out] = args;
if (!graphDir || !out) {
  console.error('usage: node experiments/graph-examples.mjs GRAPH_DIR OUT.md [--model DIR] [-k 12]');
  process.exit(2);
}

const paraphraseQueries = [
  'The file could not be saved because the disk is full.',
  'Are you sure you want to delete these messages?',
  'Please enter your password to continue.',
  'The connection to the server was lost.',
  'Print the selected pages.',
];
const trajectories = [
  ['Open the file.', 'Save the file under another name.'],
  ['The password is wrong.', 'The user name is wrong.'],
  ['Download the latest updates.', 'Install the selected packages.'],
  ['Show hidden files.', 'Hide the toolbar.'],
  ['The network is unreachable.', 'The server is not responding.'],
  ['Open the file.', 'Close the window.'],
];

const g = new GraphReader(graphDir);
const model = loadSentenceEncoder(modelDir ?? g.meta.model.dir);
const index = openIndex(graphDir);
const md = [],
  json = { paraphrases: [], trajectories: [] };
const cell = (s) => s.replace(/\|/g, '\\|');
md.push(`Graph \`${graphDir}\`: ${g.size} sentences, k = ${g.meta.k}. Distances are cosine distances (1 − cos) of the centred, normalised vectors.`, '');
md.push('### Multilingual paraphrases', '');
for (const q of paraphraseQueries) {
  const r = neighboursOfText(g, model, index, q, { k, lang: 'en' });
  json.paraphrases.push({ query: q, neighbours: r.neighbours });
  md.push(`**"${q}"**`, '', '| distance | lang | sentence |', '|---|---|---|');
  for (const n of r.neighbours) md.push(`| ${n.distance.toFixed(3)} | ${n.lang} | ${cell(n.text)} |`);
  md.push('');
}
md.push('### Minimax trajectories', '');
for (const [a, b] of trajectories) {
  const ends = [snap(g, model, index, a), snap(g, model, index, b)];
  const p = minimaxPath((i) => g.undirectedRow(i), g.size, ends[0], ends[1]); // edges both ways (xling graph path --undirected)
  if (!p) {
    md.push(`"${a}" → "${b}": no path along the graph's edges`, '');
    continue;
  }
  const steps = p.steps.map((s) => ({ ...s, text: g.store.text(s.id), lang: g.store.lang(s.id) }));
  json.trajectories.push({ from: a, to: b, maxStep: p.maxStep, visited: p.visited, steps });
  md.push(
    `**"${a}" → "${b}"** (snapped to #${ends[0]} and #${ends[1]}; largest step ${p.maxStep.toFixed(3)}, ${steps.length - 1} steps, ${p.visited} sentences visited)`,
    '',
    '| step | distance | lang | sentence |',
    '|---|---|---|---|',
  );
  steps.forEach((s, i) => md.push(`| ${i} | ${i ? s.distance.toFixed(3) : ''} | ${s.lang} | ${cell(s.text)} |`));
  md.push('');
}
index.dispose();
g.close();
writeFileSync(out, md.join('\n'));
writeFileSync(out.replace(/\.md$/, '') + '.json', JSON.stringify(json, null, 1) + '\n');
console.error(`wrote ${out}`);

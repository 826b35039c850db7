// xling analyze vocab: how the languages of a collection share a model's vocabulary.
import { analyzeVocabulary } from '../analyze/vocab-run.js';
import { parseSources, sourcePath } from '../train-data/sources.js';
import { command } from './command.js';
import { DEFAULTED_MODEL_OPTION, modelOrDefault } from './default-model.js';
import { checkPaths, summaryWriter, writeJsonOutput, writeTextOutput } from './io.js';

export const analyzeVocabCommand = command(
  ['analyze', 'vocab'],
  {
    name: 'xling analyze vocab',
    summary: "how languages share a model's vocabulary: tokens per language, tokens of one language only, symmetrised KL divergences, a neighbour-joining tree",
    description:
      "Token distributions over a seeded sample of each language's sentences (a reservoir: the collection is streamed). " +
      "KL(P‖Q) + KL(Q‖P) is computed over the union of both languages' token types with add-alpha smoothing (--alpha), " +
      "and the tree is Saitou & Nei's neighbour joining over that matrix, drawn with branch lengths to scale. " +
      "Languages whose script the model's tokenizer romanises are marked.",
    options: {
      model: DEFAULTED_MODEL_OPTION,
      data: {
        type: 'list',
        splitCommas: false,
        required: true,
        metavar: 'SRC',
        help: 'sentences: an N-way TSV(.gz) (every column; TSV:de,en for some), or LANG=FILE; repeatable; - (or LANG=-) for standard input',
      },
      sample: { type: 'number', default: 20000, range: { int: true, min: 1 }, help: 'sentences per language' },
      alpha: { type: 'number', default: 0.5, range: { above: 0 }, help: 'add-alpha smoothing of token counts' },
      minSentences: { type: 'number', default: 50, range: { int: true, min: 1 }, help: 'leave out languages with fewer sentences' },
      seed: { type: 'number', default: 1, range: { int: true, min: 0 }, help: 'random seed of the sentence sample' },
      json: { type: 'string', metavar: 'FILE', help: 'per-language counts, the divergence matrix and the tree' },
      newick: { type: 'string', metavar: 'FILE', help: 'the tree in Newick format' },
      svg: { type: 'string', metavar: 'FILE', help: 'the tree drawn to scale' },
    },
    examples: ['xling analyze vocab --data data/sample/gettext.train.tsv.gz --svg vocab-tree.svg --newick vocab-tree.nwk'],
  },
  async (a) => {
    const sources = parseSources(a.data);
    const modelDir = modelOrDefault(a.model);
    checkPaths([
      ['--model', modelDir, 'in-dir'],
      ...sources.map((s) => ['--data', sourcePath(s), 'in-text'] as const),
      ['--json', a.json, 'out-text'],
      ['--newick', a.newick, 'out-text'],
      ['--svg', a.svg, 'out-text'],
    ]);
    const r = await analyzeVocabulary({ modelDir, sources, data: a.data, sample: a.sample, alpha: a.alpha, minSentences: a.minSentences, seed: a.seed });
    const say = summaryWriter(a.json, a.newick, a.svg);
    say(r.table);
    if (a.newick !== '-') say(`${r.newick}\n`);
    if (a.newick) writeTextOutput(a.newick, r.newick + '\n');
    if (a.svg) writeTextOutput(a.svg, r.svg);
    if (a.json) writeJsonOutput(a.json, r.json);
  },
);

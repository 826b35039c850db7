// xling analyze vocab: how the languages of a collection share a model's vocabulary.
import { parseSources, readSources, sourcePath } from '../train-data/sources.js';
import { loadSentenceEncoder } from '../embed/model-dir.js';
import { neighbourJoining, symmetricKL, tokenCounts, toNewick, treeSvg, vocabularyUse } from '../analyze/vocab.js';
import { Rng } from '../util/rng.js';
import { command } from './command.js';
import { DEFAULTED_MODEL_OPTION, modelOrDefault } from './default-model.js';
import { checkPaths, summaryWriter, writeJsonOutput, writeTextOutput } from './io.js';
import { cutLinesWarning } from './vectors.js';

/** Letters a romanising tokenizer rewrites (Cyrillic, Greek). */
const ROMANISED_SCRIPT = /[\u0370-\u03ff\u1f00-\u1fff\u0400-\u052f]/u;

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
    a.model = modelOrDefault(a.model);
    checkPaths([
      ['--model', a.model, 'in-dir'],
      ...sources.map((s) => ['--data', sourcePath(s), 'in-text'] as const),
      ['--json', a.json, 'out-text'],
      ['--newick', a.newick, 'out-text'],
      ['--svg', a.svg, 'out-text'],
    ]);
    const model = loadSentenceEncoder(a.model);
    const tok = model.tokenizer;
    const romanises = !!(tok as { norm?: { romanize?: boolean } }).norm?.romanize;

    // a seeded reservoir per language (Algorithm R) keeps memory bounded by --sample
    const reservoirs = new Map<string, { seen: number; kept: string[]; rng: Rng; script: number }>();
    for await (const { lang, text } of readSources(sources)) {
      let r = reservoirs.get(lang);
      if (!r) reservoirs.set(lang, (r = { seen: 0, kept: [], rng: new Rng(`${a.seed}:${lang}`), script: 0 }));
      if (ROMANISED_SCRIPT.test(text)) r.script++;
      const j = r.seen++ < a.sample ? r.kept.length : r.rng.int(r.seen);
      if (j < a.sample) r.kept[j] = text;
    }
    const byLang = new Map([...reservoirs].filter(([, r]) => r.seen >= a.minSentences).map(([l, r]) => [l, r.kept]));
    const skipped = [...reservoirs].filter(([, r]) => r.seen < a.minSentences).map(([l]) => l);
    if (skipped.length) process.stderr.write(`[vocab] left out (fewer than --min-sentences ${a.minSentences} sentences): ${skipped.join(', ')}\n`);
    if (byLang.size < 2)
      throw new Error(
        `--data: ${byLang.size} language(s) with at least --min-sentences ${a.minSentences} sentences; the analysis needs two or more (give a lower --min-sentences to keep languages with fewer)`,
      );

    const cutBefore = tok.truncated ?? 0;
    const langs = tokenCounts(tok, byLang, a.sample, a.seed).sort((x, y) => x.lang.localeCompare(y.lang));
    const cut = (tok.truncated ?? 0) - cutBefore;
    if (cut)
      process.stderr.write(
        cutLinesWarning(
          'vocab',
          `--data ${a.data.join(' ')}`,
          cut,
          [...byLang.values()].reduce((n, x) => n + x.length, 0),
        ),
      );
    const use = vocabularyUse(langs);
    const names = langs.map((l) => l.lang);
    const dist = langs.map((p) => langs.map((q) => (p === q ? 0 : symmetricKL(p, q, a.alpha))));
    const tree = neighbourJoining(names, dist);
    const marked = new Set(romanises ? names.filter((l) => reservoirs.get(l)!.script > reservoirs.get(l)!.seen / 2) : []);
    const vocabSize = tok.vocabSize;

    const say = summaryWriter(a.json, a.newick, a.svg);
    say(`${'lang'.padEnd(8)}${'sentences'.padStart(10)}${'tokens'.padStart(10)}${'types'.padStart(9)}${'% vocab'.padStart(9)}${'only this'.padStart(11)}\n`);
    for (const u of use)
      say(
        `${(u.lang + (marked.has(u.lang) ? '*' : '')).padEnd(8)}${String(byLang.get(u.lang)!.length).padStart(10)}${String(u.tokens).padStart(10)}${String(u.types).padStart(9)}${((100 * u.types) / vocabSize).toFixed(2).padStart(9)}${String(u.onlyThisLanguage).padStart(11)}\n`,
      );
    if (marked.size) say('* romanised by the tokenizer\n');
    const newick = toNewick(tree);
    if (a.newick !== '-') say(`${newick}\n`);
    if (a.newick) writeTextOutput(a.newick, newick + '\n');
    if (a.svg) writeTextOutput(a.svg, treeSvg(tree, { title: `Vocabulary use: neighbour joining over symmetrised KL (${names.length} languages)`, marked }));
    if (a.json) {
      writeJsonOutput(a.json, {
        model: a.model,
        vocab_size: vocabSize,
        sample: a.sample,
        alpha: a.alpha,
        smoothing: "add-alpha over the union of both languages' token types",
        languages: use.map((u) => ({ ...u, sentences: byLang.get(u.lang)!.length, romanised: marked.has(u.lang) })),
        symmetric_kl: Object.fromEntries(names.map((l, i) => [l, Object.fromEntries(names.map((m, j) => [m, +dist[i]![j]!.toFixed(6)]))])),
        newick,
      });
    }
  },
);

// xling corpus: parallel training data from translation sources (gettext catalogs, TMX, XLIFF,
// Moses corpora, CLDR annotations and locale data, dictionaries, translated document sets, Debian packages).
import { buildCorpus } from '../corpus/build.js';
import { corpusSummaryText, problemText } from '../corpus/summary.js';
import { existsSync, statSync } from 'node:fs';
import { embedderOf, SentenceEmbedder } from '../align/align.js';
import { loadEncoderForRuntime } from '../embed/portable.js';
import { command, usage } from './command.js';
import { modelOrDefault } from './default-model.js';
import { checkPaths, writeJsonOutput } from './io.js';

/** The encoder, loaded when a document set first needs it. */
function lazyEmbedder(model: string | undefined): () => Promise<SentenceEmbedder> {
  let e: SentenceEmbedder | undefined;
  return async () => (e ??= embedderOf(loadEncoderForRuntime(modelOrDefault(model))));
}

export const corpusCommand = command(
  ['corpus'],
  {
    name: 'xling corpus',
    summary: 'build an N-way parallel TSV (through English) or a pairwise TSV from translation sources',
    description:
      'SOURCE: a file or a folder (walked whole: an extracted package, a po/ folder, a folder per language of translated documents) or a .deb file; --debian fetches packages by name with apt-get download. Units are cleaned (markup, accelerators, placeholders, whitespace), paired through English, deduplicated (the most frequent translation per language), and written with a #source column; a summary of rows per source and language goes to stderr (--stats: JSON). Bad files are reported and skipped.',
    positionals: [
      {
        name: 'sources',
        variadic: true,
        help: "files or folders of .po/.mo catalogs, TMX, XLIFF, Moses pairs, CLDR annotations and locale data, Ding, EDICT and FreeDict dictionaries, Ren'Py translations, FreeOrion string tables, MegaGlest language files, Fish Fillets dialogues, Chromium locale packs, Mozilla language packs, MediaWiki message files, document sets; .deb files",
      },
    ],
    options: {
      out: { type: 'string', required: true, metavar: 'TSV', help: 'the corpus (.gz compresses)' },
      format: {
        type: 'string',
        default: 'nway',
        choices: ['nway', 'pairs'],
        help: 'nway: one row per English text, a column per language; pairs: lang1, lang2, text1, text2',
      },
      debian: {
        type: 'list',
        metavar: 'PKG',
        help: 'Debian packages to fetch with apt-get download (nothing is installed) and read; PKG:FOLDER reads one folder of the package',
      },
      cache: { type: 'string', metavar: 'DIR', help: 'where --debian keeps downloaded packages (default ~/.cache/xling/debian)' },
      devOut: { type: 'string', metavar: 'TSV', help: 'write a dev set of held-out documents here (with --dev-fraction)' },
      devFraction: { type: 'number', range: { min: 0, max: 0.5 }, help: 'share of documents held out for --dev-out (default 0.02)' },
      minWords: { type: 'number', range: { int: true, min: 1 }, help: 'fewest English words a row keeps (default by kind: 3; phrases 1)' },
      maxWords: { type: 'number', range: { int: true, min: 1 }, help: 'most English words a row keeps (default by kind: messages 60, prose 80)' },
      minLangRows: { type: 'number', default: 50, range: { int: true, min: 1 }, help: 'languages with fewer rows are left out' },
      model: { type: 'string', metavar: 'DIR', help: "the encoder aligning document paragraphs whose sentence counts differ (default: xling's default model)" },
      noAlign: { type: 'boolean', default: false, help: 'pair only paragraphs with equal sentence counts (no encoder)' },
      stats: { type: 'string', metavar: 'JSON', help: 'the summary as JSON (- for standard output)' },
      quiet: { type: 'boolean', default: false, help: 'no progress lines' },
    },
    examples: [
      'xling corpus po/ -o corpus.tsv.gz',
      'xling corpus --debian cataclysm-dda-data gnome-user-docs -o general.tsv.gz --dev-out general.dev.tsv.gz --dev-fraction 0.02',
      'xling corpus memory.tmx --format pairs -o pairs.tsv',
    ],
  },
  async (a) => {
    if (!a._.length && !a.debian.length) usage('give at least one SOURCE or --debian PACKAGE');
    if (a.devFraction !== undefined && a.devOut === undefined) usage('--dev-fraction needs --dev-out');
    if (a.noAlign && a.model !== undefined) usage('--no-align and --model exclude each other');
    if (a.minWords !== undefined && a.maxWords !== undefined && a.minWords > a.maxWords) usage('--min-words is larger than --max-words');
    for (const s of a._) if (!existsSync(s)) throw new Error(`cannot read ${s}: no such file or folder`);
    checkPaths([
      ...a._.map((s) => ['<sources>', s, statSync(s).isDirectory() ? 'in-dir' : 'in'] as const),
      ['--out', a.out, 'out'],
      ['--dev-out', a.devOut, 'out'],
      ['--stats', a.stats, 'out-text'],
      ['--model', a.model, 'in-dir'],
    ]);
    const problems: string[] = [];
    const summary = await buildCorpus({
      ...a,
      sources: a._,
      format: a.format as 'nway' | 'pairs',
      cacheDir: a.cache,
      devFraction: a.devOut !== undefined ? (a.devFraction ?? 0.02) : undefined,
      align: a.noAlign ? undefined : lazyEmbedder(a.model),
      onProblem: (p) => {
        problems.push(problemText(p));
        process.stderr.write(`[corpus] skipped ${problemText(p)}\n`);
      },
    });
    process.stderr.write(corpusSummaryText(summary, a.out, a.devOut));
    if (a.stats) writeJsonOutput(a.stats, { ...summary, skipped: problems });
  },
);

// xling align: sentence alignment of a document and its translation (or of many pairs), by
// vecalign's dynamic programming over the model's sentence embeddings (src/align/).
import { AlignFormat, AlignJob, alignFiles, modelEmbedder, readPairList } from '../align/files.js';
import { setComputeThreads } from '../tensor/backend.js';
import { command, usage } from './command.js';
import { DEFAULTED_MODEL_OPTION } from './default-model.js';
import { checkPaths, PathArg, writeTextOutput } from './io.js';
import { EMBED_OPTIONS, LANG_HELP } from './vectors.js';

/** The pairs to align (one, or --pairs' list), their files checked before any work. */
async function alignJobs(a: { pairs?: string; src?: string; trg?: string; model?: string; output: string }, format: AlignFormat): Promise<AlignJob[]> {
  if (!a.pairs) {
    checkPaths([
      ['--src', a.src, 'in-text'],
      ['--trg', a.trg, 'in-text'],
      ['--model', a.model, 'in-dir'],
      ['--output', a.output, 'out-text'],
    ]);
    return [{ src: a.src!, trg: a.trg!, out: a.output, srcWhat: '--src', trgWhat: '--trg' }];
  }
  const given: PathArg[] = [
    ['--pairs', a.pairs, 'in-text'],
    ['--model', a.model, 'in-dir'],
  ];
  checkPaths(given);
  const jobs = await readPairList(a.pairs, a.output, format);
  const paths = [...given];
  for (const j of jobs) paths.push([j.srcWhat, j.src, 'in'], [j.trgWhat, j.trg, 'in']);
  for (const j of jobs) paths.push([`${j.srcWhat.replace(/: source$/, '')}: output`, j.out, 'out']);
  checkPaths(paths);
  return jobs;
}

export const alignCommand = command(
  ['align'],
  {
    name: 'xling align',
    summary: 'align the sentences of a document and its translation (vecalign)',
    options: {
      src: { type: 'string', metavar: 'FILE', help: 'source document, one sentence per line (gzip allowed; - for standard input)' },
      trg: { type: 'string', metavar: 'FILE', help: 'its translation, one sentence per line' },
      pairs: {
        type: 'string',
        metavar: 'TSV',
        help: "many documents instead: lines src_path<TAB>trg_path[<TAB>out_name] (paths relative to the list's folder; out_name default: the source's name + .tsv or .align); -o is then a directory",
      },
      model: DEFAULTED_MODEL_OPTION,
      output: {
        type: 'string',
        alias: 'o',
        required: true,
        metavar: 'FILE',
        help: 'the alignment (- for standard output), or with --pairs the directory of one alignment per pair',
      },
      format: {
        type: 'string',
        choices: ['tsv', 'vecalign'],
        default: 'tsv',
        help: 'tsv: a header, then cost<TAB>src_ids<TAB>trg_ids<TAB>src_text<TAB>trg_text per group (ids 0-based line numbers, comma-joined); vecalign: its [0, 1]:[2]:0.123456 lines, unaligned sentences included',
      },
      deletions: { type: 'boolean', default: false, help: 'tsv: also the rows of unaligned sentences (one side empty)' },
      srcLang: { type: 'string', help: `language of --src: ${LANG_HELP}` },
      trgLang: { type: 'string', help: 'language of --trg (as --src-lang)' },
      maxGroup: {
        type: 'number',
        default: 4,
        range: { int: true, min: 2, max: 8 },
        help: 'groups of x:y sentences with x + y ≤ N (4: 1:1, 1:2, 2:1, 2:2, 1:3, 3:1; vecalign -a)',
      },
      delPercentile: {
        type: 'number',
        default: 0.2,
        range: { min: 0, max: 1 },
        help: 'a sentence left unaligned costs this quantile of the costs of random 1:1 pairs (higher: fewer unaligned; vecalign -d)',
      },
      center: EMBED_OPTIONS.center,
      threads: { type: 'number', range: { int: true, min: 1 }, help: 'threads that compute (default: all cores)' },
    },
  },
  async (a) => {
    if (a.pairs && (a.src || a.trg)) usage('give --src and --trg, or --pairs, not both');
    if (!a.pairs && (!a.src || !a.trg))
      usage(a.src || a.trg ? `give ${a.src ? '--trg' : '--src'} too (or --pairs for many documents)` : 'give --src and --trg (or --pairs)');
    if (a.pairs && a.output === '-') usage('--pairs writes one file per pair: -o must be a directory');
    const format = a.format as AlignFormat;
    const jobs = await alignJobs(a, format);
    if (a.threads) setComputeThreads(a.threads);
    // the documents are read (an empty one refused) before the model is loaded and the languages checked against it
    const r = await alignFiles(jobs, modelEmbedder(a.model, { srcLang: a.srcLang, trgLang: a.trgLang, center: a.center }), {
      format,
      deletions: a.deletions,
      maxGroup: a.maxGroup,
      delPercentile: a.delPercentile,
      write: writeTextOutput,
      log: (l) => process.stderr.write(`[align] ${l}\n`),
    });
    if (jobs.length > 1)
      process.stderr.write(`[align] ${r.pairs} document pairs: ${r.groups - r.deletions} groups, ${r.deletions} unaligned sentences → ${a.output}\n`);
  },
);

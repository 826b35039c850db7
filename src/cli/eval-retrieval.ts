// xling eval retrieval: P@1/3/10 of finding the aligned row (or same-id row), both directions —
// over two vector files, or (--docs) over parallel documents embedded with a model, by cosine and
// by margin (src/eval/retrieval.ts, src/eval/documents.ts).
import { documentRetrievalRun } from '../eval/documents.js';
import { retrievalSummary, vectorRetrieval } from '../eval/retrieval.js';
import { kebab } from '../util/args.js';
import { modelOrDefault } from './default-model.js';
import { command, usage } from './command.js';
import { checkPaths, summaryWriter, writeJsonOutput } from './io.js';

export const evalRetrievalCommand = command(
  ['eval', 'retrieval'],
  {
    name: 'xling eval retrieval',
    summary: 'P@1/3/10 of finding aligned sentences or documents',
    options: {
      srcVectors: { type: 'string', metavar: 'NPY', help: 'source vectors (required unless --docs)' },
      trgVectors: { type: 'string', metavar: 'NPY', help: 'target vectors, row i aligned with source row i (required unless --docs)' },
      docs: {
        type: 'string',
        metavar: 'TSV',
        help: 'parallel documents (id<TAB>source text<TAB>target text, .gz allowed, - for standard input) embedded with --model: document vector = mean of its sentence vectors; P@k by cosine and by ratio margin',
      },
      model: { type: 'string', metavar: 'DIR', help: 'model directory (with --docs; default: the model that comes with xling, models/default)' },
      srcLang: {
        type: 'string',
        metavar: 'LANG',
        help: "language of the --docs source side for per-language centring (default: from a name like docs.dev.de-en.tsv.gz, else 'auto')",
      },
      trgLang: { type: 'string', metavar: 'LANG', help: 'language of the --docs target side (default as --src-lang)' },
      srcIds: { type: 'string', metavar: 'FILE', help: 'one id per row (e.g. OUTPUT.ids of `xling embed --docs`); align by id instead of row' },
      trgIds: { type: 'string', metavar: 'FILE', help: 'ids of the target rows, one a line (as --src-ids)' },
      index: { type: 'string', metavar: 'FAISS', help: 'forward search through this index over the target vectors (recall vs exact is reported)' },
      nprobe: { type: 'number', range: { int: true, min: 1 }, help: 'nprobe for --index (IVF indexes)' },
      json: { type: 'string', metavar: 'FILE', help: 'write the figures as JSON (fractions; - for standard output, the summary then goes to standard error)' },
    },
    examples: ['xling eval retrieval --docs docs.de-en.tsv.gz --json r.json', 'xling eval retrieval --src-vectors de.npy --trg-vectors en.npy'],
  },
  async (a) => {
    if (a.docs !== undefined) return evalDocs(a);
    for (const flag of ['model', 'srcLang', 'trgLang'] as const) if (a[flag] !== undefined) usage(`--${kebab(flag)} applies to --docs`);
    if (a.srcVectors === undefined || a.trgVectors === undefined) usage('give --src-vectors and --trg-vectors, or --docs with --model');
    if (a.nprobe !== undefined && !a.index) usage('--nprobe applies to --index');
    checkPaths([
      ['--src-vectors', a.srcVectors, 'in'],
      ['--trg-vectors', a.trgVectors, 'in'],
      ['--src-ids', a.srcIds, 'in-text'],
      ['--trg-ids', a.trgIds, 'in-text'],
      ['--index', a.index, 'in'],
      ['--json', a.json, 'out-text'],
    ]);
    const out = await vectorRetrieval({ ...a, srcVectors: a.srcVectors, trgVectors: a.trgVectors });
    summaryWriter(a.json)(retrievalSummary(out));
    if (a.json) writeJsonOutput(a.json, out);
  },
);

/** --docs: the options that do not apply refused, the files checked, one library call. */
async function evalDocs(a: {
  docs?: string;
  model?: string;
  srcLang?: string;
  trgLang?: string;
  srcVectors?: string;
  trgVectors?: string;
  srcIds?: string;
  trgIds?: string;
  index?: string;
  nprobe?: number;
  json?: string;
}): Promise<void> {
  for (const flag of ['srcVectors', 'trgVectors', 'srcIds', 'trgIds', 'index', 'nprobe'] as const)
    if (a[flag] !== undefined) usage(`--${kebab(flag)} does not apply to --docs (documents are aligned by line)`);
  const model = modelOrDefault(a.model);
  checkPaths([
    ['--docs', a.docs, 'in-text'],
    ['--model', model, 'in-dir'],
    ['--json', a.json, 'out-text'],
  ]);
  const r = await documentRetrievalRun({ docs: a.docs!, model, srcLang: a.srcLang, trgLang: a.trgLang });
  summaryWriter(a.json)(r.summary);
  if (a.json) writeJsonOutput(a.json, r.report);
}

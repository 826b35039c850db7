// xling eval xsim: the similarity-search error matrix over the languages of an N-way TSV.
import { loadEncoderForRuntime } from '../embed/portable.js';
import { setComputeThreads } from '../tensor/backend.js';
import { formatXsimMatrix } from '../eval/xsim-matrix.js';
import { runXsim, shortPairs, xsimHeatmap, xsimJson } from '../eval/xsim-run.js';
import { parseLangFile, readLines } from '../io/input.js';
import { loadTable, NWayTable } from '../train/prepare.js';
import { modelOrDefault } from './default-model.js';
import { command, usage } from './command.js';
import { checkPaths, summaryWriter, writeJsonOutput, writeTextOutput } from './io.js';

/** Line-aligned files, one language each, as an N-way table (an empty line: no sentence in that row). */
async function alignedFiles(files: { lang: string; file: string }[]): Promise<NWayTable> {
  const langs = files.map((x) => x.lang);
  const dup = langs.find((l, i) => langs.indexOf(l) !== i);
  if (dup) usage(`--data: ${dup} is given twice`);
  const rows: Map<string, string>[] = [];
  let first: { file: string; n: number } | undefined;
  for (const { lang, file } of files) {
    let n = 0;
    for await (const { line } of readLines(file)) {
      const row = rows[n] ?? (rows[n] = new Map());
      if (line.trim()) row.set(lang, line);
      n++;
    }
    if (first && n !== first.n) throw new Error(`--data: ${file} has ${n} lines, ${first.file} ${first.n}; the files must be line-aligned`);
    first ??= { file, n };
  }
  return { langs, rows };
}

export const evalXsimCommand = command(
  ['eval', 'xsim'],
  {
    name: 'xling eval xsim',
    summary: 'similarity-search error between every pair of languages',
    options: {
      model: { type: 'string', metavar: 'DIR', help: 'model directory (or give --vectors; default: the model that comes with xling, models/default)' },
      vectors: { type: 'string', metavar: 'DIR', help: 'precomputed LANG.npy files, one row per TSV row (rows with an empty cell are ignored)' },
      data: {
        type: 'list',
        splitCommas: false,
        required: true,
        metavar: 'SRC',
        help: "N-way parallel TSV(.gz), e.g. dev.tsv.gz (- for standard input); or LANG=FILE, repeated: line-aligned files of one language each (as LASER's xsim)",
      },
      langs: { type: 'list', help: 'languages, two or more (default: all columns)' },
      mode: {
        type: 'string',
        default: 'index',
        choices: ['index', 'text'],
        help: 'index: only the aligned row is correct; text: an identical string also counts',
      },
      center: { type: 'boolean', default: true, help: "subtract the model's per-language mean vectors (--no-center: plain vectors)" },
      identify: {
        type: 'boolean',
        default: false,
        help: "centre each column with the language identified from its sentences (the model's identifier, used when its confidence is at least 0.5), as xling embed does by default, instead of the column's name",
      },
      forceCenter: { type: 'boolean', default: false, help: "centre even when the model's per-language mean vectors are too small to matter" },
      minRows: { type: 'number', default: 100, range: { int: true, min: 1 }, help: 'skip language pairs with fewer common rows' },
      json: { type: 'string', metavar: 'FILE', help: 'write the matrix as JSON (error rates as fractions; - for standard output)' },
      svg: { type: 'string', metavar: 'FILE', help: 'write the heat map as SVG (- for standard output)' },
      threads: { type: 'number', range: { int: true, min: 1 }, help: 'threads that compute (default: all cores)' },
    },
  },
  async (a) => {
    if (a.threads) setComputeThreads(a.threads);
    if (a.model && a.vectors) usage('give --model or --vectors, not both');
    if (a.langs.length && new Set(a.langs).size < 2)
      usage(`--langs: give two or more languages (the error rate is between languages), got '${a.langs.join(',')}'`);
    const files = a.data.map((d) => {
      const p = parseLangFile(d, '--data');
      return { lang: p.lang ?? '', file: p.file };
    });
    if (files.length > 1 && files.some((x) => !x.lang)) usage('--data: give one N-way TSV, or LANG=FILE for each language');
    if (files.length === 1 && files[0]!.lang) usage(`--data ${a.data[0]}: give LANG=FILE for two or more languages (or one N-way TSV)`);
    const data = files.length === 1 ? files[0]!.file : a.data.join(' ');
    // neither: the default model
    const modelDir = a.vectors ? undefined : modelOrDefault(a.model);
    checkPaths([
      ['--model', modelDir, 'in-dir'],
      ['--vectors', a.vectors, 'in-dir'],
      ...files.map((x) => ['--data', x.file, 'in-text'] as const),
      ['--json', a.json, 'out-text'],
      ['--svg', a.svg, 'out-text'],
    ]);
    const table = files.length === 1 ? await loadTable(data) : await alignedFiles(files);
    const langs = a.langs.length ? a.langs : table.langs;
    for (const l of langs) if (!table.langs.includes(l)) usage(`--langs: '${l}' is not a column of ${data}`);
    if (langs.length < 2) throw new Error(`--data ${data}: ${langs.length} language column(s); the similarity-search error needs two or more`);
    // without the addon: an exported bag-of-n-grams model on the portable runtime (said on stderr)
    const model = modelDir ? loadEncoderForRuntime(modelDir) : null;
    const sourceOf = (l: string) => (files.length > 1 ? files.find((x) => x.lang === l)!.file : `${data} column ${l}`);
    const o = { langs, model, vectors: a.vectors, center: a.center, forceCenter: a.forceCenter, identify: a.identify, minRows: a.minRows, sourceOf, data };
    const { matrix: m, centring } = runXsim(table, { ...o, mode: a.mode as 'index' | 'text' });
    const short = shortPairs(m, a.minRows);
    if (short.length) process.stderr.write(`[xsim] skipped (fewer rows in common than --min-rows ${a.minRows}): ${short.join(', ')}\n`);
    const say = summaryWriter(a.json, a.svg);
    say(`similarity-search error (%), rows = source, columns = target, mode = ${m.mode}\n${formatXsimMatrix(m)}\n`);
    say(`overall average: ${m.overall.toFixed(2)}%\n`);
    if (a.json) writeJsonOutput(a.json, xsimJson(m, centring));
    if (a.svg) writeTextOutput(a.svg, xsimHeatmap(m));
  },
);

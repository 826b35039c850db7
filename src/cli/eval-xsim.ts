// xling eval xsim: the similarity-search error matrix over the languages of an N-way TSV.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadSentenceEncoder } from '../embed/model-dir.js';
import { formatXsimMatrix, LangVectors, xsimMatrix } from '../eval/xsim-matrix.js';
import { setNumThreads } from '../tensor/tensor.js';
import { loadTable } from '../train/prepare.js';
import { heatmap } from '../util/svg.js';
import { command, usage } from './command.js';
import { checkPaths, summaryWriter, writeJsonOutput, writeTextOutput } from './io.js';
import { readVectors } from './vectors.js';

export const evalXsimCommand = command(['eval', 'xsim'], {
  name: 'xling eval xsim',
  summary: 'similarity-search error between every pair of languages',
  options: {
    model: { type: 'string', metavar: 'DIR', help: 'model directory (or give --vectors)' },
    vectors: { type: 'string', metavar: 'DIR', help: 'precomputed LANG.npy files, one row per TSV row (rows with an empty cell are ignored)' },
    data: { type: 'string', required: true, metavar: 'TSV', help: 'N-way parallel TSV(.gz), e.g. dev.tsv.gz; - for standard input' },
    langs: { type: 'list', help: 'languages, two or more (default: all columns)' },
    mode: { type: 'string', default: 'index', choices: ['index', 'text'], help: 'index: only the aligned row is correct; text: an identical string also counts' },
    center: { type: 'boolean', default: true, help: "subtract the model's per-language mean vectors (--no-center: plain vectors)" },
    identify: { type: 'boolean', default: false, help: "centre each column with the language identified from its sentences, as xling embed does by default, instead of the column's name" },
    minRows: { type: 'number', default: 100, range: { int: true, min: 1 }, help: 'skip language pairs with fewer common rows' },
    json: { type: 'string', metavar: 'FILE', help: 'write the matrix as JSON (error rates as fractions; - for standard output)' },
    svg: { type: 'string', metavar: 'FILE', help: 'write the heat map as SVG (- for standard output)' },
    threads: { type: 'number', range: { int: true, min: 1 }, help: 'intra-op threads (default: all cores)' },
  },
}, async (a) => {
  if (a.threads) setNumThreads(a.threads);
  if (!a.model === !a.vectors) usage('give exactly one of --model or --vectors');
  if (a.langs.length && new Set(a.langs).size < 2) usage(`--langs: give two or more languages (the error rate is between languages), got '${a.langs.join(',')}'`);
  checkPaths([['--model', a.model, 'in-dir'], ['--vectors', a.vectors, 'in-dir'], ['--data', a.data, 'in-text'], ['--json', a.json, 'out-text'], ['--svg', a.svg, 'out-text']]);
  const table = await loadTable(a.data);
  const langs = a.langs.length ? a.langs : table.langs;
  for (const l of langs) if (!table.langs.includes(l)) usage(`--langs: '${l}' is not a column of ${a.data}`);
  if (langs.length < 2) throw new Error(`--data ${a.data}: ${langs.length} language column(s); the similarity-search error needs two or more`);
  const model = a.model ? loadSentenceEncoder(a.model) : null;
  const per: LangVectors[] = [];
  let dim = 0, dimFrom = '';
  for (const l of langs) {
    const rows: number[] = [], texts: string[] = [];
    table.rows.forEach((r, i) => { const s = r.get(l); if (s) { rows.push(i); texts.push(s); } });
    let vecs: Float32Array;
    if (model) {
      let lang: string | undefined = l;
      if (a.identify && a.center) {
        lang = model.identifyLanguage(texts)?.lang;
        process.stderr.write(`[xsim] column ${l}: identified as ${lang ?? '(the model has no mean vectors)'}\n`);
      }
      vecs = model.embed(texts, { lang, center: a.center });
      dim = model.dim;
    }
    else {
      const f = join(a.vectors!, `${l}.npy`);
      if (!existsSync(f)) throw new Error(`--vectors: missing ${f}`);
      const all = readVectors(f);
      if (all.n !== table.rows.length) throw new Error(`${f}: ${all.n} rows, but ${a.data} has ${table.rows.length}`);
      if (dim && all.d !== dim) throw new Error(`--vectors: ${f} has ${all.d} columns, but ${dimFrom} has ${dim}: every language must have vectors of one dimension`);
      dim = all.d; dimFrom = f;
      vecs = new Float32Array(rows.length * dim);
      rows.forEach((r, i) => vecs.set(all.data.subarray(r * dim, (r + 1) * dim), i * dim));
    }
    per.push({ lang: l, rows, vecs, texts });
  }
  const m = xsimMatrix(per, dim, a.mode as 'index' | 'text', a.minRows);
  const say = summaryWriter(a.json, a.svg);
  say(`similarity-search error (%), rows = source, columns = target, mode = ${m.mode}\n${formatXsimMatrix(m)}\n`);
  say(Number.isNaN(m.overall) ? `overall average: none (no pair of languages has --min-rows ${a.minRows} rows in common)\n` : `overall average: ${m.overall.toFixed(2)}%\n`);
  // the JSON holds fractions (the table and the heat map show percent)
  const frac = (x: number) => (Number.isNaN(x) ? x : +(x / 100).toFixed(6));
  if (a.json) writeJsonOutput(a.json, { ...m, errors: m.errors.map((r) => r.map(frac)), rowAvg: m.rowAvg.map(frac), colAvg: m.colAvg.map(frac), overall: frac(m.overall) });
  if (a.svg) writeTextOutput(a.svg, heatmap({ rows: m.langs, cols: m.langs, values: m.errors, title: `Similarity-search error (%) — overall ${m.overall.toFixed(1)}%`, colors: 'reds', min: 0, max: 100 }));
});

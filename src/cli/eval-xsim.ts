// xling eval xsim: the similarity-search error matrix over the languages of an N-way TSV.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadSentenceEncoder } from '../embed/model-dir.js';
import { describeCenter } from './vectors.js';
import { formatXsimMatrix, LangVectors, xsimMatrix } from '../eval/xsim-matrix.js';
import { setNumThreads } from '../tensor/tensor.js';
import { loadTable } from '../train/prepare.js';
import { heatmap } from '../util/svg.js';
import { command, usage } from './command.js';
import { checkPaths, writeTextOutput } from './io.js';
import { readVectors } from './vectors.js';

export const evalXsimCommand = command(['eval', 'xsim'], {
  name: 'xling eval xsim',
  summary: 'similarity-search error between every pair of languages',
  options: {
    model: { type: 'string', metavar: 'DIR', help: 'model directory (or give --vectors)' },
    vectors: { type: 'string', metavar: 'DIR', help: 'precomputed LANG.npy files, one row per TSV row (rows with an empty cell are ignored)' },
    data: { type: 'string', required: true, metavar: 'TSV', help: 'N-way parallel TSV(.gz), e.g. dev.tsv.gz' },
    langs: { type: 'list', help: 'languages (default: all columns)' },
    mode: { type: 'string', default: 'index', choices: ['index', 'text'], help: 'index: only the aligned row is correct; text: an identical string also counts' },
    center: { type: 'boolean', default: true, help: "subtract the model's per-language mean vectors (--no-center: plain vectors)" },
    identify: { type: 'boolean', default: false, help: "centre each column with the language identified from its sentences (the model's identifier, used when its confidence is at least 0.5), as xling embed does by default, instead of the column's name" },
    forceCenter: { type: 'boolean', default: false, help: "centre even when the model's per-language mean vectors are too small to matter" },
    minRows: { type: 'number', default: 100, range: { int: true, min: 1 }, help: 'skip language pairs with fewer common rows' },
    json: { type: 'string', metavar: 'FILE', help: 'write the matrix as JSON' },
    svg: { type: 'string', metavar: 'FILE', help: 'write the heat map as SVG' },
    threads: { type: 'number', range: { int: true, min: 1 }, help: 'intra-op threads (default: all cores)' },
  },
}, async (a) => {
  if (a.threads) setNumThreads(a.threads);
  if (!a.model === !a.vectors) usage('give exactly one of --model or --vectors');
  checkPaths([['--model', a.model, 'in-dir'], ['--vectors', a.vectors, 'in-dir'], ['--data', a.data, 'in'], ['--json', a.json, 'out-text'], ['--svg', a.svg, 'out-text']]);
  const table = await loadTable(a.data);
  const langs = a.langs.length ? a.langs : table.langs;
  for (const l of langs) if (!table.langs.includes(l)) usage(`--langs: '${l}' is not a column of ${a.data}`);
  const model = a.model ? loadSentenceEncoder(a.model) : null;
  const per: LangVectors[] = [];
  const centring: Record<string, { lang: string | null; reason: string | null; identified: { lang: string; confidence: number } | null }> = {};
  const said = new Set<string>();
  let dim = 0, dimFrom = '';
  for (const l of langs) {
    const rows: number[] = [], texts: string[] = [];
    table.rows.forEach((r, i) => { const s = r.get(l); if (s) { rows.push(i); texts.push(s); } });
    let vecs: Float32Array;
    if (model) {
      // the one centring rule (SentenceEncoderModel.chooseCenter): the column's language, or with
      // --identify the identified one when confident; otherwise not centred, and said
      const mode = !a.center ? false : a.forceCenter ? 'force' as const : true;
      const c = a.identify ? model.chooseCenter('auto', mode, model.identifyLanguage(texts)) : model.chooseCenter(model.centers.has(l) ? l : null, mode);
      centring[l] = { lang: c.lang, reason: c.reason ?? null, identified: c.identified ? { lang: c.identified.lang, confidence: +c.identified.confidence.toFixed(4) } : null };
      if (a.identify || (c.reason && c.reason !== 'off' && !said.has(c.reason))) {
        said.add(c.reason ?? '');
        process.stderr.write(`[xsim] column ${l}: ${describeCenter(model, c, 'the column name (without --identify)')}\n`);
      }
      vecs = model.embed(texts, { lang: c.lang ?? undefined, center: mode });
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
  process.stdout.write(`similarity-search error (%), rows = source, columns = target, mode = ${m.mode}\n${formatXsimMatrix(m)}\n`);
  process.stdout.write(`overall average: ${m.overall.toFixed(2)}%\n`);
  if (a.json) writeTextOutput(a.json, JSON.stringify(model ? { ...m, centring } : m, (_k, v) => (typeof v === 'number' && Number.isNaN(v) ? null : v), 1) + '\n');
  if (a.svg) writeTextOutput(a.svg, heatmap({ rows: m.langs, cols: m.langs, values: m.errors, title: `Similarity-search error (%) — overall ${m.overall.toFixed(1)}%`, colors: 'reds', min: 0, max: 100 }));
});

// What xling eval xsim computes once its options are read: each language's vectors (embedded by a
// model, centred by the one centring rule, or read from LANG.npy files), the error matrix, and
// the matrix as the command writes it (JSON with fractions, the heat map).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { cutLinesWarning, describeCenter } from '../embed/input.js';
import type { SentenceEncoderModel } from '../embed/model.js';
import { readVectors } from '../io/vectors.js';
import { heatmap } from '../util/svg.js';
import { LangVectors, XsimMatrix, xsimMatrix } from './xsim-matrix.js';

/** An N-way table: its language columns and, per row, the sentence of each language it has. */
export interface XsimTable {
  langs: string[];
  rows: Map<string, string>[];
}

export interface XsimRunOptions {
  langs: string[];
  /** a loaded model (its vectors are embedded and centred), or null with `vectors` */
  model: SentenceEncoderModel | null;
  /** a directory of LANG.npy files, one row per table row */
  vectors?: string;
  center: boolean;
  forceCenter: boolean;
  identify: boolean;
  mode: 'index' | 'text';
  minRows: number;
  /** what a language's sentences are called in messages (a file, or a column of the table) */
  sourceOf: (lang: string) => string;
  /** the table's name in messages */
  data: string;
}

export interface ColumnCentring {
  lang: string | null;
  reason: string | null;
  identified: { lang: string; confidence: number } | null;
}

/** One language's rows of the table and their sentences. */
function columnOf(table: XsimTable, lang: string): { rows: number[]; texts: string[] } {
  const rows: number[] = [],
    texts: string[] = [];
  table.rows.forEach((r, i) => {
    const s = r.get(lang);
    if (s) {
      rows.push(i);
      texts.push(s);
    }
  });
  return { rows, texts };
}

/** A column embedded by the model: the column's language (or with identify the identified one, when confident) centres it, or nothing, and the reason is said once. */
function embedColumn(
  model: SentenceEncoderModel,
  lang: string,
  texts: string[],
  o: XsimRunOptions,
  said: Set<string>,
): { vecs: Float32Array; centring: ColumnCentring } {
  const mode = !o.center ? false : o.forceCenter ? ('force' as const) : true;
  const c = o.identify ? model.chooseCenter('auto', mode, model.identifyLanguage(texts)) : model.chooseCenter(model.centers.has(lang) ? lang : null, mode);
  const centring = {
    lang: c.lang,
    reason: c.reason ?? null,
    identified: c.identified ? { lang: c.identified.lang, confidence: +c.identified.confidence.toFixed(4) } : null,
  };
  if (o.identify || (c.reason && c.reason !== 'off' && !said.has(c.reason))) {
    said.add(c.reason ?? '');
    process.stderr.write(`[xsim] column ${lang}: ${describeCenter(model, c, 'the column name (without --identify)')}\n`);
  }
  const before = model.tokenizer.truncated ?? 0;
  const vecs = model.embed(texts, { lang: c.lang ?? undefined, center: mode });
  const cut = (model.tokenizer.truncated ?? 0) - before;
  if (cut) process.stderr.write(cutLinesWarning('xsim', o.sourceOf(lang), cut, texts.length));
  return { vecs, centring };
}

/** A column's rows of its LANG.npy file; every language's vectors of one dimension. */
function readColumn(dir: string, lang: string, rows: number[], nRows: number, data: string, seen: { dim: number; from: string }): Float32Array {
  const f = join(dir, `${lang}.npy`);
  if (!existsSync(f)) throw new Error(`--vectors: missing ${f}`);
  const all = readVectors(f);
  if (all.n !== nRows) throw new Error(`${f}: ${all.n} rows, but ${data} has ${nRows}`);
  if (seen.dim && all.d !== seen.dim)
    throw new Error(`--vectors: ${f} has ${all.d} columns, but ${seen.from} has ${seen.dim}: every language must have vectors of one dimension`);
  seen.dim = all.d;
  seen.from = f;
  const vecs = new Float32Array(rows.length * all.d);
  rows.forEach((r, i) => vecs.set(all.data.subarray(r * all.d, (r + 1) * all.d), i * all.d));
  return vecs;
}

/** The similarity-search error matrix of the table's languages, with how each column was centred (model vectors only). */
export function runXsim(table: XsimTable, o: XsimRunOptions): { matrix: XsimMatrix; centring: Record<string, ColumnCentring> | null } {
  const per: LangVectors[] = [];
  const centring: Record<string, ColumnCentring> = {};
  const said = new Set<string>();
  const seen = { dim: 0, from: '' };
  for (const l of o.langs) {
    const { rows, texts } = columnOf(table, l);
    let vecs: Float32Array;
    if (o.model) {
      const e = embedColumn(o.model, l, texts, o, said);
      vecs = e.vecs;
      centring[l] = e.centring;
      seen.dim = o.model.dim;
    } else vecs = readColumn(o.vectors!, l, rows, table.rows.length, o.data, seen);
    per.push({ lang: l, rows, vecs, texts });
  }
  const matrix = xsimMatrix(per, seen.dim, o.mode, o.minRows);
  if (Number.isNaN(matrix.overall))
    throw new Error(
      `no pair of languages has --min-rows ${o.minRows} rows in common (the most is ${Math.max(0, ...matrix.counts.flat())}): give a lower --min-rows to measure on fewer`,
    );
  return { matrix, centring: o.model ? centring : null };
}

/** The pairs of languages below minRows (each unordered pair once, with its common rows). */
export function shortPairs(m: XsimMatrix, minRows: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < m.langs.length; i++)
    for (let j = i + 1; j < m.langs.length; j++) if (m.counts[i]![j]! < minRows) out.push(`${m.langs[i]}-${m.langs[j]} (${m.counts[i]![j]})`);
  return out;
}

/** The matrix as --json writes it: error rates as fractions (the table and the heat map show percent). */
export function xsimJson(m: XsimMatrix, centring: Record<string, ColumnCentring> | null): object {
  const frac = (x: number) => (Number.isNaN(x) ? x : +(x / 100).toFixed(6));
  return {
    ...m,
    errors: m.errors.map((r) => r.map(frac)),
    rowAvg: m.rowAvg.map(frac),
    colAvg: m.colAvg.map(frac),
    overall: frac(m.overall),
    ...(centring ? { centring } : {}),
  };
}

/** The matrix as a heat map (SVG). */
export function xsimHeatmap(m: XsimMatrix): string {
  return heatmap({
    rows: m.langs,
    cols: m.langs,
    values: m.errors,
    title: `Similarity-search error (%) — overall ${m.overall.toFixed(1)}%`,
    colors: 'reds',
    min: 0,
    max: 100,
  });
}

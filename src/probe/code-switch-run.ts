// xling probe code-switch's run: the languages words are drawn from, the probe over a model, and its
// report (a table of cells, the JSON, a line chart).
import { loadSentenceEncoder } from '../embed/model-dir.js';
import { knn } from '../index/faiss.js';
import { UsageError } from '../util/args.js';
import { lineChart } from '../util/svg.js';
import { CodeSwitchCell, codeSwitchProbe } from './code-switch.js';

/** Languages written with spaces between words (what a word-level switch can mix into English). */
const SPACED = ['de', 'fr', 'es', 'ru', 'it', 'pt_br', 'pl', 'cs', 'sv', 'tr', 'nl', 'da', 'fi', 'hu', 'uk', 'ro', 'ca', 'sk', 'nb', 'el'];

/**
 * The languages words are drawn from: `given` (--langs), else the space-delimited languages among
 * the table's; each a column besides en, and at least as many as the most mixed into one sentence.
 */
export function probeLanguages(data: string, tableLangs: string[], given: string[], switchLangs: number[]): string[] {
  if (!tableLangs.includes('en')) throw new Error(`--data ${data}: no en column (the probe switches English sentences)`);
  const langs = given.length ? given : SPACED.filter((l) => tableLangs.includes(l));
  const unknown = langs.filter((l) => !tableLangs.includes(l) || l === 'en');
  if (unknown.length) throw new UsageError(`--langs: ${unknown.join(', ')} ${unknown.length > 1 ? 'are' : 'is'} not a column of --data besides en`);
  if (Math.max(...switchLangs) > langs.length) throw new UsageError(`--switch-langs: ${Math.max(...switchLangs)} languages asked, --langs has ${langs.length}`);
  return langs;
}

export interface CodeSwitchRunOptions {
  modelDir: string;
  /** The --data file (named in the JSON). */
  data: string;
  rows: Map<string, string>[];
  /** Rows that only feed the word aligner. */
  alignTrain: Map<string, string>[];
  langs: string[];
  rates: number[];
  switchLangs: number[];
  sentences: number;
  seed: number;
  center: boolean;
  quiet: boolean;
}

export interface CodeSwitchReport {
  /** The table: original nearest (its row nearest) per share of words replaced × languages mixed. */
  summary: string;
  json: Record<string, unknown>;
  svg: string;
}

function summaryTable(collection: number, cells: CodeSwitchCell[], rates: number[], switchLangs: number[]): string {
  const pct = (x: number) => (Number.isNaN(x) ? '–' : (100 * x).toFixed(1));
  const lines = [
    `${collection} sentences searched; original English sentence nearest, % (its row: original or a translation, %)`,
    ['words replaced', ...switchLangs.map((n) => `${n} languages`)].join('\t'),
    ...rates.map((rate) =>
      [
        `${Math.round(100 * rate)}%`,
        ...switchLangs.map((n) => {
          const c = cells.find((x) => x.rate === rate && x.langs === n)!;
          return `${pct(c.originalTop1)} (${pct(c.rowTop1)})`;
        }),
      ].join('\t'),
    ),
  ];
  return lines.join('\n') + '\n';
}

function chart(cells: CodeSwitchCell[], switchLangs: number[]): string {
  return lineChart({
    title: 'Code-switched English: the original sentence is still the nearest',
    xLabel: 'share of words replaced',
    yLabel: 'original nearest (%)',
    series: switchLangs.map((n) => ({
      name: `${n} languages`,
      points: cells.filter((c) => c.langs === n && c.probes > 0).map((c) => [c.rate, 100 * c.originalTop1] as [number, number]),
    })),
  });
}

/** The code-switching probe with a model's sentence encoder (exact inner-product search), and its report. */
export async function codeSwitchReport(o: CodeSwitchRunOptions): Promise<CodeSwitchReport> {
  const model = loadSentenceEncoder(o.modelDir);
  const r = await codeSwitchProbe({
    rows: o.rows,
    langs: o.langs,
    rates: o.rates,
    switchLangs: o.switchLangs,
    sentences: o.sentences,
    seed: o.seed,
    alignTrain: o.alignTrain,
    dim: model.dim,
    log: (l) => {
      if (!o.quiet) process.stderr.write(`[probe] ${l}\n`);
    },
    embed: (texts, lang) => model.embedAsync(texts, { lang, center: o.center, normalize: true }),
    knn: (q, base, d, k) => knn(q, base, d, k, 'ip'),
  });
  const cells = r.cells.map((c) => ({
    rate: c.rate,
    languages: c.langs,
    probes: c.probes,
    original_top1: c.originalTop1,
    row_top1: c.rowTop1,
    languages_used: c.meanLangsUsed,
  }));
  return {
    summary: summaryTable(r.collection, r.cells, o.rates, o.switchLangs),
    json: { model: o.modelDir, data: o.data, langs: o.langs, collection: r.collection, cells, examples: r.examples },
    svg: chart(r.cells, o.switchLangs),
  };
}

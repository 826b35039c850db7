// xling probe code-switch: is a sentence still itself when some of its words are written in other
// languages? (the k-nn graph paper's code-switching probe, section 4.4)
import { loadSentenceEncoder } from '../embed/model-dir.js';
import { knn } from '../index/faiss.js';
import { loadTable } from '../train/prepare.js';
import { codeSwitchProbe } from '../probe/code-switch.js';
import { lineChart } from '../util/svg.js';
import { command, usage } from './command.js';
import { DEFAULTED_MODEL_OPTION, modelOrDefault } from './default-model.js';
import { checkPaths, summaryWriter, writeJsonOutput, writeTextOutput } from './io.js';

/** Languages written with spaces between words (what a word-level switch can mix into English). */
const SPACED = ['de', 'fr', 'es', 'ru', 'it', 'pt_br', 'pl', 'cs', 'sv', 'tr', 'nl', 'da', 'fi', 'hu', 'uk', 'ro', 'ca', 'sk', 'nb', 'el'];

function numbers(flag: string, values: string[], ok: (x: number) => boolean, what: string): number[] {
  return values.map((v) => {
    const x = Number(v);
    if (!Number.isFinite(x) || !ok(x)) usage(`${flag}: '${v}' is not ${what}`);
    return x;
  });
}

export const probeCodeSwitchCommand = command(
  ['probe', 'code-switch'],
  {
    name: 'xling probe code-switch',
    summary:
      'code-switched English sentences (words replaced by their aligned words in other languages): is the original still the nearest sentence of the collection?',
    description:
      'Aligns English with each language of --langs (fast_align-style EM, both directions intersected) over the rows of --data (and --align-data rows, for better statistics), ' +
      'replaces --rates of the words of each probed English sentence by aligned words drawn from --switch-langs languages at once, embeds it as English, ' +
      'and searches it among every sentence of --data (all languages). Reports how often the nearest sentence is the original English one, and how often it is the original or one of its translations.',
    options: {
      model: DEFAULTED_MODEL_OPTION,
      data: { type: 'string', required: true, metavar: 'TSV', help: 'N-way TSV(.gz) with an en column: the probed sentences and the collection searched' },
      alignData: { type: 'string', metavar: 'TSV', help: "more N-way rows for the word aligner's statistics (e.g. the training table)" },
      alignRows: { type: 'number', default: 20000, range: { int: true, min: 0 }, help: 'rows of --align-data used' },
      langs: {
        type: 'list',
        help: 'languages words are drawn from (default: the space-delimited languages of --data among de fr es ru it pt_br pl cs sv tr nl da fi hu uk ro ca sk nb el)',
      },
      rates: { type: 'list', default: ['0.1', '0.2', '0.3', '0.4', '0.5'], help: 'shares of the words replaced' },
      switchLangs: { type: 'list', default: ['2', '3', '5', '7'], help: 'languages mixed into one sentence' },
      sentences: { type: 'number', default: 500, range: { int: true, min: 1 }, help: 'English sentences probed per cell' },
      center: { type: 'boolean', default: true, help: 'per-language centring (the probes as English)' },
      seed: { type: 'number', default: 1, range: { int: true, min: 0 }, help: 'random seed of the sentences and words switched' },
      json: { type: 'string', metavar: 'FILE', help: 'cells (rate, languages, probes, original_top1, row_top1) and examples' },
      svg: { type: 'string', metavar: 'FILE', help: 'original-is-nearest against the share of words replaced, one line per number of languages' },
      quiet: { type: 'boolean', default: false, help: 'no progress lines (warnings and errors are still printed)' },
    },
    examples: ['xling probe code-switch --data data/sample/gettext.dev.tsv.gz --align-data data/sample/gettext.train.tsv.gz --json cs.json --svg cs.svg'],
  },
  async (a) => {
    const rates = numbers('--rates', a.rates, (x) => x > 0 && x <= 1, 'a share in (0, 1]');
    const switchLangs = numbers('--switch-langs', a.switchLangs, (x) => Number.isInteger(x) && x >= 1, 'a whole number of languages ≥ 1');
    a.model = modelOrDefault(a.model);
    checkPaths([
      ['--model', a.model, 'in-dir'],
      ['--data', a.data, 'in-text'],
      ['--align-data', a.alignData, 'in-text'],
      ['--json', a.json, 'out-text'],
      ['--svg', a.svg, 'out-text'],
    ]);
    const table = await loadTable(a.data);
    if (!table.langs.includes('en')) throw new Error(`--data ${a.data}: no en column (the probe switches English sentences)`);
    const langs = a.langs.length ? a.langs : SPACED.filter((l) => table.langs.includes(l));
    const unknown = langs.filter((l) => !table.langs.includes(l) || l === 'en');
    if (unknown.length) usage(`--langs: ${unknown.join(', ')} ${unknown.length > 1 ? 'are' : 'is'} not a column of --data besides en`);
    if (Math.max(...switchLangs) > langs.length) usage(`--switch-langs: ${Math.max(...switchLangs)} languages asked, --langs has ${langs.length}`);
    const alignTrain = a.alignData ? (await loadTable(a.alignData)).rows.slice(0, a.alignRows) : [];
    const model = loadSentenceEncoder(a.model);
    const log = (l: string) => {
      if (!a.quiet) process.stderr.write(`[probe] ${l}\n`);
    };
    const r = await codeSwitchProbe({
      rows: table.rows,
      langs,
      rates,
      switchLangs,
      sentences: a.sentences,
      seed: a.seed,
      alignTrain,
      dim: model.dim,
      log,
      embed: (texts, lang) => model.embedAsync(texts, { lang, center: a.center, normalize: true }),
      knn: (q, base, d, k) => knn(q, base, d, k, 'ip'),
    });
    const pct = (x: number) => (Number.isNaN(x) ? '–' : (100 * x).toFixed(1));
    const lines = [
      `${r.collection} sentences searched; original English sentence nearest, % (its row: original or a translation, %)`,
      ['words replaced', ...switchLangs.map((n) => `${n} languages`)].join('\t'),
      ...rates.map((rate) =>
        [
          `${Math.round(100 * rate)}%`,
          ...switchLangs.map((n) => {
            const c = r.cells.find((x) => x.rate === rate && x.langs === n)!;
            return `${pct(c.originalTop1)} (${pct(c.rowTop1)})`;
          }),
        ].join('\t'),
      ),
    ];
    summaryWriter(a.json, a.svg)(lines.join('\n') + '\n');
    if (a.json)
      writeJsonOutput(a.json, {
        model: a.model,
        data: a.data,
        langs,
        collection: r.collection,
        cells: r.cells.map((c) => ({
          rate: c.rate,
          languages: c.langs,
          probes: c.probes,
          original_top1: c.originalTop1,
          row_top1: c.rowTop1,
          languages_used: c.meanLangsUsed,
        })),
        examples: r.examples,
      });
    if (a.svg)
      writeTextOutput(
        a.svg,
        lineChart({
          title: 'Code-switched English: the original sentence is still the nearest',
          xLabel: 'share of words replaced',
          yLabel: 'original nearest (%)',
          series: switchLangs.map((n) => ({
            name: `${n} languages`,
            points: r.cells.filter((c) => c.langs === n && c.probes > 0).map((c) => [c.rate, 100 * c.originalTop1] as [number, number]),
          })),
        }),
      );
  },
);

// xling probe code-switch: is a sentence still itself when some of its words are written in other
// languages? (the k-nn graph paper's code-switching probe, section 4.4)
import { codeSwitchReport, probeLanguages } from '../probe/code-switch-run.js';
import { loadTable } from '../train/prepare.js';
import { command, usage } from './command.js';
import { DEFAULTED_MODEL_OPTION, modelOrDefault } from './default-model.js';
import { checkPaths, summaryWriter, writeJsonOutput, writeTextOutput } from './io.js';

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
    const modelDir = modelOrDefault(a.model);
    checkPaths([
      ['--model', modelDir, 'in-dir'],
      ['--data', a.data, 'in-text'],
      ['--align-data', a.alignData, 'in-text'],
      ['--json', a.json, 'out-text'],
      ['--svg', a.svg, 'out-text'],
    ]);
    const table = await loadTable(a.data);
    const langs = probeLanguages(a.data, table.langs, a.langs, switchLangs);
    const alignTrain = a.alignData ? (await loadTable(a.alignData)).rows.slice(0, a.alignRows) : [];
    const r = await codeSwitchReport({
      modelDir,
      data: a.data,
      rows: table.rows,
      alignTrain,
      langs,
      rates,
      switchLangs,
      sentences: a.sentences,
      seed: a.seed,
      center: a.center,
      quiet: a.quiet,
    });
    summaryWriter(a.json, a.svg)(r.summary);
    if (a.json) writeJsonOutput(a.json, r.json);
    if (a.svg) writeTextOutput(a.svg, r.svg);
  },
);

// xling scorer train: the second-stage mining scorer (src/mine/scorer/) from BUCC-format gold pairs
// (every xx-en.<split>.{xx,en,gold} triple of a directory) or, without gold, from a parallel TSV;
// its hyperparameters in a settings file (--config, src/mine/settings.ts).
import { scorerTrainSettings } from '../mine/settings.js';
import { ScorerTrainingStopped, trainScorerRun } from '../mine/scorer/index.js';
import { setNumThreads } from '../tensor/tensor.js';
import { TrainingInterrupted } from '../train/trainer.js';
import { ParsedArgs } from '../util/args.js';
import { withOutputLock } from '../util/lock.js';
import { command, usage } from './command.js';
import { DEFAULTED_MODEL_OPTION, modelOrDefault } from './default-model.js';
import { runInterruptible } from './interrupt.js';
import { checkPaths, writeTextOutput } from './io.js';
import { configWhere } from './mine-options.js';

function parsePairs(s: string | undefined): [string, string][] | null {
  if (!s) return null;
  return s.split(',').map((p) => {
    const m = /^([A-Za-z_]+)-([A-Za-z_]+)$/.exec(p.trim());
    if (!m) usage(`--pairs: '${p}' is not SRC-TRG (e.g. de-en,fr-en)`);
    return [m[1]!, m[2]!] as [string, string];
  });
}

const scorerTrainSpec = {
  name: 'xling scorer train',
  summary: 'train the second-stage mining scorer (gold BUCC pairs, or a parallel TSV)',
  description:
    "Its hyperparameters (k, the regression's L2, the word tables, the pair model's size and training) are in the --config file: defaults in code, an example in configs/scorer.json, each setting in docs/mine-and-score.md.",
  options: {
    model: { ...DEFAULTED_MODEL_OPTION, help: 'the encoder whose vectors it re-scores (default: the model that comes with xling, models/default)' },
    bucc: { type: 'string', metavar: 'DIR', help: 'BUCC triples SRC-TRG.SPLIT.{SRC,TRG,gold}' },
    split: { type: 'string', help: 'with --bucc: only this split (e.g. train)' },
    parallel: { type: 'string', metavar: 'TSV', aliases: ['from-parallel'], help: 'no gold: an N-way parallel TSV(.gz)' },
    pairs: { type: 'string', metavar: 'SRC-TRG,…', help: 'with --parallel: the pairs (default: each with en)' },
    rows: { type: 'number', default: 2000, range: { int: true, min: 10 }, help: 'with --parallel: rows drawn per language pair' },
    tables: { type: 'string', metavar: 'TSV', help: 'word tables from this N-way parallel TSV(.gz)' },
    output: { type: 'string', alias: 'o', required: true, metavar: 'DIR', help: 'scorer directory to write (scorer.json)' },
    json: { type: 'string', metavar: 'FILE', help: 'training summary as JSON (- for stdout)' },
    resume: { type: 'boolean', default: false, help: 'reuse the pairs a killed run finished (OUT.partial)' },
    keepWork: { type: 'boolean', default: false, help: 'keep OUT.partial for a later --resume' },
    pairModel: { type: 'boolean', default: false, help: 'also train the pair model (slower, better)' },
    pairFrom: { type: 'string', metavar: 'DIR', help: "use this scorer's pair model instead" },
    config: { type: 'string', metavar: 'JSON', help: 'hyperparameters (configs/scorer.json)' },
  },
  examples: [
    'xling scorer train --model runs/fast --parallel train.tsv.gz --pairs de-en,fr-en --tables train.tsv.gz -o scorers/p',
    'xling scorer train --model runs/fast --bucc bucc/ --split train --pair-model --tables train.tsv.gz --config configs/scorer.json -o scorers/g',
  ],
} as const;

export const scorerTrainCommand = command(
  ['scorer', 'train'],
  scorerTrainSpec,
  (a) => runInterruptible('xling scorer train', (signal) => trainScorerCommand(a, signal)),
  { ownSignals: true },
);

async function trainScorerCommand(a: ParsedArgs<typeof scorerTrainSpec>, signal: AbortSignal): Promise<void> {
  checkPaths([['--config', a.config, 'in']]);
  const cfg = scorerTrainSettings(a.config, configWhere(a.config));
  const parallel = a.parallel;
  if (!a.bucc === !parallel) usage('give exactly one of --bucc DIR or --parallel TSV');
  if (a.split && !a.bucc) usage('--split needs --bucc');
  if (a.pairs && !parallel) usage('--pairs needs --parallel');
  const pairs = parsePairs(a.pairs);
  if (a.pairModel && a.pairFrom) usage('give --pair-model (train one) or --pair-from DIR (take one), not both');
  if (cfg.truncated && !parallel) usage(`${configWhere(a.config)}: 'truncated' adds sentences to --parallel sets: give --parallel`);
  if (a.pairModel && !a.tables && !parallel) usage('--pair-model learns from translations: give --tables TSV (or train from --parallel TSV)');
  const model = modelOrDefault(a.model);
  checkPaths([
    ['--pair-from', a.pairFrom, 'in-dir'],
    ['--model', model, 'in-dir'],
    ['--bucc', a.bucc, 'in-dir'],
    ['--parallel', parallel, 'in'],
    ['--json', a.json, 'out-text'],
    ['--output', a.output, 'out-dir'],
    ['--output (its work directory)', `${a.output}.partial`, 'out-dir'],
  ]);
  if (cfg.threads) setNumThreads(cfg.threads);
  checkPaths([['--tables', a.tables, 'in']]);
  if (cfg.tableRows !== null && !a.tables && !parallel) usage(`${configWhere(a.config)}: 'tableRows' needs --tables or --parallel`);
  // one process at a time builds OUT (its OUT.partial above all); a signal's stop is the training commands' interruption (exit 130/143)
  const summary = await withOutputLock(a.output, '--output', () =>
    trainScorerRun(
      {
        model,
        bucc: a.bucc,
        split: a.split,
        parallel,
        pairs,
        rows: a.rows,
        tables: a.tables,
        output: a.output,
        resume: a.resume,
        keepWork: a.keepWork,
        pairModel: a.pairModel,
        pairFrom: a.pairFrom,
        settings: cfg,
      },
      signal,
    ).catch((e: unknown) => {
      throw e instanceof ScorerTrainingStopped ? new TrainingInterrupted(null, e.work) : e;
    }),
  );
  if (a.json) writeTextOutput(a.json, JSON.stringify(summary, null, 1) + '\n');
}

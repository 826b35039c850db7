// xling train: a multilingual sentence encoder of any model family from an N-way parallel TSV.
import { familyKinds } from '../models/registry.js';
import { setNumThreads } from '../tensor/tensor.js';
import { loadConfig } from '../models/config.js';
import { keptCheckpointDir, trainModel } from '../train/pipeline.js';
import { checkInitModel, loadAdaptConfig } from '../train/adapt.js';
import { command, usage } from './command.js';
import { checkLanguageCode } from '../io/input.js';
import { runInterruptible } from './interrupt.js';
import { checkPaths } from './io.js';

export const trainCommand = command(
  ['train'],
  {
    name: 'xling train',
    summary: 'train a multilingual sentence encoder (LASER-style or dual encoder)',
    description: `The configuration's "model" picks the family (${familyKinds().join(', ')}); see configs/. The model is built in OUT.partial (with its checkpoints) and replaces OUT at the end. SIGINT/SIGTERM stop after the current step, write a checkpoint to OUT.partial and exit 130/143 (--resume continues); a second signal exits at once. OUT.lock is held while it runs: a second run given the same --out is refused.`,
    options: {
      config: { type: 'string', required: true, metavar: 'FILE', help: 'training configuration (JSON, see configs/)' },
      data: { type: 'string', required: true, metavar: 'TSV', help: 'N-way parallel TSV(.gz): header of language codes, empty cell = missing' },
      out: {
        type: 'string',
        required: true,
        metavar: 'DIR',
        help: 'model directory to write (config.json, model.safetensors, tokenizer.json for subword models)',
      },
      dev: { type: 'string', metavar: 'TSV', help: 'dev TSV for the similarity-search error (validation)' },
      resume: {
        type: 'boolean',
        default: false,
        help: 'continue from the checkpoint of a killed run (OUT.partial) or of a finished model (OUT); an error when there is none',
      },
      resumeOrStart: { type: 'boolean', default: false, help: 'like --resume, but start a new model when there is no checkpoint' },
      threads: { type: 'number', range: { int: true, min: 1 }, help: 'intra-op threads (default: all cores)' },
      budgetPairs: { type: 'number', range: { int: true, min: 1 }, help: 'override the budget: stop after N training pairs' },
      budgetMinutes: { type: 'number', range: { above: 0 }, help: 'override the budget: stop after N minutes (preparation included)' },
      excludeLangs: { type: 'list', help: 'languages (TSV columns) left out of training, e.g. for zero-shot tests' },
      mono: {
        type: 'list',
        metavar: 'LANG=FILE',
        help: 'extra monolingual text (one sentence per line) in language LANG, repeatable (the jmt skip-gram uses it)',
      },
      quiet: { type: 'boolean', default: false, help: 'no progress lines' },
      force: { type: 'boolean', default: false, help: 'replace a finished model at OUT (without it, train refuses to overwrite one)' },
      init: {
        type: 'string',
        metavar: 'DIR',
        help: "continue training an imported encoder (a model directory of xling import hf or xling import laser: kinds hf-bert, hf-xlm-roberta, hf-distilbert, laser-lstm) with the dual encoder's additive-margin loss (loss.hardNegatives: mined hard negatives); OUT is a model of the same kind. The config's loss, optim, batch, budget, paths, validate, seed and center apply; vocab, features, encoder, maxLen and dropout come from the init model and are refused",
      },
      keepCheckpoint: {
        type: 'boolean',
        default: false,
        help: 'keep the final checkpoint (weights + optimiser state, ~3× the model) beside the model in OUT.checkpoint, so that --resume can continue it; by default it is removed and OUT holds only the model',
      },
    },
    examples: [
      'xling train --config configs/fast-1h.json --data data/sample/gettext.train.tsv.gz --dev data/sample/gettext.dev.tsv.gz --out runs/fast',
      'xling train --config configs/laser-16k-pairs.json --data data/sample/gettext.train.tsv.gz --out runs/laser',
      'xling train --init models/labse --config configs/adapt.json --data data/sample/gettext.train.tsv.gz --dev data/sample/gettext.dev.tsv.gz --out models/labse-gettext',
    ],
  },
  async (a) => {
    if (a.resume && a.resumeOrStart) usage('--resume and --resume-or-start exclude each other');
    const mono = a.mono.map((m): [string, string] => {
      const i = m.indexOf('=');
      if (i <= 0 || i === m.length - 1) usage(`--mono: expected LANG=FILE, got '${m}'`);
      return [checkLanguageCode(m.slice(0, i), `--mono ${m}`), m.slice(i + 1)];
    });
    checkPaths([
      ['--init', a.init, 'in-dir'],
      ['--config', a.config, 'in'],
      ['--data', a.data, 'in-text'],
      ['--dev', a.dev, 'in-text'],
      ...mono.map(([, file]) => ['--mono', file, 'in-text'] as const),
      ['--out', a.out, 'out-dir'],
      ['--out (its work directory)', `${a.out}.partial`, 'out-dir'],
      ...(a.keepCheckpoint ? [['--keep-checkpoint', keptCheckpointDir(a.out), 'out-dir'] as const] : []),
    ]);
    // every setting is checked (budget and all) before any work starts
    const budget = a.budgetPairs !== undefined || a.budgetMinutes !== undefined ? { budget: { pairs: a.budgetPairs ?? 0, minutes: a.budgetMinutes ?? 0 } } : {};
    if (a.init !== undefined) checkInitModel(a.init);
    const config = a.init !== undefined ? loadAdaptConfig(a.config, budget) : loadConfig(a.config, budget);
    if (a.threads) setNumThreads(a.threads);
    await runInterruptible('xling train', (signal) =>
      trainModel({
        config,
        data: a.data,
        dev: a.dev,
        out: a.out,
        resume: a.resumeOrStart ? 'or-start' : a.resume,
        init: a.init,
        excludeLangs: a.excludeLangs,
        mono,
        quiet: a.quiet,
        force: a.force,
        keepCheckpoint: a.keepCheckpoint,
        signal,
      }),
    );
  },
  { ownSignals: true, native: true },
);

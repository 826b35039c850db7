// xling classify train / eval: cross-lingual document classification on document vectors (the
// mean of each document's sentence vectors): train on one language, test on any other
// (src/eval/classification.ts; the classifiers in src/classify/).
import { CLASSIFIER_DEFAULTS, ClassifierType } from '../classify/classifier.js';
import { confusionSvg, evaluationSummary } from '../classify/report.js';
import { evaluateClassifierRun, trainClassifierRun } from '../eval/classification.js';
import { setNumThreads } from '../tensor/tensor.js';
import { command, usage } from './command.js';
import { DEFAULTED_MODEL_OPTION, modelOrDefault } from './default-model.js';
import { checkPaths, summaryWriter, writeJsonOutput, writeTextOutput } from './io.js';

const MODEL_OPTIONS = {
  model: { ...DEFAULTED_MODEL_OPTION, help: 'sentence encoder (model directory; default: the model that comes with xling, models/default)' },
  data: { type: 'string', required: true, metavar: 'TSV', help: 'label<TAB>id<TAB>text per line (- for standard input)' },
  lang: { type: 'string', default: 'auto', help: "language of the documents for per-language centring ('auto': identified, as xling embed does)" },
  center: { type: 'boolean', default: true, help: 'per-language centring (--no-center: plain vectors)' },
  threads: { type: 'number', range: { int: true, min: 1 }, help: 'intra-op threads (default: all cores)' },
} as const;

export const classifyTrainCommand = command(
  ['classify', 'train'],
  {
    name: 'xling classify train',
    summary: 'train a document classifier on document vectors',
    options: {
      ...MODEL_OPTIONS,
      output: { type: 'string', alias: 'o', required: true, metavar: 'DIR', help: 'classifier directory (classifier.json, weights.safetensors)' },
      classifierType: {
        type: 'string',
        default: 'mlp',
        choices: ['mlp', 'perceptron'],
        help: 'MLP (tanh hidden layers, dropout, Adam; best held-out epoch) or averaged perceptron',
      },
      hidden: { type: 'list', default: ['64'], help: 'MLP hidden layer widths' },
      dropout: { type: 'number', default: CLASSIFIER_DEFAULTS.dropout, range: { min: 0, below: 1 }, help: "the MLP's dropout rate" },
      epochs: {
        type: 'number',
        default: CLASSIFIER_DEFAULTS.epochs,
        range: { int: true, min: 1 },
        help: 'passes over the training documents (the best on the held-out share is kept)',
      },
      lr: { type: 'number', default: CLASSIFIER_DEFAULTS.lr, range: { above: 0 }, help: 'learning rate (Adam)' },
      heldOut: {
        type: 'number',
        default: CLASSIFIER_DEFAULTS.heldOut,
        range: { min: 0, below: 1 },
        help: 'share of the training documents held out to choose the MLP epoch',
      },
      seed: { type: 'number', default: 1, range: { int: true, min: 0 }, help: 'random seed (initialisation, held-out split, batches)' },
    },
    examples: ['xling classify train --data classify.train.en.tsv -o clf/'],
  },
  async (a) => {
    a.model = modelOrDefault(a.model);
    checkPaths([
      ['--model', a.model, 'in-dir'],
      ['--data', a.data, 'in-text'],
      ['--output', a.output, 'out-dir'],
    ]);
    const hidden = a.hidden.map((h) => {
      const v = Number(h);
      if (!Number.isInteger(v) || v < 1) usage(`--hidden: widths must be integers >= 1, got '${h}'`);
      return v;
    });
    if (a.threads) setNumThreads(a.threads);
    const line = await trainClassifierRun({
      ...a,
      model: a.model,
      classifier: {
        ...CLASSIFIER_DEFAULTS,
        type: a.classifierType as ClassifierType,
        hidden,
        dropout: a.dropout,
        epochs: a.epochs,
        lr: a.lr,
        heldOut: a.heldOut,
        seed: a.seed,
      },
    });
    process.stderr.write(`[classify] ${line}\n`);
  },
);

export const classifyEvalCommand = command(
  ['classify', 'eval'],
  {
    name: 'xling classify eval',
    summary: 'accuracy and macro-F1 of a document classifier on labelled documents',
    options: {
      ...MODEL_OPTIONS,
      classifier: { type: 'string', required: true, metavar: 'DIR', help: 'from xling classify train' },
      json: { type: 'string', metavar: 'FILE', help: 'accuracy, macro_f1 (fractions), per-class figures, confusion matrix' },
      svg: { type: 'string', metavar: 'FILE', help: 'confusion matrix (rows = gold, columns = predicted; - for standard output)' },
    },
    examples: ['xling classify eval --classifier clf/ --data classify.dev.de.tsv --json r.json --svg cm.svg'],
  },
  async (a) => {
    a.model = modelOrDefault(a.model);
    checkPaths([
      ['--model', a.model, 'in-dir'],
      ['--classifier', a.classifier, 'in-dir'],
      ['--data', a.data, 'in-text'],
      ['--json', a.json, 'out-text'],
      ['--svg', a.svg, 'out-text'],
    ]);
    if (a.threads) setNumThreads(a.threads);
    const r = await evaluateClassifierRun({ ...a, model: a.model });
    summaryWriter(a.json, a.svg)(evaluationSummary(r));
    if (a.json) writeJsonOutput(a.json, r);
    if (a.svg) writeTextOutput(a.svg, confusionSvg(r));
  },
);

// xling train-lid: adds a language identifier (lid.json) to a model directory trained before
// identifiers existed (xling train stores one with every new model).
import { readModelConfig } from '../embed/model-dir.js';
import { lidTrainingText } from '../embed/language.js';
import { LanguageIdentifier } from '../text/lid.js';
import { readLines } from '../io/input.js';
import { command, usage } from './command.js';
import { checkPaths } from './io.js';

export const trainLidCommand = command(
  ['train-lid'],
  {
    name: 'xling train-lid',
    summary: "train the model's language identifier (lid.json) from an N-way TSV",
    description:
      'A character 1–4-gram naive Bayes identifier with calibrated confidences, as xling train stores with every model: ' +
      'embedding with --lang auto (the default) centres with the identified language only when the confidence is at least 0.5. ' +
      'The file is written atomically into the model directory (an existing one is replaced).',
    options: {
      model: {
        type: 'string',
        required: true,
        metavar: 'DIR',
        help: 'the model directory the identifier is written into (no default: the model that comes with xling is part of the installation and is not changed)',
      },
      data: { type: 'string', required: true, metavar: 'TSV', help: 'N-way parallel TSV(.gz) with a header of language codes (e.g. the training corpus)' },
      langs: { type: 'list', help: 'only these columns (default: every column)' },
      maxLines: { type: 'number', default: 5000, range: { int: true, min: 20 }, help: 'lines per language (spread over the file)' },
      topK: { type: 'number', default: 1000, range: { int: true, min: 10 }, help: 'character n-grams kept per language' },
      quiet: { type: 'boolean', default: false, help: 'no progress lines (warnings and errors are still printed)' },
    },
    examples: ['xling train-lid --model runs/fast --data data/sample/gettext.train.tsv.gz'],
  },
  async (a) => {
    checkPaths([
      ['--model', a.model, 'in-dir'],
      ['--data', a.data, 'in'],
    ]);
    readModelConfig(a.model);
    if (a.langs.length === 1) usage('--langs: give at least two languages');
    if (a.langs.length) {
      // the header first: an unknown column is named before the file is read
      for await (const { line } of readLines(a.data)) {
        const cols = line.split('\t');
        for (const l of a.langs) if (!cols.includes(l)) usage(`--langs: '${l}' is not a column of ${a.data} (columns: ${cols.join(' ')})`);
        break;
      }
    }
    const t0 = performance.now();
    const byLang = await lidTrainingText([a.data], { langs: a.langs.length ? a.langs : undefined, cap: a.maxLines });
    const lid = LanguageIdentifier.train(byLang, { maxLines: a.maxLines, topK: a.topK });
    const f = lid.save(a.model);
    if (!a.quiet)
      process.stderr.write(
        `[train-lid] ${lid.languages.length} languages (${lid.languages.join(' ')}), ${lid.features} character n-grams, calibration T=${lid.calibration.temperature.toFixed(3)} β=${lid.calibration.lengthPower}, in ${((performance.now() - t0) / 1000).toFixed(1)}s → ${f}\n`,
      );
  },
);

// xling distill: a small bag-of-n-grams student trained to reproduce a teacher's vectors.
import { loadConfig } from '../models/config.js';
import { setNumThreads } from '../tensor/tensor.js';
import { distillInputs, distillModel } from '../train/distill.js';
import { command, usage } from './command.js';
import { runInterruptible } from './interrupt.js';
import { checkPaths } from './io.js';

export const distillCommand = command(
  ['distill'],
  {
    name: 'xling distill',
    summary: "distil any model into a small bag-of-n-grams student (MSE to the teacher's vectors; translations regressed onto the teacher's English vectors)",
    description:
      'Multilingual knowledge distillation (Reimers & Gurevych 2020). The teacher (any model directory xling loads: trained, LASER or Hugging Face imports) embeds every target sentence once (normalised, uncentred); the vectors are cached in OUT.partial/teacher/vectors.npy (float16) chunk by chunk, so a killed run continues where it stopped. The student (a "dual" configuration with "vocab": {"type": "none"}; its outDim becomes the teacher\'s dimension) is trained by the same trainer as xling train (budget, checkpoints in OUT.partial, --resume, SIGINT/SIGTERM write a checkpoint and exit 130/143) on the mean squared error between its normalised vectors and the teacher\'s; at the end it gets per-language means and a language identifier of the data\'s languages, held-out agreement and (--dev) both models\' dev error in OUT/distill.json.',
    options: {
      teacher: { type: 'string', required: true, metavar: 'DIR', help: 'the teacher model directory' },
      studentConfig: {
        type: 'string',
        required: true,
        metavar: 'FILE',
        help: 'the student\'s training configuration (JSON: model "dual", vocab.type "none"; see configs/student-small.json)',
      },
      data: {
        type: 'list',
        splitCommas: false,
        metavar: 'TEXT',
        help: "monolingual text, repeatable: FILE or LANG=FILE (one sentence a line), or an N-way TSV(.gz) whose every cell is a sentence of its column's language",
      },
      parallel: { type: 'string', metavar: 'TSV', help: "N-way parallel TSV(.gz): each cell regressed onto the teacher's vector of its row's pivot cell" },
      pivot: { type: 'string', default: 'en', metavar: 'LANG', help: 'the pivot column of --parallel' },
      dev: { type: 'string', metavar: 'TSV', help: "dev TSV: the teacher's and the student's similarity-search error at the end" },
      out: { type: 'string', alias: 'o', required: true, metavar: 'DIR', help: 'the student model directory to write' },
      heldOut: {
        type: 'number',
        range: { int: true, min: 0 },
        metavar: 'N',
        help: 'teacher sentences held out of training to measure the student–teacher agreement (default 5%, at most 1000)',
      },
      teacherChunk: { type: 'number', default: 2048, range: { int: true, min: 1 }, metavar: 'N', help: 'teacher sentences per durable chunk of the cache' },
      resume: { type: 'boolean', default: false, help: 'continue a killed or interrupted run from OUT.partial (teacher cache and checkpoint)' },
      resumeOrStart: { type: 'boolean', default: false, help: 'like --resume, but start when there is nothing to continue' },
      budgetPairs: { type: 'number', range: { int: true, min: 1 }, help: 'override the budget: stop after N training examples' },
      budgetMinutes: { type: 'number', range: { above: 0 }, help: 'override the budget: stop after N minutes of training' },
      threads: { type: 'number', range: { int: true, min: 1 }, help: 'intra-op threads (default: all cores)' },
      force: { type: 'boolean', default: false, help: 'replace a finished model at OUT' },
      quiet: { type: 'boolean', default: false, help: 'no progress lines' },
    },
    positionals: [{ name: 'text', variadic: true, help: 'more inputs of --data (`--data A B C`)' }],
    examples: [
      'xling distill --teacher models/T --student-config configs/student-small.json --data data/sample/gettext.train.tsv.gz --parallel data/sample/gettext.train.tsv.gz --dev data/sample/gettext.dev.tsv.gz -o models/S',
    ],
  },
  async (a) => {
    if (a.resume && a.resumeOrStart) usage('--resume and --resume-or-start exclude each other');
    const inputs = [...a.data, ...a._];
    if (!inputs.length && !a.parallel) usage('give --data TEXT (monolingual sentences) and/or --parallel TSV');
    const data = distillInputs(inputs);
    checkPaths([
      ['--teacher', a.teacher, 'in-dir'],
      ['--student-config', a.studentConfig, 'in'],
      ...data.map((d) => ['--data', d.path, 'in-text'] as const),
      ['--parallel', a.parallel, 'in-text'],
      ['--dev', a.dev, 'in-text'],
      ['--out', a.out, 'out-dir'],
      ['--out (its work directory)', `${a.out}.partial`, 'out-dir'],
    ]);
    const budget = a.budgetPairs !== undefined || a.budgetMinutes !== undefined ? { budget: { pairs: a.budgetPairs ?? 0, minutes: a.budgetMinutes ?? 0 } } : {};
    const config = loadConfig(a.studentConfig, budget);
    if (a.threads) setNumThreads(a.threads);
    await runInterruptible('xling distill', (signal) =>
      distillModel({
        teacher: a.teacher,
        config,
        data,
        parallel: a.parallel,
        pivot: a.pivot,
        dev: a.dev,
        out: a.out,
        heldOut: a.heldOut,
        teacherChunk: a.teacherChunk,
        resume: a.resumeOrStart ? 'or-start' : a.resume,
        force: a.force,
        quiet: a.quiet,
        signal,
      }),
    );
  },
  { ownSignals: true, native: true },
);

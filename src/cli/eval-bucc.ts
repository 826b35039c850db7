// xling eval bucc: mine candidates on a BUCC-format split, then P/R/F1 at the F1-optimal
// threshold, average precision, the PR curve (SVG), and F1 at a threshold tuned elsewhere
// (src/eval/bucc-run.ts); the command checks its options and writes the report.
import { evaluateBuccRun } from '../eval/bucc-run.js';
import { MarginKind, Retrieval } from '../mine/mine.js';
import { Assignment } from '../mine/scorer/index.js';
import { modelOrDefault } from './default-model.js';
import { command, usage } from './command.js';
import { checkPaths, summaryWriter, writeJsonOutput, writeTextOutput } from './io.js';
import { configWhere, embedSettingsOf, MINE_CONFIG_OPTION, MINE_MODEL_OPTIONS, MINE_OPTIONS, settingsOf } from './mine-options.js';
import { checkLangOptions } from './vectors.js';

export const evalBuccCommand = command(
  ['eval', 'bucc'],
  {
    name: 'xling eval bucc',
    summary: 'BUCC-style bitext mining precision/recall/F1',
    options: {
      src: { type: 'string', required: true, metavar: 'FILE', help: 'id<TAB>sentence (e.g. xx-en.dev.xx)' },
      trg: { type: 'string', required: true, metavar: 'FILE', help: 'id<TAB>sentence (e.g. xx-en.dev.en)' },
      gold: { type: 'string', required: true, metavar: 'FILE', help: 'src_id<TAB>trg_id pairs' },
      srcVectors: { type: 'string', metavar: 'NPY', help: 'vectors of --src (one row per line)' },
      trgVectors: { type: 'string', metavar: 'NPY', help: 'vectors of --trg' },
      ...MINE_MODEL_OPTIONS,
      ...MINE_OPTIONS,
      scorer: { type: 'string', metavar: 'DIR', help: 'rank by this scorer (xling scorer train)' },
      thresholdFrom: { type: 'string', metavar: 'JSON', help: 'also report P/R/F1 at the threshold in this JSON' },
      targetPrecision: { type: 'number', range: { min: 0, max: 1 }, help: 'also report the lowest threshold reaching P' },
      json: { type: 'string', metavar: 'FILE', help: 'the figures and P/R cuts as JSON (- for stdout)' },
      svg: { type: 'string', metavar: 'FILE', help: 'the precision–recall curve (- for stdout)' },
      config: MINE_CONFIG_OPTION,
    },
  },
  async (a) => {
    const s = settingsOf('xling eval bucc', a.config);
    if (s.assignment !== 'greedy' && !a.scorer) usage(`${configWhere(a.config)}: 'assignment' goes with --scorer (margin mining keeps its --retrieval rule)`);
    // no --model and a side without --*-vectors: the default model embeds it
    const model = a.model ?? (a.srcVectors && a.trgVectors ? undefined : modelOrDefault(undefined));
    checkPaths([
      ['--src', a.src, 'in-text'],
      ['--trg', a.trg, 'in-text'],
      ['--gold', a.gold, 'in-text'],
      ['--src-vectors', a.srcVectors, 'in'],
      ['--trg-vectors', a.trgVectors, 'in'],
      ['--model', model, 'in-dir'],
      ['--threshold-from', a.thresholdFrom, 'in'],
      ['--json', a.json, 'out-text'],
      ['--svg', a.svg, 'out-text'],
    ]);
    checkLangOptions(model, [
      ['--src-lang', a.srcLang],
      ['--trg-lang', a.trgLang],
    ]);
    const r = await evaluateBuccRun({
      ...a,
      model,
      srcEmbed: embedSettingsOf(s, a.srcLang, '--src-lang', 'bucc'),
      trgEmbed: embedSettingsOf(s, a.trgLang, '--trg-lang', 'bucc'),
      margin: a.margin as MarginKind,
      retrieval: a.retrieval as Retrieval,
      scorer: a.scorer ? { dir: a.scorer, assignment: s.assignment as Assignment, selfTables: s.selfTables } : undefined,
      say: (l) => process.stderr.write(`[bucc] ${l}\n`),
    });
    if (r.precisionNote) process.stderr.write(r.precisionNote);
    summaryWriter(a.json, a.svg)(r.summary);
    if (a.json) writeJsonOutput(a.json, r.report);
    if (a.svg) writeTextOutput(a.svg, r.svg());
  },
);

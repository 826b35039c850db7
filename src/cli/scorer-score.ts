// xling scorer score: a parallel corpus scored pair by pair, as Bicleaner's classifier and LASER's
// score mode score one (src/mine/scorer/score-corpus.ts) — each line's pair gets the second-stage
// scorer's probability (or, without a scorer, its margin score), computed as mining would were the
// pair its candidate. The command checks its options, scores the corpus and writes what was asked.
import { existsSync, rmSync, statSync } from 'node:fs';
import { thresholdFromFile } from '../mine/calibration.js';
import { REJECT_REASONS } from '../mine/filters.js';
import { MarginKind } from '../mine/mine.js';
import { MineSettings } from '../mine/settings.js';
import { alignedSource, columnsSource, evaluateLabels, foreignFiles, openScorer, scoreCorpus, scoringKey } from '../mine/scorer/index.js';
import { withOutputLock } from '../util/lock.js';
import { ParsedArgs } from '../util/args.js';
import { command, usage } from './command.js';
import { DEFAULTED_MODEL_OPTION, modelOrDefault } from './default-model.js';
import { checkPaths, summaryWriter, writeJsonOutput, writeTextLines, writeTextOutput } from './io.js';
import {
  candidateProgress,
  checkTargetPrecision,
  configWhere,
  embedSettingsOf,
  filterOptionsOf,
  lidFilterOf,
  MINE_CONFIG_OPTION,
  MINE_FILTER_OPTIONS,
  MINE_MODEL_OPTIONS,
  MINE_SCORING_OPTIONS,
  settingsOf,
} from './mine-options.js';
import { checkLangOptions } from './vectors.js';

const scorerScoreSpec = {
  name: 'xling scorer score',
  summary: "score the pairs of a parallel corpus (cleaning it, as Bicleaner does): the scorer's probability, or the margin score, appended to each line",
  description:
    "Each pair is scored as xling mine would score it were it a candidate: both directions' k nearest neighbours among the distinct sentences of its block of lines (--block) give its margins, ranks and competitors (a misaligned pair's target is not among its source's neighbours). Lines keep their order; pairs with an empty side, and pairs failing a filter (of the --config file; identical sides by default), score 0. Without --scorer, the margin and k of the --config file (ratio, 4).",
  options: {
    input: { type: 'string', metavar: 'TSV', help: 'the corpus: a pair a line, tab-separated (.gz read)' },
    srcCol: { type: 'number', default: 1, range: { int: true, min: 1 }, help: 'with --input: the source column (from 1)' },
    trgCol: { type: 'number', default: 2, range: { int: true, min: 1 }, help: 'with --input: the target column' },
    labelCol: { type: 'number', range: { int: true, min: 1 }, help: 'with --input: a 1/0 column to evaluate against' },
    src: { type: 'string', metavar: 'FILE', help: 'instead of --input: source lines, aligned with --trg' },
    trg: { type: 'string', metavar: 'FILE', help: 'instead of --input: target lines' },
    model: { ...DEFAULTED_MODEL_OPTION, help: "the sentence encoder (the scorer's; default: the model that comes with xling, models/default)" },
    srcLang: MINE_MODEL_OPTIONS.srcLang,
    trgLang: MINE_MODEL_OPTIONS.trgLang,
    scorer: { type: 'string', metavar: 'DIR', help: 'score with this scorer (default: the margin)' },
    threshold: { type: 'number', metavar: 'T', range: {}, help: 'write only the lines scoring at least T' },
    thresholdFrom: MINE_SCORING_OPTIONS.thresholdFrom,
    json: { type: 'string', metavar: 'FILE', help: 'with --label-col: P/R/F1, AP and cuts as JSON' },
    svg: { type: 'string', metavar: 'FILE', help: 'with --label-col: the precision–recall curve' },
    output: { type: 'string', alias: 'o', required: true, metavar: 'TSV', help: 'each line with its score appended (- for stdout)' },
    resume: { type: 'boolean', default: false, help: 'reuse the blocks a killed run scored' },
    stats: MINE_FILTER_OPTIONS.stats,
    keepAll: { ...MINE_FILTER_OPTIONS.keepAll, help: 'write the lines a filter scored 0 here' },
    config: MINE_CONFIG_OPTION,
  },
  examples: [
    'xling scorer score --input crawled.de-en.tsv.gz --model runs/fast --scorer scorers/gettext --src-lang de --trg-lang en -o scored.tsv',
    "xling scorer score --src corpus.de --trg corpus.en --model runs/fast --src-lang de --trg-lang en --threshold 1.05 -o kept.tsv   # margin score, LASER's score mode",
  ],
} as const;

export const scorerScoreCommand = command(['scorer', 'score'], scorerScoreSpec, scoreCorpusCommand);

async function scoreCorpusCommand(a: ParsedArgs<typeof scorerScoreSpec>): Promise<void> {
  // an untranslated line (the same text both sides) is rated a translation by the scorer and the margin: scored 0 unless the settings say otherwise
  const s = settingsOf('xling scorer score', a.config, { filters: { dropIdentical: true } });
  if (!a.input === !(a.src || a.trg)) usage('give the corpus as --input TSV, or as --src FILE and --trg FILE');
  if (!a.input && !(a.src && a.trg)) usage(`--${a.src ? 'trg' : 'src'} is needed with --${a.src ? 'src' : 'trg'}`);
  if (a.input && a.srcCol === a.trgCol) usage(`--src-col and --trg-col are both ${a.srcCol}`);
  if (a.labelCol !== undefined && !a.input) usage('--label-col goes with --input');
  if (a.labelCol !== undefined && (a.labelCol === a.srcCol || a.labelCol === a.trgCol)) usage(`--label-col ${a.labelCol} is a side's column`);
  if ((a.json || a.svg) && a.labelCol === undefined) usage(`--${a.json ? 'json' : 'svg'} evaluates the scores against --label-col: give it`);
  checkTargetPrecision(s, a.thresholdFrom, a.config);
  if (a.threshold !== undefined && a.thresholdFrom) usage('give --threshold or --threshold-from, not both');
  const work = s.work ?? (a.output !== '-' ? `${a.output}.partial` : undefined);
  if ((a.resume || s.keepWork) && !work)
    usage(
      `${a.resume ? '--resume' : `${configWhere(a.config)}: 'keepWork'`} with -o -: give 'work' in --config (the directory where the scored blocks are kept)`,
    );
  if (work && existsSync(work) && !statSync(work).isDirectory())
    usage(`${s.work ? `${configWhere(a.config)}: 'work' ` : "--output's work directory "}${work}: not a directory`);
  // an earlier run's blocks are removed or reused there: never a directory of anything else
  const foreign = work ? foreignFiles(work) : [];
  if (foreign.length)
    usage(
      `${s.work ? `${configWhere(a.config)}: 'work' ` : "--output's work directory "}${work}: holds files that are not scored blocks (${foreign.slice(0, 3).join(', ')}); give an empty or new directory`,
    );
  const model = modelOrDefault(a.model);
  const filters = filterOptionsOf(s.filters, configWhere(a.config));
  filters.lid = lidFilterOf(s.filters, a, model, configWhere(a.config));
  checkPaths([
    ['--input', a.input, 'in-text'],
    ['--src', a.src, 'in-text'],
    ['--trg', a.trg, 'in-text'],
    ['--model', model, 'in-dir'],
    ['--scorer', a.scorer, 'in-dir'],
    ['--threshold-from', a.thresholdFrom, 'in'],
    ['--output', a.output, 'out-text'],
    ['--stats', a.stats, 'out-text'],
    ['--keep-all', a.keepAll, 'out-text'],
    ['--json', a.json, 'out-text'],
    ['--svg', a.svg, 'out-text'],
  ]);
  checkLangOptions(model, [
    ['--src-lang', a.srcLang],
    ['--trg-lang', a.trgLang],
  ]);
  // one process at a time keeps its blocks in a work directory
  if (work)
    await withOutputLock(work, s.work ? `${configWhere(a.config)}: 'work'` : '--output (its work directory)', () => scoreCorpusFiles(a, s, work, filters));
  else await scoreCorpusFiles(a, s, work, filters);
}

/** Scores the corpus (src/mine/scorer/score-corpus.ts), then writes what was asked: the lines with their scores, the rejected ones, the labels' evaluation, the stats. */
async function scoreCorpusFiles(
  a: ParsedArgs<typeof scorerScoreSpec>,
  s: MineSettings,
  work: string | undefined,
  filters: ReturnType<typeof filterOptionsOf>,
): Promise<void> {
  const say = (l: string) => process.stderr.write(`[score] ${l}\n`);
  const model = modelOrDefault(a.model, true);
  const opened = openScorer(a.scorer, model, a.srcLang, a.trgLang, { selfTables: s.selfTables, say });
  const scorer = opened?.scorer ?? null;
  const threshold = a.thresholdFrom
    ? thresholdFromFile(
        a.thresholdFrom,
        s.targetPrecision ?? undefined,
        { scorer: !!scorer, margin: s.margin, k: scorer ? scorer.k : s.k, scorerTables: opened ? !!opened.aligner : undefined },
        'score',
      )
    : a.threshold;
  const t0 = performance.now();
  const r = await scoreCorpus({
    source: a.input ? columnsSource(a.input, a.srcCol - 1, a.trgCol - 1, a.labelCol !== undefined ? a.labelCol - 1 : undefined) : alignedSource(a.src!, a.trg!),
    name: a.input ?? a.src!,
    sideName: (side) => (a.input ? `--input ${a.input} (${side})` : `--${side} ${side === 'sources' ? a.src : a.trg}`),
    model,
    srcLang: a.srcLang,
    trgLang: a.trgLang,
    srcEmbed: embedSettingsOf(s, a.srcLang, '--src-lang', 'score'),
    trgEmbed: embedSettingsOf(s, a.trgLang, '--trg-lang', 'score'),
    scorer: opened,
    margin: s.margin as MarginKind,
    k: s.k,
    block: s.block,
    filters,
    work: work ? { dir: work, key: () => scoringKey(a, s), resume: a.resume } : undefined,
    candidateBars: candidateProgress,
    say,
  });
  // written as the corpus is read once more (the lines as they were scored: checked against the first pass)
  let kept = 0;
  await writeTextLines(
    a.output,
    r.scoredLines(threshold, () => kept++),
  );
  if (a.keepAll) {
    try {
      await writeTextLines(a.keepAll, r.rejectedLines());
    } catch (e) {
      // (the input changed since the output was written: neither is kept)
      if (a.output !== '-') rmSync(a.output, { force: true });
      throw e;
    }
  }
  // (also an earlier run's blocks when this one needed none: the directory holds only blocks, checked above)
  if (work && !s.keepWork && existsSync(work)) rmSync(work, { recursive: true, force: true });
  if (r.label) {
    const ev = evaluateLabels(r.label, r.score, { scorer: a.scorer ?? null, margin: s.margin, k: r.k, threshold });
    // on stderr when standard output carries a file
    summaryWriter(a.output, a.json, a.svg)(ev.text);
    if (a.json) writeJsonOutput(a.json, ev.report);
    if (a.svg) writeTextOutput(a.svg, ev.svg());
  }
  const counts = r.rejected();
  const said = REJECT_REASONS.filter((x) => counts[x]).map((x) => `${x} ${counts[x]}`);
  const n = r.lines,
    nFull = r.full;
  if (a.stats)
    writeTextOutput(
      a.stats,
      JSON.stringify(
        {
          lines: n,
          written: kept,
          empty: n - nFull,
          rejected: counts,
          threshold: threshold ?? null,
          mean_score: r.meanScore(),
          model,
          scorer: a.scorer ?? null,
          ...(opened ? { word_tables: opened.wordTables() } : { margin: s.margin }),
          k: r.k,
          block: s.block,
          blocks: r.blocks,
          distinct: r.distinct,
        },
        null,
        1,
      ) + '\n',
    );
  say(
    `${n} lines scored (${scorer ? `scorer ${a.scorer}` : `${s.margin} margin`}, k=${r.k}; ${r.blocks > 1 ? `${r.blocks} blocks of ${r.size} lines, ` : ''}${r.distinct.src} distinct sources, ${r.distinct.trg} distinct targets${n > nFull ? `; ${n - nFull} with an empty side scored 0` : ''}${said.length ? `; filters scored 0: ${said.join(', ')}` : ''})${threshold !== undefined ? `, ${kept} at least ${threshold} written` : ''} in ${((performance.now() - t0) / 1000).toFixed(1)}s → ${a.output === '-' ? 'standard output' : a.output}`,
  );
}

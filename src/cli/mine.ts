// xling mine: parallel sentences out of two unaligned corpora, by margin-scored k-NN (LASER's
// mine_bitexts), optionally re-scored by a second-stage scorer; tuning knobs in --config.
import { MarginKind, Retrieval } from '../mine/mine.js';
import { mineCorpora } from '../mine/run.js';
import { thresholdFromFile } from '../mine/calibration.js';
import { Assignment, openScorer } from '../mine/scorer/index.js';
import { command, usage } from './command.js';
import { checkPaths, writeTextOutput } from './io.js';
import { checkLangOptions } from './vectors.js';
import { modelOrDefault } from './default-model.js';
import {
  candidateProgress,
  checkTargetPrecision,
  configWhere,
  embedSettingsOf,
  filterOptionsOf,
  lidFilterOf,
  MINE_CONFIG_OPTION,
  MINE_FILTER_OPTIONS,
  MINE_INPUT_OPTIONS,
  MINE_MODEL_OPTIONS,
  MINE_OPTIONS,
  MINE_SCORING_OPTIONS,
  parseThreshold,
  settingsOf,
} from './mine-options.js';

export const mineCommand = command(
  ['mine'],
  {
    name: 'xling mine',
    summary: 'mine parallel sentences from two monolingual corpora',
    description:
      "Margin-scored k-NN of both directions (LASER), or with --scorer a second-stage scorer's probabilities. Tuning knobs (filters, assignment, word tables, nprobe, header, embedding batches, threads) are in the --config file: see docs/mine-and-score.md and configs/scorer-mine.json.",
    options: {
      ...MINE_INPUT_OPTIONS,
      ...MINE_MODEL_OPTIONS,
      output: { type: 'string', alias: 'o', required: true, metavar: 'TSV', help: 'score<TAB>src<TAB>trg, best first (- for stdout)' },
      ...MINE_OPTIONS,
      unify: { type: 'boolean', default: false, help: 'deduplicate identical lines before search' },
      index: { type: 'string', metavar: 'FAISS', help: 'search src→trg through this index of --trg' },
      ...MINE_SCORING_OPTIONS,
      ...MINE_FILTER_OPTIONS,
      config: MINE_CONFIG_OPTION,
    },
    examples: [
      'xling mine --src de.txt --trg en.txt --src-lang de --trg-lang en -o mined.tsv',
      'xling mine --src de.txt --trg en.txt --src-lang de --trg-lang en --scorer scorers/p --config configs/scorer-mine.json --stats stats.json -o mined.tsv',
    ],
  },
  async (a) => {
    const s = settingsOf('xling mine', a.config);
    if (a.unify && a.index) usage('--unify and --index cannot be combined (index rows are the original lines)');
    if (s.nprobe !== null && !a.index) usage(`${configWhere(a.config)}: 'nprobe' goes with --index`);
    if (s.assignment !== 'greedy' && !a.scorer) usage(`${configWhere(a.config)}: 'assignment' goes with --scorer (margin mining keeps its --retrieval rule)`);
    checkTargetPrecision(s, a.thresholdFrom, a.config);
    if (a.threshold !== undefined && a.thresholdFrom) usage('give --threshold or --threshold-from, not both');
    const asked = parseThreshold(a.threshold);
    if (asked === 'auto' && !a.scorer)
      usage(
        "--threshold auto goes with --scorer (its probabilities give the threshold; a margin's scale moves with the vectors and the domain: calibrate one on a dev pair with xling eval bucc --json, then --threshold-from)",
      );
    // no --model and a side without --*-vectors: the default model embeds it
    const model = a.model ?? (a.srcVectors && a.trgVectors ? undefined : modelOrDefault(undefined));
    const filters = filterOptionsOf(s.filters, configWhere(a.config));
    filters.lid = lidFilterOf(s.filters, a, model, configWhere(a.config));
    checkPaths([
      ['--src', a.src, 'in-text'],
      ['--trg', a.trg, 'in-text'],
      ['--src-vectors', a.srcVectors, 'in'],
      ['--trg-vectors', a.trgVectors, 'in'],
      ['--model', model, 'in-dir'],
      ['--index', a.index, 'in'],
      ['--scorer', a.scorer, 'in-dir'],
      ['--threshold-from', a.thresholdFrom, 'in'],
      ['--output', a.output, 'out-text'],
      ['--stats', a.stats, 'out-text'],
      ['--keep-all', a.keepAll, 'out-text'],
    ]);
    const say = (l: string) => process.stderr.write(`[mine] ${l}\n`);
    const opened = openScorer(a.scorer, model, a.srcLang, a.trgLang, { selfTables: s.selfTables, say });
    const scorer = opened?.scorer ?? null;
    // a scorer's default threshold is 0.5; with 'auto' it is chosen after mining, from every pair's probability
    const threshold = a.thresholdFrom
      ? thresholdFromFile(a.thresholdFrom, s.targetPrecision ?? undefined, {
          scorer: !!scorer,
          margin: a.margin,
          k: a.k,
          scorerTables: opened ? !!opened.aligner : undefined,
        })
      : asked;
    checkLangOptions(model, [
      ['--src-lang', a.srcLang],
      ['--trg-lang', a.trgLang],
    ]);
    if (scorer && a.k !== scorer.k) say(`the scorer was trained on candidates of k=${scorer.k}: using k=${scorer.k}`);
    const t0 = performance.now();
    const out = await mineCorpora({
      src: a.src,
      trg: a.trg,
      srcVectors: a.srcVectors,
      trgVectors: a.trgVectors,
      model,
      srcLang: a.srcLang,
      trgLang: a.trgLang,
      srcEmbed: embedSettingsOf(s, a.srcLang, '--src-lang', 'mine'),
      trgEmbed: embedSettingsOf(s, a.trgLang, '--trg-lang', 'mine'),
      k: a.k,
      margin: a.margin as MarginKind,
      retrieval: a.retrieval as Retrieval,
      unify: a.unify,
      index: a.index ? { path: a.index, nprobe: s.nprobe ?? undefined } : undefined,
      threshold,
      scorer: opened
        ? {
            dir: a.scorer!,
            model: opened.scorer,
            aligner: opened.aligner,
            selfTables: opened.selfTables,
            wordTables: opened.wordTables,
            assignment: s.assignment as Assignment,
            onCandidates: candidateProgress(),
          }
        : undefined,
      filters,
      header: s.header,
      say,
    });
    if (out.filtered) say(out.filtered);
    writeTextOutput(a.output, out.text);
    if (a.keepAll) writeTextOutput(a.keepAll, out.rejected);
    if (a.stats) writeTextOutput(a.stats, out.stats);
    say(
      `${out.pairs} pairs (${scorer ? `scorer ${a.scorer}` : `${a.margin}, ${a.retrieval}`}, k=${out.k}${out.threshold !== undefined ? `, threshold ${out.auto ? `${out.threshold.toPrecision(6)} (auto)` : out.threshold}` : ''}) in ${((performance.now() - t0) / 1000).toFixed(1)}s → ${a.output === '-' ? 'standard output' : a.output}`,
    );
  },
);

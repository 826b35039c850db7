// xling mine: parallel sentences out of two unaligned corpora, by margin-scored k-NN (LASER's
// mine_bitexts), optionally re-scored by a second-stage scorer; tuning knobs in --config
// (src/mine/run.ts: mineToFiles).
import { MarginKind, Retrieval } from '../mine/mine.js';
import { mineToFiles } from '../mine/run.js';
import { MineSettings } from '../mine/settings.js';
import { command, usage } from './command.js';
import { checkPaths } from './io.js';
import { modelOrDefault } from './default-model.js';
import {
  checkTargetPrecision,
  configWhere,
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
    const threshold = checkedThreshold(a, s);
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
    await mineToFiles({
      ...a,
      model,
      margin: a.margin as MarginKind,
      retrieval: a.retrieval as Retrieval,
      threshold,
      settings: s,
      filters,
    });
  },
);

/** The options that go together checked against the settings; --threshold as given (a number or 'auto'). */
function checkedThreshold(
  a: { unify: boolean; index?: string; scorer?: string; threshold?: string; thresholdFrom?: string; config?: string },
  s: MineSettings,
): number | 'auto' | undefined {
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
  return asked;
}

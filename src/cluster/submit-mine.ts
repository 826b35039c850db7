// xling cluster mine's submitting side: the scorer opened (what it lacks is said before any work),
// k and the threshold decided, the sentences and vectors the jobs will read checked, then the
// staged mining flow (mine.ts) submitted and followed.
import { resolve } from 'node:path';
import { checkLangOptions } from '../embed/input.js';
import { openVectors } from '../io/vectors.js';
import { thresholdFromFile } from '../mine/calibration.js';
import { anyFilter, FilterOptions } from '../mine/filters.js';
import { MarginKind, Retrieval } from '../mine/mine.js';
import { Assignment, openScorer } from '../mine/scorer/index.js';
import { MineSettings } from '../mine/settings.js';
import { readSentences } from '../train-data/corpus.js';
import { checkWorkDir, Following, submitAndFollow } from './follow.js';
import { MINE_PLAN, MineRequest } from './mine.js';
import { pingRedis } from './queue.js';

/** xling cluster mine's options, parsed and checked. */
export interface ClusterMineJob extends Omit<Following, 'attempts' | 'quiet'> {
  src: string;
  trg: string;
  srcVectors: string;
  trgVectors: string;
  /** With a scorer: the vectors' encoder (for a pair model). */
  model?: string;
  srcLang?: string;
  trgLang?: string;
  output: string;
  k: number;
  scorer?: string;
  /** --threshold as given: a number, 'auto' (with a scorer), or none. */
  threshold?: number | 'auto';
  thresholdFrom?: string;
  /** The --config file's knobs (the margin, job attempts and quiet among them). */
  settings: MineSettings;
  /** The filters, and the language filter's identifier (its model directory). */
  filters: Omit<FilterOptions, 'lid'>;
  lid?: NonNullable<FilterOptions['lid']> & { dir: string };
  stats?: string;
  keepAll?: string;
}

/** Submits xling cluster mine's flow (or finds it) and follows it; throws when it fails. */
export async function submitClusterMine(o: ClusterMineJob): Promise<void> {
  const s = o.settings;
  // the scorer opened here, so that what it lacks (--model for a pair model, tables for the pair) is said before any work
  checkLangOptions(o.model, [
    ['--src-lang', o.srcLang],
    ['--trg-lang', o.trgLang],
  ]);
  const opened = openScorer(o.scorer, o.model, o.srcLang, o.trgLang, { selfTables: s.selfTables, say: (l) => process.stderr.write(`[cluster] ${l}\n`) });
  const scorer = opened?.scorer ?? null;
  if (scorer && o.k !== scorer.k) process.stderr.write(`[cluster] the scorer was trained on candidates of k=${scorer.k}: using k=${scorer.k}\n`);
  const k = scorer ? scorer.k : o.k;
  const threshold = o.thresholdFrom
    ? thresholdFromFile(
        o.thresholdFrom,
        s.targetPrecision ?? undefined,
        { scorer: !!scorer, margin: s.margin, k, scorerTables: opened ? !!opened.aligner : undefined },
        'cluster',
      )
    : o.threshold === 'auto'
      ? undefined
      : (o.threshold ?? (scorer ? 0.5 : undefined));
  checkWorkDir(o.work);
  await checkInputs(o);
  await pingRedis(o.redis);
  await submitAndFollow(MINE_PLAN, mineRequest(o, k, threshold), { ...o, attempts: s.attempts, quiet: s.quiet }, () => null);
}

/** What the jobs will read, checked before any work: sentences, and one vector per line, of one width. */
async function checkInputs(o: ClusterMineJob): Promise<void> {
  const cols: number[] = [];
  for (const [flag, text, flagV, vec] of [
    ['--src', o.src, '--src-vectors', o.srcVectors],
    ['--trg', o.trg, '--trg-vectors', o.trgVectors],
  ] as const) {
    const n = (await readSentences(text)).sentences.length;
    const r = openVectors(vec);
    r.close();
    if (r.rows !== n) throw new Error(`${flagV} ${vec}: ${r.rows} vectors but ${flag} ${text} has ${n} lines`);
    cols.push(r.cols);
  }
  if (cols[0] !== cols[1])
    throw new Error(`dimension mismatch: --src-vectors ${o.srcVectors} has ${cols[0]} columns, --trg-vectors ${o.trgVectors} ${cols[1]}`);
}

/** The flow's request: absolute paths (every worker reads them), the scorer by its directory, the language filter by its model's. */
function mineRequest(o: ClusterMineJob, k: number, threshold: number | undefined): MineRequest {
  const s = o.settings;
  const lid = o.lid;
  const filters = { ...o.filters, ...(lid ? { lid: { dir: resolve(lid.dir), src: lid.src, trg: lid.trg, minConfidence: lid.minConfidence } } : {}) };
  return {
    src: resolve(o.src),
    trg: resolve(o.trg),
    srcVectors: resolve(o.srcVectors),
    trgVectors: resolve(o.trgVectors),
    output: resolve(o.output),
    k,
    margin: s.margin as MarginKind,
    retrieval: s.retrieval as Retrieval,
    threshold,
    ...(o.scorer
      ? {
          scorer: {
            dir: resolve(o.scorer),
            ...(o.model ? { model: resolve(o.model) } : {}),
            srcLang: o.srcLang,
            trgLang: o.trgLang,
            selfTables: s.selfTables,
            assignment: s.assignment as Assignment,
            auto: o.threshold === 'auto',
          },
        }
      : {}),
    ...(anyFilter({ ...o.filters, lid }) ? { filters } : {}),
    ...(s.header ? { header: true } : {}),
    ...(o.stats ? { stats: resolve(o.stats) } : {}),
    ...(o.keepAll ? { keepAll: resolve(o.keepAll) } : {}),
  };
}

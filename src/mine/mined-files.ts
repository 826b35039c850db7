// What a mining run writes once its pairs are chosen — the same for xling mine and the merge of
// xling cluster mine: the filters applied (each rejected pair with its reason), the TSV with its
// optional header, the rejected rows for --keep-all, and the --stats record of the run.
import { AutoThreshold, autoSummary } from './auto-threshold.js';
import { anyFilter, FilterOptions, filterPairs, REJECT_REASONS } from './filters.js';
import { Candidate, formatPairs } from './mine.js';

/** A mined pair: score is the scorer's probability with a scorer, else the margin score (= margin). */
export interface MinedRow extends Candidate {
  margin: number;
}

/** The sentences of one side as read (ids for BUCC input). */
export interface MinedSide {
  ids: string[];
  sentences: string[];
  bucc: boolean;
}

/** How a run scored its pairs: what the header and --stats record. */
export interface MinedRun {
  model: string | null;
  margin: string;
  /** The margin's candidate selection, or 'scorer'. */
  retrieval: string;
  k: number;
  scorer: string | null;
  /** With a scorer: whose word tables it used ('scorer', 'self (N pairs)', 'none'). */
  wordTables?: string;
  threshold?: number;
  auto?: AutoThreshold | null;
}

export interface MinedFiles {
  /** The output TSV (header line first when asked). */
  text: string;
  /** The rejected pairs, each row prefixed by its reason (empty without filters). */
  rejected: string;
  /** The --stats JSON. */
  stats: string;
  /** What the filters did, in one line (null without filters). */
  filtered: string | null;
  /** Pairs written. */
  pairs: number;
}

/**
 * Filters `rows` (best first) and renders what the run writes. `sMap` / `tMap`: line numbers of
 * unified rows (xling mine --unify), else null.
 */
export function minedFiles(
  rows: MinedRow[],
  S: MinedSide,
  T: MinedSide,
  filters: FilterOptions,
  run: MinedRun,
  o: { header?: boolean; sMap?: Int32Array | null; tMap?: Int32Array | null } = {},
): MinedFiles {
  const sMap = o.sMap ?? null,
    tMap = o.tMap ?? null;
  const withMargin = run.scorer !== null;
  const line = (c: Candidate) => [sMap ? sMap[c.src]! : c.src, tMap ? tMap[c.trg]! : c.trg] as const;
  const textOf = (c: Candidate): [string, string] => {
    const [s, t] = line(c);
    return [S.sentences[s]!, T.sentences[t]!];
  };
  // one output row: probability<TAB>margin<TAB>src<TAB>trg with a scorer, else score<TAB>src<TAB>trg
  const rowText = (c: MinedRow) => formatPairs([c], S, T, sMap, tMap, { withMargin }).slice(0, -1);
  let rejected = '',
    filtered: string | null = null;
  let counts: Record<string, number> | null = null;
  let kept = rows;
  if (anyFilter(filters)) {
    const f = filterPairs(rows, textOf, filters);
    counts = f.counts;
    rejected = f.rejected.map(({ pair, reason }) => `${reason}\t${rowText(pair)}\n`).join('');
    const said = REJECT_REASONS.filter((r) => f.counts[r]).map((r) => `${r} ${f.counts[r]}`);
    filtered = `filters kept ${f.kept.length} of ${rows.length} pairs${said.length ? ` (removed: ${said.join(', ')})` : ''}`;
    kept = f.kept;
  }
  const threshold = run.threshold;
  const header = o.header
    ? `# xling mine: model=${run.model ?? 'vectors'} margin=${run.margin} retrieval=${run.retrieval} k=${run.k} scorer=${run.scorer ?? 'none'}${run.wordTables !== undefined ? ` word_tables=${run.wordTables.replace(/ \((\d+) pairs\)/, ':$1')}` : ''} threshold=${threshold ?? 'none'}${run.auto ? ' (auto)' : ''}${withMargin ? ' columns=probability,margin,src,trg' : ''}\n`
    : '';
  const stats =
    JSON.stringify(
      {
        pairs: kept.length,
        candidates_before_filters: rows.length,
        rejected: counts ?? {},
        model: run.model,
        margin: run.margin,
        retrieval: run.retrieval,
        k: run.k,
        scorer: run.scorer,
        ...(run.wordTables !== undefined ? { word_tables: run.wordTables } : {}),
        threshold: threshold ?? null,
        ...(run.auto ? { threshold_auto: autoSummary(run.auto) } : {}),
      },
      null,
      1,
    ) + '\n';
  return { text: header + formatPairs(kept, S, T, sMap, tMap, { withMargin }), rejected, stats, filtered, pairs: kept.length };
}

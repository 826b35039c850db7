// A threshold calibrated on a dev pair (--threshold-from: the --json of xling eval bucc, or of
// xling scorer score --label-col), applied to a mining or scoring run: the F1-optimal threshold, or
// the lowest reaching a target precision, refused when the file's scores are not comparable with
// the run's (another scorer, margin or k).
import { readJsonFile } from '../util/json-file.js';
import { thresholdForPrecision } from './filters.js';

/** How a run scores candidates, to check a calibration file against: with a scorer, or by which margin over how many neighbours. */
export interface ScoringOfRun {
  scorer: boolean;
  margin: string;
  k: number;
  /** With a scorer: whether it has word tables for this run's language pair. */
  scorerTables?: boolean;
}

/**
 * The threshold of an xling eval bucc --json: its F1-optimal one, or the lowest reaching a
 * precision. Refused when the file's scores are not this run's: calibrated with a scorer and
 * applied without one (or the reverse), or, without a scorer, with another margin, or another k
 * for a margin that depends on the neighbours (all but absolute). Files written before these
 * fields were recorded are taken as they are.
 */
export function thresholdFromFile(file: string, precision: number | undefined, run: ScoringOfRun, label = 'mine'): number {
  const j = readJsonFile<{
    threshold?: unknown;
    cuts?: unknown;
    scorer?: unknown;
    margin?: unknown;
    k?: unknown;
    k_requested?: unknown;
    word_tables?: unknown;
  }>(file, { unreadable: (e) => `--threshold-from ${file}: ${e.message}`, invalid: (e) => `--threshold-from ${file}: ${e.message}` });
  if (j === null || typeof j !== 'object' || Array.isArray(j)) throw new Error(`--threshold-from ${file}: not an xling eval bucc --json object`);
  if (run.scorer !== (typeof j.scorer === 'string'))
    throw new Error(
      `--threshold-from ${file}: calibrated ${typeof j.scorer === 'string' ? 'with' : 'without'} a scorer, but this run is ${run.scorer ? 'with' : 'without'} one (the scores are not comparable)`,
    );
  if (!run.scorer) {
    if (typeof j.margin === 'string' && j.margin !== run.margin)
      throw new Error(
        `--threshold-from ${file}: calibrated with --margin ${j.margin}, but this run uses --margin ${run.margin} (the scores are not comparable)`,
      );
    const k = typeof j.k_requested === 'number' ? j.k_requested : j.k; // the k asked for, when fewer rows capped it
    if (run.margin !== 'absolute' && typeof k === 'number' && k !== run.k)
      throw new Error(
        `--threshold-from ${file}: calibrated with k=${k}, but this run uses k=${run.k} (a ${run.margin} margin's scale depends on the neighbours it averages; give -k ${k})`,
      );
  } else if (run.scorerTables !== undefined && typeof j.word_tables === 'string' && (j.word_tables === 'scorer') !== run.scorerTables) {
    // the same scorer, but its word-alignment features from other tables: the probabilities move (a warning: they stay probabilities)
    process.stderr.write(
      `[${label}] warning: --threshold-from ${file} was calibrated ${j.word_tables === 'scorer' ? "with the scorer's own word tables for its pair" : `without them (${j.word_tables})`}, and this run ${run.scorerTables ? 'has them' : 'has none for its pair'}: the probabilities are not quite comparable (see bench/RESULTS.md, selfTables)\n`,
    );
  }
  if (precision === undefined) {
    if (typeof j.threshold !== 'number' || !Number.isFinite(j.threshold)) throw new Error(`--threshold-from ${file}: no finite numeric 'threshold'`);
    return j.threshold;
  }
  if (!Array.isArray(j.cuts)) throw new Error(`--threshold-from ${file}: no 'cuts' (P/R by threshold; made by a newer xling eval bucc --json)`);
  const curve = (j.cuts as unknown[]).map((c, i) => {
    if (!Array.isArray(c) || c.length < 2 || typeof c[0] !== 'number' || typeof c[1] !== 'number')
      throw new Error(`--threshold-from ${file}: cuts[${i}] is not [threshold, precision, recall]`);
    return { threshold: c[0] as number, precision: c[1] as number };
  });
  const t = thresholdForPrecision(curve, precision);
  if (t === null) throw new Error(`--threshold-from ${file}: no threshold reaches precision ${precision} on that dev set`);
  process.stderr.write(`[${label}] threshold ${t} reaches precision ${precision} on ${file}\n`);
  return t;
}

// One BUCC-style evaluation run (xling eval bucc; BUCC 2018 shared task, Zweigenbaum et al. 2018):
// candidates mined from a split's two sides (embedded with the model, or their vectors read;
// both directions' k-NN, then LASER's margin and retrieval rule, or a second-stage scorer's
// probabilities and one-to-one assignment), measured against its gold pairs: P/R/F1 at the
// F1-optimal threshold, average precision, P/R at every score (what --threshold-from reads), at a
// threshold calibrated elsewhere, at the lowest threshold reaching a target precision, and at the
// scorer's automatic threshold. The command checks its options and writes the report.
import { thresholdFromFile } from '../mine/calibration.js';
import { readBucc, readGold } from '../train-data/corpus.js';
import { EmbedSettings, vectorsFor } from '../embed/input.js';
import { autoSummary, autoThreshold } from '../mine/auto-threshold.js';
import { thresholdForPrecision } from '../mine/filters.js';
import { MarginKind, Retrieval } from '../mine/mine.js';
import { minePairs } from '../mine/pipeline.js';
import { Assignment, OpenedScorer, openScorer } from '../mine/scorer/index.js';
import { bestPointReport, cutRows, evaluateAtThreshold, evaluateBucc, goldSet, prCurveSvg, prfText, Scored } from '../util/precision-recall.js';

/** What xling eval bucc evaluates (its options checked by the command). */
export interface BuccRun {
  /** The split: id<TAB>sentence files of each side, and src_id<TAB>trg_id gold pairs. */
  src: string;
  trg: string;
  gold: string;
  /** Vectors of each side (.npy); a side without is embedded with `model`, as `srcEmbed` / `trgEmbed` say. */
  srcVectors?: string;
  trgVectors?: string;
  model?: string;
  srcLang?: string;
  trgLang?: string;
  srcEmbed: EmbedSettings;
  trgEmbed: EmbedSettings;
  /** LASER's margin scoring (a scorer uses the k it was trained with). */
  k: number;
  margin: MarginKind;
  retrieval: Retrieval;
  /** Rank by the scorer in `dir` (xling scorer train; opened with openScorer, its word tables for this pair as `selfTables` says). */
  scorer?: { dir: string; assignment: Assignment; selfTables?: boolean };
  /** Also P/R/F1 at the threshold calibrated in this file (an eval bucc --json report; thresholdFromFile), read before any embedding. */
  thresholdFrom?: string;
  /** Also the lowest threshold reaching this precision. */
  targetPrecision?: number;
  /** Lines said on the way (the k used, the scorer's warnings). */
  say: (line: string) => void;
}

/** The evaluation: the --json report (camelCase keys), the summary (lines), the target precision's line (said apart), and the PR curve as SVG (made when asked). */
export interface BuccRunResult {
  report: Record<string, unknown>;
  summary: string;
  precisionNote?: string;
  svg(): string;
}

/** The run with its scorer opened and its calibrated threshold read. */
interface OpenedRun extends Omit<BuccRun, 'scorer'> {
  scorer?: { dir: string; opened: OpenedScorer; assignment: Assignment };
  calibrated?: { file: string; threshold: number };
}

/** Opens the run's scorer and reads its calibrated threshold (both checked before any embedding). */
function openRun(o: BuccRun): OpenedRun {
  const opened = o.scorer ? openScorer(o.scorer.dir, o.model, o.srcLang, o.trgLang, { selfTables: o.scorer.selfTables, say: o.say }) : null;
  const threshold = o.thresholdFrom
    ? thresholdFromFile(o.thresholdFrom, undefined, { scorer: !!opened, margin: o.margin, k: o.k, scorerTables: opened ? !!opened.aligner : undefined }, 'bucc')
    : undefined;
  return {
    ...o,
    scorer: o.scorer && opened ? { dir: o.scorer.dir, opened, assignment: o.scorer.assignment } : undefined,
    calibrated: o.thresholdFrom && threshold !== undefined ? { file: o.thresholdFrom, threshold } : undefined,
  };
}

/** Mines the split's candidates and measures them against its gold pairs. */
export async function evaluateBuccRun(run: BuccRun): Promise<BuccRunResult> {
  const o = openRun(run);
  const S = await readBucc(o.src),
    T = await readBucc(o.trg);
  const gold = goldSet(await readGold(o.gold), new Set(S.map((s) => s.id)), new Set(T.map((t) => t.id)), o.gold);
  const su = S.map((s) => s.sentence),
    tu = T.map((t) => t.sentence);
  const sv = vectorsFor(su, o.srcVectors, o.model, `--src ${o.src}`, o.srcEmbed);
  const tv = vectorsFor(tu, o.trgVectors, o.model, `--trg ${o.trg}`, o.trgEmbed);
  const sc = o.scorer;
  if (sc && sv.d === tv.d && o.k !== sc.opened.scorer.k)
    o.say(`the scorer was trained on candidates of k=${sc.opened.scorer.k}: using k=${sc.opened.scorer.k}`);
  const { rows, k } = await minePairs(
    { vectors: sv, texts: su, what: o.srcVectors ? `--src-vectors ${o.srcVectors}` : '--model' },
    { vectors: tv, texts: tu, what: o.trgVectors ? `--trg-vectors ${o.trgVectors}` : '--model' },
    {
      k: o.k,
      margin: o.margin,
      retrieval: o.retrieval,
      // every candidate: the PR curve's
      threshold: sc ? 0 : undefined,
      scorer: sc && {
        model: sc.opened.scorer,
        aligner: sc.opened.aligner,
        selfTables: sc.opened.selfTables,
        assignment: sc.assignment,
        encoder: o.model,
        srcLang: o.srcLang,
        trgLang: o.trgLang,
      },
      // the search off the main thread (Ctrl-C stops it), in the synchronous search's chunks
      chunk: 65536,
      say: o.say,
    },
  );
  const cands: Scored[] = rows.map((c) => ({ src: S[c.src]!.id, trg: T[c.trg]!.id, score: c.score }));
  return buccReport(o, cands, gold, k);
}

/** The figures of the candidates against the gold pairs (see evaluateBuccRun). */
function buccReport(o: OpenedRun, cands: Scored[], gold: Set<string>, k: number): BuccRunResult {
  const sc = o.scorer;
  const r = evaluateBucc(cands, gold);
  const report: Record<string, unknown> = {
    ...bestPointReport(r),
    candidates: cands.length,
    margin: o.margin,
    retrieval: o.retrieval,
    k,
    ...(k !== o.k ? { kRequested: o.k } : {}),
    scorer: sc?.dir ?? null,
    ...(sc ? { assignment: sc.assignment, word_tables: sc.opened.wordTables() } : {}),
    // P and R at every distinct score (threshold: the candidates scoring at least it): xling mine's targetPrecision reads these
    cuts: cutRows(r),
  };
  let precisionNote: string | undefined;
  if (o.targetPrecision !== undefined) {
    const t = thresholdForPrecision(r.cuts, o.targetPrecision);
    report.threshold_for_precision = { precision: o.targetPrecision, threshold: t };
    precisionNote = t === null ? `no threshold reaches precision ${o.targetPrecision}\n` : `precision ≥ ${o.targetPrecision} from threshold ${t.toFixed(5)}\n`;
  }
  let summary = `${prfText(r)}  at threshold ${r.threshold.toFixed(5)}  (AP ${(100 * r.averagePrecision).toFixed(2)}; ${sc ? `scorer ${sc.dir}` : `${o.margin}, ${o.retrieval}`}, k=${k})\n`;
  if (o.calibrated) {
    const t = o.calibrated.threshold;
    const at = evaluateAtThreshold(cands, gold, t);
    report.atThreshold = at;
    summary += `at threshold ${t.toFixed(5)} from ${o.calibrated.file}: ${prfText(at)}\n`;
  }
  // what xling mine --threshold auto would keep of these candidates (no gold), measured against the gold
  const auto = sc ? autoThreshold(cands.map((c) => c.score)) : null;
  if (auto) {
    const at = evaluateAtThreshold(cands, gold, auto.threshold);
    report.auto = { ...autoSummary(auto), precision: at.precision, recall: at.recall, f1: at.f1, tp: at.tp, predicted: at.predicted };
    summary += `at the automatic threshold ${auto.threshold.toFixed(5)} (--threshold auto; expected F1 ${(100 * auto.expected.f1).toFixed(2)}): ${prfText(at)}\n`;
  } else if (sc) report.auto = null;
  return { report, summary, precisionNote, svg: () => prCurveSvg(r, `BUCC ${o.margin}/${o.retrieval}: F1 ${(100 * r.f1).toFixed(1)}`) };
}

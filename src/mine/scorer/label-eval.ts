// A scored corpus against its labels (xling scorer score --label-col): each line a candidate, the
// lines labelled 1 its gold — P/R/F1 at the F1-optimal threshold, average precision, P/R at every
// score (what --threshold-from reads, with the run's scoring to check it against) and at the run's
// own threshold, the precision–recall curve; the BUCC-2018 measures of src/util/precision-recall.ts.
import { bestPointReport, cutRows, evaluateAtThreshold, evaluateBucc, prCurveSvg, prfText } from '../../util/precision-recall.js';

/** How the corpus was scored: the scorer's directory (null: the margin), the margin, k, and the threshold applied (if any). */
export interface LabelledRun {
  scorer: string | null;
  margin: string;
  k: number;
  threshold: number | undefined;
}

/** The evaluation: what is said of it (lines), the --json report, and the PR curve as SVG (made when asked). */
export interface LabelEvaluation {
  text: string;
  report: Record<string, unknown>;
  svg(): string;
}

/** The scores of the lines against their labels (1: a good pair); no line labelled 1 is refused. */
export function evaluateLabels(label: Uint8Array, score: Float64Array, run: LabelledRun): LabelEvaluation {
  const cands = Array.from(label, (_, i) => ({ src: String(i), trg: '', score: score[i]! }));
  const gold = new Set(Array.from(label).flatMap((good, i) => (good ? [`${i}\t`] : [])));
  if (!gold.size) throw new Error('--label-col: no line is labelled 1 (a good pair)');
  const r = evaluateBucc(cands, gold);
  let text = `${prfText(r)}  at threshold ${r.threshold.toFixed(5)}  (AP ${(100 * r.averagePrecision).toFixed(2)}; ${gold.size} good pairs of ${label.length} lines)\n`;
  const at = run.threshold !== undefined ? evaluateAtThreshold(cands, gold, run.threshold) : null;
  if (at) text += `at threshold ${run.threshold}: ${prfText(at)}\n`;
  return {
    text,
    report: {
      ...bestPointReport(r),
      lines: label.length,
      ...(at ? { atThreshold: at } : {}),
      scorer: run.scorer,
      margin: run.margin,
      k: run.k,
      cuts: cutRows(r),
    },
    svg: () => prCurveSvg(r, `labelled pairs, ${run.scorer ? 'scorer' : `${run.margin} margin`}: F1 ${(100 * r.f1).toFixed(1)}`),
  };
}

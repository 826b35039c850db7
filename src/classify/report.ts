// What xling classify eval shows of an evaluation: the summary (accuracy, macro-F1, a line per
// class) and the confusion matrix as an SVG heat map.
import { heatmap } from '../util/svg.js';
import { Evaluation } from './classifier.js';

/** Accuracy and macro-F1, then P/R/F1 and support per class (figures in %). */
export function evaluationSummary(r: Evaluation): string {
  const pct = (x: number, digits: number) => (100 * x).toFixed(digits);
  const lines = [
    `accuracy ${pct(r.accuracy, 2)}%  macro-F1 ${pct(r.macro_f1, 2)}% over ${r.macro_classes} classes (gold or predicted)  (${r.n} documents)`,
    ...r.perClass.map(
      (p) => `  ${p.label.padEnd(12)} P ${pct(p.precision, 1).padStart(5)}  R ${pct(p.recall, 1).padStart(5)}  F1 ${pct(p.f1, 1).padStart(5)}  n=${p.support}`,
    ),
  ];
  return lines.map((l) => `${l}\n`).join('');
}

/** The confusion matrix (rows = gold, columns = predicted) as an SVG heat map. */
export function confusionSvg(r: Evaluation): string {
  return heatmap({
    rows: r.labels,
    cols: r.labels,
    values: r.confusion,
    title: `Confusion matrix — accuracy ${(100 * r.accuracy).toFixed(1)}%`,
    colors: 'viridis',
    showValues: true,
    rowLabel: 'gold',
    colLabel: 'predicted',
    format: (v) => String(v),
  });
}

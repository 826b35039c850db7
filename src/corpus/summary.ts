// What xling corpus says of a run: a skipped file or entry in one line, and the summary of the
// corpus built (files, units, rows, languages; the rows of each source by language; what was left out).
import { CorpusSummary } from './build.js';
import { SourceProblem } from './types.js';

/** A skipped file or entry: FILE[:LINE]: why. */
export function problemText(p: SourceProblem): string {
  return `${p.file}${p.line ? `:${p.line}` : ''}: ${p.message}`;
}

/** The summary lines of buildCorpus's result (written to `out`, the dev rows to `devOut`), each with its newline. */
export function corpusSummaryText(summary: CorpusSummary, out: string, devOut?: string): string {
  const dev = devOut ? ` (+ ${summary.devRows} dev rows in ${devOut})` : '';
  const lines = [`[corpus] ${summary.files} files, ${summary.units} units → ${summary.rows} rows${dev}, ${summary.langs.length} languages → ${out}`];
  for (const s of Object.keys(summary.bySource).sort()) {
    const byLang = Object.entries(summary.bySource[s]!).sort((x, y) => y[1] - x[1]);
    lines.push(`  ${s}: ${byLang.map(([l, n]) => `${l} ${n}`).join(', ')}`);
  }
  const dropped = Object.entries(summary.dropped).sort((x, y) => y[1] - x[1]);
  if (dropped.length) lines.push(`  left out: ${dropped.map(([w, n]) => `${w} ${n}`).join('; ')}`);
  if (summary.problems) lines.push(`  ${summary.problems} problems reported above (each a file or an entry skipped)`);
  return lines.join('\n') + '\n';
}

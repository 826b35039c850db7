// Thresholds a user mining without gold would use, against the F1-optimal one: for every
// `<pair>.<system>.json` of `xling eval bucc --scorer … --json` in each DIR (the --work directories of
// experiments/scorer-eval.mjs and experiments/scorer-transfer.mjs), F1 (%) at the F1-optimal threshold (known
// only with gold), at the default 0.5 of `xling mine --scorer`, at `--threshold auto` (the JSON's
// `auto`), and, where the JSON has one (`--threshold-from`: a dev set's calibration), at that.
//   node experiments/threshold-table.mjs DIR [DIR …] [--systems parallel,gold]
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const si = args.indexOf('--systems');
const systems = si >= 0 ? args[si + 1].split(',') : ['parallel', 'gold'];
const dirs = args.filter((a, i) => !a.startsWith('--') && (si < 0 || i !== si + 1));
if (!dirs.length) {
  console.error('usage: node experiments/threshold-table.mjs DIR [DIR …] [--systems parallel,gold]');
  process.exit(2);
}

const pct = (x) => (x === undefined || x === null ? '—' : (100 * x).toFixed(1));
/** F1 of the candidates scoring at least t, from the JSON's cuts ([threshold, precision, recall], best first). */
function f1At(j, t) {
  let pr = [0, 0];
  for (const [c, p, r] of j.cuts) if (c >= t) pr = [p, r];
  return pr[0] + pr[1] > 0 ? (2 * pr[0] * pr[1]) / (pr[0] + pr[1]) : 0;
}

for (const dir of dirs) {
  for (const sys of systems) {
    const files = readdirSync(dir)
      .filter((f) => f.endsWith(`.${sys}.json`) && /^[\w]+-[\w]+\./.test(f))
      .sort();
    if (!files.length) continue;
    const rows = files.map((f) => {
      const j = JSON.parse(readFileSync(join(dir, f), 'utf8'));
      if (typeof j.scorer !== 'string' || !Array.isArray(j.cuts)) throw new Error(`${join(dir, f)}: not an xling eval bucc --scorer --json`);
      if (!j.auto) throw new Error(`${join(dir, f)}: no 'auto' (made before xling eval bucc reported --threshold auto)`);
      return { pair: f.split('.')[0], opt: j.f1, optT: j.threshold, half: f1At(j, 0.5), auto: j.auto.f1, autoT: j.auto.threshold, cal: j.at_threshold?.f1 };
    });
    const hasCal = rows.some((r) => r.cal !== undefined);
    console.log(`\n${dir}, ${sys} scorer\n`);
    console.log(`| pair | F1-optimal (threshold) | at 0.5 | at --threshold auto (threshold) |${hasCal ? ' at the dev-calibrated threshold |' : ''}`);
    console.log(`|---|---|---|---|${hasCal ? '---|' : ''}`);
    for (const r of rows)
      console.log(
        `| ${r.pair} | ${pct(r.opt)} (${r.optT.toFixed(2)}) | ${pct(r.half)} | ${pct(r.auto)} (${r.autoT.toFixed(2)}) |${hasCal ? ` ${pct(r.cal)} |` : ''}`,
      );
    const mean = (k, rs = rows) => rs.reduce((s, r) => s + r[k], 0) / rs.length;
    console.log(
      `| mean | ${pct(mean('opt'))} | ${pct(mean('half'))} | ${pct(mean('auto'))} |${
        hasCal
          ? ` ${pct(
              mean(
                'cal',
                rows.filter((r) => r.cal !== undefined),
              ),
            )} (its pairs) |`
          : ''
      }`,
    );
  }
}

// Scoring and formats of sentence alignments: vecalign's strict and lax precision, recall and F1
// over aligned groups (Thompson & Koehn 2019, after Sennrich & Volk 2011's lax measure), its
// `[0, 1]:[2]:0.123456` line format, and two baselines to compare against: 1:1 in order, and
// the length-based DP of Gale & Church (1993).
import { alignDp, galeChurchCosts } from './dp.js';

/** An alignment group as scored: sentence indices of each side (one side empty: a deletion). */
export interface Group {
  src: readonly number[];
  trg: readonly number[];
}

export interface AlignmentScores {
  precisionStrict: number;
  recallStrict: number;
  f1Strict: number;
  precisionLax: number;
  recallLax: number;
  f1Lax: number;
}

const key = (g: Group) => `${g.src.join(',')}|${g.trg.join(',')}`;

/** [true positives strict, false positives strict, true positives lax, false positives lax] of test against gold (vecalign's _precision). */
function precisionCounts(gold: readonly Group[], test: readonly Group[]): [number, number, number, number] {
  const goldKeys = new Set(gold.filter((g) => g.src.length || g.trg.length).map(key));
  const seen = new Set<string>();
  const srcToGoldTrg = new Map<number, Set<number>>();
  for (const g of gold)
    for (const s of g.src) {
      let t = srcToGoldTrg.get(s);
      if (!t) srcToGoldTrg.set(s, (t = new Set()));
      for (const y of g.trg) t.add(y);
    }
  let tps = 0,
    fps = 0,
    tpl = 0,
    fpl = 0;
  for (const g of test) {
    if (!g.src.length && !g.trg.length) continue;
    const k = key(g);
    if (seen.has(k)) continue; // a set, as vecalign's
    seen.add(k);
    if (goldKeys.has(k)) {
      tps++;
      tpl++;
      continue;
    }
    fps++;
    const targets = new Set<number>();
    for (const s of g.src) for (const y of srcToGoldTrg.get(s) ?? []) targets.add(y);
    if (g.trg.some((y) => targets.has(y))) tpl++;
    else fpl++;
  }
  return [tps, fps, tpl, fpl];
}

/**
 * Strict and lax precision, recall and F1 of test alignments against gold ones, summed over
 * documents (vecalign's score_multiple): precision over the test groups (deletions included),
 * recall over the gold groups that align something (deletions excluded on both sides). Strict: a
 * group counts only when it is exactly a gold group; lax: when it shares a source and a target
 * sentence with one.
 */
export function scoreAlignments(gold: readonly (readonly Group[])[], test: readonly (readonly Group[])[]): AlignmentScores {
  if (gold.length !== test.length) throw new Error(`scoreAlignments: ${gold.length} gold documents, ${test.length} test documents`);
  const p = [0, 0, 0, 0],
    r = [0, 0, 0, 0];
  for (let d = 0; d < gold.length; d++) {
    precisionCounts(gold[d]!, test[d]!).forEach((v, i) => {
      p[i]! += v;
    });
    const aligned = (a: readonly Group[]) => a.filter((g) => g.src.length && g.trg.length);
    precisionCounts(aligned(test[d]!), aligned(gold[d]!)).forEach((v, i) => {
      r[i]! += v;
    });
  }
  const ratio = (a: number, b: number) => (a + b ? a / (a + b) : 0);
  const f1 = (x: number, y: number) => (x + y ? (2 * x * y) / (x + y) : 0);
  const ps = ratio(p[0]!, p[1]!),
    pl = ratio(p[2]!, p[3]!),
    rs = ratio(r[0]!, r[1]!),
    rl = ratio(r[2]!, r[3]!);
  return { precisionStrict: ps, recallStrict: rs, f1Strict: f1(ps, rs), precisionLax: pl, recallLax: rl, f1Lax: f1(pl, rl) };
}

/** One line of vecalign's output: `[0, 1]:[2]:0.123456` (Python's list repr, the cost with 6 decimals). */
export function vecalignLine(g: Group & { cost: number }): string {
  return `[${g.src.join(', ')}]:[${g.trg.join(', ')}]:${g.cost.toFixed(6)}`;
}

/** Groups of vecalign's line format (`[0]:[0]` or `[0]:[0]:cost`), as its read_alignments reads them; errors name the line. */
export function parseVecalign(text: string, what = 'alignment'): Group[] {
  const out: Group[] = [];
  const list = (s: string, no: number) => {
    const m = /^\[\s*((?:\d+\s*,\s*)*\d+)?\s*,?\s*\]$/.exec(s.trim());
    if (!m) throw new Error(`${what}:${no}: '${s.trim()}' is not a list of sentence numbers like [0, 1]`);
    return m[1] ? m[1].split(',').map((x) => Number(x.trim())) : [];
  };
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    const f = line.split(':').filter((x) => x.trim());
    if (f.length < 2) throw new Error(`${what}:${i + 1}: expected [src]:[trg], got '${line.trim()}'`);
    out.push({ src: list(f[0]!, i + 1), trg: list(f[1]!, i + 1) });
  });
  return out;
}

/** The 1:1-in-order baseline: sentence i with sentence i, the longer document's tail deleted. */
export function inOrderAlignment(n: number, m: number): Group[] {
  const out: Group[] = [];
  for (let i = 0; i < Math.min(n, m); i++) out.push({ src: [i], trg: [i] });
  for (let i = m; i < n; i++) out.push({ src: [i], trg: [] });
  for (let j = n; j < m; j++) out.push({ src: [], trg: [j] });
  return out;
}

/** The Gale–Church baseline: the length-based DP over character lengths (1:1, 2:1, 1:2, 2:2, deletions), exact over the whole matrix. */
export function lengthAlignment(src: readonly string[], trg: readonly string[]): Group[] {
  const len = (s: string) => [...s].length;
  return alignDp(galeChurchCosts(src.map(len), trg.map(len))).map((g) => ({ src: seq(g.srcStart, g.srcEnd), trg: seq(g.trgStart, g.trgEnd) }));
}

function seq(a: number, b: number): number[] {
  return Array.from({ length: b - a }, (_, i) => a + i);
}

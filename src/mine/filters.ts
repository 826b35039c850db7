// Filters of mined pairs, as the pipelines that mined WikiMatrix/CCMatrix/NLLB data apply them
// after margin scoring (LASER's mine_bitexts, stopes, Bicleaner's hard rules): language of both
// sides, length bounds and ratio, duplicates, identical sides, sides of mostly numbers or
// punctuation. Each rejected pair keeps its reason, so a run can say how many each removed.
import { letterShare } from './features.js';

export interface FilterOptions {
  /** Minimum / maximum length of each side in characters. */
  minChars?: number;
  maxChars?: number;
  /** Longest side ÷ shortest side (characters) at most this. */
  maxLengthRatio?: number;
  /** Drop a pair whose source (target, pair) text was already kept, after normalisation. */
  dedupSrc?: boolean;
  dedupTrg?: boolean;
  dedupPair?: boolean;
  /** Drop pairs whose two sides are the same text (after normalisation). */
  dropIdentical?: boolean;
  /** Drop pairs where either side has fewer letters than this share of its non-space characters (numbers, punctuation, code). */
  minLetterShare?: number;
  /** Language identification: drop pairs where a side is identified (with confidence) as another language than asked. */
  lid?: { identify: (text: string) => { lang: string; confidence: number } | null; src?: string; trg?: string; minConfidence: number };
}

export type RejectReason = 'too_short' | 'too_long' | 'length_ratio' | 'duplicate_src' | 'duplicate_trg' | 'duplicate_pair' | 'identical' | 'not_text' | 'src_language' | 'trg_language';

export const REJECT_REASONS: readonly RejectReason[] = ['too_short', 'too_long', 'length_ratio', 'identical', 'not_text', 'src_language', 'trg_language', 'duplicate_pair', 'duplicate_src', 'duplicate_trg'];

/** Text as compared for duplicates and identity: NFKC, lower case, spaces collapsed, edge punctuation dropped. */
export function normalizeForDedup(s: string): string {
  return s.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim().replace(/^[\p{P}\s]+|[\p{P}\s]+$/gu, '');
}

/**
 * Whether an identified language is the one asked: the same primary subtag (pt_BR and pt, zh_TW and
 * zh). Identifiers confuse a language's variants (on Brazilian Portuguese game dialogue the model's
 * took 224 of 500 lines for Portuguese: bench/RESULTS.md, "Cleaning a parallel corpus"), and a
 * corpus of one variant is rarely to be cleaned of the other.
 */
export function sameLanguage(identified: string, asked: string): boolean {
  const primary = (c: string) => c.split(/[-_]/)[0]!.toLowerCase();
  return primary(identified) === primary(asked);
}

/** Whether any filter is switched on. */
export function anyFilter(o: FilterOptions): boolean {
  return o.minChars !== undefined || o.maxChars !== undefined || o.maxLengthRatio !== undefined || !!o.dedupSrc || !!o.dedupTrg || !!o.dedupPair || !!o.dropIdentical || o.minLetterShare !== undefined || !!o.lid;
}

/**
 * Splits pairs (best first: duplicates keep their best-scoring pair) into kept and rejected, the
 * first failing rule naming the reason. The rules run per pair in REJECT_REASONS order.
 */
export function filterPairs<P>(pairs: P[], text: (p: P) => [string, string], o: FilterOptions): { kept: P[]; rejected: { pair: P; reason: RejectReason }[]; counts: Record<RejectReason, number> } {
  const counts = Object.fromEntries(REJECT_REASONS.map((r) => [r, 0])) as Record<RejectReason, number>;
  const kept: P[] = [], rejected: { pair: P; reason: RejectReason }[] = [];
  const seenS = new Set<string>(), seenT = new Set<string>(), seenP = new Set<string>();
  const langCache = new Map<string, string | null>();
  const langOf = (t: string): string | null => {
    let l = langCache.get(t);
    if (l === undefined) {
      const r = o.lid!.identify(t);
      l = r && r.confidence >= o.lid!.minConfidence ? r.lang : null;
      langCache.set(t, l);
    }
    return l;
  };
  for (const p of pairs) {
    const [s, t] = text(p);
    const ls = [...s].length, lt = [...t].length;
    const ns = normalizeForDedup(s), nt = normalizeForDedup(t);
    let reason: RejectReason | null = null;
    if (o.minChars !== undefined && Math.min(ls, lt) < o.minChars) reason = 'too_short';
    else if (o.maxChars !== undefined && Math.max(ls, lt) > o.maxChars) reason = 'too_long';
    else if (o.maxLengthRatio !== undefined && Math.max(ls, lt) > o.maxLengthRatio * Math.max(1, Math.min(ls, lt))) reason = 'length_ratio';
    else if (o.dropIdentical && ns === nt) reason = 'identical';
    else if (o.minLetterShare !== undefined && Math.min(letterShare(s), letterShare(t)) < o.minLetterShare) reason = 'not_text';
    else if (o.lid?.src && (() => { const l = langOf(s); return l !== null && !sameLanguage(l, o.lid!.src!); })()) reason = 'src_language';
    else if (o.lid?.trg && (() => { const l = langOf(t); return l !== null && !sameLanguage(l, o.lid!.trg!); })()) reason = 'trg_language';
    else if (o.dedupPair && seenP.has(`${ns}\t${nt}`)) reason = 'duplicate_pair';
    else if (o.dedupSrc && seenS.has(ns)) reason = 'duplicate_src';
    else if (o.dedupTrg && seenT.has(nt)) reason = 'duplicate_trg';
    if (reason) { counts[reason]++; rejected.push({ pair: p, reason }); continue; }
    // (only what a rule asks for is kept: on a corpus to clean these sets would hold every line again)
    if (o.dedupSrc) seenS.add(ns);
    if (o.dedupTrg) seenT.add(nt);
    if (o.dedupPair) seenP.add(`${ns}\t${nt}`);
    kept.push(p);
  }
  return { kept, rejected, counts };
}

/** The threshold that reaches `precision` on a dev curve: the lowest score whose precision from there up is at least it. */
export function thresholdForPrecision(curve: { threshold: number; precision: number }[], precision: number): number | null {
  // curve: points by decreasing threshold; precision of everything at or above each threshold
  let best: number | null = null;
  for (const p of curve) if (p.precision >= precision) best = best === null ? p.threshold : Math.min(best, p.threshold);
  return best;
}

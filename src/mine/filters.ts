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

export type RejectReason =
  | 'too_short'
  | 'too_long'
  | 'length_ratio'
  | 'duplicate_src'
  | 'duplicate_trg'
  | 'duplicate_pair'
  | 'identical'
  | 'not_text'
  | 'src_language'
  | 'trg_language';

export const REJECT_REASONS: readonly RejectReason[] = [
  'too_short',
  'too_long',
  'length_ratio',
  'identical',
  'not_text',
  'src_language',
  'trg_language',
  'duplicate_pair',
  'duplicate_src',
  'duplicate_trg',
];

/** Text as compared for duplicates and identity: NFKC, lower case, spaces collapsed, edge punctuation dropped. */
export function normalizeForDedup(s: string): string {
  return s
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^[\p{P}\s]+|[\p{P}\s]+$/gu, '');
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
  return (
    o.minChars !== undefined ||
    o.maxChars !== undefined ||
    o.maxLengthRatio !== undefined ||
    !!o.dedupSrc ||
    !!o.dedupTrg ||
    !!o.dedupPair ||
    !!o.dropIdentical ||
    o.minLetterShare !== undefined ||
    !!o.lid
  );
}

/**
 * The cached language identification of the lid filter: a text's confident language, or null
 * (not confident: not rejected).
 */
export function languageOfText(lid: NonNullable<FilterOptions['lid']>): (text: string) => string | null {
  const cache = new Map<string, string | null>();
  return (t) => {
    let l = cache.get(t);
    if (l === undefined) {
      const r = lid.identify(t);
      l = r && r.confidence >= lid.minConfidence ? r.lang : null;
      cache.set(t, l);
    }
    return l;
  };
}

/**
 * The first rule of a pair's own (all but the duplicates, which depend on the pairs kept before it)
 * that it fails, in REJECT_REASONS order, or null. ns / nt: the sides by normalizeForDedup;
 * langOf: languageOfText (with a lid filter).
 */
export function pairRuleReason(s: string, t: string, ns: string, nt: string, o: FilterOptions, langOf?: (text: string) => string | null): RejectReason | null {
  const ls = [...s].length,
    lt = [...t].length;
  if (o.minChars !== undefined && Math.min(ls, lt) < o.minChars) return 'too_short';
  if (o.maxChars !== undefined && Math.max(ls, lt) > o.maxChars) return 'too_long';
  if (o.maxLengthRatio !== undefined && Math.max(ls, lt) > o.maxLengthRatio * Math.max(1, Math.min(ls, lt))) return 'length_ratio';
  if (o.dropIdentical && ns === nt) return 'identical';
  if (o.minLetterShare !== undefined && Math.min(letterShare(s), letterShare(t)) < o.minLetterShare) return 'not_text';
  if (o.lid && !langOf) throw new Error('pairRuleReason: the lid filter needs langOf');
  if (o.lid?.src) {
    const l = langOf!(s);
    if (l !== null && !sameLanguage(l, o.lid.src)) return 'src_language';
  }
  if (o.lid?.trg) {
    const l = langOf!(t);
    if (l !== null && !sameLanguage(l, o.lid.trg)) return 'trg_language';
  }
  return null;
}

/**
 * The duplicate rules over pairs taken best first: a pair is a duplicate when its pair, source or
 * target key (in that order) is one of a pair kept before it; keep() records a kept pair's keys.
 * Keys are the normalised texts (filterPairs) or their hashes (scorer score's streaming pass).
 */
export function dedupRules<K>(
  o: FilterOptions,
  newSet: () => { has(k: K): boolean; add(k: K): void } = () => new Set<K>(),
): { reason(src: K, trg: K, pair: K): RejectReason | null; keep(src: K, trg: K, pair: K): void } {
  // (only what a rule asks for is kept: on a corpus to clean these sets would hold every line again)
  const seenS = newSet(),
    seenT = newSet(),
    seenP = newSet();
  return {
    reason: (s, t, p) =>
      o.dedupPair && seenP.has(p) ? 'duplicate_pair' : o.dedupSrc && seenS.has(s) ? 'duplicate_src' : o.dedupTrg && seenT.has(t) ? 'duplicate_trg' : null,
    keep(s, t, p) {
      if (o.dedupSrc) seenS.add(s);
      if (o.dedupTrg) seenT.add(t);
      if (o.dedupPair) seenP.add(p);
    },
  };
}

/**
 * Splits pairs (best first: duplicates keep their best-scoring pair) into kept and rejected, the
 * first failing rule naming the reason. The rules run per pair in REJECT_REASONS order.
 */
export function filterPairs<P>(
  pairs: P[],
  text: (p: P) => [string, string],
  o: FilterOptions,
): { kept: P[]; rejected: { pair: P; reason: RejectReason }[]; counts: Record<RejectReason, number> } {
  const counts = Object.fromEntries(REJECT_REASONS.map((r) => [r, 0])) as Record<RejectReason, number>;
  const kept: P[] = [],
    rejected: { pair: P; reason: RejectReason }[] = [];
  const langOf = o.lid ? languageOfText(o.lid) : undefined;
  const dedup = dedupRules<string>(o);
  for (const p of pairs) {
    const [s, t] = text(p);
    // (the pair's key made only for its rule: xling mine filters every candidate)
    const ns = normalizeForDedup(s),
      nt = normalizeForDedup(t),
      np = o.dedupPair ? `${ns}\t${nt}` : '';
    const reason = pairRuleReason(s, t, ns, nt, o, langOf) ?? dedup.reason(ns, nt, np);
    if (reason) {
      counts[reason]++;
      rejected.push({ pair: p, reason });
      continue;
    }
    dedup.keep(ns, nt, np);
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

// The scorer's word tables for a run's language pair: its own (by language pair), or, where it has
// none, tables trained on the run's own pairs (self-trained, optionally cross-fitted by source),
// and what the self-tables regression is fitted on (bench/RESULTS.md, "Word tables from the run's
// own pairs", "The self-tables regression").
import { isLangCode, matchLangCode } from '../../embed/language.js';
import { trainWordTables, WordAligner } from './word-align/features.js';
import { assignOneToOne } from './assignment.js';
import { realign, ScoredCandidate } from './features.js';
import type { ScorerModel } from './files.js';
import { scoreCandidate } from './logistic.js';

/**
 * What a mining run with self-trained tables (mineWithScorer's selfTables) makes of one set's
 * candidates: scored by `m` without tables, word tables trained on the one-to-one pairs scored at
 * least the threshold, cross-fitted by source (crossFittedTables, as mining does for a scorer with
 * this regression), and the candidates realigned with them — the features the self-tables
 * regression is fitted on. Null when fewer than minPairs pairs (mining then keeps its first pass).
 */
export function selfTablesFeatures(
  cands: ScoredCandidate[],
  srcText: string[],
  trgText: string[],
  m: ScorerModel,
  o: SelfTables = {},
): { cands: ScoredCandidate[]; pairs: number } | null {
  const bare = realign(cands, srcText, trgText, null);
  const scored = bare.map((c) => ({ src: c.src, trg: c.trg, margin: c.margin, prob: scoreCandidate(m, c.features) }));
  const pairs = tablePairs(
    assignOneToOne(scored).filter((x) => x.prob >= (o.threshold ?? SELF_TABLES.threshold)),
    o,
  );
  if (!pairs) return null;
  return {
    cands: realign(
      cands,
      srcText,
      trgText,
      crossFittedTables(
        pairs.map((x) => [x.src, x.trg]),
        srcText,
        trgText,
      ),
    ),
    pairs: pairs.length,
  };
}

/**
 * The word aligner of a scorer for a language pair, and why there is none: the languages were not
 * named (or named as 'auto'), or the scorer has no tables for that pair. Codes are matched as the
 * model's language options are (matchLangCode: `pt-BR` finds a `pt_br-en` table, `de_at` finds
 * `de-en`). Without tables the alignment features keep their empty values (NO_ALIGNMENT) and the
 * scorer ranks on the others — worse, so callers say so.
 */
export function scorerTables(
  m: ScorerModel,
  srcLang: string | undefined,
  trgLang: string | undefined,
  o: { selfTables?: boolean } = {},
): { aligner: WordAligner | null; missing: string | null } {
  const have = Object.keys(m.tables).sort();
  const list = have.length ? `it has ${have.length > 12 ? `${have.slice(0, 12).join(' ')} … (${have.length})` : have.join(' ')}` : 'it has none';
  const off = o.selfTables
    ? "word tables are trained on this run's own pairs instead (the settings' selfTables; false leaves its word-alignment features empty)"
    : 'its word-alignment features are left empty and it ranks on the others (lower precision)';
  if (!srcLang || !trgLang || !isLangCode(srcLang) || !isLangCode(trgLang))
    return {
      aligner: null,
      missing: `the scorer's word tables are by language pair (${list}): give --src-lang and --trg-lang as language codes to use them; without them ${off}`,
    };
  // "src-trg" keys: the source language among the keys' sources, then the target among its targets
  const split = have.map((k) => {
    const i = k.indexOf('-');
    return { key: k, src: k.slice(0, i), trg: k.slice(i + 1) };
  });
  const src = matchLangCode(
    srcLang,
    split.map((x) => x.src),
  );
  const trg =
    src === null
      ? null
      : matchLangCode(
          trgLang,
          split.filter((x) => x.src === src).map((x) => x.trg),
        );
  const found = split.find((x) => x.src === src && x.trg === trg);
  if (!found)
    return {
      aligner: null,
      missing: `the scorer has no word tables for ${srcLang}-${trgLang} (${list}): ${off}; train it with that pair (xling scorer train --parallel TSV --pairs ${srcLang}-${trgLang})`,
    };
  return { aligner: new WordAligner(m.tables[found.key]!), missing: null };
}

/**
 * How a scorer scores one language pair: its word aligner for the pair, or, where it has none and
 * `selfTables` is on, the settings of the tables a run trains on its own pairs; `say` gets what is
 * missing and what the self-trained tables learnt from; wordTables() says, once scoring is done,
 * whose tables were used: 'scorer', 'self (N pairs)' or 'none'. What xling mine, eval bucc, scorer
 * score and the merge of cluster mine score with.
 */
export function scoringOfPair(
  m: ScorerModel,
  srcLang: string | undefined,
  trgLang: string | undefined,
  o: { selfTables?: boolean; say: (line: string) => void; onProgress?: SelfTables['onProgress'] },
): { aligner: WordAligner | null; selfTables: SelfTables | null; wordTables: () => string } {
  const tables = scorerTables(m, srcLang, trgLang, o);
  if (tables.missing) o.say(`${o.selfTables ? 'note' : 'warning'}: ${tables.missing}`);
  const { threshold, minPairs } = SELF_TABLES;
  let selfPairs: number | null = null;
  const selfTables: SelfTables | null =
    !tables.aligner && o.selfTables
      ? {
          onProgress: o.onProgress,
          onTables: (n, found) => {
            selfPairs = n;
            o.say(
              n === null
                ? `${found} pairs scored ≥ ${threshold} without word tables, fewer than ${minPairs}: too few to train them on; scored without`
                : `training word tables on ${n === found ? `the ${n}` : `the ${n} most probable of the ${found}`} pairs scored ≥ ${threshold} without them, then scoring again with them${m.self ? " (cross-fitted by source: each half of the sources aligned by the other half's tables; the scorer's self-tables regression)" : ''}`,
            );
          },
        }
      : null;
  return { aligner: tables.aligner, selfTables, wordTables: () => (tables.aligner ? 'scorer' : selfPairs ? `self (${selfPairs} pairs)` : 'none') };
}

/**
 * Word tables cross-fitted by source: IBM Model 1 tables (both directions) trained on the pairs whose
 * source row is even and on those whose source is odd; a source's candidates are aligned by the other
 * half's tables, so that no pair is scored by tables that learnt from it (tables trained on a run's
 * own pairs otherwise vouch for the wrong pairs among them too). onProgress: both halves' EM
 * iterations, one after the other.
 */
export function crossFittedTables(
  pairs: [number, number][],
  srcText: string[],
  trgText: string[],
  onProgress?: (done: number, total: number) => void,
): (s: number) => WordAligner | null {
  const own = [0, 1].map((f) => pairs.filter(([q]) => q % 2 === f));
  const halves = own.filter((x) => x.length).length;
  let before = 0;
  const folds = own.map((x) => {
    if (!x.length) return null;
    const at = before++;
    return selfTrainedTables(x, srcText, trgText, onProgress && ((d, t) => onProgress(d + at * t, halves * t)));
  });
  return (q) => folds[1 - (q % 2)]!;
}

/** Word tables (both directions, IBM Model 1, entries ≥ SELF_TABLES.minProb) trained on pairs of rows of a run's own sentences. */
export function selfTrainedTables(
  pairs: [number, number][],
  srcText: string[],
  trgText: string[],
  onProgress?: (done: number, total: number) => void,
): WordAligner {
  return new WordAligner(
    trainWordTables(
      pairs.map(([q, t]) => [srcText[q]!, trgText[t]!]),
      { minProb: SELF_TABLES.minProb, onProgress },
    ),
  );
}

/** Of the first pass's pairs (best first, at or above the threshold), those the tables learn from: at most maxPairs; null when fewer than minPairs. */
export function tablePairs<T>(found: T[], o: SelfTables): T[] | null {
  const pairs = found.slice(0, o.maxPairs ?? SELF_TABLES.maxPairs);
  return pairs.length >= (o.minPairs ?? SELF_TABLES.minPairs) ? pairs : null;
}

/** SelfTables' defaults. */
export const SELF_TABLES = { threshold: 0.5, minPairs: 100, maxPairs: 200_000, minProb: 0.05 } as const;

/** Word tables trained on what a corpus's own mining finds, for a scorer that has none for the language pair. */
export interface SelfTables {
  /** Pairs scored at least this without word tables are what the tables learn from (default 0.5). */
  threshold?: number;
  /** Fewer such pairs than this: no tables (default 100). */
  minPairs?: number;
  /** At most this many of them, the most probable (default 200,000: IBM Model 1 learns about 5,000 pairs a second, and its tables are saturated long before). */
  maxPairs?: number;
  /** Said before the tables are trained (pairs: how many they learn from, of `found` scored at least the threshold), or when they are given up (null). */
  onTables?: (pairs: number | null, found: number) => void;
  /** The tables' training: EM iterations done of all. */
  onProgress?: (done: number, total: number) => void;
}

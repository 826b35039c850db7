// The pairs of a mining run from both directions' k-NN tables — the same for xling mine and the
// merge of xling cluster mine: by the margin (LASER's retrieval rules), or by a second-stage scorer
// (one-to-one pairs at or above the threshold), the threshold chosen from the probabilities when
// it is 'auto'. What is written of them: mined-files.ts.
import type { SearchResult } from '../index/faiss.js';
import { AutoThreshold, chooseThreshold } from './auto-threshold.js';
import { candidatesFromKnn, MarginKind, Retrieval } from './mine.js';
import type { MinedRow } from './mined-files.js';
import { Assignment, mineTablesWithScorer, PairLogitsFn, ScorerModel, ScoringOptions } from './scorer/index.js';

/** How a run picks its pairs: the margin and its rule, or a scorer (its word tables, pair model's logits, assignment). */
export interface PairsOptions {
  margin: MarginKind;
  retrieval: Retrieval;
  /** Keep pairs scoring at least this; 'auto' (with a scorer): chosen from the probabilities of the run's pairs. */
  threshold?: number | 'auto';
  scorer?: ScoringOptions & { model: ScorerModel; assignment: Assignment; pairLogits?: PairLogitsFn };
  /** What the automatic threshold says. */
  say?: (line: string) => void;
}

/** The pairs of two k-NN tables (rows of srcText / trgText), best first, and the threshold applied. */
export async function minedPairs(
  fwd: SearchResult,
  bwd: SearchResult,
  srcText: string[],
  trgText: string[],
  o: PairsOptions,
): Promise<{ rows: MinedRow[]; threshold: number | undefined; auto: AutoThreshold | null }> {
  const t = o.threshold;
  let rows: MinedRow[];
  if (o.scorer) {
    const { model, ...scoring } = o.scorer;
    // a scorer's threshold is 0.5 unless given; with 'auto' every pair is kept until it is chosen
    const picked = await mineTablesWithScorer(fwd, bwd, srcText, trgText, model, { ...scoring, threshold: t === 'auto' ? 0 : (t ?? 0.5) });
    rows = picked.map((c) => ({ src: c.src, trg: c.trg, score: c.prob, cos: c.cos, margin: c.margin }));
  } else {
    if (t === 'auto') throw new Error('--threshold auto goes with a scorer (its probabilities give the threshold)');
    rows = candidatesFromKnn(fwd, bwd, { margin: o.margin, retrieval: o.retrieval, threshold: t }).map((c) => ({ ...c, margin: c.score }));
  }
  if (t !== 'auto') return { rows, threshold: t ?? (o.scorer ? 0.5 : undefined), auto: null };
  const auto = chooseThreshold(
    rows.map((r) => r.score),
    o.say ?? (() => {}),
  );
  return { rows: rows.filter((r) => r.score >= auto.threshold), threshold: auto.threshold, auto };
}

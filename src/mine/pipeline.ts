// The one mining pipeline — of xling mine, xling eval bucc, xling scorer score and the merge of
// xling cluster mine: two vector sets and their sentences to scored pairs. The dimensions are
// checked, k is clamped to the smaller side (and said), both directions' k-NN are searched (exact,
// off the main thread; src→trg through a faiss index; or tables searched elsewhere: cluster mine's
// shards), then the pairs are scored by the margin (LASER's retrieval rules) or by a second-stage
// scorer (one-to-one pairs at or above the threshold, chosen from the probabilities when it is
// 'auto') — the candidates of the search, or given pairs scored as mining would score them were
// they its candidates. What is written of them: mined-files.ts.
import type { FaissIndex, SearchResult } from '../index/faiss.js';
import { Progress } from '../util/progress.js';
import { AutoThreshold, chooseThreshold } from './auto-threshold.js';
import { candidatesFromKnn, MarginKind, marginOfTables, mineTablesAsync, Retrieval } from './mine.js';
import type { MinedRow } from './mined-files.js';
import type { Assignment } from './scorer/assignment.js';
import type { ScorerModel } from './scorer/files.js';
import { pairLogitsFor } from './scorer/pair-words.js';
import { mineTablesWithScorer, ScoringOptions, scoreTablesGivenPairs } from './scorer/score.js';

/** One side of a run: its vectors, its sentences (the scorer's features read them), and what names the vectors in a dimension mismatch. */
export interface MiningSide {
  vectors: { data: Float32Array; n: number; d: number };
  texts: string[];
  what: string;
}

/** A second-stage scorer in a run: the model, how candidates are scored, the assignment, and the encoder and languages its pair model reads words with. */
export interface MiningScorer extends Omit<ScoringOptions, 'pairLogits'> {
  model: ScorerModel;
  assignment?: Assignment;
  encoder?: string;
  srcLang?: string;
  trgLang?: string;
}

export interface MiningOptions {
  /** Neighbours per direction (a scorer uses the k it was trained with); at most the smaller side's sentences. */
  k: number;
  margin: MarginKind;
  /** The margin's candidate selection (default 'max'). */
  retrieval?: Retrieval;
  /** Keep pairs scoring at least this; 'auto' (with a scorer): chosen from the probabilities of the run's pairs. A scorer's default is 0.5. */
  threshold?: number | 'auto';
  scorer?: MiningScorer;
  /** Search src→trg through this faiss index over the target vectors (`name` in its errors). */
  index?: { index: FaissIndex; name: string };
  /** Query rows per exact-search call. */
  chunk?: number;
  /** A progress bar over both directions' search, with this label. */
  progress?: string;
  /** Both directions' k-NN tables searched elsewhere (cluster mine's shards), for the k the run uses. */
  tables?: (k: number) => { fwd: SearchResult; bwd: SearchResult };
  /** Score these pairs (src row given.src[i] ↔ trg row given.trg[i]) instead of mining candidates: rows in their order, nothing selected. */
  given?: { src: Int32Array; trg: Int32Array };
  /** Lines said on the way (k clamped, the automatic threshold). */
  say: (line: string) => void;
}

export interface MinedPairs {
  /** The pairs, best first (given pairs: in their order). */
  rows: MinedRow[];
  /** The k searched. */
  k: number;
  threshold: number | undefined;
  auto: AutoThreshold | null;
}

/** The k a run searches: the one asked (the scorer's, with a scorer), at most the smaller side's sentences (said when it is less). */
export function clampK(want: number, ns: number, nt: number, say?: (line: string) => void): number {
  const k = Math.min(want, ns, nt);
  if (k < want) say?.(`warning: -k ${want} is more than the ${Math.min(ns, nt)} ${ns <= nt ? 'source' : 'target'} sentences; using k=${k}`);
  return k;
}

/** Both directions' k-NN tables of the run (see MiningOptions: searched elsewhere, through an index, or exact off the main thread). */
async function searchBoth(src: MiningSide, trg: MiningSide, k: number, o: MiningOptions): Promise<{ fwd: SearchResult; bwd: SearchResult }> {
  if (o.tables) return o.tables(k);
  const sv = src.vectors,
    tv = trg.vectors;
  const bar = o.progress ? new Progress({ label: o.progress, unit: 'rows', total: sv.n + tv.n }) : null;
  const opts = { k, trgIndex: o.index?.index, chunk: o.chunk, onProgress: bar ? (done: number) => bar.set(done) : undefined };
  try {
    return await mineTablesAsync(sv.data, tv.data, sv.d, opts);
  } catch (e) {
    throw o.index ? new Error(`searching ${o.index.name}: ${(e as Error).message}`) : e;
  } finally {
    bar?.done();
  }
}

/** How the scorer scores the candidates: its word tables (or self-trained ones), the pair model's logits, the passes' progress. */
const scoringOf = (sc: MiningScorer, pairLogits: ScoringOptions['pairLogits']): ScoringOptions => ({
  aligner: sc.aligner,
  selfTables: sc.selfTables,
  pairLogits,
  onCandidates: sc.onCandidates,
});

/** Mines the pairs of two sides (see the file's head): the candidates of both directions' k-NN, or the given pairs, scored. */
export async function minePairs(src: MiningSide, trg: MiningSide, o: MiningOptions): Promise<MinedPairs> {
  const sv = src.vectors,
    tv = trg.vectors;
  if (sv.d !== tv.d) throw new Error(`dimension mismatch: ${src.what} gives ${sv.d} columns, ${trg.what} ${tv.d}`);
  const sc = o.scorer;
  const k = clampK(sc ? sc.model.k : o.k, sv.n, tv.n, o.say);
  const pairLogits = sc?.model.pairModel ? pairLogitsFor(sc.model.pairModel, sc.encoder!, src.texts, trg.texts, sc.srcLang, sc.trgLang) : undefined;
  const { fwd, bwd } = await searchBoth(src, trg, k, o);
  if (o.given) {
    const { src: gs, trg: gt } = o.given;
    if (!sc) {
      const m = marginOfTables(fwd, bwd, sv.data, tv.data, sv.d, gs, gt, o.margin);
      return {
        rows: Array.from(gs, (s, i) => ({ src: s, trg: gt[i]!, score: m.score[i]!, cos: m.cos[i]!, margin: m.score[i]! })),
        k,
        threshold: undefined,
        auto: null,
      };
    }
    const r = await scoreTablesGivenPairs(fwd, bwd, sv.data, tv.data, sv.d, src.texts, trg.texts, gs, gt, sc.model, scoringOf(sc, pairLogits));
    return {
      rows: Array.from(gs, (s, i) => ({ src: s, trg: gt[i]!, score: r.prob[i]!, cos: r.cos[i]!, margin: r.margin[i]! })),
      k,
      threshold: undefined,
      auto: null,
    };
  }
  return { ...(await pairsOfTables(fwd, bwd, src.texts, trg.texts, { ...o, pairLogits })), k };
}

/** The candidates of two k-NN tables (rows of srcText / trgText), best first, and the threshold applied. */
async function pairsOfTables(
  fwd: SearchResult,
  bwd: SearchResult,
  srcText: string[],
  trgText: string[],
  o: MiningOptions & { pairLogits?: ScoringOptions['pairLogits'] },
): Promise<{ rows: MinedRow[]; threshold: number | undefined; auto: AutoThreshold | null }> {
  const t = o.threshold;
  let rows: MinedRow[];
  if (o.scorer) {
    // a scorer's threshold is 0.5 unless given; with 'auto' every pair is kept until it is chosen
    const picked = await mineTablesWithScorer(fwd, bwd, srcText, trgText, o.scorer.model, {
      ...scoringOf(o.scorer, o.pairLogits),
      assignment: o.scorer.assignment,
      threshold: t === 'auto' ? 0 : (t ?? 0.5),
    });
    rows = picked.map((c) => ({ src: c.src, trg: c.trg, score: c.prob, cos: c.cos, margin: c.margin }));
  } else {
    if (t === 'auto') throw new Error('--threshold auto goes with a scorer (its probabilities give the threshold)');
    rows = candidatesFromKnn(fwd, bwd, { margin: o.margin, retrieval: o.retrieval, threshold: t }).map((c) => ({ ...c, margin: c.score }));
  }
  if (t !== 'auto') return { rows, threshold: t ?? (o.scorer ? 0.5 : undefined), auto: null };
  const auto = chooseThreshold(
    rows.map((r) => r.score),
    o.say,
  );
  return { rows: rows.filter((r) => r.score >= auto.threshold), threshold: auto.threshold, auto };
}

// Scoring with a trained scorer: mining (both directions' k-NN, every candidate scored, one-to-one
// pairs; what xling mine / eval bucc --scorer and the merge of xling cluster mine run), given pairs
// scored as mining would score them (xling scorer score), and a scorer opened for a run with what
// it needs said before any work.
import { FaissIndex, SearchResult } from '../../index/faiss.js';
import { UsageError } from '../../util/args.js';
import { pause } from '../../util/pause.js';
import { Progress } from '../../util/progress.js';
import { WordAligner } from './word-align/features.js';
import { mineTables, pairProducts } from '../mine.js';
import { Assignment, greedyPairs, Picked } from './assignment.js';
import {
  Aligners,
  candidateContext,
  CandidateList,
  COMPETITOR_FEATURES,
  competitorGaps,
  CONTENT,
  enumerateCandidates,
  FEATURES,
  LOGPROB,
  meanOf,
  pairColumns,
} from './features.js';
import { encoderMismatch, loadScorer, ScorerModel, withSelfHead } from './files.js';
import { sigmoid } from './logistic.js';
import { crossFittedTables, scoringOfPair, SELF_TABLES, SelfTables, selfTrainedTables, tablePairs } from './tables.js';

/** Candidate pairs' logits by the scorer's pair model (see pairLogits; the words are embedded by the caller's sentence encoder). */
export type PairLogitsFn = (src: number[], trg: number[]) => Promise<Float32Array>;

/** Candidates to score: both directions' k-NN tables, the candidates they give (enumerateCandidates), both sides' sentences. */
export interface Candidates {
  fwd: SearchResult;
  bwd: SearchResult;
  c: CandidateList;
  srcText: string[];
  trgText: string[];
}

/**
 * The candidates of two k-NN tables (enumerateCandidates) scored by the scorer, without keeping
 * their features (`logits`: the pair model's, when it has one): each
 * candidate's logit is summed feature by feature as scoreCandidate sums it (the same probability to
 * the bit), with what the competitor and pair features need kept aside — about 60 bytes a candidate
 * instead of its 48 features' half a kilobyte. (This relies on the scorer being linear in its
 * features, which it is: logistic regression.)
 */
export async function scoreCandidates(
  cands: Candidates,
  m: ScorerModel,
  o: { aligner?: Aligners; logits?: ArrayLike<number>; onProgress?: (done: number, total: number) => void } = {},
): Promise<{ margin: Float64Array; prob: Float64Array }> {
  const { fwd, bwd, c, srcText, trgText } = cands;
  const featuresOf = candidateContext(fwd, bwd, srcText, trgText, o.aligner ?? null);
  if (m.pair && !o.logits) throw new Error('scoreCandidates: the scorer has a pair model; give its logits');
  const z = new Float64Array(c.n),
    margin = new Float64Array(c.n),
    content = new Float64Array(c.n),
    logprob = new Float64Array(c.n);
  // one term of the logit, in scoreCandidate's order
  const term = (j: number, x: number) => m.weights[j]! * ((x - m.mean[j]!) / m.std[j]!);
  for (let i = 0; i < c.n; i++) {
    if (i % 4096 === 0) {
      o.onProgress?.(i, c.n);
      if (i) await pause();
    }
    const f = featuresOf(c.src[i]!, c.trg[i]!, c.cos[i]!);
    let s = m.bias;
    for (let j = 0; j < f.length; j++) s += term(j, f[j]!);
    z[i] = s;
    margin[i] = f[1]!;
    content[i] = meanOf(f, CONTENT);
    logprob[i] = meanOf(f, LOGPROB);
  }
  o.onProgress?.(c.n, c.n);
  const add = (j0: number, cols: ArrayLike<number>[]) => {
    for (let i = 0; i < c.n; i++) {
      let s = z[i]!;
      cols.forEach((col, j) => {
        s += term(j0 + j, col[i]!);
      });
      z[i] = s;
    }
  };
  add(FEATURES.length - COMPETITOR_FEATURES.length, competitorGaps(c.src, c.trg, content, logprob));
  if (m.pair) add(FEATURES.length, pairColumns(c.src, c.trg, o.logits!));
  return { margin, prob: z.map(sigmoid) };
}

/**
 * Mining with a scorer: both directions' k-NN (the scorer's k; src→trg through `trgIndex` when
 * given, its neighbours rescored exactly; progress by onProgress), the pair
 * model's logits, every candidate scored (scoreCandidates; progress by onCandidates, each pass from
 * 0), then the one-to-one assignment and
 * threshold of selectByScorer — the same pairs, kept in columns rather than as objects. What xling
 * mine --scorer and xling eval bucc --scorer run.
 *
 * `selfTables` (without `aligner`): the candidates are scored twice — first without word tables,
 * then with tables trained (trainWordTables, as `xling scorer train --table-min-prob` keeps them) on
 * the one-to-one pairs that the first pass scores at least selfTables.threshold. A scorer with a
 * self-tables regression (ScorerModel.self) cross-fits them by source and scores the second pass by
 * that regression, as it was fitted; an older one trains them on all the pairs (better than
 * cross-fitting for its first regression, on game dialogue) and keeps its first regression. See
 * bench/RESULTS.md ("Word tables from the run's own pairs", "The self-tables regression").
 */
export async function mineWithScorer(
  src: Float32Array,
  trg: Float32Array,
  d: number,
  srcText: string[],
  trgText: string[],
  m: ScorerModel,
  o: ScoringOptions & {
    k?: number;
    threshold?: number;
    assignment?: Assignment;
    trgIndex?: FaissIndex;
    chunk?: number;
    onProgress?: (done: number, total: number) => void;
  } = {},
): Promise<Picked[]> {
  const { fwd, bwd } = mineTables(src, trg, d, { k: o.k ?? m.k, trgIndex: o.trgIndex, chunk: o.chunk, onProgress: o.onProgress });
  return mineTablesWithScorer(fwd, bwd, srcText, trgText, m, o);
}

/** mineWithScorer from both directions' k-NN tables already searched (the merge of xling cluster mine, whose shards search them). */
export async function mineTablesWithScorer(
  fwd: SearchResult,
  bwd: SearchResult,
  srcText: string[],
  trgText: string[],
  m: ScorerModel,
  o: ScoringOptions & { threshold?: number; assignment?: Assignment } = {},
): Promise<Picked[]> {
  const c = enumerateCandidates(fwd, bwd);
  const r = await scoreWithScorer({ fwd, bwd, c, srcText, trgText }, m, o);
  return greedyPairs(c, r.prob, r.margin, o.threshold ?? 0, o.assignment).map((i) => pickOf(c, r, i));
}

/** How candidates are scored: the word tables (or self-trained ones), the pair model's logits, progress of each pass over the candidates. */
export interface ScoringOptions {
  aligner?: WordAligner | null;
  selfTables?: SelfTables | null;
  pairLogits?: PairLogitsFn;
  onCandidates?: (done: number, total: number, pass: number) => void;
}

/**
 * The candidates `c` of two k-NN tables scored by the scorer (see mineWithScorer): the pair
 * model's logits, then one pass over the candidates' features — or two with self-trained word tables.
 */
async function scoreWithScorer(cands: Candidates, m: ScorerModel, o: ScoringOptions): Promise<{ margin: Float64Array; prob: Float64Array }> {
  const { c, srcText, trgText } = cands;
  if (m.pair && !o.pairLogits) throw new Error('the scorer has a pair model: give pairLogits');
  const logits = m.pair ? await o.pairLogits!(Array.from(c.src), Array.from(c.trg)) : undefined;
  const self = !o.aligner && o.selfTables ? o.selfTables : null;
  const progress = (pass: number) => (o.onCandidates ? (done: number, total: number) => o.onCandidates!(done, total, pass) : undefined);
  let aligner: Aligners = o.aligner ?? null;
  if (self) {
    const first = await scoreCandidates(cands, m, { logits, onProgress: progress(0) });
    const found = greedyPairs(c, first.prob, first.margin, self.threshold ?? SELF_TABLES.threshold),
      pairs = tablePairs(found, self);
    if (!pairs) {
      self.onTables?.(null, found.length);
      return first;
    }
    self.onTables?.(pairs.length, found.length);
    // a scorer with a self-tables regression was fitted on tables cross-fitted by source (selfTablesFeatures)
    aligner = (m.self ? crossFittedTables : selfTrainedTables)(
      pairs.map((i) => [c.src[i]!, c.trg[i]!]),
      srcText,
      trgText,
      self.onProgress,
    );
  }
  // the second pass with self-trained tables: the scorer's regression for them, where it has one
  return scoreCandidates(cands, self ? withSelfHead(m) : m, { aligner, logits, onProgress: progress(self ? 1 : 0) });
}

/**
 * Given pairs scored as mining would score them were they its candidates (a parallel corpus to
 * clean, as Bicleaner and LASER's score mode do): both directions' k-NN over the corpus's own
 * sentences give every given pair its margins, ranks and competitors (the sentences' k nearest; a
 * given pair that is not among them ranks k), then scoreWithScorer. Pair i is src row gSrc[i] ↔ trg
 * row gTrg[i]; its cosine is the vectors' inner product, as the k-NN's.
 */
export async function scoreGivenPairs(
  ...args: [...GivenPairs, o?: ScoringOptions & { k?: number; chunk?: number; onProgress?: (done: number, total: number) => void }]
): Promise<GivenPairScores> {
  const [src, trg, d, srcText, trgText, gSrc, gTrg, m, o = {}] = args;
  const { fwd, bwd } = mineTables(src, trg, d, { k: o.k ?? m.k, chunk: o.chunk, onProgress: o.onProgress });
  return scoreTablesGivenPairs(fwd, bwd, src, trg, d, srcText, trgText, gSrc, gTrg, m, o);
}

/** Given pairs to score: both sides' vectors (rows of d) and sentences, pair i = src row gSrc[i] ↔ trg row gTrg[i], and the scorer. */
type GivenPairs = [src: Float32Array, trg: Float32Array, d: number, srcText: string[], trgText: string[], gSrc: Int32Array, gTrg: Int32Array, m: ScorerModel];

/** Each given pair's probability, margin and cosine. */
export interface GivenPairScores {
  prob: Float64Array;
  margin: Float64Array;
  cos: Float32Array;
}

/** scoreGivenPairs from both directions' k-NN tables already searched. */
export async function scoreTablesGivenPairs(
  fwd: SearchResult,
  bwd: SearchResult,
  ...[src, trg, d, srcText, trgText, gSrc, gTrg, m, o]: [...GivenPairs, o: ScoringOptions]
): Promise<GivenPairScores> {
  const knn = enumerateCandidates(fwd, bwd);
  const at = new Map<number, number>();
  const key = (s: number, t: number) => s * trgText.length + t;
  for (let i = 0; i < knn.n; i++) at.set(key(knn.src[i]!, knn.trg[i]!), i);
  // the given pairs not among the candidates are appended to them (each once; the list is then not
  // in source order, which scoring does not need)
  const extra: number[] = [];
  const index = new Int32Array(gSrc.length);
  for (let i = 0; i < gSrc.length; i++) {
    const kk = key(gSrc[i]!, gTrg[i]!);
    let j = at.get(kk);
    if (j === undefined) {
      j = knn.n + extra.length;
      at.set(kk, j);
      extra.push(i);
    }
    index[i] = j;
  }
  const n = knn.n + extra.length;
  const c: CandidateList = { n, src: new Int32Array(n), trg: new Int32Array(n), cos: new Float32Array(n) };
  c.src.set(knn.src);
  c.trg.set(knn.trg);
  c.cos.set(knn.cos);
  const cos = pairProducts(
    src,
    trg,
    d,
    extra.map((i) => gSrc[i]!),
    extra.map((i) => gTrg[i]!),
  );
  extra.forEach((i, e) => {
    c.src[knn.n + e] = gSrc[i]!;
    c.trg[knn.n + e] = gTrg[i]!;
    c.cos[knn.n + e] = cos[e]!;
  });
  const r = await scoreWithScorer({ fwd, bwd, c, srcText, trgText }, m, o);
  return {
    prob: Float64Array.from(index, (j) => r.prob[j]!),
    margin: Float64Array.from(index, (j) => r.margin[j]!),
    cos: Float32Array.from(index, (j) => c.cos[j]!),
  };
}

const pickOf = (c: CandidateList, r: { prob: Float64Array; margin: Float64Array }, i: number): Picked => ({
  src: c.src[i]!,
  trg: c.trg[i]!,
  prob: r.prob[i]!,
  margin: r.margin[i]!,
  cos: c.cos[i]!,
});

/**
 * The scorer of a run (null without one), its word aligner for the language pair, and what is said
 * (`say`) before any work: refused without `model` when it has a pair model; warnings when `model`
 * is another encoder than its own or its pair model's, or when it has no word tables for the pair
 * (with `selfTables`, a note, and the settings of the tables the run then trains on its own pairs);
 * wordTables() says, once scoring is done, whose tables it used: 'scorer', 'self (N pairs)' or 'none'.
 */
export function openScorer(
  dir: string | undefined,
  model: string | undefined,
  srcLang: string | undefined,
  trgLang: string | undefined,
  o: { selfTables?: boolean; say: (line: string) => void },
): { scorer: ScorerModel; aligner: WordAligner | null; selfTables: SelfTables | null; wordTables: () => string } | null {
  if (!dir) return null;
  const scorer = loadScorer(dir);
  if (scorer.pairModel && !model)
    throw new UsageError(
      `--scorer ${dir} has a pair model, which reads the sentences' words through the sentence encoder: give --model (the one it was trained with)`,
    );
  // the scorer's encoder (its k-NN features), else its pair model's (scorers written before the first was recorded)
  const otherEncoder = model
    ? (encoderMismatch(scorer.trained, model, `--scorer ${dir}`, 'its margins, ranks and gaps') ??
      (scorer.pairModel ? encoderMismatch(scorer.pair!.trained, model, `--scorer ${dir}'s pair model`, 'its word vectors') : null))
    : null;
  if (otherEncoder) o.say(`warning: ${otherEncoder}`);
  let bar: Progress | null = null;
  const pair = scoringOfPair(scorer, srcLang, trgLang, {
    selfTables: o.selfTables,
    say: o.say,
    onProgress: (done, total) => {
      bar ??= new Progress({ label: 'word tables', unit: 'EM iterations', total });
      bar.set(done);
      if (done === total) bar.done();
    },
  });
  return { scorer, ...pair };
}

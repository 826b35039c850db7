// A parallel corpus scored pair by pair (xling scorer score), as Bicleaner's classifier and LASER's
// score mode score one: each line's pair gets the second-stage scorer's probability (or, without a
// scorer, its margin score), computed as mining would were the pair its candidate — the k-NN of
// both directions among the distinct sentences of its block of lines give its margins, ranks and
// competitors (a pair's context is its block: linear in the corpus). Pairs failing a filter (xling
// mine's) score 0, as Bicleaner's hard rules do. The corpus is read in passes and never held whole
// (corpus-passes.ts); each block's scores are kept in a work directory as it finishes (block-store.ts).
import { EmbedSettings, vectorsFor } from '../../embed/input.js';
import { pause } from '../../util/pause.js';
import { Progress } from '../../util/progress.js';
import { hash64, Set64 } from '../../util/set64.js';
import { dedupRules, FilterOptions, languageOfText, normalizeForDedup, pairRuleReason, REJECT_REASONS, RejectReason } from '../filters.js';
import { MarginKind, unify } from '../mine.js';
import { minePairs } from '../pipeline.js';
import { BlockStore, openBlockStore, StoredBlock } from './block-store.js';
import { blockHash, blocksOf, CorpusSource, linesOf, Scan, scanCorpus } from './corpus-passes.js';
import { openScorer } from './score.js';

/** A scorer opened for a run (openScorer). */
export type OpenedScorer = NonNullable<ReturnType<typeof openScorer>>;

/** What xling scorer score scores a corpus with (its options checked by the command). */
export interface CorpusScoring {
  /** The corpus, read in passes (columnsSource, alignedSource). */
  source: CorpusSource;
  /** How messages name the corpus, and each side of it (the sentences vectorsFor embeds). */
  name: string;
  sideName: (side: 'sources' | 'targets') => string;
  /** The sentence encoder, and how each side is embedded with it. */
  model: string;
  srcLang?: string;
  trgLang?: string;
  srcEmbed: EmbedSettings;
  trgEmbed: EmbedSettings;
  /** The scorer (null: the margin score). */
  scorer: OpenedScorer | null;
  /** Without a scorer, the margin and k (a scorer uses the k it was trained with). */
  margin: MarginKind;
  k: number;
  /** Pairs a block holds at most (the blocks are of equal size). */
  block: number;
  filters: FilterOptions;
  /** Where the blocks' scores are kept when there is more than one: the directory, the key of the scoring (scoringKey), and whether to reuse what an earlier run kept. */
  work?: { dir: string; key: () => string; resume: boolean };
  /** Bars of a scorer's passes over a block's candidates, when the corpus is one block (candidateProgress). */
  candidateBars?: () => (done: number, total: number, pass: number) => void;
  /** Lines said on the way (the work directory, the k used). */
  say: (line: string) => void;
}

/** Line states: a side empty (not scored), kept, or rejected by a filter (REJECTED + the reason's index in REJECT_REASONS). */
const EMPTY = 0,
  KEPT = 1,
  REJECTED = 2;

/**
 * A scored corpus: every line's score (0 for a line without both sides, or failing a filter), what
 * the filters rejected, and the lines read once more with their scores appended.
 */
export class ScoredCorpus {
  constructor(
    private readonly source: CorpusSource,
    private readonly scan: Scan,
    /** Each line's score. */
    readonly score: Float64Array,
    private readonly state: Uint8Array,
    /** The k of the first block (a block of fewer sentences uses fewer), the blocks and their size, the distinct sentences a side (summed over the blocks). */
    readonly k: number,
    readonly blocks: number,
    readonly size: number,
    readonly distinct: { src: number; trg: number },
  ) {}

  /** Lines in the corpus, and those with both sides (scored). */
  get lines(): number {
    return this.scan.n;
  }
  get full(): number {
    return this.scan.full;
  }
  /** The --label-col labels (1: a good pair), if the source has them. */
  get label(): Uint8Array | undefined {
    return this.scan.label;
  }

  /** Lines a filter scored 0, by reason. */
  rejected(): Record<RejectReason, number> {
    const counts = Object.fromEntries(REJECT_REASONS.map((r) => [r, 0])) as Record<RejectReason, number>;
    for (const s of this.state) if (s >= REJECTED) counts[REJECT_REASONS[s - REJECTED]!]++;
    return counts;
  }

  /** The mean score of the lines with both sides (those a filter rejected count as 0). */
  meanScore(): number {
    let sum = 0;
    for (let i = 0; i < this.scan.n; i++) if (this.state[i] !== EMPTY) sum += this.score[i]!;
    return sum / this.scan.full;
  }

  /** Each line with its score appended (`line<TAB>score\n`), only those scoring at least `threshold` when given; `onLine` counts them. */
  async *scoredLines(threshold?: number, onLine?: () => void): AsyncGenerator<string> {
    for await (const { i, line } of linesOf(this.source, this.scan)) {
      if (threshold !== undefined && !(this.score[i]! >= threshold)) continue;
      onLine?.();
      yield this.cell(i, line);
    }
  }

  /** Each line a filter scored 0, its reason in front (`reason<TAB>line<TAB>score\n`). */
  async *rejectedLines(): AsyncGenerator<string> {
    for await (const { i, line } of linesOf(this.source, this.scan))
      if (this.state[i]! >= REJECTED) yield `${REJECT_REASONS[this.state[i]! - REJECTED]}\t${this.cell(i, line)}`;
  }

  private cell(i: number, line: string): string {
    return `${line}\t${this.score[i]!.toFixed(6)}\n`;
  }
}

/**
 * Scores a corpus (see CorpusScoring): read once to check and count it, again block by block to
 * score it (blocks kept in the work directory are reused); the filters' rules of each pair alone
 * are applied as its block is scored, the duplicate rules once every line is (a duplicate keeps its
 * best-scoring line). The lines are read once more when the result's lines are written.
 */
export async function scoreCorpus(run: CorpusScoring): Promise<ScoredCorpus> {
  const scan = await scanCorpus(run.source);
  const n = scan.n,
    nFull = scan.full;
  if (!nFull) throw new Error(`${run.name}: no line has both sides`);
  const scorer = run.scorer?.scorer ?? null;
  if (scorer && run.k !== scorer.k) run.say(`the scorer was trained on candidates of k=${scorer.k}: using k=${scorer.k}`);
  // blocks of equal size, none larger than the settings' block
  const blocks = Math.ceil(nFull / run.block),
    size = Math.ceil(nFull / blocks);
  // each block's scores are kept in the work directory as it finishes (a killed run loses one block at most)
  const store = run.work && blocks > 1 ? openBlockStore(run.work.dir, run.work.key(), run.work.resume, run.say) : null;
  const { reused, hashes } = await keptBlocks(run, store, size, blocks, scan);
  const reusedLines = reused.reduce((s, r) => s + (r ? r.scores.length : 0), 0);
  if (store && !reusedLines)
    run.say(
      `each block's scores are kept in ${run.work!.dir} as it is scored: after a kill or an interrupt (Ctrl-C; the block in progress is lost), the same command with --resume goes on from there`,
    );
  if (store && reusedLines) run.say(`--resume: ${reused.filter((r) => r).length} of ${blocks} blocks (${reusedLines} lines) reused from ${run.work!.dir}`);
  const blockBar =
    blocks > 1 && reusedLines < nFull
      ? new Progress({ label: reusedLines ? `score (${reusedLines} lines reused)` : 'score', unit: 'lines', total: nFull - reusedLines })
      : null;
  // per line: its score and its state; with dedup rules, the hashes of its normalised sides (what
  // the rules compare once every line is scored)
  const score = new Float64Array(n),
    state = new Uint8Array(n);
  const f = run.filters;
  const keys: DedupKeys = {
    src: f.dedupSrc ? new BigUint64Array(n) : null,
    trg: f.dedupTrg ? new BigUint64Array(n) : null,
    pair: f.dedupPair ? new BigUint64Array(n) : null,
  };
  let k = 0,
    scoredLines = 0;
  const distinct = { src: 0, trg: 0 };
  for await (const { b, lines, sides } of blocksOf(run.source, size, scan)) {
    const done = reused[b];
    let got: Float64Array;
    if (done) {
      got = done.scores;
      distinct.src += done.distinct[0];
      distinct.trg += done.distinct[1];
      if (b === 0) k = done.k;
    } else {
      // (how each side is centred is said for the first block scored, not again for every block)
      const r = await scoreBlock(run, sides, blocks > 1 ? ` (block ${b + 1} of ${blocks})` : '', scoredLines > 0, !blockBar);
      got = r.scores;
      distinct.src += r.distinct[0];
      distinct.trg += r.distinct[1];
      if (b === 0) k = r.k;
      store?.put(b, got, r.distinct, r.k, hashes[b] ?? blockHash(sides));
      scoredLines += lines.length;
      blockBar?.set(scoredLines);
    }
    // the filters' rules of each pair alone now, while its block's texts are at hand
    lines.forEach((i, j) => {
      score[i] = got[j]!;
    });
    markPairRules(lines, sides, f, state, keys);
    // SIGINT / SIGTERM take effect here too (and at the pauses of the reading and the scoring: the blocks scored are kept for --resume)
    await pause();
  }
  blockBar?.done();
  markDuplicates(score, state, keys, f);
  for (let i = 0; i < n; i++) if (state[i]! >= REJECTED) score[i] = 0;
  return new ScoredCorpus(run.source, scan, score, state, k, blocks, size, distinct);
}

/**
 * The blocks an earlier run kept (null where a block is to be scored), each block's lines read and
 * hashed to check them; the hashes are kept for storing the blocks scored now. A block's lines are
 * part of its key: a block is reused only for the same pairs (stdin, a file edited in place).
 */
async function keptBlocks(
  run: CorpusScoring,
  store: BlockStore | null,
  size: number,
  blocks: number,
  scan: Scan,
): Promise<{ reused: (StoredBlock | null)[]; hashes: string[] }> {
  const reused: (StoredBlock | null)[] = new Array<StoredBlock | null>(blocks).fill(null);
  const hashes: string[] = [];
  if (store?.any()) for await (const blk of blocksOf(run.source, size, scan)) reused[blk.b] = store.get(blk.b, (hashes[blk.b] = blockHash(blk.sides)));
  return { reused, hashes };
}

/**
 * One block's pairs scored: its distinct texts a side embedded once, both directions' k-NN among
 * them, then the scorer's probability of each pair (or its margin score). `quiet`: the centring was
 * said for an earlier block; `knnBar`: the k-NN and the scorer's passes get bars of their own.
 */
async function scoreBlock(
  run: CorpusScoring,
  sides: [string, string][],
  inBlock: string,
  quiet: boolean,
  knnBar: boolean,
): Promise<{ scores: Float64Array; distinct: [number, number]; k: number }> {
  const us = unify(sides.map((x) => x[0])),
    ut = unify(sides.map((x) => x[1]));
  const sv = vectorsFor(us.unique, undefined, run.model, run.sideName('sources') + inBlock, { ...run.srcEmbed, quiet });
  const tv = vectorsFor(ut.unique, undefined, run.model, run.sideName('targets') + inBlock, { ...run.trgEmbed, quiet });
  const opened = run.scorer;
  const r = await minePairs(
    { vectors: sv, texts: us.unique, what: '--model' },
    { vectors: tv, texts: ut.unique, what: '--model' },
    {
      k: run.k,
      margin: run.margin,
      scorer: opened
        ? {
            model: opened.scorer,
            aligner: opened.aligner,
            selfTables: opened.selfTables,
            onCandidates: knnBar ? run.candidateBars?.() : undefined,
            encoder: run.model,
            srcLang: run.srcLang,
            trgLang: run.trgLang,
          }
        : undefined,
      given: { src: us.of, trg: ut.of },
      chunk: 65536,
      progress: knnBar ? 'score k-NN (both directions)' : undefined,
      say: run.say,
    },
  );
  const scores = Float64Array.from(r.rows, (p) => p.score);
  const k = r.k;
  return { scores, distinct: [sv.n, tv.n], k };
}

/** The hashes of each kept line's normalised sides, for the duplicate rules that are on. */
interface DedupKeys {
  src: BigUint64Array | null;
  trg: BigUint64Array | null;
  pair: BigUint64Array | null;
}

/** The filters' rules of each pair alone (lengths, ratio, identical sides, letters, languages) over a block's lines: each line's state, and its dedup keys when kept. */
function markPairRules(lines: number[], sides: [string, string][], f: FilterOptions, state: Uint8Array, keys: DedupKeys): void {
  const langOf = f.lid ? languageOfText(f.lid) : undefined;
  lines.forEach((i, j) => {
    const [s, t] = sides[j]!;
    const ns = normalizeForDedup(s),
      nt = normalizeForDedup(t);
    const reason = pairRuleReason(s, t, ns, nt, f, langOf);
    state[i] = reason ? REJECTED + REJECT_REASONS.indexOf(reason) : KEPT;
    if (!reason) {
      if (keys.src) keys.src[i] = hash64(ns);
      if (keys.trg) keys.trg[i] = hash64(nt);
      if (keys.pair) keys.pair[i] = hash64(`${ns}\t${nt}`);
    }
  });
}

/** The duplicate rules over the kept lines, best first (a duplicate keeps its best-scoring line; ties: the first). */
function markDuplicates(score: Float64Array, state: Uint8Array, keys: DedupKeys, f: FilterOptions): void {
  if (!keys.src && !keys.trg && !keys.pair) return;
  const order = Uint32Array.from({ length: score.length }, (_, i) => i)
    .filter((i) => state[i] === KEPT)
    .sort((x, y) => score[y]! - score[x]! || x - y);
  const dedup = dedupRules<bigint>(f, () => new Set64());
  for (const i of order) {
    const ks = keys.src?.[i] ?? 0n,
      kt = keys.trg?.[i] ?? 0n,
      kp = keys.pair?.[i] ?? 0n;
    const reason = dedup.reason(ks, kt, kp);
    if (reason) state[i] = REJECTED + REJECT_REASONS.indexOf(reason);
    else dedup.keep(ks, kt, kp);
  }
}

// The pair model of the second-stage scorer: a decomposable-attention classifier (Parikh et al.
// 2016) that reads a candidate pair word by word, soft-aligns the two sides and says whether they
// translate each other. Its words are vectors of the sentence encoder itself (each word embedded
// alone, then a PCA fitted on them), so it reads any language the encoder knows and learns only
// how to compare two sentences. Trained on translations of a parallel corpus against their
// nearest wrong neighbours; its logit, and how far a candidate's logit is ahead of its
// competitors', are three more features of the scorer (features.ts).
import { Linear, Module } from '../../nn/index.js';
import { Adam } from '../../nn/optim.js';
import { loadModule, saveModule } from '../../nn/serialize.js';
import { readSafetensorsHeader } from '../../io/safetensors.js';
import { cat, zeros } from '../../tensor/ops.js';
import { callOp, fromArray, keep, noGrad, opId, Tensor, tidy } from '../../tensor/tensor.js';
import { pause } from '../../util/pause.js';
import { Rng } from '../../util/rng.js';

export const PAIR_FEATURES = ['pair_logit', 'pair_gap_src', 'pair_gap_trg'] as const;

// words by Unicode word boundaries (UAX #29) with ICU's dictionaries for the scripts written without
// spaces (Chinese, Japanese, Thai, Khmer, Lao, Burmese): one segmenter for every language
const SEGMENTER = new Intl.Segmenter(undefined, { granularity: 'word' });

/**
 * The words the pair model reads of a sentence (the first `max`): its lower-cased word-like
 * segments by Intl.Segmenter (Unicode word boundaries; dictionary words in Chinese, Japanese, Thai).
 */
export function pairWords(text: string, max = 48): string[] {
  const out: string[] = [];
  for (const s of SEGMENTER.segment(text.toLowerCase())) {
    if (!s.isWordLike) continue;
    out.push(s.segment);
    if (out.length >= max) break;
  }
  return out;
}

export interface PairModelConfig {
  /** The sentence encoder's dimension (its word vectors are projected from it). */
  dim: number;
  /** PCA dimensions the word vectors are projected to. */
  pca: number;
  hidden: number;
  /** Words read of each side. */
  maxWords: number;
  /** Whether the word vectors were centred like the sentence vectors (xling embed --center). */
  center: boolean;
}

const eighId = () => opId('linalg_eigh');

/** Decomposable attention over projected word vectors; forward gives one logit per pair. */
export class PairModel extends Module {
  readonly p: Linear;
  readonly f: Linear;
  readonly g1: Linear;
  readonly g2: Linear;
  readonly h1: Linear;
  readonly h2: Linear;
  /** The word vectors' PCA: mean [dim] and components [dim, pca] (word vectors are L2-normalised first). */
  readonly pcaMean: Tensor;
  readonly pcaComponents: Tensor;
  constructor(readonly config: PairModelConfig) {
    super();
    const { dim, pca, hidden: H } = config;
    this.p = this.module('p', new Linear(pca, H));
    this.f = this.module('f', new Linear(H, H));
    this.g1 = this.module('g1', new Linear(4 * H, H));
    this.g2 = this.module('g2', new Linear(H, H));
    this.h1 = this.module('h1', new Linear(4 * H, H));
    this.h2 = this.module('h2', new Linear(H, 1));
    this.pcaMean = this.buffer('pca_mean', zeros([dim]));
    this.pcaComponents = this.buffer('pca_components', zeros([dim, pca]));
  }

  /** Fits the PCA on word vectors [n, dim] (rows L2-normalised first): the mean and the top `pca` eigenvectors of their covariance. */
  fitPca(words: Float32Array, n: number): void {
    const { dim, pca } = this.config;
    if (n < 2) throw new Error('pair model: at least two words are needed to fit its projection');
    noGrad(() =>
      tidy(() => {
        // the covariance accumulated in float32 (the words' copy stays float32: n × dim can be large), decomposed in float64
        const x = normalizeRows(fromArray(words, [n, dim]));
        const mean = x.mean(0);
        const c = x.sub(mean);
        const cov = c
          .t()
          .mm(c)
          .div(n - 1)
          .to('float64');
        const [, vecs] = callOp(eighId(), [cov, 'L']) as [Tensor, Tensor];
        // eigh: ascending eigenvalues; the last `pca` columns, largest first (fewer dims than asked: zero columns)
        const k = Math.min(pca, dim);
        const top = callOp(opId('flip'), [vecs.narrow(1, dim - k, k), [1]]) as Tensor;
        this.pcaMean.copy_(mean);
        this.pcaComponents.zero_();
        this.pcaComponents.narrow(1, 0, k).copy_(top.float());
      }),
    );
  }

  /** Word vectors [n, dim] → the model's word table [n + 1, pca], row 0 the padding (zeros). */
  wordTable(words: Float32Array, n: number): Tensor {
    const { dim, pca } = this.config;
    return noGrad(() =>
      tidy(() => {
        const x = n
          ? normalizeRows(fromArray(words, [n, dim]))
              .sub(this.pcaMean)
              .mm(this.pcaComponents)
          : zeros([0, pca]);
        return keep(cat([zeros([1, pca]), x], 0));
      }),
    );
  }

  /** Logits [B] of word-vector batches a [B, La, pca], b [B, Lb, pca] with padding masks (true: padding) [B, La], [B, Lb]. */
  forward(a0: Tensor, padA: Tensor, b0: Tensor, padB: Tensor): Tensor {
    const a = this.p.forward(a0).relu(),
      b = this.p.forward(b0).relu();
    return this.compare(a, this.f.forward(a), padA, b, this.f.forward(b), padB);
  }

  /**
   * The words' projections, each word alone: p(x) [n, H] and f(p(x)) [n, H] of a word table's rows.
   * Inference gathers these (compare) instead of projecting every occurrence of a word in every
   * candidate pair.
   */
  projectTable(table: Tensor): [Tensor, Tensor] {
    const a = this.p.forward(table).relu();
    return [a, this.f.forward(a)];
  }

  /** forward from the projected words a [B, La, H] (fa = f(a)) and b [B, Lb, H] (fb = f(b)). */
  compare(a: Tensor, fa: Tensor, padA: Tensor, b: Tensor, fb: Tensor, padB: Tensor): Tensor {
    const H = this.config.hidden;
    const e = fa.bmm(fb.transpose(1, 2)).div(Math.sqrt(H));
    const fill = (t: Tensor, mask: Tensor) => t.maskedFill(mask, -1e4);
    const beta = fill(e, padB.unsqueeze(1)).softmax(2).bmm(b);
    const alpha = fill(e, padA.unsqueeze(2)).softmax(1).transpose(1, 2).bmm(a);
    const side = (x: Tensor, y: Tensor, pad: Tensor) => {
      const keepMask = pad.logicalNot().unsqueeze(2).float();
      const v = this.g2
        .forward(this.g1.forward(cat([x, y, x.mul(y), x.sub(y).abs()], -1)).relu())
        .relu()
        .mul(keepMask);
      const n = keepMask.sum(1).clampMin(1);
      return cat([v.sum(1).div(n), fill(v, pad.unsqueeze(2)).max(1)[0]], -1);
    };
    return this.h2.forward(this.h1.forward(cat([side(a, beta, padA), side(b, alpha, padB)], -1)).relu()).squeeze(-1);
  }
}

function normalizeRows(x: Tensor): Tensor {
  return x.div(x.norm(2, 1, true).add(1e-9));
}

/** The rows of a sentence's words (pairWords) in a word table: `index` maps a word to its row (0 or absent: not in the table, dropped). A sentence without a known word reads as one padding word (batchTensors). */
export function wordIds(words: string[], index: Map<string, number>): number[] {
  const ids: number[] = [];
  for (const w of words) {
    const i = index.get(w);
    if (i) ids.push(i);
  }
  return ids;
}

/** A batch's word rows [B·L] and padding mask [B, L] (an empty sentence reads as one row-0 word, not masked). */
function batchIds(seqs: number[][]): { ids: Tensor; pad: Tensor; B: number; L: number } {
  const B = seqs.length,
    L = Math.max(1, ...seqs.map((s) => s.length));
  const ids = new Int32Array(B * L),
    pad = new Uint8Array(B * L).fill(1);
  seqs.forEach((s, i) => {
    if (!s.length) pad[i * L] = 0;
    s.forEach((id, j) => {
      ids[i * L + j] = id;
      pad[i * L + j] = 0;
    });
  });
  return { ids: fromArray(ids, [B * L]), pad: fromArray(pad, [B, L], 'bool'), B, L };
}

/** The rows of a batch's words in a table [n, width] as [B, L, width]. */
const gather = (table: Tensor, b: { ids: Tensor; B: number; L: number }) => table.indexSelect(0, b.ids).view([b.B, b.L, table.size(1)]);

/** A batch's word vectors and padding masks (an empty sentence reads as one zero vector, not masked). */
function batchTensors(table: Tensor, seqs: number[][]): [Tensor, Tensor] {
  const b = batchIds(seqs);
  return [gather(table, b), b.pad];
}

/**
 * Logits of pairs (a[i], b[i]) of word-id sentences, in batches (no gradient); onProgress after each
 * batch with the pairs done. It pauses every 16 batches (a signal stops it there).
 */
export async function pairLogits(
  m: PairModel,
  table: Tensor,
  a: number[][],
  b: number[][],
  o: { batch?: number; onProgress?: (done: number) => void } = {},
): Promise<Float32Array> {
  const out = new Float32Array(a.length),
    batch = o.batch ?? 128;
  // in order of length (little padding in a batch), written back in place
  const order = Array.from({ length: a.length }, (_, i) => i).sort((x, y) => a[x]!.length + b[x]!.length - a[y]!.length - b[y]!.length || x - y);
  // every word projected once (a word occurs in many candidates), gathered per batch
  const [proj, foc] = noGrad(() =>
    tidy(() => {
      const [p, f] = m.projectTable(table);
      return [keep(p), keep(f)] as [Tensor, Tensor];
    }),
  );
  try {
    for (let i = 0, n = 0; i < a.length; i += batch, n++) {
      noGrad(() =>
        tidy(() => {
          const idx = order.slice(i, i + batch);
          const sa = idx.map((j) => a[j]!),
            sb = idx.map((j) => b[j]!);
          const ia = batchIds(sa),
            ib = batchIds(sb);
          const z = m.compare(gather(proj, ia), gather(foc, ia), ia.pad, gather(proj, ib), gather(foc, ib), ib.pad).data() as Float32Array;
          idx.forEach((j, k) => {
            out[j] = z[k]!;
          });
        }),
      );
      o.onProgress?.(Math.min(a.length, i + batch));
      if (n % 16 === 15) await pause();
    }
  } finally {
    proj.dispose();
    foc.dispose();
  }
  return out;
}

export interface PairExample {
  a: number[];
  b: number[];
  y: number;
}

/**
 * The batches of an epoch: examples shuffled (seeded by epoch), cut into chunks of 50 batches,
 * each chunk sorted by length (little padding), its batches shuffled.
 */
export function epochBatches(examples: PairExample[], batch: number, seed: string): number[][] {
  const rng = new Rng(seed);
  const perm = rng.shuffle(Array.from({ length: examples.length }, (_, i) => i));
  const len = (i: number) => examples[i]!.a.length + examples[i]!.b.length;
  const out: number[][] = [];
  for (let c = 0; c < perm.length; c += batch * 50) {
    const chunk = perm.slice(c, c + batch * 50).sort((x, y) => len(x) - len(y) || x - y);
    for (let i = 0; i < chunk.length; i += batch) out.push(chunk.slice(i, i + batch));
  }
  return rng.shuffle(out);
}

export interface PairTrainOptions {
  epochs: number;
  batch?: number;
  lr?: number;
  seed?: string;
  /** Where a resumed run starts: a checkpoint's point (the model and optimizer state are loaded by the caller). */
  start?: PairTrainingPoint;
  onBatch?: (loss: number, examples: number) => void;
  /** After each epoch: the epoch just done (1-based) and its mean loss (over all its batches; after a resume from a point without the sums, over those this run did). */
  onEpoch?: (epoch: number, loss: number, opt: Adam) => void;
  /** A checkpoint every `everyBatches` batches within an epoch (for a resumed run's `start`): the epochs done and the batches done of the current one. */
  checkpoint?: { everyBatches: number; save: (at: PairTrainingPoint, opt: Adam) => void };
  /** Lets the event loop run now and then (signal handlers); checked with `signal` after every batch. */
  pause?: () => Promise<void>;
  /** When aborted: a checkpoint at the batch reached, then PairTrainingStopped. */
  signal?: AbortSignal;
}

/** A point of training: the epochs done, the batches done of the next one, and that epoch's summed loss and examples so far. */
export interface PairTrainingPoint {
  epoch: number;
  batch: number;
  lossSum?: number;
  examples?: number;
}

/** Thrown by trainPairModel when its signal is aborted (after writing a checkpoint). */
export class PairTrainingStopped extends Error {
  constructor(readonly at: PairTrainingPoint) {
    super(`pair model training stopped at epoch ${at.epoch + 1}, batch ${at.batch}`);
    this.name = 'PairTrainingStopped';
  }
}

/**
 * Adam on binary cross-entropy of the logits; deterministic for a given seed (each epoch's batches
 * depend on the seed and the epoch alone, so a run resumed at a checkpoint does what the
 * uninterrupted run would have done).
 */
export async function trainPairModel(
  m: PairModel,
  table: Tensor,
  examples: PairExample[],
  o: PairTrainOptions,
  opt = new Adam(m.parameters(), { lr: o.lr ?? 1e-3 }),
): Promise<Adam> {
  const batch = o.batch ?? 128;
  m.train(true);
  for (let ep = o.start?.epoch ?? 0; ep < o.epochs; ep++) {
    const resumed = ep === (o.start?.epoch ?? 0) && !!o.start?.batch;
    let total = resumed ? (o.start!.lossSum ?? 0) : 0,
      n = resumed ? (o.start!.examples ?? 0) : 0;
    const batches = epochBatches(examples, batch, `${o.seed ?? 'pair-model'}:${ep}`);
    for (let bi = resumed ? o.start!.batch : 0; bi < batches.length; bi++) {
      const idx = batches[bi]!;
      const loss = tidy(() => {
        const items = idx.map((i) => examples[i]!);
        const sa = items.map((x) => x.a),
          sb = items.map((x) => x.b);
        const [xa, pa] = batchTensors(table, sa);
        const [xb, pb] = batchTensors(table, sb);
        const z = m.forward(xa, pa, xb, pb);
        const y = fromArray(
          Float32Array.from(items, (x) => x.y),
          [items.length],
        );
        // binary cross-entropy with logits: -(y log σ(z) + (1 - y) log σ(-z))
        const l = y.mul(z.logSigmoid()).add(y.rsub(1).mul(z.neg().logSigmoid())).mean().neg();
        opt.zeroGrad();
        l.backward();
        opt.step();
        return l.item();
      });
      total += loss * idx.length;
      n += idx.length;
      o.onBatch?.(loss, idx.length);
      const at: PairTrainingPoint = bi + 1 < batches.length ? { epoch: ep, batch: bi + 1, lossSum: total, examples: n } : { epoch: ep + 1, batch: 0 };
      if (at.batch && o.checkpoint && at.batch % o.checkpoint.everyBatches === 0) o.checkpoint.save(at, opt);
      await o.pause?.();
      if (o.signal?.aborted && (at.batch || ep + 1 < o.epochs)) {
        if (at.batch) o.checkpoint?.save(at, opt);
        else o.onEpoch?.(ep + 1, total / Math.max(1, n), opt);
        m.train(false);
        throw new PairTrainingStopped(at);
      }
    }
    o.onEpoch?.(ep + 1, total / Math.max(1, n), opt);
  }
  m.train(false);
  return opt;
}

/** Saves a pair model (weights and PCA) as safetensors, its config in the metadata. */
export function savePairModel(m: PairModel, path: string, extra: Record<string, string> = {}): void {
  saveModule(m, path, { format: 'xling-pair-model', config: JSON.stringify(m.config), ...extra });
}

/** Reads a pair model written by savePairModel; refuses another file or a config that does not fit its tensors. */
export function loadPairModel(path: string): PairModel {
  const h = readSafetensorsHeader(path);
  if (h.metadata.format !== 'xling-pair-model')
    throw new Error(`${path}: not an xling pair model (metadata format ${JSON.stringify(h.metadata.format ?? null)})`);
  let c: PairModelConfig;
  try {
    c = JSON.parse(h.metadata.config ?? '') as PairModelConfig;
  } catch {
    throw new Error(`${path}: its metadata 'config' is not JSON`);
  }
  const posInt = (v: unknown) => Number.isInteger(v) && (v as number) > 0 && (v as number) <= 1 << 16;
  if (!c || !posInt(c.dim) || !posInt(c.pca) || !posInt(c.hidden) || !posInt(c.maxWords) || typeof c.center !== 'boolean')
    throw new Error(`${path}: its config must give dim, pca, hidden, maxWords (positive integers) and center, got ${h.metadata.config}`);
  const old = c as PairModelConfig & { match?: unknown; context?: unknown };
  if (old.match || old.context)
    throw new Error(
      `${path}: a pair model with words' flags (match) or context, variants no longer supported (they gave nothing: docs/mine-and-score.md); train it again`,
    );
  const m = new PairModel(c);
  loadModule(m, path);
  m.train(false);
  return m;
}

// The dual encoder of Yang et al. 2019 ("Improving multilingual sentence embedding using
// bi-directional dual encoder with additive margin softmax"): one shared encoder for both sides of
// a translation pair, no language input. Token features are a subword embedding plus the hashed
// character n-grams of the token (or, with no vocabulary, the whole sentence as one bag of n-grams
// and words); a body of 0 layers (averaging), Transformer layers or a BiLSTM; pooling (any of max,
// mean, first, attention, concatenated); a projection. The loss is in ./loss.ts.
import { Module } from '../../nn/module.js';
import { Embedding, EmbeddingBag, Linear, LSTM, TransformerEncoder } from '../../nn/layers.js';
import { AttentionPool, firstToken, maxPool, meanPool } from '../../nn/pooling.js';
import { arange, cat, dropout, rand, rowLinear, rowLinearAsync } from '../../tensor/ops.js';
import { callOpAsync, fromArray, isGradEnabled, noGrad, opId, Tensor, tidy } from '../../tensor/tensor.js';
import { NGRAM_ID_OFFSET, prunedBucketMap, subwordNgramTable } from '../../text/ngrams.js';

/** Length groups of a batch for encoders with a body (see forward), and the fewest rows a group gets. */
const MAX_LENGTH_GROUPS = 4,
  MIN_GROUP_ROWS = 32;

export type PoolKind = 'max' | 'mean' | 'first' | 'attention';
export type BodyKind = 'none' | 'transformer' | 'bilstm';

export interface DualConfig {
  /**
   * 'sentence': a sentence is one bag of hashed n-gram and word ids (HashedNgramTokenizer, no
   * vocabulary); 'token': subword token ids, each token read as its own embedding plus the hashed
   * n-grams of its text.
   */
  unit: 'sentence' | 'token';
  /** Subword vocabulary size (unit 'token'; ids below it are subwords). */
  vocabSize: number;
  padId: number;
  /** Hashed n-gram buckets and the n range (unit 'token'; for 'sentence' the tokenizer hashes). */
  buckets: number;
  ngrams: [number, number];
  /** A token's features: 'sum' of its subword and n-gram rows (as the paper), or their 'mean'. */
  combine: 'sum' | 'mean';
  /** Feature width, and the initial std of the feature rows (0: zeros). */
  dim: number;
  initStd: number;
  /** Training only: each feature occurrence is dropped with this probability (its bag's total weight kept). */
  featureDropout: number;
  body: BodyKind;
  /** Transformer: layers, heads, feed-forward width, learned positions up to maxLen. BiLSTM: layers, hidden per direction. */
  layers: number;
  heads: number;
  ff: number;
  hidden: number;
  maxLen: number;
  dropout: number;
  pooling: PoolKind[];
  /** Applied to the pooled features before the projection ('tanh' as the n-gram reference). */
  activation: 'tanh' | 'none';
  outDim: number;
  /**
   * A pruned feature table (xling export --prune-unused): only `kept` of the hashed buckets have
   * rows of their own (their ids: the tensor `prune.buckets` of model.safetensors), the others
   * share `fallback` rows by bucket mod fallback (prunedBucketMap).
   */
  prune?: { kept: number; fallback: number };
  /**
   * A product-quantised feature table (xling export --dtype pq): `bytes` codes a row over the
   * table's first `dims` principal components; the tensors `pq.*` of model.safetensors hold it
   * (src/embed/table-pq.ts) and the loader reads the rows back into the table.
   */
  pq?: { bytes: number; dims: number };
}

export const DUAL_DEFAULTS: Omit<DualConfig, 'vocabSize'> = {
  unit: 'sentence',
  padId: 0,
  buckets: 1 << 20,
  ngrams: [1, 5],
  combine: 'sum',
  dim: 256,
  initStd: 0.1,
  featureDropout: 0,
  body: 'none',
  layers: 3,
  heads: 4,
  ff: 1024,
  hidden: 256,
  maxLen: 64,
  dropout: 0,
  pooling: ['mean'],
  activation: 'tanh',
  outDim: 512,
};

/** Bags for the native embedding bag: concatenated ids, offsets [bags+1], per-id weights. */
export interface Bags {
  ids: Int32Array;
  offsets: BigInt64Array;
  weights: Float32Array;
}

export class DualEncoder extends Module {
  readonly embed: EmbeddingBag;
  readonly pos: Embedding | null = null;
  readonly transformer: TransformerEncoder | null = null;
  readonly lstm: LSTM | null = null;
  readonly attnPool: AttentionPool | null;
  readonly proj: Linear;
  /** n-gram features of each subword token (unit 'token'). */
  private readonly table: { offsets: Int32Array; ids: Int32Array } | null;
  /** Pruned table: bucket → row offset past the first bucket row (see DualConfig.prune); null: row = bucket. */
  private bucketMap: Int32Array | null = null;
  /** Inference's bag arrays, reused from batch to batch (fresh arrays of ~20 MB a batch cost page faults). */
  private readonly scratch: BagScratch = { ids: new Int32Array(0), weights: new Float32Array(0) };

  /** tokens: the subword vocabulary's token strings (unit 'token'). */
  constructor(
    readonly cfg: DualConfig,
    tokens?: readonly string[],
  ) {
    super();
    const rows = this.bucketBase + (cfg.prune ? cfg.prune.kept + cfg.prune.fallback : cfg.buckets);
    this.embed = this.module('embed', new EmbeddingBag(rows, cfg.dim, cfg.initStd));
    if (cfg.unit === 'token') {
      if (!tokens || tokens.length !== cfg.vocabSize) throw new Error(`DualEncoder: unit 'token' needs the ${cfg.vocabSize} token strings of the vocabulary`);
      this.table = subwordNgramTable(tokens, cfg.ngrams[0], cfg.ngrams[1], cfg.buckets);
    } else {
      this.table = null;
    }
    let width = cfg.dim;
    if (cfg.body === 'transformer') {
      this.pos = this.module('pos', new Embedding(cfg.maxLen, cfg.dim));
      this.transformer = this.module(
        'transformer',
        new TransformerEncoder({ dim: cfg.dim, heads: cfg.heads, ff: cfg.ff, dropout: cfg.dropout, numLayers: cfg.layers }),
      );
    } else if (cfg.body === 'bilstm') {
      this.lstm = this.module('lstm', new LSTM(cfg.dim, cfg.hidden, { numLayers: cfg.layers, bidirectional: true, dropout: cfg.layers > 1 ? cfg.dropout : 0 }));
      width = 2 * cfg.hidden;
    }
    this.attnPool = cfg.pooling.includes('attention') ? this.module('attn_pool', new AttentionPool(width)) : null;
    this.proj = this.module('proj', new Linear(width * cfg.pooling.length, cfg.outDim));
  }

  get dim(): number {
    return this.cfg.outDim;
  }

  /** The feature-table row of bucket 0 (rows below are special tokens or subwords). */
  get bucketBase(): number {
    return this.cfg.unit === 'sentence' ? NGRAM_ID_OFFSET : this.cfg.vocabSize;
  }

  /** A pruned model's kept buckets (ascending; cfg.prune.kept of them): from now on features are read through the map. */
  setPrunedBuckets(kept: Int32Array): void {
    const p = this.cfg.prune;
    if (!p || kept.length !== p.kept) throw new Error(`DualEncoder: ${kept.length} kept buckets, the model expects ${p?.kept ?? 'none (not pruned)'}`);
    const map = prunedBucketMap(kept, this.cfg.buckets, p.fallback);
    const base = this.bucketBase;
    if (this.table) for (let i = 0; i < this.table.ids.length; i++) this.table.ids[i] = base + map[this.table.ids[i]! - base]!;
    else this.bucketMap = map;
  }

  /** Whether a sentence vector is one bag of rows (no sequence to run a body over). */
  get bagOnly(): boolean {
    return this.cfg.unit === 'sentence' || (this.cfg.body === 'none' && this.cfg.pooling.length === 1 && this.cfg.pooling[0] === 'mean');
  }

  /**
   * The bags the feature table is read in for these sequences: one per sentence (averaging
   * encoders), or T per sentence (one per token slot, empty past its end; T = longest sequence).
   */
  featureBags(seqs: Int32Array[], scratch?: BagScratch): Bags & { T: number } {
    const T = this.bagOnly ? 1 : Math.max(1, ...seqs.map((s) => s.length));
    const b = this.bagOnly ? (this.cfg.unit === 'sentence' ? sentenceBags(seqs, scratch) : this.tokenBags(seqs, 0, true)) : this.tokenBags(seqs, T, false);
    if (this.bucketMap) {
      // sentence bags: every id is a bucket id (the bags own their ids array)
      const map = this.bucketMap,
        base = this.bucketBase,
        ids = b.ids;
      for (let i = 0; i < ids.length; i++) ids[i] = base + map[ids[i]! - base]!;
    }
    if (this.training && this.cfg.featureDropout > 0) dropFeatures(b, this.cfg.featureDropout);
    return { ...b, T };
  }

  /**
   * Sentence vectors [B, outDim] (not normalised) of token-id sequences (training or eval mode).
   * A body runs over length-sorted groups of the batch, each padded to its own longest sequence:
   * gettext strings run from 1 to 60+ tokens, and one padded block would spend most of its
   * Transformer (or BiLSTM) work on padding. Masking makes the vectors the same either way.
   */
  forward(seqs: Int32Array[]): Tensor {
    const groups = this.bagOnly ? 1 : Math.min(MAX_LENGTH_GROUPS, Math.floor(seqs.length / MIN_GROUP_ROWS));
    if (groups <= 1) return this.forwardPadded(seqs);
    const order = seqs.map((_, i) => i).sort((a, b) => seqs[a]!.length - seqs[b]!.length || a - b);
    const rank = new Int32Array(seqs.length);
    order.forEach((i, r) => {
      rank[i] = r;
    });
    return tidy(() => {
      const parts: Tensor[] = [];
      for (let g = 0; g < groups; g++) {
        const lo = Math.floor((g * seqs.length) / groups),
          hi = Math.floor(((g + 1) * seqs.length) / groups);
        parts.push(this.forwardPadded(order.slice(lo, hi).map((i) => seqs[i]!)));
      }
      return cat(parts, 0).indexSelect(0, fromArray(rank));
    });
  }

  /** forward() over one block padded to its longest sequence. */
  private forwardPadded(seqs: Int32Array[]): Tensor {
    return tidy(() => {
      let pooled: Tensor;
      // inference reads the bags into tensors at once (bag()): they may live in the scratch
      const bags = this.featureBags(seqs, this.training ? undefined : this.scratch);
      if (this.bagOnly) {
        pooled = dropout(this.bag(bags), this.cfg.dropout, this.training);
      } else {
        const { T } = bags;
        const B = seqs.length;
        if (this.cfg.body === 'transformer' && T > this.cfg.maxLen) throw new Error(`DualEncoder: ${T} tokens exceed maxLen ${this.cfg.maxLen}`);
        const lengths = seqs.map((s) => Math.max(1, s.length));
        const mask = fromArray(
          Uint8Array.from({ length: B * T }, (_, i) => (i % T < lengths[Math.floor(i / T)]! ? 1 : 0)),
          [B, T],
          'bool',
        );
        let h = dropout(this.bag(bags).view([B, T, this.cfg.dim]), this.cfg.dropout, this.training);
        if (this.transformer) h = this.transformer.forward(h.add(this.pos!.forward(arange(T).unsqueeze(0))), mask.logicalNot());
        else if (this.lstm) h = this.lstm.forward(h, { lengths }).output;
        const feats = this.cfg.pooling.map((k) => {
          switch (k) {
            case 'max':
              return maxPool(h, mask);
            case 'mean':
              return meanPool(h, mask);
            case 'first':
              return firstToken(h);
            case 'attention':
              return this.attnPool!.forward(h, mask);
          }
        });
        pooled = feats.length === 1 ? feats[0]! : cat(feats, 1);
      }
      const act = this.cfg.activation === 'tanh' ? pooled.tanh() : pooled;
      // inference: a sentence's vector must not depend on the batch it is embedded in (a server
      // request's batch, a cluster shard, a whole file); BLAS GEMMs round by the matrix sizes
      return isGradEnabled() ? this.proj.forward(act) : rowLinear(act, this.proj.weight, this.proj.bias);
    });
  }

  /**
   * forward() for inference with its kernels on worker threads (the averaging encoder: the bag, the
   * activation and the projection); encoders with a body run forward() here.
   */
  async forwardAsync(seqs: Int32Array[]): Promise<Tensor> {
    if (!this.bagOnly) return noGrad(() => this.forward(seqs));
    const tmp: Tensor[] = [];
    const own = <T extends Tensor>(t: T): T => {
      tmp.push(t);
      return t;
    };
    try {
      // the bags are copied into tensors before the first await: one scratch serves every call
      const b = this.featureBags(seqs, this.scratch);
      const pooled = own(await this.embed.forwardAsync(own(fromArray(b.ids)), own(fromArray(b.offsets)), own(fromArray(b.weights))));
      const act = this.cfg.activation === 'tanh' ? own((await callOpAsync(opId('tanh'), [pooled])) as Tensor) : pooled;
      return await rowLinearAsync(act, this.proj.weight, this.proj.bias);
    } finally {
      for (const t of tmp) t.dispose();
    }
  }

  private bag(b: Bags): Tensor {
    return tidy(() => this.embed.forward(fromArray(b.ids), fromArray(b.offsets), fromArray(b.weights)));
  }

  /**
   * Bags of token features: one per token position (T slots per sentence, empty past its end),
   * or, with perSentence, one per sentence holding the mean over its tokens.
   */
  private tokenBags(seqs: Int32Array[], T: number, perSentence: boolean): Bags {
    const { offsets: to, ids: tid } = this.table!;
    const mean = this.cfg.combine === 'mean';
    let n = 0;
    for (const s of seqs) for (const t of s) n += 1 + to[t + 1]! - to[t]!;
    const ids = new Int32Array(n),
      weights = new Float32Array(n);
    const offsets = new BigInt64Array((perSentence ? seqs.length : seqs.length * T) + 1);
    let k = 0,
      bag = 0;
    for (const s of seqs) {
      const sentScale = perSentence ? 1 / Math.max(1, s.length) : 1;
      for (let i = 0; i < s.length; i++) {
        const t = s[i]!;
        if (t < 0 || t >= this.cfg.vocabSize) throw new Error(`DualEncoder: token id ${t} out of range [0, ${this.cfg.vocabSize})`);
        const a = to[t]!,
          e = to[t + 1]!;
        const w = sentScale * (mean ? 1 / (1 + e - a) : 1);
        ids[k] = t;
        weights[k++] = w;
        for (let j = a; j < e; j++) {
          ids[k] = tid[j]!;
          weights[k++] = w;
        }
        if (!perSentence) offsets[++bag] = BigInt(k);
      }
      if (perSentence) offsets[++bag] = BigInt(k);
      else for (let i = s.length; i < T; i++) offsets[++bag] = BigInt(k);
    }
    return { ids, offsets, weights };
  }
}

/**
 * Feature dropout, in place: each id's weight is zeroed with probability p (draws from the seeded
 * torch RNG, so a step is reproducible) and the kept ones rescaled so every bag keeps its total
 * weight; a bag that would lose everything keeps all its features.
 */
function dropFeatures(b: Bags, p: number): void {
  const u = noGrad(() => tidy(() => rand([b.ids.length]).toFloat32Array()));
  const w = b.weights;
  for (let k = 0; k + 1 < b.offsets.length; k++) {
    const lo = Number(b.offsets[k]),
      hi = Number(b.offsets[k + 1]);
    let all = 0,
      kept = 0;
    for (let j = lo; j < hi; j++) {
      all += w[j]!;
      if (u[j]! >= p) kept += w[j]!;
    }
    if (kept <= 0) continue;
    const scale = all / kept;
    for (let j = lo; j < hi; j++) w[j] = u[j]! >= p ? w[j]! * scale : 0;
  }
}

/** Arrays sentenceBags may fill instead of allocating (grown as needed; the bags are views into them). */
export interface BagScratch {
  ids: Int32Array;
  weights: Float32Array;
}

/**
 * One bag per sentence of hashed feature ids, each feature weighted 1/count (the mean). With
 * `scratch`, ids and weights are views into its arrays (valid until the next call with it).
 */
export function sentenceBags(seqs: Int32Array[], scratch?: BagScratch): Bags {
  let n = 0;
  for (let i = 0; i < seqs.length; i++) n += seqs[i]!.length;
  if (scratch && scratch.ids.length < n) {
    const cap = Math.max(n, 2 * scratch.ids.length);
    scratch.ids = new Int32Array(cap);
    scratch.weights = new Float32Array(cap);
  }
  const ids = scratch ? scratch.ids.subarray(0, n) : new Int32Array(n),
    weights = scratch ? scratch.weights.subarray(0, n) : new Float32Array(n);
  const offsets = new BigInt64Array(seqs.length + 1);
  let k = 0;
  for (let b = 0; b < seqs.length; b++) {
    const s = seqs[b]!;
    ids.set(s, k);
    weights.fill(1 / Math.max(1, s.length), k, k + s.length);
    k += s.length;
    offsets[b + 1] = BigInt(k);
  }
  return { ids, offsets, weights };
}

// The dual-encoder family: config sections `features`, `encoder` and `loss` and their checks,
// the hashed n-gram tokenizer and the encoder for inference. Its training task (translation pairs
// of the configured 1:1 paths, the additive-margin loss over in-batch negatives, optional hard
// negatives) is ./train.ts, imported only when a run trains.
import { join } from 'node:path';
import { loadTensors } from '../../nn/serialize.js';
import { withoutTableInit } from '../../nn/layers.js';
import { noGrad, Tensor } from '../../tensor/tensor.js';
import { HashedNgramTokenizer, hashesOf } from '../../text/ngrams.js';
import { TextTokenizer } from '../../text/text-tokenizer.js';
import { Tokenizer } from '../../text/tokenizer.js';
import { checkChoice, checkInt, checkNumber } from '../../util/check.js';
import { inEvalMode } from '../encoder.js';
import { TensorEncoder } from '../tensor-encoder.js';
import { LoadedEncoder, LoadWeights, ModelFamily, SavedModelConfig, specOf, TrainConfig } from '../family.js';
import { openXlingTokenizer } from '../../text/spec.js';
import { BodyKind, DualConfig, DualEncoder, PoolKind } from './model.js';

export interface DualSections {
  /** Hashed character n-gram features (vocab.type 'none': the sentence is one bag of them and of its words). */
  features: {
    buckets: number;
    ngrams: [number, number];
    words: boolean;
    combine: 'sum' | 'mean';
    dim: number;
    initStd: number;
    maxFeatures: number;
    dropout: number;
    hashes: number;
  };
  encoder: {
    body: BodyKind;
    layers: number;
    heads: number;
    ff: number;
    hidden: number;
    maxLen: number;
    pooling: PoolKind[];
    activation: 'tanh' | 'none';
    outDim: number;
  };
  /** hardNegatives: k per example, mined every mineEvery steps over the training targets (0 = off). */
  /**
   * matryoshka: nested prefix widths (e.g. [512, 256, 128, 64]); the loss is summed over the
   * sentence vectors cut to each width (each re-normalised), so truncated vectors keep their
   * quality (Kusupati et al. 2022). [] (default): the full vector only.
   */
  loss: { margin: number; scale: number; bidirectional: boolean; hardNegatives: number; mineEvery: number; mineNprobe: number; matryoshka: number[] };
}

/** The tensor of a pruned model's kept bucket ids (int32, ascending). */
export const PRUNE_KEY = 'prune.buckets';

export type DualTrainConfig = TrainConfig & DualSections;

const POOLS: PoolKind[] = ['max', 'mean', 'first', 'attention'];

export function dualConfigOf(cfg: TrainConfig, tok: TextTokenizer): DualConfig {
  const c = cfg as DualTrainConfig;
  return {
    unit: c.vocab.type === 'none' ? 'sentence' : 'token',
    vocabSize: c.vocab.type === 'none' ? 0 : tok.vocabSize,
    padId: tok.padId,
    buckets: c.features.buckets,
    ngrams: c.features.ngrams,
    combine: c.features.combine,
    dim: c.features.dim,
    initStd: c.features.initStd,
    featureDropout: c.features.dropout,
    body: c.encoder.body,
    layers: c.encoder.layers,
    heads: c.encoder.heads,
    ff: c.encoder.ff,
    hidden: c.encoder.hidden,
    maxLen: c.encoder.maxLen,
    dropout: c.dropout,
    pooling: c.encoder.pooling,
    activation: c.encoder.activation,
    outDim: c.encoder.outDim,
  };
}

function ngramTokenizer(cfg: DualTrainConfig): HashedNgramTokenizer {
  const f = cfg.features;
  return new HashedNgramTokenizer(
    { ngrams: f.ngrams, buckets: f.buckets, words: f.words, maxFeatures: f.maxFeatures, ...hashesOf(f.hashes) },
    { lowercase: cfg.vocab.lowercase, romanize: cfg.vocab.romanize },
  );
}

export class DualSentenceEncoder extends TensorEncoder {
  constructor(readonly net: DualEncoder) {
    super();
  }
  get dim(): number {
    return this.net.dim;
  }
  /** The averaging encoder reads bags without padding: a batch of 16k sentences costs no more per sentence. */
  get batchLimits() {
    return this.net.cfg.body === 'none' ? { maxTokens: 1 << 24, maxSentences: 16384, unpadded: this.net.bagOnly } : undefined;
  }
  vectors(seqs: Int32Array[]): Tensor {
    return inEvalMode(this.net, () => noGrad(() => this.net.forward(seqs)));
  }
  /** Kernels on worker threads (the net must be in eval mode: feature dropout is a training-time draw). */
  override async vectorsAsync(seqs: Int32Array[]): Promise<Tensor> {
    if (this.net.training) return this.vectors(seqs);
    return this.net.forwardAsync(seqs);
  }
}

/** Every key of DualConfig (the compiler checks the list is complete). */
const DUAL_MODEL_KEYS: Record<keyof DualConfig, true> = {
  unit: true,
  vocabSize: true,
  padId: true,
  buckets: true,
  ngrams: true,
  combine: true,
  dim: true,
  initStd: true,
  featureDropout: true,
  body: true,
  layers: true,
  heads: true,
  ff: true,
  hidden: true,
  maxLen: true,
  dropout: true,
  pooling: true,
  activation: true,
  outDim: true,
  prune: true,
  pq: true,
};

export const dualFamily: ModelFamily = {
  kind: 'dual',
  summary: 'dual encoder (shared encoder, hashed n-gram features) trained with an additive-margin softmax over in-batch negatives (Yang et al. 2019)',
  sections: {
    features: { buckets: 1 << 20, ngrams: [1, 5], words: true, combine: 'sum', dim: 256, initStd: 0.1, maxFeatures: 2048, dropout: 0, hashes: 1 },
    encoder: { body: 'none', layers: 3, heads: 4, ff: 1024, hidden: 256, maxLen: 64, pooling: ['mean'], activation: 'tanh', outDim: 512 },
    loss: { margin: 0.3, scale: 20, bidirectional: true, hardNegatives: 0, mineEvery: 1000, mineNprobe: 8, matryoshka: [] },
  } satisfies DualSections,
  modelKeys: Object.keys(DUAL_MODEL_KEYS),
  defaults: {
    vocab: { type: 'none' },
    paths: [{ kind: '1:1', src: '*', trg: ['en'] }],
    batch: { size: 512, sortChunk: 1 },
    optim: { lr: 1e-3, betas: [0.9, 0.999], clip: 0 },
    budget: { minutes: 10 },
    checkpointEvery: 1000,
    checkpointMinutes: 10,
    logEvery: 50,
  },
  validate(cfg: TrainConfig, file: string): void {
    const c = cfg as DualTrainConfig;
    const int = (key: string, v: unknown, min: number) => checkInt(file, key, v, min);
    for (const [i, p] of c.paths.entries()) {
      if (p.kind !== '1:1' || (p.trg !== '*' && p.trg.length !== 1))
        throw new Error(`${file}: paths[${i}]: the dual encoder trains on 1:1 paths (one target language, or '*': every pair of languages)`);
    }
    int('features.buckets', c.features.buckets, 1);
    if (!Array.isArray(c.features.ngrams) || c.features.ngrams.length !== 2) throw new Error(`${file}: 'features.ngrams' must be [min, max]`);
    int('features.ngrams[0]', c.features.ngrams[0], 1);
    checkNumber(file, 'features.ngrams[1]', c.features.ngrams[1], { int: true, min: c.features.ngrams[0], max: 16 });
    checkChoice(file, 'features.combine', c.features.combine, ['sum', 'mean']);
    int('features.dim', c.features.dim, 1);
    checkNumber(file, 'features.initStd', c.features.initStd, { min: 0 });
    int('features.maxFeatures', c.features.maxFeatures, 1);
    checkNumber(file, 'features.dropout', c.features.dropout, { min: 0, below: 1 });
    checkNumber(file, 'features.hashes', c.features.hashes, { int: true, min: 1, max: 8 });
    if (c.features.hashes > 1 && c.vocab.type !== 'none')
      throw new Error(`${file}: 'features.hashes' (ids per n-gram) is for sentence bags ('vocab.type' 'none')`);
    checkChoice(file, 'encoder.body', c.encoder.body, ['none', 'transformer', 'bilstm']);
    for (const k of ['layers', 'heads', 'ff', 'hidden', 'maxLen', 'outDim'] as const) int(`encoder.${k}`, c.encoder[k], 1);
    if (!Array.isArray(c.encoder.pooling) || !c.encoder.pooling.length)
      throw new Error(`${file}: 'encoder.pooling' must list one or more of ${POOLS.join(', ')}`);
    c.encoder.pooling.forEach((p, i) => checkChoice(file, `encoder.pooling[${i}]`, p, POOLS));
    if (new Set(c.encoder.pooling).size !== c.encoder.pooling.length) throw new Error(`${file}: 'encoder.pooling' lists a pooling twice`);
    checkChoice(file, 'encoder.activation', c.encoder.activation, ['tanh', 'none']);
    if (c.encoder.body === 'transformer' && c.features.dim % c.encoder.heads !== 0)
      throw new Error(`${file}: 'features.dim' (${c.features.dim}) must be divisible by 'encoder.heads' (${c.encoder.heads})`);
    if (c.encoder.body === 'transformer' && c.encoder.maxLen < c.maxLen)
      throw new Error(`${file}: 'encoder.maxLen' (${c.encoder.maxLen}) must be >= 'maxLen' (${c.maxLen}), the longest tokenised sentence`);
    if (c.vocab.type === 'none' && (c.encoder.body !== 'none' || c.encoder.pooling.join() !== 'mean'))
      throw new Error(
        `${file}: with 'vocab.type' 'none' a sentence is one bag of n-grams: 'encoder.body' must be 'none' and 'encoder.pooling' ["mean"] (use a bpe/unigram vocabulary for token sequences)`,
      );
    checkNumber(file, 'loss.margin', c.loss.margin, { min: 0, max: 2 });
    checkNumber(file, 'loss.scale', c.loss.scale, { above: 0 });
    int('loss.hardNegatives', c.loss.hardNegatives, 0);
    int('loss.mineEvery', c.loss.mineEvery, 1);
    int('loss.mineNprobe', c.loss.mineNprobe, 1);
    if (!Array.isArray(c.loss.matryoshka))
      throw new Error(`${file}: 'loss.matryoshka' must be a list of widths (e.g. [512, 256, 128, 64]), got ${JSON.stringify(c.loss.matryoshka)}`);
    c.loss.matryoshka.forEach((d, i) => checkNumber(file, `loss.matryoshka[${i}]`, d, { int: true, min: 1, max: c.encoder.outDim }));
    if (new Set(c.loss.matryoshka).size !== c.loss.matryoshka.length) throw new Error(`${file}: 'loss.matryoshka' lists a width twice`);
  },
  fixedTokenizer(cfg) {
    return cfg.vocab.type === 'none' ? ngramTokenizer(cfg as DualTrainConfig) : undefined;
  },
  loadEncoder(dir: string, saved: SavedModelConfig, load: LoadWeights): LoadedEncoder {
    const mc = saved.model as DualConfig;
    let tokenizer: TextTokenizer, tokens: readonly string[] | undefined;
    const spec = specOf(dir, saved);
    const want = mc.unit === 'token' ? 'xling-subword' : 'hashed-ngrams';
    if (spec.type !== want)
      throw new Error(`${join(dir, 'config.json')}: a dual model of unit '${mc.unit}' reads a ${want} tokenizer, but tokenizerSpec says ${spec.type}`);
    const t = openXlingTokenizer(dir, spec);
    tokenizer = t;
    if (t instanceof Tokenizer) tokens = t.vocab;
    const net = withoutTableInit(() => new DualEncoder(mc, tokens));
    load(net);
    if (mc.prune) {
      // a pruned export: the kept buckets' ids, read apart from the encoder's weights
      const { tensors } = loadTensors(join(dir, 'model.safetensors'), (k) => k === PRUNE_KEY);
      const t = tensors.get(PRUNE_KEY);
      try {
        if (!t) throw new Error(`${join(dir, 'model.safetensors')}: '${PRUNE_KEY}' is missing (the model's config says its table is pruned)`);
        net.setPrunedBuckets(t.data() as Int32Array);
      } finally {
        t?.dispose();
      }
    }
    net.eval();
    return { encoder: new DualSentenceEncoder(net), tokenizer, dispose: () => net.dispose() };
  },
};

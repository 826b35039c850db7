// The JMT family: config sections `encoder`, `skipgram`, `sentence` and `align` and their checks,
// and the sentence encoder for inference. Its training (./train.ts, imported only when a run
// trains) aligns the words of every language with the pivot (fast_align, both directions
// intersected), then alternates skip-gram batches (SGD on the word and context vectors) with
// sentence batches (Adam: hinge loss on the L2 distance of translation pairs vs sampled
// negatives). Variants by config: JMT-Sent-LSTM (encoder.type 'lstm'), JMT-Sent-Avg ('avg'),
// Sent-LSTM / Sent-Avg (skipgram.enabled false), and *no-mono (skipgram.extraMono false:
// monolingual pairs only from the parallel rows, none from sentences without a pivot side or
// --mono files).
import { withoutTableInit } from '../../nn/layers.js';
import { noGrad, Tensor } from '../../tensor/tensor.js';
import { TextTokenizer } from '../../text/text-tokenizer.js';
import { checkChoice, checkInt, checkNumber } from '../../util/check.js';
import { inEvalMode } from '../encoder.js';
import { TensorEncoder } from '../tensor-encoder.js';
import { LoadedEncoder, LoadWeights, ModelFamily, SavedModelConfig, subwordTokenizer, TrainConfig, withWeights } from '../family.js';
import { JmtConfig, JmtEncoder } from './model.js';

export interface JmtSections {
  encoder: { type: 'lstm' | 'avg'; dim: number; hidden: number; layers: number; initStd: number };
  /** every: one skip-gram batch after each sentence batch (1), or after every N. */
  skipgram: {
    enabled: boolean;
    window: number;
    mono: boolean;
    cross: boolean;
    extraMono: boolean;
    batch: number;
    negatives: number;
    lr: number;
    every: number;
  };
  /** negatives: sampled per pair (from the batch's other sentences); margin = marginPerDim × sentence dimension. */
  sentence: { negatives: number; marginPerDim: number; bidirectional: boolean };
  /** The word aligner (src/mine/scorer/word-align/fast-align.ts) and the pivot language of the cross-lingual pairs. */
  align: { pivot: string; model1Iterations: number; iterations: number; tension: number; nullProb: number };
}

export type JmtTrainConfig = TrainConfig & JmtSections;

export function jmtConfigOf(cfg: TrainConfig, tok: TextTokenizer): JmtConfig {
  const c = cfg as JmtTrainConfig;
  return {
    vocabSize: tok.vocabSize,
    padId: tok.padId,
    dim: c.encoder.dim,
    initStd: c.encoder.initStd,
    encoder: c.encoder.type,
    hidden: c.encoder.hidden,
    layers: c.encoder.layers,
    dropout: c.dropout,
  };
}

export class JmtSentenceEncoder extends TensorEncoder {
  constructor(readonly net: JmtEncoder) {
    super();
  }
  get dim(): number {
    return this.net.dim;
  }
  vectors(seqs: Int32Array[]): Tensor {
    return inEvalMode(this.net, () => noGrad(() => this.net.forward(seqs)));
  }
}

/** Every key of JmtConfig (the compiler checks the list is complete). */
const JMT_MODEL_KEYS: Record<keyof JmtConfig, true> = {
  vocabSize: true,
  padId: true,
  dim: true,
  initStd: true,
  encoder: true,
  hidden: true,
  layers: true,
  dropout: true,
};

export const jmtFamily: ModelFamily = {
  kind: 'jmt',
  modelKeys: Object.keys(JMT_MODEL_KEYS),
  summary: 'joint multi-task model: multilingual skip-gram + BiLSTM (or average) sentence encoder sharing word embeddings (Singla et al. 2018)',
  sections: {
    encoder: { type: 'lstm', dim: 256, hidden: 256, layers: 1, initStd: 0.1 },
    skipgram: { enabled: true, window: 5, mono: true, cross: true, extraMono: true, batch: 1024, negatives: 512, lr: 0.01, every: 1 },
    sentence: { negatives: 10, marginPerDim: 1, bidirectional: true },
    align: { pivot: 'en', model1Iterations: 2, iterations: 3, tension: 4, nullProb: 0.08 },
  } satisfies JmtSections,
  defaults: {
    vocab: { type: 'words', size: 100000 },
    paths: [{ kind: '1:1', src: '*', trg: ['en'] }],
    batch: { size: 50, sortChunk: 20 },
    optim: { lr: 1e-3, betas: [0.9, 0.999], clip: 5, schedule: 'step', decay: 0.98, decayEvery: 10000 },
    dropout: 0.3,
    budget: { minutes: 10 },
    checkpointEvery: 2000,
    checkpointMinutes: 10,
    logEvery: 100,
  },
  validate(cfg: TrainConfig, file: string): void {
    const c = cfg as JmtTrainConfig;
    const int = (key: string, v: unknown, min: number) => checkInt(file, key, v, min);
    if (c.vocab.type === 'none')
      throw new Error(`${file}: 'vocab.type' must be 'words', 'bpe' or 'unigram' for the jmt model (its skip-gram learns a vector per token)`);
    for (const [i, p] of c.paths.entries())
      if (p.kind !== '1:1' || !Array.isArray(p.trg) || p.trg.length !== 1)
        throw new Error(`${file}: paths[${i}]: the jmt model trains on 1:1 paths (one target language)`);
    checkChoice(file, 'encoder.type', c.encoder.type, ['lstm', 'avg']);
    for (const k of ['dim', 'hidden', 'layers'] as const) int(`encoder.${k}`, c.encoder[k], 1);
    checkNumber(file, 'encoder.initStd', c.encoder.initStd, { min: 0 });
    for (const k of ['window', 'batch', 'every'] as const) int(`skipgram.${k}`, c.skipgram[k], 1);
    int('skipgram.negatives', c.skipgram.negatives, 1);
    checkNumber(file, 'skipgram.lr', c.skipgram.lr, { above: 0 });
    if (c.skipgram.enabled && !c.skipgram.mono && !c.skipgram.cross) throw new Error(`${file}: 'skipgram' needs mono or cross pairs (or enabled: false)`);
    int('sentence.negatives', c.sentence.negatives, 1);
    checkNumber(file, 'sentence.marginPerDim', c.sentence.marginPerDim, { min: 0 });
    if (typeof c.align.pivot !== 'string' || !c.align.pivot) throw new Error(`${file}: 'align.pivot' must be a language code`);
    int('align.model1Iterations', c.align.model1Iterations, 0);
    int('align.iterations', c.align.iterations, 0);
    checkNumber(file, 'align.tension', c.align.tension, { min: 0 });
    checkNumber(file, 'align.nullProb', c.align.nullProb, { above: 0, below: 1 });
  },
  loadEncoder(dir: string, saved: SavedModelConfig, load: LoadWeights): LoadedEncoder {
    const mc = saved.model as JmtConfig;
    const tokenizer = subwordTokenizer(dir, saved);
    const net = withWeights(
      withoutTableInit(() => new JmtEncoder(mc)),
      load,
    );
    return { encoder: new JmtSentenceEncoder(net), tokenizer, dispose: () => net.dispose() };
  },
};

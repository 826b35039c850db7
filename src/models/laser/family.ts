// The LASER family: config sections `encoder` and `decoder`, the translation task over the
// configured paths (1:1, 1:N, M:1), and the BiLSTM encoder for inference.
import { Batch, BatchStream, buildExamples, EncodedCorpus, Example, StreamState, truncateBatch } from '../../train-data/examples.js';
import { padBatch } from '../../train-data/batch.js';
import { TextTokenizer } from '../../text/text-tokenizer.js';
import { fromArray, noGrad, Tensor } from '../../tensor/tensor.js';
import { checkChoice, checkNumber } from '../../util/check.js';
import { ModelFamily, subwordTokenizer, TrainConfig, TrainingTask } from '../family.js';
import { LaserConfig, LaserEncoder, LaserModel, LaserSentenceEncoder } from './model.js';

/** LASER's own config sections. */
export interface LaserSections {
  encoder: { embedDim: number; hidden: number; layers: number; bidirectional: boolean; pooling: 'max' | 'last' };
  /** outBias 'unigram': output bias starts at the log frequency of target tokens ('uniform': PyTorch's init). */
  decoder: { embedDim: number; hidden: number; langEmbedDim: number; outBias: 'uniform' | 'unigram' };
}

export type LaserTrainConfig = TrainConfig & LaserSections;

export function laserConfigOf(cfg: TrainConfig, tok: TextTokenizer): LaserConfig {
  const c = cfg as LaserTrainConfig;
  const trgLangs = [...new Set(c.paths.flatMap((p) => (p.trg === '*' ? [] : p.trg)))]; // ('*' is refused by validate)
  return {
    vocabSize: tok.vocabSize,
    padId: tok.padId,
    embedDim: c.encoder.embedDim,
    hidden: c.encoder.hidden,
    layers: c.encoder.layers,
    bidirectional: c.encoder.bidirectional,
    pooling: c.encoder.pooling,
    decEmbedDim: c.decoder.embedDim,
    decHidden: c.decoder.hidden,
    langEmbedDim: c.decoder.langEmbedDim,
    targetLangs: trgLangs,
    dropout: c.dropout,
  };
}

/**
 * Starts the decoder's output bias at log p(token) over the training targets, so the first steps
 * go to what the sentence vector must carry instead of to learning token frequencies.
 */
export function unigramOutputBias(model: LaserModel, examples: Example[], c: EncodedCorpus): void {
  const bias = model.decoder.out.bias;
  if (!bias) return;
  const counts = new Float64Array(model.cfg.vocabSize).fill(1); // add-one: unseen tokens stay possible
  for (const e of examples) for (const l of e.trg) for (const t of c.ids.get(l)![e.row]!) counts[t]! += 1;
  let total = 0;
  for (const n of counts) total += n;
  const logp = Float32Array.from(counts, (n) => Math.log(n / total));
  noGrad(() => {
    const t = fromArray(logp);
    bias.copy_(t);
    t.dispose();
  });
}

/** The translation loss of one batch: every source of an example is encoded, every target decoded. */
function batchLoss(model: LaserModel, b: Batch, c: EncodedCorpus, bos: number, pad: number): Tensor {
  const ids = (lang: string, row: number) => c.ids.get(lang)![row]!;
  const langId = (l: string) => model.cfg.targetLangs.indexOf(l);
  const nSrc = b.examples[0]!.src.length;
  const srcs = Array.from({ length: nSrc }, (_, k) =>
    padBatch(
      b.examples.map((e) => ids(e.src[k]!, e.row)),
      pad,
    ),
  );
  // 1:N: every example has the same number of targets (the path's list); k-th target per example.
  const nTrg = b.examples[0]!.trg.length;
  const targets = Array.from({ length: nTrg }, (_, k) => ({
    seqs: b.examples.map((e) => ids(e.trg[k]!, e.row)),
    lang: b.examples.map((e) => langId(e.trg[k]!)),
  }));
  try {
    return model.loss(srcs, targets, bos);
  } finally {
    for (const s of srcs) s.ids.dispose();
  }
}

class LaserTask implements TrainingTask<Batch> {
  readonly module: LaserModel;
  readonly modelConfig: LaserConfig;
  private readonly stream: BatchStream;
  constructor(
    cfg: LaserTrainConfig,
    private readonly tok: TextTokenizer,
    private readonly corpus: EncodedCorpus,
  ) {
    this.modelConfig = laserConfigOf(cfg, tok);
    this.module = new LaserModel(this.modelConfig);
    const examples = buildExamples(corpus, cfg.paths);
    if (cfg.decoder.outBias === 'unigram') unigramOutputBias(this.module, examples, corpus);
    this.stream = new BatchStream(examples, corpus, cfg.seed, cfg.batch.size, cfg.batch.sortChunk, cfg.batch.maxTokens, undefined, {
      pairTemperature: cfg.batch.pairTemperature,
      langTemperature: cfg.batch.langTemperature,
      langMinRows: cfg.batch.langMinRows,
      langMaxRepeat: cfg.batch.langMaxRepeat,
    });
  }
  get streamState(): StreamState {
    return this.stream.state;
  }
  set streamState(s: unknown) {
    this.stream.state = s as StreamState;
  }
  nextBatch(): Batch {
    return this.stream.next();
  }
  pairs(b: Batch): number {
    return b.pairs;
  }
  tokens(b: Batch): number {
    const len = (l: string, row: number) => this.corpus.ids.get(l)![row]!.length;
    return b.examples.reduce((a, e) => a + len(e.src[0]!, e.row) + e.trg.reduce((s, t) => s + len(t, e.row), 0), 0);
  }
  truncate(b: Batch, n: number): Batch {
    return truncateBatch(b, n);
  }
  loss(b: Batch): Tensor {
    return batchLoss(this.module, b, this.corpus, this.tok.bosId, this.tok.padId);
  }
  encoder(): LaserSentenceEncoder {
    return new LaserSentenceEncoder(this.module.encoder, this.tok.padId);
  }
  describe(): string[] {
    return [
      `LASER: BiLSTM ${this.modelConfig.layers}×${this.modelConfig.hidden} (${this.modelConfig.pooling}-pool, ${this.module.encoder.dim}-d), decoder LSTM ${this.modelConfig.decHidden}, ${this.module.numParameters()} parameters`,
    ];
  }
}

/** Every key of LaserConfig (the compiler checks the list is complete). */
const LASER_MODEL_KEYS: Record<keyof LaserConfig, true> = {
  vocabSize: true,
  padId: true,
  embedDim: true,
  hidden: true,
  layers: true,
  bidirectional: true,
  pooling: true,
  decEmbedDim: true,
  decHidden: true,
  langEmbedDim: true,
  targetLangs: true,
  dropout: true,
};

export const laserFamily: ModelFamily = {
  kind: 'laser',
  summary: 'BiLSTM encoder (max-pooled) trained through an LSTM decoder to translate (Artetxe & Schwenk 2019)',
  sections: {
    encoder: { embedDim: 320, hidden: 512, layers: 1, bidirectional: true, pooling: 'max' },
    decoder: { embedDim: 320, hidden: 1024, langEmbedDim: 32, outBias: 'unigram' },
  } satisfies LaserSections,
  modelKeys: Object.keys(LASER_MODEL_KEYS),
  validate(cfg: TrainConfig, file: string): void {
    const c = cfg as LaserTrainConfig;
    if (c.vocab.type === 'none') throw new Error(`${file}: 'vocab.type' must be 'bpe' or 'unigram' for the laser model (it decodes subword tokens)`);
    for (const [i, p] of c.paths.entries()) {
      if (p.trg === '*') throw new Error(`${file}: paths[${i}]: a laser path names its target languages (the decoder has an embedding for each)`);
      if (p.kind === '1:1' && p.trg.length !== 1) throw new Error(`${file}: paths[${i}]: a 1:1 path has one target language`);
    }
    for (const k of ['embedDim', 'hidden', 'layers'] as const) checkNumber(file, `encoder.${k}`, c.encoder[k], { int: true, min: 1 });
    for (const k of ['embedDim', 'hidden', 'langEmbedDim'] as const) checkNumber(file, `decoder.${k}`, c.decoder[k], { int: true, min: 1 });
    checkChoice(file, 'encoder.pooling', c.encoder.pooling, ['max', 'last']);
    checkChoice(file, 'decoder.outBias', c.decoder.outBias, ['uniform', 'unigram']);
  },
  createTask(cfg, tok, corpus) {
    return new LaserTask(cfg as LaserTrainConfig, tok, corpus);
  },
  loadEncoder(dir, saved, load) {
    const tokenizer = subwordTokenizer(dir, saved);
    const net = new LaserEncoder(saved.model as LaserConfig);
    load(net);
    net.eval();
    return { encoder: new LaserSentenceEncoder(net, tokenizer.padId), tokenizer, dispose: () => net.dispose() };
  },
};

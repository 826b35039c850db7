// The LASER family: config sections `encoder` and `decoder` and their checks, and the BiLSTM
// encoder for inference. Its training task (the translation task over the configured paths: 1:1,
// 1:N, M:1) is ./train.ts, imported only when a run trains.
import { TextTokenizer } from '../../text/text-tokenizer.js';
import { checkChoice, checkNumber } from '../../util/check.js';
import { ModelFamily, subwordTokenizer, TrainConfig, withWeights } from '../family.js';
import { LaserConfig, LaserEncoder, LaserSentenceEncoder } from './model.js';

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
  loadEncoder(dir, saved, load) {
    const tokenizer = subwordTokenizer(dir, saved);
    const net = withWeights(new LaserEncoder(saved.model as LaserConfig), load);
    return { encoder: new LaserSentenceEncoder(net, tokenizer.padId), tokenizer, dispose: () => net.dispose() };
  },
};

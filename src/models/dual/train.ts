// The dual-encoder family's training task (imported when a run trains, through the registry):
// translation pairs of the configured 1:1 paths as batches, the additive-margin loss over
// in-batch negatives (both directions) and optional hard negatives mined with the current model
// through a faiss index (./task.ts), over the dual encoder's module.
import { EncodedCorpus } from '../../train-data/examples.js';
import { Module } from '../../nn/module.js';
import { Tensor } from '../../tensor/tensor.js';
import { TextTokenizer } from '../../text/text-tokenizer.js';
import { Tokenizer } from '../../text/tokenizer.js';
import { CreateTask, TrainConfig } from '../family.js';
import { dualConfigOf, DualSentenceEncoder, DualTrainConfig } from './family.js';
import { DualConfig, DualEncoder } from './model.js';
import { MarginPairTask } from './task.js';

/** The module saved as model.safetensors: the encoder under `encoder.` (PyTorch names). */
class DualModel extends Module {
  readonly encoder: DualEncoder;
  constructor(cfg: DualConfig, tokens?: readonly string[]) {
    super();
    this.encoder = this.module('encoder', new DualEncoder(cfg, tokens));
  }
}

class DualTask extends MarginPairTask {
  readonly module: DualModel;
  readonly modelConfig: DualConfig;
  readonly sparseParameters: Tensor[];
  private readonly cfg: DualTrainConfig;

  constructor(cfg: TrainConfig, tok: TextTokenizer, corpus: EncodedCorpus) {
    super(cfg, corpus, (cfg as DualTrainConfig).loss);
    this.cfg = cfg as DualTrainConfig;
    this.modelConfig = dualConfigOf(cfg, tok);
    this.module = new DualModel(this.modelConfig, this.modelConfig.unit === 'token' ? (tok as Tokenizer).vocab : undefined);
    this.sparseParameters = [this.module.encoder.embed.weight];
  }

  protected forward(seqs: Int32Array[]): Tensor {
    return this.module.encoder.forward(seqs);
  }
  encoder(): DualSentenceEncoder {
    return new DualSentenceEncoder(this.module.encoder);
  }

  describe(): string[] {
    const c = this.modelConfig;
    const feats =
      c.unit === 'sentence'
        ? `a bag of hashed ${c.ngrams[0]}–${c.ngrams[1]}-grams${this.cfg.features.words ? ' and words' : ''}${this.cfg.features.hashes > 1 ? ` (${this.cfg.features.hashes} hashes each)` : ''}`
        : `subword + hashed ${c.ngrams[0]}–${c.ngrams[1]}-gram features (${c.combine})`;
    const body = c.body === 'none' ? 'averaging encoder' : c.body === 'transformer' ? `Transformer ${c.layers}×${c.dim}` : `BiLSTM ${c.layers}×${c.hidden}`;
    return [
      `dual encoder: ${feats}, ${c.buckets} buckets × ${c.dim}, ${body}, ${c.pooling.join('+')} pooling → ${c.outDim}; ${this.module.numParameters()} parameters; margin ${this.cfg.loss.margin}, scale ${this.cfg.loss.scale}, ${this.cfg.loss.bidirectional ? 'both directions' : 'one direction'}${this.miner.enabled ? `, ${this.miner.describe()}` : ''}`,
    ];
  }
}

/** The dual encoder of a configuration and its margin task. */
export const createTask: CreateTask = (cfg, tok, corpus) => new DualTask(cfg, tok, corpus);

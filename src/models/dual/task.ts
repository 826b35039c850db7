// The dual encoder's training task over an encoder: 1:1 pairs from the corpus's paths, batched
// (batch.size, sortChunk, maxTokens, pairTemperature), the bidirectional additive-margin softmax
// over in-batch negatives (./loss.ts) and, with loss.hardNegatives, negatives mined with the live
// weights (./negatives.ts). A dual encoder trained from scratch (./train.ts) and an imported
// encoder trained further (src/train/adapt.ts) are this task over their own module.
import { Batch, BatchStreamTask, buildExamples, EncodedCorpus } from '../../train-data/examples.js';
import { Module } from '../../nn/module.js';
import { Tensor, tidy } from '../../tensor/tensor.js';
import { SentenceEncoder } from '../encoder.js';
import { TrainConfig, TrainingTask } from '../family.js';
import { batchMarginLoss, MarginLossOptions } from './loss.js';
import { collisions, HardNegativeMiner, MiningOptions } from './negatives.js';

/** The loss section: the margin loss's settings and the hard negatives'. */
export type MarginPairLoss = MarginLossOptions & MiningOptions & { matryoshka: readonly number[] };

export abstract class MarginPairTask extends BatchStreamTask implements TrainingTask<Batch> {
  abstract readonly module: Module;
  abstract readonly modelConfig: unknown;
  /** Hard negatives (loss.hardNegatives), mined with the live weights' inference encoder every loss.mineEvery steps. */
  readonly miner: HardNegativeMiner;

  constructor(
    cfg: TrainConfig,
    corpus: EncodedCorpus,
    protected readonly lossConfig: MarginPairLoss,
  ) {
    const examples = buildExamples(corpus, cfg.paths);
    super(corpus, examples, cfg.seed, cfg.batch);
    this.miner = new HardNegativeMiner(examples, (l, r) => this.ids(l, r), lossConfig);
  }

  /** The training forward pass: one row per sequence. */
  protected abstract forward(seqs: Int32Array[]): Tensor;
  abstract encoder(): SentenceEncoder;
  abstract describe(): string[];

  tokens(b: Batch): number {
    return b.examples.reduce((a, e) => a + this.ids(e.src[0]!, e.row).length + this.ids(e.trg[0]!, e.row).length, 0);
  }

  /** Every loss.mineEvery steps (from step 1): the distinct targets embedded with the current weights and indexed. */
  beforeStep(step: number): void {
    this.miner.beforeStep(step, () => this.encoder());
  }

  loss(b: Batch): Tensor {
    const ex = b.examples;
    const src = ex.map((e) => this.ids(e.src[0]!, e.row));
    const trg = ex.map((e) => this.ids(e.trg[0]!, e.row));
    // the batch's sources embedded with the live weights (inference path), their nearest targets of the last round
    const neg = this.miner.negatives(ex, () => this.encoder());
    const exclude = collisions(
      src,
      trg,
      ex.map((e) => e.row),
    );
    return tidy(() => batchMarginLoss(this.forward([...src, ...trg, ...neg]), src.length, this.lossConfig, exclude));
  }

  checkpointState(): { tensors: Map<string, Tensor>; meta: unknown } | undefined {
    return this.miner.checkpointState();
  }
  loadCheckpointState(s: { tensors: Map<string, Tensor>; meta: unknown }): void {
    this.miner.loadCheckpointState(s);
  }
  dispose(): void {
    this.miner.dispose();
  }
}

// The LASER family's training task (imported when a run trains, through the registry): every
// source of an example encoded, every target decoded by the LSTM decoder with the target
// language's embedding, over the configured paths (1:1, 1:N, M:1).
import { Batch, BatchStreamTask, buildExamples, EncodedCorpus, Example } from '../../train-data/examples.js';
import { padBatch } from '../../train-data/batch.js';
import { TextTokenizer } from '../../text/text-tokenizer.js';
import { fromArray, noGrad, Tensor } from '../../tensor/tensor.js';
import { CreateTask, TrainingTask } from '../family.js';
import { laserConfigOf, LaserTrainConfig } from './family.js';
import { LaserConfig, LaserModel, LaserSentenceEncoder } from './model.js';

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

class LaserTask extends BatchStreamTask implements TrainingTask<Batch> {
  readonly module: LaserModel;
  readonly modelConfig: LaserConfig;
  constructor(
    cfg: LaserTrainConfig,
    private readonly tok: TextTokenizer,
    corpus: EncodedCorpus,
  ) {
    const examples = buildExamples(corpus, cfg.paths);
    super(corpus, examples, cfg.seed, cfg.batch);
    this.modelConfig = laserConfigOf(cfg, tok);
    this.module = new LaserModel(this.modelConfig);
    if (cfg.decoder.outBias === 'unigram') unigramOutputBias(this.module, examples, corpus);
  }
  tokens(b: Batch): number {
    const len = (l: string, row: number) => this.ids(l, row).length;
    return b.examples.reduce((a, e) => a + len(e.src[0]!, e.row) + e.trg.reduce((s, t) => s + len(t, e.row), 0), 0);
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

/** The LASER model of a configuration and its translation task. */
export const createTask: CreateTask = (cfg, tok, corpus) => new LaserTask(cfg as LaserTrainConfig, tok, corpus);

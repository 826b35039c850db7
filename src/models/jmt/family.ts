// The JMT family: config sections `encoder`, `skipgram`, `sentence` and `align`. A run aligns
// the words of every language with the pivot (fast_align, both directions intersected), then
// alternates skip-gram batches (SGD on the word and context vectors) with sentence batches (Adam:
// hinge loss on the L2 distance of translation pairs vs sampled negatives). Variants by config:
// JMT-Sent-LSTM (encoder.type 'lstm'), JMT-Sent-Avg ('avg'), Sent-LSTM / Sent-Avg
// (skipgram.enabled false), and *no-mono (skipgram.extraMono false: monolingual pairs only from
// the parallel rows, none from sentences without a pivot side or --mono files).
import { alignBothWays, IdPair } from '../../mine/scorer/word-align/fast-align.js';
import { Batch, BatchStream, buildExamples, EncodedCorpus, StreamState, truncateBatch } from '../../train-data/examples.js';
import { Adam, SparseAdam, SparseSGD } from '../../nn/optim.js';
import { withoutTableInit } from '../../nn/layers.js';
import { fromArray, noGrad, Tensor, tidy } from '../../tensor/tensor.js';
import { TextTokenizer } from '../../text/text-tokenizer.js';
import { checkChoice, checkInt, checkNumber } from '../../util/check.js';
import { Rng } from '../../util/rng.js';
import { inEvalMode } from '../encoder.js';
import { TensorEncoder } from '../tensor-encoder.js';
import { LoadedEncoder, LoadWeights, ModelFamily, OptimizerSlot, SavedModelConfig, subwordTokenizer, TrainConfig, TrainingTask } from '../family.js';
import { distanceHingeLoss, skipGramLoss } from './loss.js';
import { JmtConfig, JmtEncoder, JmtModel } from './model.js';
import { RowLinks, SkipGramBatch, SkipGramSampler } from './skipgram.js';

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

/** Word ids without the special tokens (EOS), as the aligner sees a sentence. */
function words(s: Int32Array): Int32Array {
  return s.filter((t) => t >= 4);
}

/** Alignment links of every row of each language with the pivot (positions in the full id sequences). */
export function alignCorpus(
  corpus: EncodedCorpus,
  pivot: string,
  vocabSize: number,
  a: JmtSections['align'],
  log: (l: string) => void,
): Map<string, (RowLinks | undefined)[]> {
  const out = new Map<string, (RowLinks | undefined)[]>();
  const piv = corpus.ids.get(pivot);
  if (!piv) throw new Error(`align.pivot: '${pivot}' is not a language of the corpus (has ${corpus.langs.join(' ')})`);
  const t0 = performance.now();
  let links = 0;
  for (const l of corpus.langs) {
    if (l === pivot) continue;
    const side = corpus.ids.get(l)!;
    const rows: number[] = [],
      pairs: IdPair[] = [],
      maps: [number[], number[]][] = [];
    for (let r = 0; r < corpus.rows; r++) {
      const x = side[r],
        y = piv[r];
      if (!x || !y) continue;
      // positions of the words within the full sequences (the aligner sees words only)
      const px: number[] = [],
        py: number[] = [];
      x.forEach((t, i) => {
        if (t >= 4) px.push(i);
      });
      y.forEach((t, i) => {
        if (t >= 4) py.push(i);
      });
      if (!px.length || !py.length) continue;
      rows.push(r);
      pairs.push({ src: words(x), trg: words(y) });
      maps.push([px, py]);
    }
    const found = alignBothWays(pairs, vocabSize, vocabSize, a);
    const perRow: (RowLinks | undefined)[] = new Array(corpus.rows);
    found.forEach((ls, k) => {
      perRow[rows[k]!] = ls.map(([j, i]) => [maps[k]![0][j]!, maps[k]![1][i]!]);
      links += ls.length;
    });
    out.set(l, perRow);
  }
  log(`word alignment with ${pivot}: ${links} links (both directions agree) in ${((performance.now() - t0) / 1000).toFixed(1)}s`);
  return out;
}

type JmtBatch = { kind: 'sentence'; batch: Batch } | { kind: 'skipgram'; sg: SkipGramBatch };

class JmtTask implements TrainingTask<JmtBatch> {
  readonly module: JmtModel;
  readonly modelConfig: JmtConfig;
  private readonly stream: BatchStream;
  private readonly sampler: SkipGramSampler | null;
  private readonly cfg: JmtTrainConfig;
  private k = 0; // batches drawn: decides the alternation and seeds the skip-gram batches

  constructor(
    cfg: TrainConfig,
    tok: TextTokenizer,
    private readonly corpus: EncodedCorpus,
    log: (l: string) => void,
  ) {
    this.cfg = cfg as JmtTrainConfig;
    this.modelConfig = jmtConfigOf(cfg, tok);
    this.module = new JmtModel(this.modelConfig);
    this.stream = new BatchStream(buildExamples(corpus, cfg.paths), corpus, cfg.seed, cfg.batch.size, cfg.batch.sortChunk, cfg.batch.maxTokens, undefined, {
      pairTemperature: cfg.batch.pairTemperature,
      langTemperature: cfg.batch.langTemperature,
      langMinRows: cfg.batch.langMinRows,
      langMaxRepeat: cfg.batch.langMaxRepeat,
    });
    const sg = this.cfg.skipgram;
    if (sg.enabled) {
      const links = sg.cross ? alignCorpus(corpus, this.cfg.align.pivot, tok.vocabSize, this.cfg.align, log) : new Map();
      this.sampler = new SkipGramSampler(corpus, links, this.cfg.align.pivot, tok.vocabSize, sg);
    } else {
      this.sampler = null;
    }
  }

  private ids(lang: string, row: number): Int32Array {
    return this.corpus.ids.get(lang)![row]!;
  }

  get streamState(): unknown {
    return { stream: this.stream.state, k: this.k };
  }
  set streamState(s: unknown) {
    const st = s as { stream: StreamState; k: number };
    this.stream.state = st.stream;
    this.k = st.k;
  }

  nextBatch(): JmtBatch {
    const k = this.k++;
    const every = this.cfg.skipgram.every;
    if (this.sampler && k % (every + 1) === every) return { kind: 'skipgram', sg: this.sampler.batch(this.cfg.seed * 7919 + k) };
    return { kind: 'sentence', batch: this.stream.next() };
  }
  pairs(b: JmtBatch): number {
    return b.kind === 'sentence' ? b.batch.pairs : 0;
  }
  tokens(b: JmtBatch): number {
    return b.kind === 'sentence'
      ? b.batch.examples.reduce((a, e) => a + this.ids(e.src[0]!, e.row).length + this.ids(e.trg[0]!, e.row).length, 0)
      : b.sg.words.length;
  }
  truncate(b: JmtBatch, n: number): JmtBatch {
    return b.kind === 'sentence' ? { kind: 'sentence', batch: truncateBatch(b.batch, n) } : b;
  }
  encoder(): JmtSentenceEncoder {
    return new JmtSentenceEncoder(this.module.encoder);
  }

  optimizers(): OptimizerSlot[] {
    const enc = this.module.encoder,
      lr = this.cfg.optim.lr,
      sgLr = this.cfg.skipgram.lr;
    const dense = enc.lstm ? enc.lstm.parameters() : [];
    const slots: OptimizerSlot[] = [];
    if (dense.length) slots.push({ name: 'sentence', opt: new Adam(dense, { lr, betas: this.cfg.optim.betas }), baseLr: lr, params: dense, clip: true });
    slots.push({
      name: 'sentence-embeddings',
      opt: new SparseAdam([enc.embed.weight], { lr, betas: this.cfg.optim.betas }),
      baseLr: lr,
      params: [enc.embed.weight],
      clip: false,
    });
    if (this.sampler)
      slots.push({
        name: 'skipgram',
        opt: new SparseSGD([enc.embed.weight, this.module.skipgram.context.weight], { lr: sgLr }),
        baseLr: sgLr,
        params: [],
        clip: false,
      });
    return slots;
  }
  stepsWith(b: JmtBatch): string[] {
    return b.kind === 'skipgram' ? ['skipgram'] : ['sentence', 'sentence-embeddings'];
  }

  describe(): string[] {
    const c = this.modelConfig,
      sg = this.cfg.skipgram;
    const name = `${this.sampler ? 'JMT-' : ''}Sent-${c.encoder === 'lstm' ? 'LSTM' : 'Avg'}${sg.enabled && !sg.extraMono ? ' no-mono' : ''}`;
    const lines = [
      `${name}: ${c.vocabSize} words × ${c.dim}${c.encoder === 'lstm' ? `, BiLSTM ${c.layers}×${c.hidden} mean over time` : ', average of word vectors'} → ${this.module.encoder.dim}; ${this.module.numParameters()} parameters`,
    ];
    if (this.sampler)
      lines.push(
        `skip-gram: ${this.sampler.monoSentences} sentences for monolingual windows, ${this.sampler.alignedRows} aligned sentence pairs; ${sg.batch} pairs and ${sg.negatives} negatives per batch, one after every ${sg.every} sentence batch(es)`,
      );
    return lines;
  }

  loss(b: JmtBatch, step: number): Tensor {
    const enc = this.module.encoder;
    if (b.kind === 'skipgram') {
      return tidy(() => {
        const { words: w, contexts: c, negatives: n } = b.sg;
        const ctx = new Int32Array(c.length + n.length);
        ctx.set(c);
        ctx.set(n, c.length);
        // one lookup per table keeps each table's gradient coalesced
        const v = this.module.skipgram.context.forward(fromArray(ctx), fromArray(BigInt64Array.from({ length: ctx.length + 1 }, (_, i) => BigInt(i))));
        return skipGramLoss(enc.rows(w), v.narrow(0, 0, c.length), v.narrow(0, c.length, n.length));
      });
    }
    const ex = b.batch.examples;
    const src = ex.map((e) => this.ids(e.src[0]!, e.row)),
      trg = ex.map((e) => this.ids(e.trg[0]!, e.row));
    const B = src.length,
      k = Math.min(this.cfg.sentence.negatives, B - 1);
    // k other sentences of the batch per pair, drawn per step (reproducible on resume)
    const rng = new Rng(this.cfg.seed * 104729 + step);
    const draw = () =>
      Int32Array.from({ length: B * k }, (_, q) => {
        const i = Math.floor(q / k);
        const j = rng.int(B - 1);
        return j >= i ? j + 1 : j;
      });
    const neg = draw(),
      back = this.cfg.sentence.bidirectional ? draw() : undefined;
    return tidy(() => {
      const v = enc.forward([...src, ...trg]);
      if (k < 1) return v.sum().mul(0);
      return distanceHingeLoss(v.narrow(0, 0, B), v.narrow(0, B, B), this.cfg.sentence.marginPerDim * enc.dim, neg, back);
    });
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
  createTask(cfg, tok, corpus, log) {
    return new JmtTask(cfg, tok, corpus, log);
  },
  loadEncoder(dir: string, saved: SavedModelConfig, load: LoadWeights): LoadedEncoder {
    const mc = saved.model as JmtConfig;
    const tokenizer = subwordTokenizer(dir, saved);
    const net = withoutTableInit(() => new JmtEncoder(mc));
    load(net);
    net.eval();
    return { encoder: new JmtSentenceEncoder(net), tokenizer, dispose: () => net.dispose() };
  },
};

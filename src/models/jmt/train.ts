// The JMT family's training (imported when a run trains, through the registry): the words of
// every language aligned with the pivot (fast_align, both directions intersected), then skip-gram
// batches (SGD on the word and context vectors) alternating with sentence batches (Adam: hinge
// loss on the L2 distance of translation pairs vs sampled negatives).
import { alignBothWays, IdPair } from '../../mine/scorer/word-align/fast-align.js';
import { Batch, batchStreamOf, BatchStream, buildExamples, EncodedCorpus, StreamState, truncateBatch } from '../../train-data/examples.js';
import { Adam, SparseAdam, SparseSGD } from '../../nn/optim.js';
import { fromArray, Tensor, tidy } from '../../tensor/tensor.js';
import { TextTokenizer } from '../../text/text-tokenizer.js';
import { Rng } from '../../util/rng.js';
import { CreateTask, OptimizerSlot, TrainConfig, TrainingTask } from '../family.js';
import { jmtConfigOf, JmtSections, JmtSentenceEncoder, JmtTrainConfig } from './family.js';
import { distanceHingeLoss, skipGramLoss } from './loss.js';
import { JmtConfig, JmtModel } from './model.js';
import { RowLinks, SkipGramBatch, SkipGramSampler } from './skipgram.js';

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
    this.stream = batchStreamOf(buildExamples(corpus, cfg.paths), corpus, cfg.seed, cfg.batch);
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

/** The JMT model of a configuration and its alternating task (aligning the corpus first when skip-grams cross languages). */
export const createTask: CreateTask = (cfg, tok, corpus, log) => new JmtTask(cfg, tok, corpus, log);

// The LASER training loop: one readable function. Checkpoints (weights + optimizer + data
// position + log) every N steps, resumable after a kill -9 losing at most one interval;
// deterministic given the seed (dropout is re-seeded from (seed, step)).
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { LaserModel, LaserConfig, padBatch } from '../models/laser.js';
import { Adam, clipGradNorm, PlateauDecay, warmupInvSqrt } from '../nn/optim.js';
import { loadTensors, saveTensors, writeJson, readJson } from '../nn/serialize.js';
import { fromArray, manualSeed, noGrad, tidy, Tensor } from '../tensor/tensor.js';
import { lineChart } from '../util/svg.js';
import { formatDuration } from '../util/progress.js';
import { TrainConfig } from './config.js';
import { BatchStream, buildExamples, EncodedCorpus, Batch, Example, truncateBatch, StreamState } from './examples.js';
import { SentenceEncoderModel } from '../embed/model.js';
import { xsimOnDev, DevSet } from './validate.js';
import { TextTokenizer } from '../models/text-tokenizer.js';

export interface TrainOptions {
  config: TrainConfig;
  corpus: EncodedCorpus;
  tokenizer: TextTokenizer;
  outDir: string;
  resume?: boolean;
  dev?: DevSet;
  log?: (line: string) => void;
  /** Stop after this many steps in this process (tests simulate a kill). */
  stopAfterSteps?: number;
}

export interface TrainLogEntry { step: number; pairs: number; loss: number; lr: number; seconds: number; xsim?: number }

interface Checkpoint { step: number; pairs: number; seconds: number; stream: StreamState; lossEma: number | null; plateau?: { lr: number; best: number; bad: number } }

export function laserConfigOf(cfg: TrainConfig, tok: TextTokenizer): LaserConfig {
  const trgLangs = [...new Set(cfg.paths.flatMap((p) => p.trg))];
  return {
    vocabSize: tok.vocabSize, padId: tok.padId,
    embedDim: cfg.encoder.embedDim, hidden: cfg.encoder.hidden, layers: cfg.encoder.layers, bidirectional: cfg.encoder.bidirectional, pooling: cfg.encoder.pooling,
    decEmbedDim: cfg.decoder.embedDim, decHidden: cfg.decoder.hidden, langEmbedDim: cfg.decoder.langEmbedDim,
    targetLangs: trgLangs, dropout: cfg.dropout,
  };
}

function batchLoss(model: LaserModel, b: Batch, c: EncodedCorpus, bos: number, pad: number): Tensor {
  const ids = (lang: string, row: number) => c.ids.get(lang)![row]!;
  const langId = (l: string) => model.cfg.targetLangs.indexOf(l);
  const nSrc = b.examples[0]!.src.length;
  const srcs = Array.from({ length: nSrc }, (_, k) => padBatch(b.examples.map((e) => ids(e.src[k]!, e.row)), pad));
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

/**
 * Starts the decoder's output bias at log p(token) over the training targets, so the first steps
 * go to what the sentence vector must carry instead of to learning token frequencies.
 */
export function unigramOutputBias(model: LaserModel, examples: Example[], c: EncodedCorpus): void {
  const bias = model.decoder.out.bias;
  if (!bias) return;
  const counts = new Float64Array(model.cfg.vocabSize).fill(1);  // add-one: unseen tokens stay possible
  for (const e of examples) for (const l of e.trg) for (const t of c.ids.get(l)![e.row]!) counts[t]! += 1;
  let total = 0;
  for (const n of counts) total += n;
  const logp = Float32Array.from(counts, (n) => Math.log(n / total));
  noGrad(() => { const t = fromArray(logp); bias.copy_(t); t.dispose(); });
}

export async function trainLaser(o: TrainOptions): Promise<{ model: LaserModel; log: TrainLogEntry[] }> {
  const { config: cfg, corpus, tokenizer: tok, outDir } = o;
  const log = o.log ?? ((l: string) => process.stderr.write(l + '\n'));
  mkdirSync(outDir, { recursive: true });
  const ckDir = join(outDir, 'checkpoint');
  const logFile = join(outDir, 'train-log.jsonl');

  manualSeed(cfg.seed);
  const model = new LaserModel(laserConfigOf(cfg, tok));
  const params = model.parameters();
  const opt = new Adam(params, { lr: cfg.optim.lr, betas: cfg.optim.betas, weightDecay: cfg.optim.weightDecay });
  const examples = buildExamples(corpus, cfg.paths);
  if (cfg.decoder.outBias === 'unigram') unigramOutputBias(model, examples, corpus);
  const stream = new BatchStream(examples, corpus, cfg.seed, cfg.batch.size, cfg.batch.sortChunk, cfg.batch.maxTokens, undefined, { pairTemperature: cfg.batch.pairTemperature });
  const plateau = cfg.optim.schedule === 'plateau' ? new PlateauDecay(cfg.optim.lr) : null;
  const sched = cfg.optim.schedule === 'invsqrt' ? warmupInvSqrt(cfg.optim.lr, cfg.optim.warmup) : (s: number) => (cfg.optim.warmup > 0 && s < cfg.optim.warmup ? (cfg.optim.lr * s) / cfg.optim.warmup : cfg.optim.lr);

  let step = 0, pairs = 0, priorSeconds = 0, lossEma: number | null = null;
  let history: TrainLogEntry[] = [];
  if (o.resume && existsSync(join(ckDir, 'state.json'))) {
    const st = readJson<Checkpoint>(join(ckDir, 'state.json'));
    const { tensors } = loadTensors(join(ckDir, 'model.safetensors'));
    model.loadStateDict(tensors);
    for (const t of tensors.values()) t.dispose();
    const os = loadTensors(join(ckDir, 'optimizer.safetensors'));
    opt.loadStateDict({ tensors: os.tensors, meta: JSON.parse(os.metadata.meta ?? '{}') as Record<string, number> });
    for (const t of os.tensors.values()) t.dispose();
    ({ step, pairs, lossEma } = st);
    priorSeconds = st.seconds;
    stream.state = st.stream;
    if (plateau && st.plateau) plateau.load(st.plateau);
    // The log keeps only entries up to the checkpoint (later ones were lost with the kill).
    history = existsSync(logFile) ? readFileSync(logFile, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as TrainLogEntry).filter((e) => e.step <= step) : [];
    writeFileSync(logFile, history.map((e) => JSON.stringify(e) + '\n').join(''));
    log(`resumed from step ${step} (${pairs} pairs)`);
  } else {
    writeFileSync(logFile, '');
  }

  const budgetPairs = cfg.budget.pairs || Infinity;
  const budgetSeconds = cfg.budget.minutes ? cfg.budget.minutes * 60 : Infinity; // 0 = unset
  const t0 = performance.now();
  const elapsed = () => priorSeconds + (performance.now() - t0) / 1000;
  let windowStart = performance.now(), windowPairs = 0, windowTokens = 0, stepsHere = 0;

  const saveCheckpoint = () => {
    const tmp = `${ckDir}.tmp-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
    saveTensors(join(tmp, 'model.safetensors'), model.stateDict());
    const os = opt.stateDict();
    saveTensors(join(tmp, 'optimizer.safetensors'), os.tensors, { meta: JSON.stringify(os.meta) });
    const st: Checkpoint = { step, pairs, seconds: elapsed(), stream: stream.state, lossEma, plateau: plateau?.state() };
    writeJson(join(tmp, 'state.json'), st);
    rmSync(`${ckDir}.old`, { recursive: true, force: true });
    if (existsSync(ckDir)) renameSync(ckDir, `${ckDir}.old`);
    renameSync(tmp, ckDir);
    rmSync(`${ckDir}.old`, { recursive: true, force: true });
  };

  model.train();
  while (pairs < budgetPairs && elapsed() < budgetSeconds) {
    if (o.stopAfterSteps !== undefined && stepsHere >= o.stopAfterSteps) break;
    const batch = truncateBatch(stream.next(), budgetPairs - pairs);
    if (!batch.examples.length) break;
    step++;
    stepsHere++;
    manualSeed(cfg.seed * 1000003 + step); // dropout masks depend on (seed, step) only: resumable
    opt.lr = plateau ? plateau.lr : sched(step);
    const loss = tidy(() => {
      opt.zeroGrad();
      const l = batchLoss(model, batch, corpus, tok.bosId, tok.padId);
      l.backward();
      clipGradNorm(params, cfg.optim.clip);
      opt.step();
      return l.item();
    });
    if (!Number.isFinite(loss)) throw new Error(`training diverged at step ${step} (loss ${loss}); lower optim.lr`);
    pairs += batch.pairs;
    windowPairs += batch.pairs;
    windowTokens += batch.examples.reduce((a, e) => a + corpus.ids.get(e.src[0]!)![e.row]!.length + e.trg.reduce((s, t) => s + corpus.ids.get(t)![e.row]!.length, 0), 0);
    lossEma = lossEma === null ? loss : 0.95 * lossEma + 0.05 * loss;
    const entry: TrainLogEntry = { step, pairs, loss, lr: opt.lr, seconds: elapsed() };
    if (cfg.validate.every > 0 && o.dev && step % cfg.validate.every === 0) {
      entry.xsim = xsimOnDev(new SentenceEncoderModel(model.encoder, tok, cfg), o.dev).average;
      model.train();
      if (plateau) plateau.observe(entry.xsim);
      log(`step ${step}: dev xsim ${entry.xsim.toFixed(2)}%`);
    }
    history.push(entry);
    appendFileSync(logFile, JSON.stringify(entry) + '\n');
    if (step % cfg.logEvery === 0) {
      const secs = (performance.now() - windowStart) / 1000;
      const rate = windowPairs / secs;
      const left = Math.min((budgetPairs - pairs) / rate, budgetSeconds - elapsed());
      log(`step ${step} pairs ${pairs}${Number.isFinite(budgetPairs) ? '/' + budgetPairs : ''} loss ${lossEma.toFixed(3)} lr ${opt.lr.toExponential(2)} ${rate.toFixed(1)} pairs/s ${(windowTokens / secs).toFixed(0)} tok/s ETA ${formatDuration(Math.max(0, left))}`);
      windowStart = performance.now(); windowPairs = 0; windowTokens = 0;
    }
    if (step % cfg.checkpointEvery === 0) saveCheckpoint();
    if (step % 20 === 0) await new Promise((r) => setImmediate(r)); // let finalizers run
  }
  if (step % cfg.checkpointEvery !== 0) saveCheckpoint();
  writeLearningCurve(outDir, history);
  return { model, log: history };
}

export function writeLearningCurve(outDir: string, history: TrainLogEntry[]): void {
  if (!history.length) return;
  const ema: [number, number][] = [];
  let e: number | null = null;
  for (const h of history) { e = e === null ? h.loss : 0.95 * e + 0.05 * h.loss; ema.push([h.pairs, e]); }
  const series = [{ name: 'training loss (EMA)', points: ema }];
  const xs = history.filter((h) => h.xsim !== undefined).map((h) => [h.pairs, h.xsim!] as [number, number]);
  writeFileSync(join(outDir, 'loss.svg'), lineChart({ series, title: 'Training loss', xLabel: 'training pairs', yLabel: 'cross entropy' }));
  if (xs.length) writeFileSync(join(outDir, 'xsim.svg'), lineChart({ series: [{ name: 'dev xsim error %', points: xs }], title: 'Dev similarity-search error', xLabel: 'training pairs', yLabel: 'error %' }));
}

// The training loop, one readable function for every model family: the family's task gives
// batches and the loss; this loop owns the optimisers, the schedule, the budget, clipping,
// checkpoints (weights + optimiser + data position + log, resumable after a kill -9 losing at
// most one interval), validation, logging and the learning curves. Deterministic given the seed
// (dropout is re-seeded from (seed, step)).
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EncodedCorpus } from '../data/examples.js';
import { SentenceEncoderModel } from '../embed/model.js';
import { OptimizerSlot, TrainConfig, TrainingTask } from '../models/family.js';
import { getFamily } from '../models/registry.js';
import { Adam, clipGradNorm, PlateauDecay, SparseAdam, warmupInvSqrt } from '../nn/optim.js';
import { loadTensors, readJson, saveTensors, writeJson } from '../nn/serialize.js';
import { manualSeed, Tensor, tidy } from '../tensor/tensor.js';
import { TextTokenizer } from '../text/text-tokenizer.js';
import { releaseTemp, removeStaleTemporaries, tempPathFor } from '../util/atomic.js';
import { formatDuration } from '../util/progress.js';
import { lineChart } from '../util/svg.js';
import { DevSet, xsimOnDevAsync } from './validate.js';
import { pause } from '../util/pause.js';

export interface TrainOptions {
  config: TrainConfig;
  corpus: EncodedCorpus;
  tokenizer: TextTokenizer;
  /** Where checkpoint/, train-log.jsonl and the curves go. */
  outDir: string;
  /** Continue from outDir/checkpoint (an error when there is none). */
  resume?: boolean;
  dev?: DevSet;
  log?: (line: string) => void;
  /** Stop after this many steps in this process (tests simulate a kill). */
  stopAfterSteps?: number;
  /** Seconds this run spent before the loop (vocabulary, features): they count in budget.minutes. */
  priorSeconds?: number;
  /** Identifies the tokenizer + model configuration; a checkpoint with another one is refused on resume. */
  fingerprint?: string;
  /**
   * Stops the run when aborted (SIGINT): checked between steps and during validation; a checkpoint
   * of the last finished step is written, then train() throws {@link TrainingInterrupted}.
   */
  signal?: AbortSignal;
  /**
   * Builds the task instead of the config's family (xling distill's student task; `xling train
   * --init`: an imported encoder trained further); called after seeding, before a resume loads the
   * checkpoint.
   */
  createTask?: (log: (line: string) => void) => TrainingTask;
}

/** A run stopped by its abort signal; `step`: the step its checkpoint holds (null: before training started). */
export class TrainingInterrupted extends Error {
  constructor(
    readonly step: number | null,
    readonly checkpointDir: string | null,
  ) {
    super(step === null ? 'interrupted before training started' : `interrupted at step ${step}`);
    this.name = 'TrainingInterrupted';
  }
}

/** Lets the event loop run (signal handlers, finalizers) when `everyMs` passed since the last time. */
export function yielder(everyMs = 100): () => Promise<void> {
  let last = performance.now();
  return async () => {
    if (performance.now() - last < everyMs) return;
    await pause();
    last = performance.now();
  };
}

export interface TrainLogEntry {
  step: number;
  pairs: number;
  loss: number;
  lr: number;
  /** Training seconds (preparation included, validation excluded). */
  seconds: number;
  xsim?: number;
}

interface Checkpoint {
  step: number;
  pairs: number;
  seconds: number;
  stream: unknown;
  lossEma: number | null;
  plateau?: { lr: number; best: number; bad: number };
  fingerprint?: string;
  task?: unknown;
}

export interface TrainResult {
  task: TrainingTask;
  log: TrainLogEntry[];
}

/** Whether `outDir` holds a checkpoint that `train({ resume: true })` continues (checkpoint.old: a kill between the two renames of a save). */
export function hasCheckpoint(outDir: string): boolean {
  return ['checkpoint', 'checkpoint.old'].some((d) => existsSync(join(outDir, d, 'state.json')));
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: to be split: the training loop with its checkpointing, validation and progress
export async function train(o: TrainOptions): Promise<TrainResult> {
  const { config: cfg, corpus, tokenizer: tok, outDir } = o;
  const log = o.log ?? ((l: string) => process.stderr.write(l + '\n'));
  mkdirSync(outDir, { recursive: true });
  const ckDir = join(outDir, 'checkpoint');
  const logFile = join(outDir, 'train-log.jsonl');
  if (o.resume) {
    // a kill -9 can leave half-written temporaries, and (between the two renames of saveCheckpoint)
    // the last whole checkpoint under checkpoint.old
    removeStaleTemporaries(outDir);
    if (!existsSync(join(ckDir, 'state.json')) && existsSync(join(`${ckDir}.old`, 'state.json'))) {
      rmSync(ckDir, { recursive: true, force: true });
      renameSync(`${ckDir}.old`, ckDir);
    }
  }
  if (o.resume && !hasCheckpoint(outDir)) throw new Error(`--resume: no checkpoint in ${ckDir}`);

  manualSeed(cfg.seed);
  const tTask = performance.now();
  const task = o.createTask ? o.createTask(log) : getFamily(cfg.model).createTask(cfg, tok, corpus, log);
  // the family's own preparation (e.g. the JMT word aligner) is part of the budget, like the vocabulary
  const taskSeconds = (performance.now() - tTask) / 1000;
  for (const line of task.describe?.() ?? []) log(line);
  const slots = task.optimizers?.() ?? defaultOptimizers(task, cfg);
  const clipped = slots.filter((s) => s.clip).flatMap((s) => s.params);
  const plateau = cfg.optim.schedule === 'plateau' ? new PlateauDecay(cfg.optim.lr) : null;

  let step = 0,
    pairs = 0,
    priorSeconds = (o.priorSeconds ?? 0) + taskSeconds,
    lossEma: number | null = null;
  let history: TrainLogEntry[] = [];
  if (o.resume) {
    const st = readJson<Checkpoint>(join(ckDir, 'state.json'));
    if (o.fingerprint && st.fingerprint && st.fingerprint !== o.fingerprint)
      throw new Error(
        `--resume: the checkpoint in ${ckDir} was made with another tokenizer or model configuration; resume with the configuration it was started with, or train without --resume`,
      );
    loadInto(join(ckDir, 'model.safetensors'), (t) => task.module.loadStateDict(t));
    for (const sl of slots)
      loadInto(join(ckDir, optimizerFile(sl.name)), (t, m) => sl.opt.loadStateDict({ tensors: t, meta: JSON.parse(m.meta ?? '{}') as Record<string, number> }));
    // task state is saved only when the task has some (e.g. mined hard negatives)
    if (task.loadCheckpointState && existsSync(join(ckDir, 'task.safetensors')))
      loadInto(join(ckDir, 'task.safetensors'), (t) => task.loadCheckpointState!({ tensors: t, meta: st.task }));
    ({ step, pairs, lossEma } = st);
    priorSeconds = st.seconds;
    task.streamState = st.stream;
    if (plateau && st.plateau) plateau.load(st.plateau);
    // The log keeps only entries up to the checkpoint (later ones were lost with the kill).
    history = existsSync(logFile)
      ? readFileSync(logFile, 'utf8')
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as TrainLogEntry)
          .filter((e) => e.step <= step)
      : [];
    writeFileSync(logFile, history.map((e) => JSON.stringify(e) + '\n').join(''));
    log(`resumed from step ${step} (${pairs} pairs)`);
  } else {
    writeFileSync(logFile, '');
  }

  const budgetPairs = cfg.budget.pairs || Infinity;
  const budgetSeconds = cfg.budget.minutes ? cfg.budget.minutes * 60 : Infinity; // 0 = unset
  const t0 = performance.now();
  let validationSeconds = 0;
  const elapsed = () => priorSeconds + (performance.now() - t0) / 1000 - validationSeconds;
  // (with a minutes budget the decaying schedules follow the clock, so a resumed run's rates differ slightly)
  const sched = lrSchedule(cfg.optim, () => Math.min(1, Math.max(pairs / budgetPairs, elapsed() / budgetSeconds)));
  let windowStart = performance.now(),
    windowPairs = 0,
    windowTokens = 0,
    stepsHere = 0;
  let lastCheckpoint = elapsed(),
    savedStep = step;

  const saveCheckpoint = () => {
    const tmp = tempPathFor(ckDir);
    mkdirSync(tmp, { recursive: true });
    saveTensors(join(tmp, 'model.safetensors'), task.module.stateDict());
    for (const sl of slots) {
      const os = sl.opt.stateDict();
      saveTensors(join(tmp, optimizerFile(sl.name)), os.tensors, { meta: JSON.stringify(os.meta) });
    }
    const ts = task.checkpointState?.();
    if (ts) saveTensors(join(tmp, 'task.safetensors'), ts.tensors);
    const st: Checkpoint = {
      step,
      pairs,
      seconds: elapsed(),
      stream: task.streamState,
      lossEma,
      plateau: plateau?.state(),
      fingerprint: o.fingerprint,
      task: ts?.meta,
    };
    writeJson(join(tmp, 'state.json'), st);
    rmSync(`${ckDir}.old`, { recursive: true, force: true });
    if (existsSync(ckDir)) renameSync(ckDir, `${ckDir}.old`);
    renameSync(tmp, ckDir);
    releaseTemp(tmp);
    rmSync(`${ckDir}.old`, { recursive: true, force: true });
    lastCheckpoint = elapsed();
    savedStep = step;
  };

  const interrupted = (): never => {
    if (savedStep !== step || !hasCheckpoint(outDir)) saveCheckpoint();
    writeLearningCurve(outDir, history);
    task.dispose?.();
    task.module.dispose();
    throw new TrainingInterrupted(step, ckDir);
  };
  const maybePause = yielder();
  task.module.train();
  while (pairs < budgetPairs && elapsed() < budgetSeconds) {
    // a simulated kill: stop without the final checkpoint
    if (o.stopAfterSteps !== undefined && stepsHere >= o.stopAfterSteps) return { task, log: history };
    await maybePause(); // a SIGINT handler runs here at the latest ~100 ms after the step it arrived in
    if (o.signal?.aborted) interrupted();
    const raw = task.nextBatch();
    const batch = task.truncate(raw, budgetPairs - pairs);
    const n = task.pairs(batch);
    if (!n && task.pairs(raw) > 0) break; // cut to nothing: the pair budget is spent (some batches count no pairs)
    step++;
    stepsHere++;
    await task.beforeStep?.(step);
    manualSeed(cfg.seed * 1000003 + step); // dropout masks depend on (seed, step) only: resumable
    const lr = plateau ? plateau.lr : sched(step);
    for (const sl of slots) sl.opt.lr = sl.baseLr * (lr / cfg.optim.lr);
    const stepping = task.stepsWith ? new Set(task.stepsWith(batch)) : null;
    const loss = tidy(() => {
      for (const sl of slots) sl.opt.zeroGrad();
      const l = task.loss(batch, step);
      l.backward();
      if (cfg.optim.clip > 0 && clipped.length) clipGradNorm(clipped, cfg.optim.clip);
      for (const sl of slots) if (!stepping || stepping.has(sl.name)) sl.opt.step();
      return l.item();
    });
    if (!Number.isFinite(loss)) throw new Error(`training diverged at step ${step} (loss ${loss}); lower optim.lr`);
    pairs += n;
    windowPairs += n;
    windowTokens += task.tokens(batch);
    lossEma = lossEma === null ? loss : 0.95 * lossEma + 0.05 * loss;
    const entry: TrainLogEntry = { step, pairs, loss, lr, seconds: elapsed() };
    if (cfg.validate.every > 0 && o.dev && step % cfg.validate.every === 0) {
      const v0 = performance.now();
      const x = await xsimOnDevAsync(new SentenceEncoderModel(task.encoder(), tok), o.dev, { signal: o.signal });
      task.module.train();
      validationSeconds += (performance.now() - v0) / 1000;
      windowStart += performance.now() - v0;
      if (x) {
        entry.xsim = x.average;
        if (plateau) plateau.observe(entry.xsim);
        log(`step ${step}: dev xsim ${entry.xsim.toFixed(2)}% after ${formatDuration(entry.seconds)} of training`);
      }
    }
    history.push(entry);
    appendFileSync(logFile, JSON.stringify(entry) + '\n');
    if (step % cfg.logEvery === 0) {
      const secs = (performance.now() - windowStart) / 1000;
      const rate = windowPairs / secs;
      const left = Math.min((budgetPairs - pairs) / rate, budgetSeconds - elapsed());
      log(
        `step ${step} pairs ${pairs}${Number.isFinite(budgetPairs) ? '/' + budgetPairs : ''} loss ${lossEma.toFixed(3)} lr ${lr.toExponential(2)} ${rate.toFixed(1)} pairs/s ${(windowTokens / secs).toFixed(0)} tok/s ETA ${formatDuration(Math.max(0, left))}`,
      );
      windowStart = performance.now();
      windowPairs = 0;
      windowTokens = 0;
    }
    if (step % cfg.checkpointEvery === 0 || (cfg.checkpointMinutes > 0 && elapsed() - lastCheckpoint >= cfg.checkpointMinutes * 60)) saveCheckpoint();
    if (step % 20 === 0) await pause(); // let finalizers run
  }
  if (savedStep !== step) saveCheckpoint();
  writeLearningCurve(outDir, history);
  return { task, log: history };
}

/**
 * The optimisers of a task that brings none: Adam for the dense parameters (clipped), SparseAdam
 * for the row-sparse ones (at optim.sparseLr).
 */
function defaultOptimizers(task: TrainingTask, cfg: TrainConfig): OptimizerSlot[] {
  const sparse = new Set(task.sparseParameters ?? []);
  const dense = task.module.parameters().filter((p) => !sparse.has(p));
  const slots: OptimizerSlot[] = [
    {
      name: 'dense',
      opt: new Adam(dense, { lr: cfg.optim.lr, betas: cfg.optim.betas, weightDecay: cfg.optim.weightDecay }),
      baseLr: cfg.optim.lr,
      params: dense,
      clip: true,
    },
  ];
  const sparseLr = cfg.optim.sparseLr || cfg.optim.lr;
  if (sparse.size)
    slots.push({
      name: 'sparse',
      opt: new SparseAdam([...sparse], { lr: sparseLr, betas: cfg.optim.betas }),
      baseLr: sparseLr,
      params: [...sparse],
      clip: false,
    });
  return slots;
}

/** Checkpoint file of an optimiser (the names of checkpoints made before tasks could bring their own). */
function optimizerFile(name: string): string {
  return name === 'dense' ? 'optimizer.safetensors' : name === 'sparse' ? 'sparse-optimizer.safetensors' : `optimizer-${name}.safetensors`;
}

/**
 * The learning rate at a step: linear warmup over `warmup` steps, then constant, inverse square
 * root, or a linear / cosine decay to minLr as the budget runs out (progress in [0, 1]).
 */
export function lrSchedule(o: TrainConfig['optim'], progress: () => number): (step: number) => number {
  if (o.schedule === 'invsqrt') return warmupInvSqrt(o.lr, o.warmup);
  return (step) => {
    if (o.warmup > 0 && step < o.warmup) return (o.lr * step) / o.warmup;
    if (o.schedule === 'linear') return o.minLr + (o.lr - o.minLr) * (1 - progress());
    if (o.schedule === 'cosine') return o.minLr + (o.lr - o.minLr) * 0.5 * (1 + Math.cos(Math.PI * progress()));
    if (o.schedule === 'step') return o.lr * o.decay ** Math.floor(step / o.decayEvery);
    return o.lr;
  };
}

/** Loads a safetensors file, hands its tensors to fn, frees them. */
function loadInto(file: string, fn: (t: Map<string, Tensor>, meta: Record<string, string>) => void): void {
  const { tensors, metadata } = loadTensors(file);
  try {
    fn(tensors, metadata);
  } finally {
    for (const t of tensors.values()) t.dispose();
  }
}

export function writeLearningCurve(outDir: string, history: TrainLogEntry[]): void {
  if (!history.length) return;
  const ema: [number, number][] = [];
  let e: number | null = null;
  for (const h of history) {
    e = e === null ? h.loss : 0.95 * e + 0.05 * h.loss;
    ema.push([h.pairs, e]);
  }
  const series = [{ name: 'training loss (EMA)', points: ema }];
  const xs = history.filter((h) => h.xsim !== undefined);
  writeFileSync(join(outDir, 'loss.svg'), lineChart({ series, title: 'Training loss', xLabel: 'training pairs', yLabel: 'loss' }));
  if (xs.length) {
    writeFileSync(
      join(outDir, 'xsim.svg'),
      lineChart({
        series: [{ name: 'dev xsim error %', points: xs.map((h) => [h.pairs, h.xsim!]) }],
        title: 'Dev similarity-search error',
        xLabel: 'training pairs',
        yLabel: 'error %',
      }),
    );
    writeFileSync(
      join(outDir, 'xsim-minutes.svg'),
      lineChart({
        series: [{ name: 'dev xsim error %', points: xs.map((h) => [h.seconds / 60, h.xsim!]) }],
        title: 'Dev similarity-search error',
        xLabel: 'training minutes',
        yLabel: 'error %',
      }),
    );
  }
}

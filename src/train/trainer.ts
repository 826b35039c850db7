// The training loop, one readable loop for every model family: the family's task gives
// batches and the loss; this loop owns the optimisers, the schedule, the budget, clipping,
// checkpoints (weights + optimiser + data position + log, resumable after a kill -9 losing at
// most one interval), validation, logging and the learning curves. Deterministic given the seed
// (dropout is re-seeded from (seed, step)).
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EncodedCorpus } from '../train-data/examples.js';
import { SentenceEncoderModel } from '../embed/model.js';
import { OptimizerSlot, TrainConfig, TrainingTask } from '../models/family.js';
import { createTask } from '../models/registry.js';
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

export async function train(o: TrainOptions): Promise<TrainResult> {
  const { config: cfg, corpus, tokenizer: tok, outDir } = o;
  const log = o.log ?? ((l: string) => process.stderr.write(l + '\n'));
  mkdirSync(outDir, { recursive: true });
  const ckDir = join(outDir, 'checkpoint');
  const logFile = join(outDir, 'train-log.jsonl');
  if (o.resume) recoverCheckpointDir(outDir, ckDir);

  manualSeed(cfg.seed);
  const tTask = performance.now();
  const task = o.createTask ? o.createTask(log) : await createTask(cfg, tok, corpus, log);
  // the family's own preparation (e.g. the JMT word aligner) is part of the budget, like the vocabulary
  const taskSeconds = (performance.now() - tTask) / 1000;
  for (const line of task.describe?.() ?? []) log(line);
  const slots = task.optimizers?.() ?? defaultOptimizers(task, cfg);
  const plateau = cfg.optim.schedule === 'plateau' ? new PlateauDecay(cfg.optim.lr) : null;
  const parts: RunParts = { task, slots, plateau };

  let start: Position;
  if (o.resume) {
    start = restoreCheckpoint(ckDir, logFile, parts, o.fingerprint);
    log(`resumed from step ${start.step} (${start.pairs} pairs)`);
  } else {
    start = { step: 0, pairs: 0, lossEma: null, seconds: (o.priorSeconds ?? 0) + taskSeconds, history: [] };
    writeFileSync(logFile, '');
  }
  return new TrainingRun(o, log, parts, start, ckDir, logFile).run();
}

/**
 * Makes outDir/checkpoint the last whole checkpoint before a resume: a kill -9 can leave
 * half-written temporaries, and (between the two renames of a save) the last whole checkpoint
 * under checkpoint.old. An error when there is none.
 */
function recoverCheckpointDir(outDir: string, ckDir: string): void {
  removeStaleTemporaries(outDir);
  if (!existsSync(join(ckDir, 'state.json')) && existsSync(join(`${ckDir}.old`, 'state.json'))) {
    rmSync(ckDir, { recursive: true, force: true });
    renameSync(`${ckDir}.old`, ckDir);
  }
  if (!hasCheckpoint(outDir)) throw new Error(`--resume: no checkpoint in ${ckDir}`);
}

/** What the loop trains: the task, its optimisers and the plateau schedule (null: another schedule). */
interface RunParts {
  task: TrainingTask;
  slots: OptimizerSlot[];
  plateau: PlateauDecay | null;
}

/** Where a run starts: step, pairs, loss average, training seconds so far and the log up to there. */
interface Position {
  step: number;
  pairs: number;
  lossEma: number | null;
  seconds: number;
  history: TrainLogEntry[];
}

/**
 * Loads the checkpoint in ckDir into the model, the optimisers, the task and the plateau schedule,
 * and cuts the log file back to the checkpoint's step; refuses one made with another fingerprint.
 */
function restoreCheckpoint(ckDir: string, logFile: string, { task, slots, plateau }: RunParts, fingerprint: string | undefined): Position {
  const st = readJson<Checkpoint>(join(ckDir, 'state.json'));
  if (fingerprint && st.fingerprint && st.fingerprint !== fingerprint)
    throw new Error(
      `--resume: the checkpoint in ${ckDir} was made with another tokenizer or model configuration; resume with the configuration it was started with, or train without --resume`,
    );
  loadInto(join(ckDir, 'model.safetensors'), (t) => task.module.loadStateDict(t));
  for (const sl of slots)
    loadInto(join(ckDir, optimizerFile(sl.name)), (t, m) => sl.opt.loadStateDict({ tensors: t, meta: JSON.parse(m.meta ?? '{}') as Record<string, number> }));
  // task state is saved only when the task has some (e.g. mined hard negatives)
  if (task.loadCheckpointState && existsSync(join(ckDir, 'task.safetensors')))
    loadInto(join(ckDir, 'task.safetensors'), (t) => task.loadCheckpointState!({ tensors: t, meta: st.task }));
  const { step, pairs, lossEma } = st;
  task.streamState = st.stream;
  if (plateau && st.plateau) plateau.load(st.plateau);
  // The log keeps only entries up to the checkpoint (later ones were lost with the kill).
  const history = existsSync(logFile)
    ? readFileSync(logFile, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as TrainLogEntry)
        .filter((e) => e.step <= step)
    : [];
  writeFileSync(logFile, history.map((e) => JSON.stringify(e) + '\n').join(''));
  return { step, pairs, lossEma, seconds: st.seconds, history };
}

/** One process's share of a run: the loop from a start position to the budget, an abort or a simulated kill. */
class TrainingRun {
  private readonly cfg: TrainConfig;
  private readonly task: TrainingTask;
  private readonly slots: OptimizerSlot[];
  private readonly clipped: Tensor[];
  private readonly plateau: PlateauDecay | null;
  private step: number;
  private pairs: number;
  private lossEma: number | null;
  private readonly history: TrainLogEntry[];
  private readonly priorSeconds: number;
  private readonly budgetPairs: number;
  private readonly budgetSeconds: number;
  private readonly t0: number;
  private validationSeconds = 0;
  private readonly sched: (step: number) => number;
  // the throughput window of the progress line
  private windowStart: number;
  private windowPairs = 0;
  private windowTokens = 0;
  private stepsHere = 0;
  private lastCheckpoint: number;
  private savedStep: number;

  constructor(
    private readonly o: TrainOptions,
    private readonly log: (line: string) => void,
    parts: RunParts,
    start: Position,
    private readonly ckDir: string,
    private readonly logFile: string,
  ) {
    const cfg = o.config;
    this.cfg = cfg;
    this.task = parts.task;
    this.slots = parts.slots;
    this.plateau = parts.plateau;
    this.clipped = parts.slots.filter((s) => s.clip).flatMap((s) => s.params);
    this.step = start.step;
    this.pairs = start.pairs;
    this.lossEma = start.lossEma;
    this.history = start.history;
    this.priorSeconds = start.seconds;
    this.budgetPairs = cfg.budget.pairs || Infinity;
    this.budgetSeconds = cfg.budget.minutes ? cfg.budget.minutes * 60 : Infinity; // 0 = unset
    this.t0 = performance.now();
    // (with a minutes budget the decaying schedules follow the clock, so a resumed run's rates differ slightly)
    this.sched = lrSchedule(cfg.optim, () => Math.min(1, Math.max(this.pairs / this.budgetPairs, this.elapsed() / this.budgetSeconds)));
    this.windowStart = performance.now();
    this.lastCheckpoint = this.elapsed();
    this.savedStep = this.step;
  }

  /** Training seconds (preparation and earlier processes included, validation excluded). */
  private elapsed(): number {
    return this.priorSeconds + (performance.now() - this.t0) / 1000 - this.validationSeconds;
  }

  async run(): Promise<TrainResult> {
    const { o, cfg, task } = this;
    const maybePause = yielder();
    task.module.train();
    while (this.pairs < this.budgetPairs && this.elapsed() < this.budgetSeconds) {
      // a simulated kill: stop without the final checkpoint
      if (o.stopAfterSteps !== undefined && this.stepsHere >= o.stopAfterSteps) return { task, log: this.history };
      await maybePause(); // a SIGINT handler runs here at the latest ~100 ms after the step it arrived in
      if (o.signal?.aborted) this.interrupted();
      const raw = task.nextBatch();
      const batch = task.truncate(raw, this.budgetPairs - this.pairs);
      const n = task.pairs(batch);
      if (!n && task.pairs(raw) > 0) break; // cut to nothing: the pair budget is spent (some batches count no pairs)
      const entry = await this.trainStep(batch, n);
      await this.validate(entry);
      this.history.push(entry);
      appendFileSync(this.logFile, JSON.stringify(entry) + '\n');
      if (this.step % cfg.logEvery === 0) this.logProgress(entry.lr);
      if (this.step % cfg.checkpointEvery === 0 || (cfg.checkpointMinutes > 0 && this.elapsed() - this.lastCheckpoint >= cfg.checkpointMinutes * 60))
        this.saveCheckpoint();
      if (this.step % 20 === 0) await pause(); // let finalizers run
    }
    if (this.savedStep !== this.step) this.saveCheckpoint();
    writeLearningCurve(o.outDir, this.history);
    return { task, log: this.history };
  }

  /** One optimisation step on a batch of n pairs; its log entry (without validation). */
  private async trainStep(batch: unknown, n: number): Promise<TrainLogEntry> {
    const { cfg, task, slots, plateau } = this;
    const step = ++this.step;
    this.stepsHere++;
    await task.beforeStep?.(step);
    manualSeed(cfg.seed * 1000003 + step); // dropout masks depend on (seed, step) only: resumable
    const lr = plateau ? plateau.lr : this.sched(step);
    for (const sl of slots) sl.opt.lr = sl.baseLr * (lr / cfg.optim.lr);
    const stepping = task.stepsWith ? new Set(task.stepsWith(batch)) : null;
    const loss = tidy(() => {
      for (const sl of slots) sl.opt.zeroGrad();
      const l = task.loss(batch, step);
      l.backward();
      if (cfg.optim.clip > 0 && this.clipped.length) clipGradNorm(this.clipped, cfg.optim.clip);
      for (const sl of slots) if (!stepping || stepping.has(sl.name)) sl.opt.step();
      return l.item();
    });
    if (!Number.isFinite(loss)) throw new Error(`training diverged at step ${step} (loss ${loss}); lower optim.lr`);
    this.pairs += n;
    this.windowPairs += n;
    this.windowTokens += task.tokens(batch);
    this.lossEma = this.lossEma === null ? loss : 0.95 * this.lossEma + 0.05 * loss;
    return { step, pairs: this.pairs, loss, lr, seconds: this.elapsed() };
  }

  /** Dev xsim into the entry (and the plateau schedule) when validation is due; its time is not training time. */
  private async validate(entry: TrainLogEntry): Promise<void> {
    const { o, cfg, task } = this;
    if (!(cfg.validate.every > 0 && o.dev && this.step % cfg.validate.every === 0)) return;
    const v0 = performance.now();
    const x = await xsimOnDevAsync(new SentenceEncoderModel(task.encoder(), o.tokenizer), o.dev, { signal: o.signal });
    task.module.train();
    this.validationSeconds += (performance.now() - v0) / 1000;
    this.windowStart += performance.now() - v0;
    if (x) {
      entry.xsim = x.average;
      if (this.plateau) this.plateau.observe(entry.xsim);
      this.log(`step ${this.step}: dev xsim ${entry.xsim.toFixed(2)}% after ${formatDuration(entry.seconds)} of training`);
    }
  }

  /** The progress line: pairs, loss average, rate and time left since the last one. */
  private logProgress(lr: number): void {
    const { budgetPairs, pairs } = this;
    const secs = (performance.now() - this.windowStart) / 1000;
    const rate = this.windowPairs / secs;
    const left = Math.min((budgetPairs - pairs) / rate, this.budgetSeconds - this.elapsed());
    this.log(
      `step ${this.step} pairs ${pairs}${Number.isFinite(budgetPairs) ? '/' + budgetPairs : ''} loss ${this.lossEma!.toFixed(3)} lr ${lr.toExponential(2)} ${rate.toFixed(1)} pairs/s ${(this.windowTokens / secs).toFixed(0)} tok/s ETA ${formatDuration(Math.max(0, left))}`,
    );
    this.windowStart = performance.now();
    this.windowPairs = 0;
    this.windowTokens = 0;
  }

  /** Writes the checkpoint of the current step: built under a temporary name, then swapped in by two renames. */
  private saveCheckpoint(): void {
    const { task, ckDir } = this;
    const tmp = tempPathFor(ckDir);
    mkdirSync(tmp, { recursive: true });
    saveTensors(join(tmp, 'model.safetensors'), task.module.stateDict());
    for (const sl of this.slots) {
      const os = sl.opt.stateDict();
      saveTensors(join(tmp, optimizerFile(sl.name)), os.tensors, { meta: JSON.stringify(os.meta) });
    }
    const ts = task.checkpointState?.();
    if (ts) saveTensors(join(tmp, 'task.safetensors'), ts.tensors);
    const st: Checkpoint = {
      step: this.step,
      pairs: this.pairs,
      seconds: this.elapsed(),
      stream: task.streamState,
      lossEma: this.lossEma,
      plateau: this.plateau?.state(),
      fingerprint: this.o.fingerprint,
      task: ts?.meta,
    };
    writeJson(join(tmp, 'state.json'), st);
    rmSync(`${ckDir}.old`, { recursive: true, force: true });
    if (existsSync(ckDir)) renameSync(ckDir, `${ckDir}.old`);
    renameSync(tmp, ckDir);
    releaseTemp(tmp);
    rmSync(`${ckDir}.old`, { recursive: true, force: true });
    this.lastCheckpoint = this.elapsed();
    this.savedStep = this.step;
  }

  /** The abort: a checkpoint of the last finished step (unless saved), the curves, the task freed, then TrainingInterrupted. */
  private interrupted(): never {
    if (this.savedStep !== this.step || !hasCheckpoint(this.o.outDir)) this.saveCheckpoint();
    writeLearningCurve(this.o.outDir, this.history);
    this.task.dispose?.();
    this.task.module.dispose();
    throw new TrainingInterrupted(this.step, this.ckDir);
  }
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

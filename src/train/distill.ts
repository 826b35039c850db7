// xling distill: a small bag-of-n-grams student trained to reproduce any teacher's sentence vectors
// (multilingual knowledge distillation, Reimers & Gurevych 2020): mean squared error between the
// student's and the teacher's (L2-normalised) vectors on monolingual sentences, and — from a
// parallel TSV — the student's vector of each translation regressed onto the teacher's vector of
// the pivot (English) sentence, so that the student inherits the teacher's cross-lingual alignment.
// The teacher's vectors are computed once into OUT.partial/teacher/vectors.npy (float16, resumable
// chunk by chunk); training is the generic trainer (budget, checkpoints, resume, SIGINT); the
// student is an ordinary `dual` model directory (per-language means, language identifier).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fitLanguageMeans } from '../embed/centering.js';
import { trainModelIdentifier } from '../embed/language.js';
import { SentenceEncoderModel } from '../embed/model.js';
import { checkReplaceable, isModelDir, loadSentenceEncoder, readModelConfig, replaceDir, writeModelFiles } from '../embed/model-dir.js';
import { float16ToFloat32, float32ToFloat16 } from '../io/half.js';
import { parseLangFile, readLines } from '../io/input.js';
import { UsageError } from '../util/args.js';
import { withOutputLock } from '../util/lock.js';
import { NpyRowWriter, readNpy, readNpyHeader } from '../io/npy.js';
import { DualSentenceEncoder, dualConfigOf, DualTrainConfig } from '../models/dual/family.js';
import { DualConfig, DualEncoder } from '../models/dual/model.js';
import { SavedModelConfig, TrainConfig, TrainingTask } from '../models/family.js';
import { getFamily } from '../models/registry.js';
import { Module } from '../nn/module.js';
import { readJson, writeJson } from '../nn/serialize.js';
import { mseLoss, normalize } from '../tensor/ops.js';
import { fromArray, Tensor, tidy } from '../tensor/tensor.js';
import { tokenizerSpecOf } from '../text/spec.js';
import { TextTokenizer } from '../text/text-tokenizer.js';
import { Progress } from '../util/progress.js';
import { Rng } from '../util/rng.js';
import { keptCheckpointDir } from './pipeline.js';
import { devSetOf, loadTable, NWayTable } from './prepare.js';
import { hasCheckpoint, train, TrainingInterrupted, TrainLogEntry } from './trainer.js';
import { xsimOnDevAsync, XsimResult } from './validate.js';
import { pause } from '../util/pause.js';

/** One input of --data: a text file (one sentence a line) of a language (or of none: null), or an N-way TSV. */
export interface DistillInput {
  lang: string | null;
  path: string;
}

/** The inputs of --data, [LANG=]FILE each; a bad language code is a usage error (naming the argument). */
export function distillInputs(args: readonly string[]): DistillInput[] {
  return args.map((d) => {
    let p: { lang?: string; file: string };
    try {
      p = parseLangFile(d, '--data');
    } catch (e) {
      throw new UsageError(`${(e as Error).message} (give FILE or LANG=FILE)`);
    }
    return { lang: p.lang ?? null, path: p.file };
  });
}

export interface DistillOptions {
  /** The teacher's model directory (any kind xling loads). */
  teacher: string;
  /** The student's training configuration (parsed; a `dual` model with vocab.type 'none'). */
  config: TrainConfig;
  /** Monolingual sentences: text files ([LANG=]FILE) and N-way TSVs (every cell a sentence of its column's language). */
  data: DistillInput[];
  /** N-way parallel TSV: every other cell of a row regressed onto the teacher's vector of its pivot cell. */
  parallel?: string;
  /** The pivot column of --parallel (default 'en'). */
  pivot?: string;
  /** Dev TSV: the teacher's and the student's similarity-search error at the end. */
  dev?: string;
  out: string;
  /** Sentences held out of training to measure the student–teacher distance (default: 5%, at most 1000). */
  heldOut?: number;
  /** Teacher sentences embedded per chunk of the cache (each chunk is durable: a kill loses at most one). */
  teacherChunk?: number;
  resume?: boolean | 'or-start';
  force?: boolean;
  quiet?: boolean;
  log?: (line: string) => void;
  signal?: AbortSignal;
  /** Tests: stop the training loop after this many steps without finishing (a simulated kill). */
  stopAfterSteps?: number;
}

/** Student–teacher agreement on held-out sentences: mean squared error per dimension and mean cosine. */
export interface Agreement {
  mse: number;
  cosine: number;
  sentences: number;
}

export interface DistillResult {
  dir: string;
  log: TrainLogEntry[];
  teacherSentences: number;
  examples: number;
  /** On held-out sentences: the untrained student's agreement with the teacher, and the trained one's. */
  heldOut: { before: Agreement; after: Agreement } | null;
  dev?: { teacher: XsimResult; teacherCentered: XsimResult | null; student: XsimResult; studentCentered: XsimResult | null };
}

/** A text example: the student reads `text`; its target is teacher vector `target`. */
interface Example {
  text: number;
  target: number;
}

/** The student module saved as model.safetensors (the encoder under `encoder.`, as `xling train`'s dual models). */
class StudentModel extends Module {
  readonly encoder: DualEncoder;
  constructor(cfg: DualConfig) {
    super();
    this.encoder = this.module('encoder', new DualEncoder(cfg));
  }
}

/** The student's training task: batches of examples in a seeded order per epoch; MSE to the teacher's vectors. */
export class DistillTask implements TrainingTask<Int32Array> {
  readonly module: StudentModel;
  readonly modelConfig: DualConfig;
  readonly sparseParameters: Tensor[];
  private state = { epoch: 0, pos: 0 };
  private order: Int32Array;

  constructor(
    private readonly cfg: TrainConfig,
    tok: TextTokenizer,
    private readonly seqs: Int32Array[],
    private readonly examples: Example[],
    private readonly targets: Uint16Array,
    readonly dim: number,
  ) {
    this.modelConfig = dualConfigOf(cfg, tok);
    this.module = new StudentModel(this.modelConfig);
    this.sparseParameters = [this.module.encoder.embed.weight];
    this.order = this.permutation(0);
  }

  private permutation(epoch: number): Int32Array {
    const idx = Array.from({ length: this.examples.length }, (_, i) => i);
    new Rng(`${this.cfg.seed}:distill:${epoch}`).shuffle(idx);
    return Int32Array.from(idx);
  }

  get streamState(): unknown {
    return { ...this.state };
  }
  set streamState(s: unknown) {
    const st = s as { epoch: number; pos: number };
    this.state = { epoch: st.epoch, pos: st.pos };
    this.order = this.permutation(st.epoch);
  }

  nextBatch(): Int32Array {
    if (this.state.pos >= this.order.length) {
      this.state = { epoch: this.state.epoch + 1, pos: 0 };
      this.order = this.permutation(this.state.epoch);
    }
    const b = this.order.slice(this.state.pos, this.state.pos + this.cfg.batch.size);
    this.state.pos += b.length;
    return b;
  }
  pairs(b: Int32Array): number {
    return b.length;
  }
  tokens(b: Int32Array): number {
    let n = 0;
    for (const i of b) n += this.seqs[this.examples[i]!.text]!.length;
    return n;
  }
  truncate(b: Int32Array, n: number): Int32Array {
    return b.length > n ? b.slice(0, Math.max(0, n)) : b;
  }
  encoder(): DualSentenceEncoder {
    return new DualSentenceEncoder(this.module.encoder);
  }

  /** The teacher vectors of these targets as float32 rows. */
  teacherRows(targets: ArrayLike<number>): Float32Array {
    const d = this.dim,
      out = new Float32Array(targets.length * d);
    for (let i = 0; i < targets.length; i++) float16ToFloat32(this.targets.subarray(targets[i]! * d, (targets[i]! + 1) * d), out.subarray(i * d, (i + 1) * d));
    return out;
  }

  loss(b: Int32Array): Tensor {
    const ex = Array.from(b, (i) => this.examples[i]!);
    const t = this.teacherRows(ex.map((e) => e.target));
    return tidy(() => {
      const s = normalize(this.module.encoder.forward(ex.map((e) => this.seqs[e.text]!)), 1);
      // the mean over rows of the squared distance (sum over dimensions): 2 − 2·cos for unit vectors
      return mseLoss(s, fromArray(t, [ex.length, this.dim])).mul(this.dim);
    });
  }

  describe(): string[] {
    const c = this.modelConfig;
    const h = (this.cfg as DualTrainConfig).features.hashes;
    return [
      `student: a bag of hashed ${c.ngrams[0]}–${c.ngrams[1]}-grams${h > 1 ? ` (${h} hashes each)` : ''}, ${c.buckets} buckets × ${c.dim} → ${c.outDim}; ${this.module.numParameters()} parameters; ${this.examples.length} examples (MSE to the teacher's vectors)`,
    ];
  }

  /** Agreement of the current student with the teacher on examples (eval mode, no gradients). */
  agreement(examples: Example[]): Agreement {
    if (!examples.length) return { mse: NaN, cosine: NaN, sentences: 0 };
    const enc = this.encoder(),
      d = this.dim;
    let se = 0,
      cos = 0;
    for (let i = 0; i < examples.length; i += 2048) {
      const part = examples.slice(i, i + 2048);
      const s = enc.encode(
        part.map((e) => this.seqs[e.text]!),
        { normalize: true },
      );
      const t = this.teacherRows(part.map((e) => e.target));
      for (let k = 0; k < s.length; k++) {
        const diff = s[k]! - t[k]!;
        se += diff * diff;
        cos += s[k]! * t[k]!;
      }
    }
    return { mse: se / (examples.length * d), cosine: cos / examples.length, sentences: examples.length };
  }
}

/** The texts and examples of a distillation run, and the sentences of each language (for the means and the identifier). */
interface Material {
  texts: string[];
  examples: Example[];
  heldOut: Example[];
  targetText: number[];
  byLang: Map<string, string[]>;
}

async function readMaterial(o: DistillOptions, pivot: string, signal?: AbortSignal): Promise<Material> {
  const texts: string[] = [],
    index = new Map<string, number>();
  const id = (s: string) => {
    let i = index.get(s);
    if (i === undefined) {
      i = texts.length;
      texts.push(s);
      index.set(s, i);
    }
    return i;
  };
  const targetOf = new Map<number, number>(),
    targetText: number[] = [];
  const target = (t: number) => {
    let i = targetOf.get(t);
    if (i === undefined) {
      i = targetText.length;
      targetText.push(t);
      targetOf.set(t, i);
    }
    return i;
  };
  const byLang = new Map<string, string[]>();
  const addLang = (l: string | null, s: string) => {
    if (!l) return;
    let a = byLang.get(l);
    if (!a) byLang.set(l, (a = []));
    a.push(s);
  };
  const mono: Example[] = [],
    par: Example[] = [];
  const seen = new Set<string>();
  const addMono = (l: string | null, s: string) => {
    if (!s.trim()) return;
    const t = id(s);
    addLang(l, s);
    const key = `${t}:${t}`;
    if (seen.has(key)) return;
    seen.add(key);
    mono.push({ text: t, target: t });
  };
  const aborted = () => {
    if (signal?.aborted) throw new TrainingInterrupted(null, null);
  };
  for (const inp of o.data) {
    if (isTsv(inp.path) && !inp.lang) {
      const t = await loadTable(inp.path, { signal });
      for (const r of t.rows) for (const [l, s] of r) addMono(l, s);
    } else {
      for await (const { line } of readLines(inp.path)) addMono(inp.lang, line);
    }
    aborted();
  }
  if (o.parallel) {
    const t: NWayTable = await loadTable(o.parallel, { signal });
    if (!t.langs.includes(pivot)) throw new Error(`--parallel: ${o.parallel} has no '${pivot}' column (the pivot, --pivot; columns: ${t.langs.join(' ')})`);
    for (const r of t.rows) {
      const p = r.get(pivot);
      if (!p?.trim()) continue;
      const pt = id(p);
      addLang(pivot, p);
      for (const [l, s] of r) {
        if (!s.trim()) continue;
        const st = id(s);
        if (l !== pivot) addLang(l, s);
        const key = `${st}:${pt}`;
        if (seen.has(key)) continue;
        seen.add(key);
        par.push({ text: st, target: pt });
      }
    }
    aborted();
  }
  const all = [...mono, ...par];
  if (!all.length) throw new Error(`--data${o.parallel ? '/--parallel' : ''}: no sentences to distil on`);
  // held out: whole teacher targets (every example of a drawn target), never trained on
  const byTarget = [...new Set(all.map((e) => e.target))];
  const nHeld = Math.min(o.heldOut ?? Math.min(1000, Math.floor(byTarget.length * 0.05)), Math.floor(byTarget.length / 2));
  const held = new Set(new Rng(`${o.config.seed}:held-out`).sample(byTarget.length, nHeld).map((i) => byTarget[i]!));
  const examples: Example[] = [],
    heldOut: Example[] = [];
  for (const e of all) (held.has(e.target) ? heldOut : examples).push({ text: e.text, target: target(e.target) });
  return { texts, examples, heldOut, targetText, byLang };
}

function isTsv(path: string): boolean {
  return /\.tsv(\.gz)?$/i.test(path);
}

/** Identifies the teacher and the texts its vectors are of: a cache made for other ones is recomputed. */
function teacherFingerprint(teacher: string, texts: string[], targetText: number[]): string {
  const h = createHash('sha256');
  h.update(readFileSync(join(teacher, 'config.json')));
  const st = statSync(join(teacher, 'model.safetensors'));
  h.update(`\0${st.size}\0${st.mtimeMs}\0`);
  for (const t of targetText) h.update(texts[t]!).update('\0');
  return h.digest('hex').slice(0, 16);
}

/**
 * The teacher's normalised, uncentred vectors of the target sentences: OUT.partial/teacher/vectors.npy
 * (float16 [n, dim]), filled chunk by chunk; teacher/state.json records how many rows are done.
 */
async function teacherVectors(
  teacher: SentenceEncoderModel,
  teacherDir: string,
  work: string,
  texts: string[],
  targetText: number[],
  o: DistillOptions,
  log: (l: string) => void,
): Promise<Uint16Array> {
  const dir = join(work, 'teacher'),
    file = join(dir, 'vectors.npy'),
    stateFile = join(dir, 'state.json');
  const n = targetText.length,
    d = teacher.dim;
  const fp = teacherFingerprint(teacherDir, texts, targetText);
  let done = 0;
  if (existsSync(stateFile) && existsSync(file)) {
    const st = readJson<{ fingerprint: string; done: number; rows: number; dim: number }>(stateFile);
    const h = readNpyHeader(file);
    if (st.fingerprint === fp && st.rows === n && st.dim === d && h.shape[0] === n && h.shape[1] === d && h.dtype === 'float16') done = st.done;
    else log('the cached teacher vectors are of another teacher or other sentences: computing them again');
  }
  if (done === 0) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    NpyRowWriter.create(file, n, d, 'float16');
    writeJson(stateFile, { fingerprint: fp, done: 0, rows: n, dim: d });
  } else if (done < n) log(`teacher vectors: continuing from ${done} of ${n}`);
  if (done < n) {
    const chunk = o.teacherChunk ?? 2048;
    const prog = new Progress({ label: 'teacher vectors', unit: 'sents', total: n, silent: o.quiet });
    prog.tick(done);
    try {
      while (done < n) {
        await pause();
        if (o.signal?.aborted) throw new TrainingInterrupted(null, null);
        const part = targetText.slice(done, done + chunk).map((t) => texts[t]!);
        const v = teacher.embed(part, { center: false });
        const w = NpyRowWriter.open(file);
        try {
          w.write(done, float32ToFloat16(v));
        } finally {
          w.close();
        }
        // durable (closed: fsync) before it is recorded: a kill never records rows that were not written
        done += part.length;
        writeJson(stateFile, { fingerprint: fp, done, rows: n, dim: d });
        prog.tick(part.length);
      }
    } finally {
      prog.done();
    }
  }
  return readNpy(file).data as Uint16Array;
}

/** Distils the teacher into a new student model directory at o.out (built in OUT.partial, swapped in at the end; OUT.lock held meanwhile). */
export async function distillModel(o: DistillOptions): Promise<DistillResult> {
  return withOutputLock(o.out, '--out', () => distillLocked(o));
}

/** The checks of distillModel's options before any expensive work: the teacher's config, the work directory and whether the run resumes. */
function checkDistill(o: DistillOptions, cfg: DualTrainConfig): { teacherCfg: SavedModelConfig; work: string; resume: boolean } {
  if (cfg.model !== 'dual' || cfg.vocab.type !== 'none')
    throw new Error(
      `--student-config: the student is a bag-of-n-grams dual encoder ("model": "dual" with "vocab": { "type": "none" }); got model '${cfg.model}'${cfg.model === 'dual' ? ` with vocab.type '${cfg.vocab.type}'` : ''}`,
    );
  if (!isModelDir(o.teacher)) throw new Error(`--teacher: ${o.teacher} is not an xling model directory (no config.json of a model)`);
  const teacherCfg = readModelConfig(o.teacher);
  for (const inp of o.data) if (!existsSync(inp.path)) throw new Error(`--data: no such file ${inp.path}`);
  if (o.parallel && !existsSync(o.parallel)) throw new Error(`--parallel: no such file ${o.parallel}`);
  if (o.dev && !existsSync(o.dev)) throw new Error(`--dev: no such file ${o.dev}`);
  if (!o.data.length && !o.parallel) throw new Error('--data: give monolingual text (or --parallel TSV)');
  if (resolve(o.out) === resolve(o.teacher)) throw new Error(`--out: ${o.out} is the teacher; choose a new directory for the student`);
  checkReplaceable(o.out, '--out');
  const work = `${o.out}.partial`;
  const resume = o.resume ? hasCheckpoint(work) : false;
  if (o.resume === true && !resume && !existsSync(join(work, 'teacher', 'state.json')))
    throw new Error(`--resume: no checkpoint or teacher vectors in ${work} (distil without --resume to start, or use --resume-or-start)`);
  if (!resume && isModelDir(o.out) && !o.force) throw new Error(`--out: ${o.out} already holds a model; give --force to replace it`);
  return { teacherCfg, work, resume };
}

/** The training material and the dev table (an interruption while reading them: TrainingInterrupted). */
async function readDistillData(o: DistillOptions, log: (l: string) => void): Promise<{ mat: Material; devTable: NWayTable | null }> {
  try {
    const mat = await readMaterial(o, o.pivot ?? 'en', o.signal);
    return { mat, devTable: o.dev ? await loadTable(o.dev, { signal: o.signal }) : null };
  } catch (e) {
    if (e instanceof TrainingInterrupted || o.signal?.aborted) {
      log('interrupted while reading the data');
      throw new TrainingInterrupted(null, null);
    }
    throw e;
  }
}

/** The teacher's and the student's dev similarity-search errors, raw and centred. */
async function devComparison(
  teacher: SentenceEncoderModel,
  student: SentenceEncoderModel,
  devTable: NWayTable,
  cfg: DualTrainConfig,
  o: DistillOptions,
  log: (l: string) => void,
): Promise<DistillResult['dev']> {
  const ds = devSetOf(devTable, cfg.validate.langs, 1, cfg.validate.maxRows);
  const tx = await xsimOnDevAsync(teacher, ds, { center: false, signal: o.signal });
  const tc = teacher.centers.size ? await xsimOnDevAsync(teacher, ds, { center: 'force', signal: o.signal }) : null;
  const sx = await xsimOnDevAsync(student, ds, { center: false, signal: o.signal });
  const sc = student.centers.size ? await xsimOnDevAsync(student, ds, { center: 'force', signal: o.signal }) : null;
  if (!tx || !sx) return undefined;
  log(
    `dev similarity-search error (avg X→en, en→X over ${Object.keys(sx.langs).length} languages): teacher ${tx.average.toFixed(2)}%${tc ? ` (${tc.average.toFixed(2)}% centred)` : ''}, student ${sx.average.toFixed(2)}%${sc ? ` (${sc.average.toFixed(2)}% with per-language centring)` : ''}`,
  );
  return { teacher: tx, teacherCentered: tc, student: sx, studentCentered: sc };
}

/** The generic training loop over the distillation task; the task, the held-out agreement before training and the training log. */
async function trainStudent(
  o: DistillOptions,
  cfg: DualTrainConfig,
  mat: Material,
  targets: Uint16Array,
  teacherDim: number,
  work: string,
  resume: boolean,
  log: (l: string) => void,
): Promise<{ task: DistillTask; tok: TextTokenizer; before: Agreement; history: TrainLogEntry[] }> {
  const tok = getFamily('dual').fixedTokenizer!(cfg)!;
  const seqs = mat.texts.map((s) => tok.encode(s));
  let made: { task: DistillTask; before: Agreement } | undefined;
  const fp = createHash('sha256')
    .update(JSON.stringify({ ...cfg, budget: null, validate: null, logEvery: null, checkpointEvery: null, checkpointMinutes: null, center: null }))
    .update(readJson<{ fingerprint: string }>(join(work, 'teacher', 'state.json')).fingerprint)
    .digest('hex')
    .slice(0, 16);
  try {
    const r = await train({
      config: cfg,
      corpus: { langs: [], rows: 0, ids: new Map() },
      tokenizer: tok,
      outDir: work,
      resume,
      log,
      fingerprint: fp,
      signal: o.signal,
      stopAfterSteps: o.stopAfterSteps,
      createTask: () => {
        const task = new DistillTask(cfg, tok, seqs, mat.examples, targets, teacherDim);
        made = { task, before: task.agreement(mat.heldOut) };
        return task;
      },
    });
    return { ...made!, tok, history: r.log };
  } catch (e) {
    if (e instanceof TrainingInterrupted) log(`interrupted at step ${e.step}: checkpoint in ${e.checkpointDir}; continue with --resume`);
    throw e;
  }
}

async function distillLocked(o: DistillOptions): Promise<DistillResult> {
  const log = o.log ?? ((l: string) => process.stderr.write(`[distill] ${l}\n`));
  const cfg = o.config as DualTrainConfig;
  // everything is checked before any expensive work
  const { teacherCfg, work, resume } = checkDistill(o, cfg);
  const teacher = loadSentenceEncoder(o.teacher);
  if (cfg.encoder.outDim !== teacher.dim) {
    log(`student outDim set to the teacher's ${teacher.dim} (the config had ${cfg.encoder.outDim})`);
    cfg.encoder.outDim = teacher.dim;
  }
  const { mat, devTable } = await readDistillData(o, log);
  log(
    `teacher: ${teacherCfg.kind} model, ${teacher.dim} dimensions; ${mat.texts.length} distinct sentences, ${mat.targetText.length} teacher targets, ${mat.examples.length} training examples, ${mat.heldOut.length} held out`,
  );
  // a resumed run keeps its work directory (checkpoint, teacher cache); a new one keeps only a matching teacher cache
  if (!resume) {
    for (const f of ['checkpoint', 'checkpoint.old', 'train-log.jsonl']) rmSync(join(work, f), { recursive: true, force: true });
  }
  mkdirSync(work, { recursive: true });
  const targets = await teacherVectors(teacher, o.teacher, work, mat.texts, mat.targetText, o, log);
  const { task, tok, before, history } = await trainStudent(o, cfg, mat, targets, teacher.dim, work, resume, log);
  if (o.stopAfterSteps !== undefined) {
    // a simulated kill (tests): the work directory stays for --resume
    return { dir: work, log: history, teacherSentences: mat.targetText.length, examples: mat.examples.length, heldOut: null };
  }
  const after = task.agreement(mat.heldOut);
  if (mat.heldOut.length)
    log(
      `held-out student–teacher agreement (${mat.heldOut.length} sentences): cosine ${before.cosine.toFixed(4)} → ${after.cosine.toFixed(4)}, MSE ${before.mse.toExponential(3)} → ${after.mse.toExponential(3)}`,
    );
  const enc = new SentenceEncoderModel(task.encoder(), tok);
  if (cfg.center.perLang > 0 && mat.byLang.size) enc.centers = fitLanguageMeans(enc, mat.byLang, cfg.center.perLang, cfg.seed);
  writeModelFiles(work, 'dual', task, cfg, null, enc.centers, tokenizerSpecOf(tok, null));
  enc.lid = trainModelIdentifier(mat.byLang);
  enc.lid?.save(work);
  const dev = devTable ? await devComparison(teacher, enc, devTable, cfg, o, log) : undefined;
  const report = {
    teacher: { kind: teacherCfg.kind, dim: teacher.dim },
    sentences: mat.texts.length,
    teacherTargets: mat.targetText.length,
    examples: mat.examples.length,
    heldOut: mat.heldOut.length ? { before, after } : null,
    dev: dev ?? null,
    steps: history.at(-1)?.step ?? 0,
    pairs: history.at(-1)?.pairs ?? 0,
  };
  writeFileSync(join(work, 'distill.json'), JSON.stringify(report, null, 1) + '\n');
  task.module.dispose();
  // the finished model is lean: the teacher cache and the checkpoint go (a kept checkpoint is not offered here)
  for (const f of ['teacher', 'checkpoint', 'checkpoint.old']) rmSync(join(work, f), { recursive: true, force: true });
  rmSync(keptCheckpointDir(o.out), { recursive: true, force: true });
  replaceDir(work, o.out);
  log(`student written to ${o.out}`);
  return {
    dir: o.out,
    log: history,
    teacherSentences: mat.targetText.length,
    examples: mat.examples.length,
    heldOut: mat.heldOut.length ? { before, after } : null,
    dev,
  };
}

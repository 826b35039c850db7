// From an N-way parallel TSV to a model directory, for any model family: text features (a trained
// subword vocabulary, or the family's own), token ids, the training loop, per-language means, the
// model files and the dev error. The model is built in OUT.partial and swapped in at the end, so
// OUT only ever holds one consistent model; a killed or interrupted run resumes from
// OUT.partial. The finished model holds no checkpoint: it is removed, or kept beside the model in
// OUT.checkpoint (keepCheckpoint), from where a resume continues it.
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, linkSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EncodedCorpus } from '../train-data/examples.js';
import { fitLanguageMeans } from '../embed/centering.js';
import { CENTER_MIN_NORM, trainModelIdentifier } from '../embed/language.js';
import { SentenceEncoderModel } from '../embed/model.js';
import { checkReplaceable, isModelDir, replaceDir, writeModelFiles } from '../embed/model-dir.js';
import { tokenizerSpecOf } from '../text/spec.js';
import { ModelFamily, SavedModelConfig, TrainConfig, TrainingTask } from '../models/family.js';
import { getFamily } from '../models/registry.js';
import { TextTokenizer } from '../text/text-tokenizer.js';
import { Tokenizer } from '../text/tokenizer.js';
import { Progress } from '../util/progress.js';
import { heatmap } from '../util/svg.js';
import { LangVectors, xsimMatrix } from '../eval/xsim-matrix.js';
import { readLines } from '../io/input.js';
import { AdaptTask, checkInitModel, loadAdaptable } from './adapt.js';
import { DualTrainConfig } from '../models/dual/family.js';
import { devSetOf, encodeTableAsync, loadTable, NWayTable, PreparationAborted } from './prepare.js';
import { hasCheckpoint, train, TrainingInterrupted, TrainLogEntry, TrainResult } from './trainer.js';
import { DevSet, xsimOnDevAsync, XsimResult } from './validate.js';
import { pause } from '../util/pause.js';
import { withOutputLock } from '../util/lock.js';

export interface TrainModelOptions {
  /** A parsed, validated configuration (loadConfig / parseConfig). */
  config: TrainConfig;
  /** N-way parallel TSV(.gz). */
  data: string;
  /** Dev TSV for the similarity-search error (during and after training). */
  dev?: string;
  /** The model directory to write. */
  out: string;
  /** Continue a killed run (OUT.partial) or a finished one (OUT); 'or-start': start when there is none. */
  resume?: boolean | 'or-start';
  /** Languages (TSV columns) left out of training. */
  excludeLangs?: string[];
  /** Monolingual text files ([lang, path]): one sentence per line, added as rows with that language only. */
  mono?: [string, string][];
  log?: (line: string) => void;
  quiet?: boolean;
  /** Replace an existing model at `out` (without it, a finished model there is refused unless resumed). */
  force?: boolean;
  /** Keep the final checkpoint beside the model (OUT.checkpoint) so that --resume can continue it; otherwise it is removed. */
  keepCheckpoint?: boolean;
  /** Stops the run (SIGINT): a checkpoint is written and TrainingInterrupted thrown; see train(). */
  signal?: AbortSignal;
  /**
   * A model directory of an adaptable imported kind (`--init`): its encoder is trained further with
   * the dual encoder's loss (config from loadAdaptConfig) and the output is a model of its kind.
   */
  init?: string;
}

export interface TrainModelResult {
  dir: string;
  log: TrainLogEntry[];
  dev?: { raw: XsimResult; centered: XsimResult | null };
}

/** Settings that do not change the model (a resume may change them). */
const RUN_ONLY = new Set(['budget', 'validate', 'logEvery', 'checkpointEvery', 'checkpointMinutes', 'center']);

/** What a checkpoint must have been made with: the tokenizer's hash and the model-defining settings. */
export function fingerprintOf(cfg: TrainConfig, tokenizerText: string): string {
  const modelDefining = Object.fromEntries(
    Object.entries(cfg)
      .filter(([k]) => !RUN_ONLY.has(k))
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  );
  // settings added after checkpoints were made, at the value those checkpoints trained with, do
  // not enter it: a run checkpointed by an older build resumes (the dual family's features.hashes 1)
  const f = modelDefining.features as Record<string, unknown> | undefined;
  if (f && f.hashes === 1) {
    const { hashes: _, ...rest } = f;
    modelDefining.features = rest;
  }
  return createHash('sha256').update(tokenizerText).update('\0').update(JSON.stringify(modelDefining)).digest('hex').slice(0, 16);
}

/** The similarity-search error between every pair of dev languages, as `xling eval xsim --svg` draws it. */
function devHeatmap(enc: SentenceEncoderModel, dev: NWayTable, langs: string[]): string {
  const per: LangVectors[] = langs.map((l) => {
    const rows: number[] = [],
      texts: string[] = [];
    dev.rows.forEach((r, i) => {
      const s = r.get(l);
      if (s) {
        rows.push(i);
        texts.push(s);
      }
    });
    return { lang: l, rows, texts, vecs: enc.embed(texts, { lang: l }) };
  });
  const m = xsimMatrix(per, enc.dim, 'index', 100);
  return heatmap({
    rows: m.langs,
    cols: m.langs,
    values: m.errors,
    title: `Dev similarity-search error (%) — overall ${m.overall.toFixed(1)}%`,
    colors: 'reds',
    min: 0,
    max: 100,
  });
}

function byLanguage(table: NWayTable): Map<string, string[]> {
  return new Map(table.langs.map((l) => [l, table.rows.map((r) => r.get(l)).filter((s): s is string => !!s)]));
}

/** Where a finished model's kept checkpoint lies (`--keep-checkpoint`): beside it, never inside. */
export function keptCheckpointDir(out: string): string {
  return `${out}.checkpoint`;
}

/** Whether dir is a whole checkpoint directory (as the trainer writes it: state.json last). */
function isCheckpointDir(dir: string): boolean {
  return existsSync(join(dir, 'state.json'));
}

/** dst gets the files of src as hard links (copies where the filesystem has none); the trainer never rewrites a file in place. */
function linkTree(src: string, dst: string): void {
  mkdirSync(dst, { recursive: true });
  for (const e of readdirSync(src, { withFileTypes: true })) {
    const a = join(src, e.name),
      b = join(dst, e.name);
    if (e.isDirectory()) linkTree(a, b);
    else {
      try {
        linkSync(a, b);
      } catch {
        copyFileSync(a, b);
      }
    }
  }
}

/** A checkpoint to continue: the work directory's (a killed or interrupted run), or a finished model's. */
type ResumeSource = { kind: 'work' } | { kind: 'kept'; dir: string } | { kind: 'inside' } | null;

function findCheckpoint(out: string, work: string): ResumeSource {
  if (hasCheckpoint(work)) return { kind: 'work' };
  if (isModelDir(out) && isCheckpointDir(keptCheckpointDir(out))) return { kind: 'kept', dir: keptCheckpointDir(out) };
  if (hasCheckpoint(out)) return { kind: 'inside' }; // models trained before checkpoints moved out
  return null;
}

/**
 * Trains a model into o.out (see the file's header). OUT.lock is held while it runs: a second
 * process given the same --out is refused instead of writing the same OUT.partial.
 */
export async function trainModel(o: TrainModelOptions): Promise<TrainModelResult> {
  return withOutputLock(o.out, '--out', () => trainModelLocked(o));
}

async function trainModelLocked(o: TrainModelOptions): Promise<TrainModelResult> {
  const t0 = performance.now();
  const cfg = o.config;
  const log = o.log ?? ((l: string) => process.stderr.write(`[train] ${l}\n`));
  const family = getFamily(cfg.model);
  const initSaved = o.init ? checkInitModel(o.init) : null;
  checkInputFiles(o);
  checkReplaceable(o.out, '--out');
  const work = `${o.out}.partial`,
    kept = keptCheckpointDir(o.out);
  // what the run continues from is decided (and refused) before any work
  const r: Run = { o, cfg, log, work, kept, source: resumeSource(o, work, kept, log) };

  // the inputs are read before anything is written: bad data leaves no work directory behind
  const { table, devTable } = await readInputs(r);
  checkAborted(r, 'reading the data');
  prepareWorkDir(r);
  const resume = r.source !== null;
  log(`${table.rows.length} rows, ${table.langs.length} languages`);

  const features = textFeatures(r, family, initSaved, resume, table);
  checkAborted(r, 'the vocabulary');
  const corpus = await encodeCorpus(r, table, features.tok);
  const dev = devTable ? devSetOf(devTable, cfg.validate.langs, 200, cfg.validate.maxRows) : undefined;
  const prepSeconds = (performance.now() - t0) / 1000;

  const { task, log: history } = await runTrainer(r, features, corpus, dev, resume, prepSeconds);
  try {
    return await finishModel(r, { task, history, features, initSaved, table, devTable, dev });
  } finally {
    task.dispose?.();
    task.module.dispose();
  }
}

/** What the steps of one trainModel run share. */
interface Run {
  o: TrainModelOptions;
  cfg: TrainConfig;
  log: (line: string) => void;
  /** OUT.partial, where the model is built. */
  work: string;
  /** OUT.checkpoint, where a finished model's checkpoint is kept. */
  kept: string;
  /** The checkpoint the run continues (null: a new model). */
  source: ResumeSource;
}

/** The input files exist and the --mono languages are language codes. */
function checkInputFiles(o: TrainModelOptions): void {
  if (!existsSync(o.data)) throw new Error(`--data: no such file ${o.data}`);
  if (o.dev && !existsSync(o.dev)) throw new Error(`--dev: no such file ${o.dev}`);
  for (const [lang, file] of o.mono ?? []) {
    if (!/^[a-z]{2,3}(_[a-z]{2,4})?$/i.test(lang)) throw new Error(`--mono: '${lang}' is not a language code (give LANG=FILE)`);
    if (!existsSync(file)) throw new Error(`--mono: no such file ${file}`);
  }
}

/**
 * The checkpoint a run continues (null: it starts a new model), refusing what it must not do: a
 * --resume without a checkpoint (unless 'or-start'), replacing a model without --force, or
 * --keep-checkpoint over a directory that is not a checkpoint.
 */
function resumeSource(o: TrainModelOptions, work: string, kept: string, log: (line: string) => void): ResumeSource {
  if (o.keepCheckpoint && existsSync(kept) && !isCheckpointDir(kept) && readdirSync(kept).length)
    throw new Error(`--keep-checkpoint: ${kept} exists and is not a checkpoint of xling train (it would be replaced); move it away`);
  const source = o.resume ? findCheckpoint(o.out, work) : null;
  if (o.resume && !source) {
    if (o.resume !== 'or-start')
      throw new Error(
        `--resume: no checkpoint in ${work} or ${o.out} (nor beside it in ${kept}; train without --resume to start a new model, or use --resume-or-start)`,
      );
    log(`no checkpoint in ${work}, ${o.out} or ${kept}: starting a new model`);
  }
  if (!source && isModelDir(o.out) && !o.force)
    throw new Error(`--out: ${o.out} already holds a model; give --force to replace it (or --resume to train it further)`);
  return source;
}

/** The interrupt before the first step: nothing to checkpoint yet. */
function stoppedBeforeTraining(r: Run, what: string): TrainingInterrupted {
  // nothing trained yet: a fresh work directory without a checkpoint is of no use
  if (!hasCheckpoint(r.work) && existsSync(r.work) && r.source?.kind !== 'work') rmSync(r.work, { recursive: true, force: true });
  r.log(`interrupted during ${what}; nothing to checkpoint yet`);
  return new TrainingInterrupted(null, null);
}

function checkAborted(r: Run, what: string): void {
  if (r.o.signal?.aborted) throw stoppedBeforeTraining(r, what);
}

/** The training table (less --exclude-langs, plus the --mono sentences) and the dev table. */
async function readInputs(r: Run): Promise<{ table: NWayTable; devTable: NWayTable | null }> {
  const { o, log } = r;
  try {
    const table = await loadTable(o.data, { signal: o.signal });
    if (o.excludeLangs?.length) {
      for (const l of o.excludeLangs) if (!table.langs.includes(l)) throw new Error(`--exclude-langs: '${l}' is not a column of ${o.data}`);
      table.langs = table.langs.filter((l) => !o.excludeLangs!.includes(l));
      for (const row of table.rows) for (const l of o.excludeLangs) row.delete(l);
    }
    for (const [lang, file] of o.mono ?? []) {
      if (!table.langs.includes(lang)) table.langs.push(lang);
      let n = 0;
      for await (const { line } of readLines(file))
        if (line.trim()) {
          table.rows.push(new Map([[lang, line]]));
          table.sources?.push('');
          n++;
        }
      log(`--mono ${lang}: ${n} sentences from ${file}`);
    }
    const devTable = o.dev ? await loadTable(o.dev, { signal: o.signal }) : null;
    return { table, devTable };
  } catch (e) {
    if (e instanceof PreparationAborted) throw stoppedBeforeTraining(r, 'reading the data');
    throw e;
  }
}

/** OUT.partial as the run starts: a copy of the finished model it continues, the work directory of a killed run, or a new empty one. */
function prepareWorkDir({ o, work, source }: Run): void {
  if (source?.kind === 'kept' || source?.kind === 'inside') {
    // continue a finished model (e.g. with a larger budget): work on a copy, swap at the end; the
    // kept checkpoint is linked, not moved, so that the finished model keeps it until the end
    rmSync(work, { recursive: true, force: true });
    cpSync(o.out, work, { recursive: true });
    if (source.kind === 'kept') {
      rmSync(join(work, 'checkpoint'), { recursive: true, force: true });
      linkTree(source.dir, join(work, 'checkpoint'));
    }
  }
  if (source === null) {
    rmSync(work, { recursive: true, force: true });
    mkdirSync(work, { recursive: true });
  }
}

/** How text becomes ids: the tokenizer, its file in the model (null: none) and its text (fingerprinted). */
interface TextFeatures {
  tok: TextTokenizer;
  tokFile: string | null;
  tokText: string;
  /** The --init model's encoder, trained further. */
  init: ReturnType<typeof loadAdaptable> | null;
}

/** text → ids: the --init model's tokenizer, the family's own features, or a subword vocabulary trained here (kept on resume). */
function textFeatures(r: Run, family: ModelFamily, initSaved: SavedModelConfig | null, resume: boolean, table: NWayTable): TextFeatures {
  const { o, cfg, log, work } = r;
  const fixed = initSaved ? undefined : family.fixedTokenizer?.(cfg);
  if (o.init) {
    // the init model's encoder and tokenizer (its tokenizer file is copied: the output is a model of its kind)
    const init = loadAdaptable(o.init);
    const tokFile = init.saved.tokenizer;
    if (tokFile) copyFileSync(join(o.init, tokFile), join(work, tokFile));
    log(`init model ${o.init} (${init.saved.kind})`);
    return { tok: init.loaded.tokenizer, tokFile, tokText: init.tokenizerText, init };
  }
  if (fixed) return { tok: fixed, tokFile: null, tokText: JSON.stringify(fixed), init: null };
  const tokFile = 'tokenizer.json';
  const path = join(work, tokFile);
  let tok: TextTokenizer;
  if (resume && existsSync(path)) {
    tok = Tokenizer.load(path, { romanize: cfg.vocab.romanize });
  } else {
    const t1 = performance.now();
    const trained = Tokenizer.train(byLanguage(table), {
      model: cfg.vocab.type === 'none' ? 'bpe' : cfg.vocab.type,
      vocabSize: cfg.vocab.size,
      temperature: cfg.vocab.temperature,
      seed: cfg.seed,
      maxLen: cfg.maxLen,
      sampleSentences: cfg.vocab.sampleSentences,
      normalize: { lowercase: cfg.vocab.lowercase, romanize: cfg.vocab.romanize },
    });
    trained.save(path);
    tok = trained;
    log(
      `joint ${{ bpe: 'BPE', unigram: 'unigram', words: 'word', none: '' }[cfg.vocab.type]} vocabulary of ${trained.vocabSize} trained in ${((performance.now() - t1) / 1000).toFixed(1)}s`,
    );
  }
  return { tok, tokFile, tokText: readFileSync(path, 'utf8'), init: null };
}

/** The table's token ids. */
async function encodeCorpus(r: Run, table: NWayTable, tok: TextTokenizer): Promise<EncodedCorpus> {
  const t2 = performance.now();
  let corpus;
  try {
    corpus = await encodeTableAsync(table, tok, { signal: r.o.signal });
  } catch (e) {
    if (e instanceof PreparationAborted) throw stoppedBeforeTraining(r, 'the text features');
    throw e;
  }
  r.log(`text features of ${table.langs.length} languages in ${((performance.now() - t2) / 1000).toFixed(1)}s`);
  return corpus;
}

/** The training loop in OUT.partial (see train()); an interrupt is logged with how to continue. */
async function runTrainer(
  { o, cfg, log, work }: Run,
  { tok, tokText, init }: TextFeatures,
  corpus: EncodedCorpus,
  dev: DevSet | undefined,
  resume: boolean,
  prepSeconds: number,
): Promise<TrainResult> {
  try {
    const createTask = init ? () => new AdaptTask(cfg as DualTrainConfig, init, corpus, o.init!) : undefined;
    return await train({
      config: cfg,
      corpus,
      tokenizer: tok,
      outDir: work,
      resume,
      dev,
      log,
      priorSeconds: prepSeconds,
      fingerprint: fingerprintOf(cfg, tokText),
      signal: o.signal,
      createTask,
    });
  } catch (e) {
    if (init && !(e instanceof TrainingInterrupted)) init.loaded.dispose();
    if (e instanceof TrainingInterrupted) log(`interrupted at step ${e.step}: checkpoint in ${e.checkpointDir}; continue with --resume`);
    throw e;
  }
}

/** What the finishing steps work from: the trained task and what the run prepared. */
interface Trained {
  task: TrainingTask;
  history: TrainLogEntry[];
  features: TextFeatures;
  initSaved: SavedModelConfig | null;
  table: NWayTable;
  devTable: NWayTable | null;
  dev: DevSet | undefined;
}

/**
 * After the last step: the per-language means, the model files, the language identifier and the
 * dev error in OUT.partial, then the swap into OUT and the checkpoint kept beside it or removed.
 */
async function finishModel(r: Run, { task, history, features, initSaved, table, devTable, dev }: Trained): Promise<TrainModelResult> {
  const { o, cfg, log, work } = r;
  const { tok, tokFile } = features;
  // after the last step the checkpoint is whole: an interrupt from here on leaves it for --resume
  const stoppedAfter = (what: string): never => {
    log(
      `interrupted during ${what}, after the last step (${history.at(-1)?.step ?? 0}): checkpoint in ${join(work, 'checkpoint')}; --resume finishes the model`,
    );
    throw new TrainingInterrupted(history.at(-1)?.step ?? 0, join(work, 'checkpoint'));
  };
  const enc = new SentenceEncoderModel(task.encoder(), tok);
  if (cfg.center.perLang > 0) await fitCenters(r, enc, table, stoppedAfter);
  writeModelFiles(work, initSaved?.kind ?? cfg.model, task, cfg, tokFile, enc.centers, initSaved ? initSaved.tokenizerSpec : tokenizerSpecOf(tok, tokFile));
  // the language identifier (lid.json) of the corpus's languages: centring's 'auto'
  const t3 = performance.now();
  enc.lid = trainModelIdentifier(byLanguage(table));
  if (enc.lid) {
    enc.lid.save(work);
    log(
      `language identifier of ${enc.lid.languages.length} languages (${enc.lid.features} character n-grams) trained in ${((performance.now() - t3) / 1000).toFixed(1)}s`,
    );
  }
  const mv = enc.meanVectors;
  if (mv.negligible)
    log(
      `the per-language mean vectors are too small to matter (mean norm ${mv.meanNorm.toFixed(3)} < ${CENTER_MIN_NORM}): embedding does not centre by default`,
    );
  const devResult = dev ? await evaluateDev(r, enc, dev, devTable!, stoppedAfter) : undefined;
  if (o.signal?.aborted) stoppedAfter('writing the model');
  installModel(r);
  return { dir: o.out, log: history, dev: devResult };
}

/** The per-language mean vectors into enc.centers, one language at a time, letting the event loop run in between (a SIGINT stops here). */
async function fitCenters({ o, cfg }: Run, enc: SentenceEncoderModel, table: NWayTable, stoppedAfter: (what: string) => never): Promise<void> {
  const langs = byLanguage(table);
  const total = [...langs.values()].reduce((a, s) => a + Math.min(s.length, cfg.center.perLang), 0);
  const prog = new Progress({ label: 'per-language mean vectors', unit: 'sents', total, silent: o.quiet });
  const centers = new Map<string, Float32Array>();
  for (const [l, sents] of langs) {
    await pause();
    if (o.signal?.aborted) {
      prog.done();
      stoppedAfter('the per-language mean vectors');
    }
    for (const [k, v] of fitLanguageMeans(enc, new Map([[l, sents]]), cfg.center.perLang, cfg.seed, (n) => prog.tick(n))) centers.set(k, v);
  }
  enc.centers = centers;
  prog.done();
}

/** The dev error without and with per-language centring: dev-xsim.json, the dev-xsim.svg heatmap and a log line. */
async function evaluateDev(
  { o, log, work }: Run,
  enc: SentenceEncoderModel,
  dev: DevSet,
  devTable: NWayTable,
  stoppedAfter: (what: string) => never,
): Promise<NonNullable<TrainModelResult['dev']>> {
  const raw = await xsimOnDevAsync(enc, dev, { center: false, signal: o.signal });
  const centered = raw && enc.centers.size ? await xsimOnDevAsync(enc, dev, { center: 'force', signal: o.signal }) : null;
  if (!raw || (enc.centers.size && !centered)) stoppedAfter('the dev evaluation');
  writeFileSync(join(work, 'dev-xsim.json'), JSON.stringify({ ...raw, centered }, null, 1) + '\n');
  writeFileSync(join(work, 'dev-xsim.svg'), devHeatmap(enc, devTable, ['en', ...Object.keys(raw!.langs)]));
  const n = Object.keys(raw!.langs).length;
  log(
    `dev similarity-search error (avg X→en, en→X over ${n} languages): ${raw!.average.toFixed(2)}%` +
      (centered ? `; with per-language centring (embed --lang): ${centered.average.toFixed(2)}%` : ''),
  );
  return { raw: raw!, centered };
}

/** OUT.partial becomes OUT; the finished model is lean: its checkpoint goes beside it (--keep-checkpoint) or away. */
function installModel({ o, log, work, kept }: Run): void {
  replaceDir(work, o.out);
  // (until this is done, a --resume finds the checkpoint inside, as in models trained before)
  if (isCheckpointDir(kept)) rmSync(kept, { recursive: true, force: true });
  const inside = join(o.out, 'checkpoint');
  if (o.keepCheckpoint && isCheckpointDir(inside)) {
    rmSync(kept, { recursive: true, force: true });
    renameSync(inside, kept);
  }
  rmSync(inside, { recursive: true, force: true });
  rmSync(`${inside}.old`, { recursive: true, force: true });
  log(`model written to ${o.out}` + (o.keepCheckpoint ? ` (checkpoint for --resume in ${kept})` : ''));
}

// xling scorer train's work: the scorer's labelled sets (BUCC-format gold pairs, or BUCC-like sets
// drawn from a parallel TSV: translations are the gold pairs, the nearest wrong candidates the
// negatives), their candidates and word tables (kept in OUT.partial for --resume), the optional pair
// model, the regression (and the optional self-tables regression), the scorer written to OUT.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadNWayTsv, readBucc, readGold } from '../../train-data/corpus.js';
import { checkLangOptions, modelDim, vectorsFor } from '../../embed/input.js';
import { goldSet } from '../../util/precision-recall.js';
import { manualSeed, Tensor } from '../../tensor/tensor.js';
import { writeFileAtomicSync } from '../../util/atomic.js';
import { pause } from '../../util/pause.js';
import { Progress } from '../../util/progress.js';
import { Rng } from '../../util/rng.js';
import { fileStamps } from '../../util/stamps.js';
import { trainWordTables, WordAligner, WordTables } from './word-align/features.js';
import { mineTables } from '../mine.js';
import { ScorerTrainSettings } from '../settings.js';
import { truncated } from '../truncated.js';
import { addPairFeatures, candidatePairs, ScoredCandidate, scorerFeatures } from './features.js';
import { encoderFingerprint, encoderMismatch, loadScorer, saveScorer, ScorerModel } from './files.js';
import { fitLogistic, scoreCandidate } from './logistic.js';
import { pairLogits, PairModel, savePairModel } from './pair-model.js';
import { pairModelRows, ScorerTrainingStopped, trainScorerPairModel } from './pair-train.js';
import { embedTextWords } from './pair-words.js';
import { selfTablesFeatures, SELF_TABLES } from './tables.js';

/** A source/target sentence set with its gold pairs (as row indices). */
export interface LabelledSet {
  name: string;
  srcLang: string;
  trgLang: string;
  src: string[];
  trg: string[];
  gold: Set<string>;
  /** Translations outside the set for the word tables (parallel data); none: the tables are cross-fitted on the gold pairs. */
  extra?: [string, string][];
}

/** Every BUCC triple SRC-TRG.SPLIT.{SRC,TRG,gold} of a directory (split filter optional). */
export async function buccSets(dir: string, split?: string): Promise<LabelledSet[]> {
  const out: LabelledSet[] = [];
  const files = readdirSync(dir).sort();
  for (const f of files) {
    const m = /^([A-Za-z_-]+?)-([A-Za-z_]+)\.([^.]+)\.gold$/.exec(f);
    if (!m) continue;
    const [, sl, tl, sp] = m as unknown as [string, string, string, string];
    if (split && sp !== split) continue;
    const sf = join(dir, `${sl}-${tl}.${sp}.${sl}`),
      tf = join(dir, `${sl}-${tl}.${sp}.${tl}`);
    if (!files.includes(`${sl}-${tl}.${sp}.${sl}`) || !files.includes(`${sl}-${tl}.${sp}.${tl}`))
      throw new Error(`${join(dir, f)}: no ${sf} or ${tf} beside it`);
    const S = await readBucc(sf),
      T = await readBucc(tf);
    const g = goldSet(await readGold(join(dir, f)), new Set(S.map((s) => s.id)), new Set(T.map((t) => t.id)), join(dir, f));
    const si = new Map(S.map((s, i) => [s.id, i])),
      ti = new Map(T.map((t, i) => [t.id, i]));
    const gold = new Set(
      [...g].map((k) => {
        const [a, b] = k.split('\t') as [string, string];
        return `${si.get(a)}\t${ti.get(b)}`;
      }),
    );
    out.push({ name: `${sl}-${tl}.${sp}`, srcLang: sl, trgLang: tl, src: S.map((s) => s.sentence), trg: T.map((t) => t.sentence), gold });
  }
  if (!out.length)
    throw new Error(
      `--bucc ${dir}: no SRC-TRG.SPLIT.gold files${split ? ` of split '${split}'` : ''} (BUCC format: xx-en.dev.xx, xx-en.dev.en, xx-en.dev.gold)`,
    );
  return out;
}

/**
 * BUCC-like sets from an N-way parallel TSV: for each language pair, `rows` rows drawn with a
 * fixed seed; 60% are kept on both sides (the gold pairs), 20% only on the source side and 20%
 * only on the target side (sentences without a translation, as in BUCC). With `truncated`, partial
 * translations (src/mine/truncated.ts) among them as wrong candidates: a scorer for cleaning.
 */
export async function parallelSets(
  file: string,
  pairs: [string, string][] | null,
  rows: number,
  seed = 1,
  tableRows = 5000,
  o: { truncated?: boolean } = {},
): Promise<LabelledSet[]> {
  const { langs, rows: all } = await loadNWayTsv(file);
  const want = pairs ?? langs.filter((l) => l !== 'en').map((l) => [l, 'en'] as [string, string]);
  const out: LabelledSet[] = [];
  for (const [sl, tl] of want) {
    if (!langs.includes(sl) || !langs.includes(tl))
      throw new Error(`--pairs ${sl}-${tl}: --parallel ${file} has no column '${!langs.includes(sl) ? sl : tl}' (it has ${langs.join(' ')})`);
    const both = all.filter((r) => r.get(sl) && r.get(tl));
    if (both.length < 10) continue;
    const pick = new Rng(`${seed}:${sl}-${tl}`).shuffle(both.slice()).slice(0, rows);
    const picked = new Set(pick);
    const nPair = Math.round(pick.length * 0.6),
      nSrc = Math.round(pick.length * 0.2);
    const src: string[] = [],
      trg: string[] = [],
      gold = new Set<string>();
    const seen = new Set(pick.flatMap((r) => [r.get(sl)!, r.get(tl)!]));
    const add = (list: string[], text: string | null) => {
      if (text !== null && !seen.has(text)) {
        seen.add(text);
        list.push(text);
      }
    };
    pick.forEach((r, i) => {
      const a = r.get(sl)!,
        b = r.get(tl)!;
      if (i < nPair) {
        gold.add(`${src.length}\t${trg.length}`);
        src.push(a);
        trg.push(b);
      } else if (i < nPair + nSrc) src.push(a);
      else trg.push(b);
      if (o.truncated) {
        // a partial translation where the translation is missing, and beside a quarter of the gold pairs
        const tr = new Rng(`${seed}:${sl}-${tl}:truncated:${i}`);
        if (i < nPair) {
          if (tr.next() < 0.25) add(trg, truncated(b, tr));
        } else if (i < nPair + nSrc) add(trg, truncated(b, tr));
        else add(src, truncated(a, tr));
      }
    });
    const extra = new Rng(`${seed}:${sl}-${tl}:tables`)
      .shuffle(both.filter((r) => !picked.has(r)))
      .slice(0, tableRows)
      .map((r) => [r.get(sl)!, r.get(tl)!] as [string, string]);
    out.push({ name: `${sl}-${tl}`, srcLang: sl, trgLang: tl, src, trg, gold, extra });
  }
  if (!out.length) throw new Error(`--parallel ${file}: no language pair with at least 10 rows`);
  return out;
}

/**
 * Word-table translations for BUCC sets from an N-way parallel TSV: each set gets up to `tableRows`
 * rows of its language pair (both sides non-empty; drawn with a fixed seed), none of them a
 * sentence of the set (so no candidate's features saw its own pair).
 */
export async function attachTables(sets: LabelledSet[], file: string, tableRows: number, seed = 1): Promise<void> {
  const { langs, rows: all } = await loadNWayTsv(file);
  for (const set of sets) {
    if (!langs.includes(set.srcLang) || !langs.includes(set.trgLang))
      throw new Error(`--tables ${file}: no column '${!langs.includes(set.srcLang) ? set.srcLang : set.trgLang}' for ${set.name} (it has ${langs.join(' ')})`);
    const inSet = new Set([...set.src, ...set.trg]);
    const both = all.filter((r) => r.get(set.srcLang) && r.get(set.trgLang) && !inSet.has(r.get(set.srcLang)!) && !inSet.has(r.get(set.trgLang)!));
    set.extra = new Rng(`${seed}:${set.srcLang}-${set.trgLang}:tables`)
      .shuffle(both)
      .slice(0, tableRows)
      .map((r) => [r.get(set.srcLang)!, r.get(set.trgLang)!] as [string, string]);
  }
}

/** The scorer's candidates of one set (k-NN both ways with the model's vectors) and their gold labels. */
export function labelledCandidates(
  set: LabelledSet,
  model: string,
  k: number,
  center: boolean,
  label: string,
  o: { minProb?: number } = {},
): { cands: ScoredCandidate[]; labels: number[]; tables: WordTables } {
  const sv = vectorsFor(set.src, undefined, model, `${set.name} ${set.srcLang}`, { lang: set.srcLang, langFlag: '--src-lang', center, label, quiet: true });
  const tv = vectorsFor(set.trg, undefined, model, `${set.name} ${set.trgLang}`, { lang: set.trgLang, langFlag: '--trg-lang', center, label, quiet: true });
  const { fwd, bwd } = mineTables(sv.data, tv.data, sv.d, { k: Math.min(k, set.src.length, set.trg.length), chunk: 16384 });
  const goldPairs = [...set.gold].map((g) => g.split('\t').map(Number) as [number, number]);
  const text = ([s, t]: [number, number]) => [set.src[s]!, set.trg[t]!] as [string, string];
  let cands: ScoredCandidate[], tables: WordTables;
  if (set.extra) {
    // tables from translations outside the set: no candidate's features saw its own pair
    tables = trainWordTables(set.extra, o);
    cands = candidatePairs(fwd, bwd, set.src, set.trg, new WordAligner(tables));
  } else {
    // cross-fitting: a source of fold s % 2 is scored with the tables of the other fold's gold pairs
    const folds = [0, 1].map((f) => new WordAligner(trainWordTables(goldPairs.filter(([s]) => s % 2 !== f).map(text), o)));
    cands = candidatePairs(fwd, bwd, set.src, set.trg, (s) => folds[s % 2]!);
    tables = trainWordTables(goldPairs.map(text), o);
  }
  return { cands, labels: cands.map((c) => (set.gold.has(`${c.src}\t${c.trg}`) ? 1 : 0)), tables };
}

/** Fits a scorer on labelled candidates (label 1: a gold pair). */
export function trainScorer(
  cands: ScoredCandidate[],
  labels: number[],
  k: number,
  trained: Record<string, unknown>,
  o: { l2?: number; tables?: Record<string, WordTables>; pair?: ScorerModel['pair']; pairModel?: PairModel } = {},
): ScorerModel {
  const pos = labels.reduce((a, b) => a + b, 0);
  if (!pos || pos === labels.length)
    throw new Error(`scorer: the training candidates need both gold pairs and wrong ones (got ${pos} of ${labels.length} gold)`);
  const features = scorerFeatures(!!o.pair);
  if (cands.some((c) => c.features.length !== features.length))
    throw new Error(`scorer: every candidate needs ${features.length} features${o.pair ? " (with the pair model's)" : ''}`);
  const f = fitLogistic(
    cands.map((c) => c.features),
    labels,
    o,
  );
  return {
    format: 'xling-scorer',
    version: 1,
    features,
    ...f,
    k,
    trained: { ...trained, candidates: cands.length, positives: pos },
    tables: o.tables ?? {},
    ...(o.pair ? { pair: o.pair, pairModel: o.pairModel } : {}),
  };
}

/** What xling scorer train trains from and writes (its options checked by the command). */
export interface ScorerTrainRun {
  /** The sentence encoder whose vectors the scorer re-scores. */
  model: string;
  /** BUCC triples SRC-TRG.SPLIT.{SRC,TRG,gold} of a directory (optionally one split), or */
  bucc?: string;
  split?: string;
  /** an N-way parallel TSV: its language pairs (null: each column with en), rows drawn per pair. */
  parallel?: string;
  pairs: [string, string][] | null;
  rows: number;
  /** Word tables from this N-way parallel TSV. */
  tables?: string;
  /** The scorer directory to write (its work directory OUT.partial beside it). */
  output: string;
  /** Reuse what a killed run (or one that kept it) left in OUT.partial; keep OUT.partial at the end. */
  resume: boolean;
  keepWork: boolean;
  /** Train a pair model, or take the one of this scorer. */
  pairModel: boolean;
  pairFrom?: string;
  settings: ScorerTrainSettings;
}

/** What a training run says (xling scorer train --json). */
export type ScorerTrainSummary = Record<string, unknown> & { training_accuracy: number };

/**
 * Trains a scorer and writes it to o.output; a signal stops it between language pairs or pair-model
 * batches (ScorerTrainingStopped, what was done kept in OUT.partial for o.resume).
 */
export async function trainScorerRun(o: ScorerTrainRun, signal?: AbortSignal): Promise<ScorerTrainSummary> {
  const cfg = o.settings;
  const sets = await trainingSets(o);
  // a pair model to take: checked before any work
  const pairFrom = o.pairFrom ? pairModelFrom(o.pairFrom, o.model) : null;
  if (o.tables && !sameTables(o)) await attachTables(sets, o.tables, cfg.tableRows ?? Infinity);
  // each language pair's candidates and tables are kept in OUT.partial as they are made, so that
  // --resume continues a killed run; a pair is reused only when everything it was made from is the same
  const work = `${o.output}.partial`;
  if (!o.resume && existsSync(work)) {
    rmSync(work, { recursive: true, force: true });
    process.stderr.write(`[scorer] removed ${work} of an earlier run (--resume reuses it)\n`);
  }
  mkdirSync(work, { recursive: true });
  const made = await candidatesOfSets(o, sets, work, signal);
  // the pair model (trained here or taken from --pair-from), its logits as three more features of every set's candidates
  const pair = o.pairModel ? await trainedPairModel(o, sets, work, signal) : pairFrom ? takenPairModel(o, sets, pairFrom) : null;
  const { cands, labels } = await pooledCandidates(made.perSet, pair);
  const m = fitScorer(o, cands, labels, made, pair);
  let correct = 0;
  cands.forEach((c, i) => {
    if ((scoreCandidate(m, c.features) >= 0.5 ? 1 : 0) === labels[i]) correct++;
  });
  m.trained.training_accuracy = correct / cands.length;
  if (cfg.selfHead) fitSelfTables(m, sets, made.perSet, cfg.l2);
  if (pair) {
    mkdirSync(o.output, { recursive: true });
    savePairModel(pair.pm, join(o.output, 'pair-model.safetensors'));
  }
  saveScorer(o.output, m);
  if (!o.keepWork) rmSync(work, { recursive: true, force: true });
  const summary = {
    output: o.output,
    sets: made.per,
    candidates: cands.length,
    positives: labels.reduce((x, y) => x + y, 0),
    training_accuracy: correct / cands.length,
    k: cfg.k,
    ...(pair ? { pair_model: pair.trained } : {}),
    self_head: m.self?.trained ?? null,
  };
  process.stderr.write(`[scorer] ${cands.length} candidates, training accuracy ${(100 * summary.training_accuracy).toFixed(2)}% → ${o.output}\n`);
  return summary;
}

/** The word tables come from the parallel TSV the sets are drawn from. */
const sameTables = (o: ScorerTrainRun) => !!o.tables && !!o.parallel && o.tables === o.parallel;

/**
 * The labelled sets of a run (BUCC triples, or drawn from the parallel TSV), each pair's languages
 * checked against the model before any work: of a TSV's columns taken by default, those the model
 * does not know are left out (said); a pair asked for by name is refused.
 */
async function trainingSets(o: ScorerTrainRun): Promise<LabelledSet[]> {
  const cfg = o.settings;
  const sets = o.bucc
    ? await buccSets(o.bucc, o.split)
    : await parallelSets(o.parallel!, o.pairs, o.rows, 1, sameTables(o) ? (cfg.tableRows ?? Infinity) : (cfg.tableRows ?? 5000), {
        truncated: cfg.truncated,
      });
  const known = sets.filter((set) => {
    try {
      const what = o.bucc ? `--bucc ${o.bucc} (${set.name})` : `--pairs ${set.srcLang}-${set.trgLang}`;
      checkLangOptions(o.model, [
        [what, set.srcLang],
        [what, set.trgLang],
      ]);
      return true;
    } catch (e) {
      // the option's advice ('auto' …) is not for a language pair
      const msg = (e as Error).message.replace(/; give one of them.*$/, '');
      if (o.bucc || o.pairs) throw new Error(msg);
      process.stderr.write(`[scorer] ${set.srcLang}-${set.trgLang}: left out (${msg.replace(/^--pairs \S+ /, '')})\n`);
      return false;
    }
  });
  if (!known.length) throw new Error(`--parallel ${o.parallel}: the model knows no language pair of its columns`);
  return known;
}

/** The scorer of --pair-from, checked: it has a pair model, and that reads this encoder's word vectors (another encoder of that size: a warning). */
function pairModelFrom(dir: string, model: string): ScorerModel {
  const pairFrom = loadScorer(dir);
  if (!pairFrom.pairModel) throw new Error(`--pair-from ${dir}: that scorer has no pair model (train one with --pair-model)`);
  if (pairFrom.pairModel.config.dim !== modelDim(model))
    throw new Error(
      `--pair-from ${dir}: its pair model reads ${pairFrom.pairModel.config.dim}-dimensional word vectors; --model ${model} gives ${modelDim(model)} (it was trained with another encoder)`,
    );
  const other = encoderMismatch(pairFrom.pair!.trained, model, `--pair-from ${dir}'s pair model`, 'its word vectors');
  if (other) process.stderr.write(`[scorer] warning: ${other}\n`);
  return pairFrom;
}

/** Each set's candidates, labels and word tables, and what is said of them (xling scorer train --json's sets). */
interface SetCandidates {
  perSet: { cands: ScoredCandidate[]; labels: number[] }[];
  tables: Record<string, WordTables>;
  per: Record<string, { sentences: [number, number]; gold: number; candidates: number; gold_candidates: number }>;
}

/**
 * Every set's candidates and word tables (labelledCandidates), each kept in the work directory as
 * it is made and reused by o.resume when its key (the model's files, the settings and the set's
 * sentences) is the same; a signal stops the run between sets.
 */
async function candidatesOfSets(o: ScorerTrainRun, sets: LabelledSet[], work: string, signal?: AbortSignal): Promise<SetCandidates> {
  const cfg = o.settings;
  const out: SetCandidates = { perSet: [], tables: {}, per: {} };
  const modelStamp = fileStamps(o.model);
  const prog = new Progress({ label: 'scorer train', unit: 'pairs', total: sets.length });
  let reused = 0;
  for (const set of sets) {
    const key = createHash('sha256')
      .update(
        JSON.stringify({
          model: modelStamp,
          k: cfg.k,
          center: cfg.center,
          minProb: cfg.tableMinProb,
          set: set.name,
          src: set.src,
          trg: set.trg,
          gold: [...set.gold],
          extra: set.extra ?? null,
        }),
      )
      .digest('hex');
    const file = join(work, `${set.name.replace(/[^\w.-]/g, '_')}.json`);
    let r = o.resume ? keptCandidates(file, key, set.name, work) : null;
    const fromCache = !!r;
    if (r) reused++;
    else {
      r = labelledCandidates(set, o.model, cfg.k, cfg.center, 'scorer', { minProb: cfg.tableMinProb });
      writeFileAtomicSync(file, JSON.stringify({ key, r }));
    }
    out.perSet.push({ cands: r.cands, labels: r.labels });
    out.tables[`${set.srcLang}-${set.trgLang}`] = r.tables;
    const hit = r.labels.reduce((x, y) => x + y, 0);
    out.per[set.name] = { sentences: [set.src.length, set.trg.length], gold: set.gold.size, candidates: r.cands.length, gold_candidates: hit };
    process.stderr.write(
      `[scorer] ${set.name}: ${set.src.length} × ${set.trg.length} sentences, ${set.gold.size} gold pairs, ${r.cands.length} candidates (${hit} gold among them); word tables from ${set.extra ? `${set.extra.length} parallel rows` : 'the gold pairs'}${fromCache ? ' (reused)' : ''}\n`,
    );
    prog.tick();
    // a signal stops the run here (each pair done is kept in OUT.partial for --resume)
    await pause();
    if (signal?.aborted) throw new ScorerTrainingStopped(work);
  }
  prog.done();
  if (reused) process.stderr.write(`[scorer] --resume: ${reused} of ${sets.length} language pairs reused from ${work}\n`);
  return out;
}

/** A set's candidates kept in the work directory by an earlier run, if made with the same key (else null, said). */
function keptCandidates(file: string, key: string, name: string, work: string): ReturnType<typeof labelledCandidates> | null {
  if (!existsSync(file)) return null;
  try {
    const c = JSON.parse(readFileSync(file, 'utf8')) as { key: string; r: ReturnType<typeof labelledCandidates> };
    if (c.key === key) return c.r;
    process.stderr.write(`[scorer] ${name}: made with other arguments in ${work}; done again\n`);
  } catch {
    process.stderr.write(`[scorer] ${name}: ${file} unreadable; done again\n`);
  }
  return null;
}

/** A pair model ready to score the sets' candidates: the model, its word table, each set's word ids a side, and what is said of its training. */
interface ReadyPairModel {
  pm: PairModel;
  table: Tensor;
  ids: { src: number[][]; trg: number[][] }[];
  trained: Record<string, unknown>;
}

/** The pair model trained here (pair-train.ts) on rows of the tables' (or the parallel) TSV that are no sentence of a set; resumable in the work directory. */
async function trainedPairModel(o: ScorerTrainRun, sets: LabelledSet[], work: string, signal?: AbortSignal): Promise<ReadyPairModel> {
  const cfg = o.settings;
  const file = o.tables ?? o.parallel!;
  const p = cfg.pairModel;
  const rows = await pairModelRows(
    file,
    sets.map((s) => ({ srcLang: s.srcLang, trgLang: s.trgLang, exclude: new Set([...s.src, ...s.trg]) })),
    p.rows,
  );
  // (the epochs are not in the key: a resumed run may go on for more of them)
  const key = createHash('sha256')
    .update(
      JSON.stringify({
        model: fileStamps(o.model),
        center: cfg.center,
        file: fileStamps(file).join(),
        rows: p.rows,
        negatives: p.negatives,
        maxWords: p.maxWords,
        sets: sets.map((s) => s.name),
        hidden: p.hidden,
        pca: p.pca,
        ...(p.seed !== 1 ? { seed: p.seed } : {}),
      }),
    )
    .digest('hex');
  manualSeed(p.seed);
  const pair = await trainScorerPairModel(
    sets.map((s, i) => ({ srcLang: s.srcLang, trgLang: s.trgLang, sentences: { src: s.src, trg: s.trg }, rows: rows[i]! })),
    {
      model: o.model,
      dim: modelDim(o.model),
      center: cfg.center,
      hidden: p.hidden,
      pca: p.pca,
      epochs: p.epochs,
      negatives: p.negatives,
      maxWords: p.maxWords,
      work,
      resume: o.resume,
      key,
      signal,
    },
  );
  pair.trained = {
    ...pair.trained,
    rows_from: file,
    rows_per_pair: p.rows,
    negatives: p.negatives,
    seed: p.seed,
    encoder: encoderFingerprint(o.model),
    encoder_dir: o.model,
  };
  return pair;
}

/** The pair model of --pair-from, its word table made from the sets' words. */
function takenPairModel(o: ScorerTrainRun, sets: LabelledSet[], pairFrom: ScorerModel): ReadyPairModel {
  const pm = pairFrom.pairModel!;
  const e = embedTextWords(
    o.model,
    sets.flatMap((s) => [
      { key: s.srcLang, lang: s.srcLang, texts: s.src },
      { key: s.trgLang, lang: s.trgLang, texts: s.trg },
    ]),
    pm.config,
  );
  return {
    pm,
    table: pm.wordTable(e.vectors, e.n),
    ids: sets.map((_, i) => ({ src: e.ids[2 * i]!, trg: e.ids[2 * i + 1]! })),
    trained: { ...pairFrom.pair!.trained, from: o.pairFrom },
  };
}

/** Every set's candidates and labels in one list, with the pair model's logits added to their features. */
async function pooledCandidates(perSet: SetCandidates['perSet'], pair: ReadyPairModel | null): Promise<{ cands: ScoredCandidate[]; labels: number[] }> {
  const cands: ScoredCandidate[] = [],
    labels: number[] = [];
  for (const [i, { cands: c, labels: l }] of perSet.entries()) {
    if (pair) {
      const { src, trg } = pair.ids[i]!;
      addPairFeatures(
        c,
        await pairLogits(
          pair.pm,
          pair.table,
          c.map((x) => src[x.src]!),
          c.map((x) => trg[x.trg]!),
        ),
      );
    }
    cands.push(...c);
    labels.push(...l);
  }
  return { cands, labels };
}

/** The regression over the pooled candidates, with what the scorer says of its training data. */
function fitScorer(o: ScorerTrainRun, cands: ScoredCandidate[], labels: number[], made: SetCandidates, pair: ReadyPairModel | null): ScorerModel {
  const cfg = o.settings;
  const pairInfo = pair ? { file: 'pair-model.safetensors', config: pair.pm.config, trained: pair.trained } : undefined;
  return trainScorer(
    cands,
    labels,
    cfg.k,
    {
      data: o.bucc ? 'bucc' : 'parallel',
      ...(cfg.truncated ? { synthetic: 'truncated' } : {}),
      encoder: encoderFingerprint(o.model),
      encoder_dir: o.model,
      sets: Object.keys(made.per),
      word_tables: o.tables
        ? `${o.tables}${cfg.tableRows ? ` (${cfg.tableRows} rows a pair)` : ''}`
        : o.bucc
          ? 'gold pairs'
          : `${cfg.tableRows ?? 5000} rows a pair`,
    },
    { l2: cfg.l2, tables: made.tables, pair: pairInfo, pairModel: pair?.pm },
  );
}

/** The self-tables regression (m.self): what mining with self-trained tables does to each set, and the regression fitted on it (none without both labels). */
function fitSelfTables(m: ScorerModel, sets: LabelledSet[], perSet: SetCandidates['perSet'], l2: number | undefined): void {
  const selfProg = new Progress({ label: 'scorer self-tables regression', unit: 'pairs', total: sets.length });
  const xs: number[][] = [],
    ys: number[] = [];
  let used = 0,
    pairs = 0;
  sets.forEach((set, i) => {
    const r = selfTablesFeatures(perSet[i]!.cands, set.src, set.trg, m);
    if (r) {
      r.cands.forEach((c, j) => {
        xs.push(c.features);
        ys.push(perSet[i]!.labels[j]!);
      });
      used++;
      pairs += r.pairs;
    }
    selfProg.tick();
  });
  selfProg.done();
  if (used && ys.some((y) => y === 1) && ys.some((y) => y === 0)) {
    m.self = {
      ...fitLogistic(xs, ys, { l2 }),
      trained: { sets: used, candidates: xs.length, positives: ys.reduce((x, y) => x + y, 0), table_pairs: pairs, tables: 'cross-fitted by source' },
    };
    process.stderr.write(
      `[scorer] self-tables regression: ${used} of ${sets.length} sets (tables from ${pairs} pairs their candidates scored ≥ ${SELF_TABLES.threshold} without tables), ${xs.length} candidates\n`,
    );
  } else
    process.stderr.write(
      `[scorer] self-tables regression: no set has ${SELF_TABLES.minPairs} pairs scored ≥ ${SELF_TABLES.threshold} without tables; none fitted\n`,
    );
}

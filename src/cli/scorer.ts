// xling scorer train: the second-stage mining scorer (src/mine/scorer.ts) from BUCC-format gold
// pairs (every xx-en.<split>.{xx,en,gold} triple of a directory) or, without gold, from a parallel
// TSV: translations are the gold pairs, the nearest wrong candidates the negatives.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadNWayTsv, readBucc, readGold } from '../data/corpus.js';
import { goldSet } from '../eval/bucc.js';
import { mineTables } from '../mine/mine.js';
import { trainWordTables, WordAligner, WordTables } from '../mine/align-features.js';
import { addPairFeatures, candidatePairs, fitLogistic, loadScorer, saveScorer, scoreCandidate, ScoredCandidate, ScorerModel, selfTablesFeatures, SELF_TABLES, trainScorer } from '../mine/scorer.js';
import { pairLogits, PairModel, savePairModel, WordInfo } from '../mine/pair-model.js';
import { copiedPool, sibling, truncated } from '../mine/siblings.js';
import { manualSeed, setNumThreads, Tensor } from '../tensor/tensor.js';
import { TrainingInterrupted } from '../train/trainer.js';
import { writeFileAtomicSync } from '../util/atomic.js';
import { Progress } from '../util/progress.js';
import { Rng } from '../util/rng.js';
import { fileStamps } from '../util/stamps.js';
import { command, usage } from './command.js';
import { ParsedArgs } from '../util/args.js';
import { runInterruptible } from './interrupt.js';
import { checkPaths, writeTextOutput } from './io.js';
import { embedTextWords, encoderFingerprint, encoderMismatch, pairModelRows, trainScorerPairModel } from './scorer-pair.js';
import { checkLangOptions, EMBED_OPTIONS, modelDim, vectorsFor } from './vectors.js';
import { pause } from '../util/pause.js';
import { withOutputLock } from '../util/lock.js';

/** A source/target sentence set with its gold pairs (as row indices). */
export interface LabelledSet {
  name: string; srcLang: string; trgLang: string; src: string[]; trg: string[]; gold: Set<string>;
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
    const sf = join(dir, `${sl}-${tl}.${sp}.${sl}`), tf = join(dir, `${sl}-${tl}.${sp}.${tl}`);
    if (!files.includes(`${sl}-${tl}.${sp}.${sl}`) || !files.includes(`${sl}-${tl}.${sp}.${tl}`)) throw new Error(`${join(dir, f)}: no ${sf} or ${tf} beside it`);
    const S = await readBucc(sf), T = await readBucc(tf);
    const g = goldSet(await readGold(join(dir, f)), new Set(S.map((s) => s.id)), new Set(T.map((t) => t.id)), join(dir, f));
    const si = new Map(S.map((s, i) => [s.id, i])), ti = new Map(T.map((t, i) => [t.id, i]));
    const gold = new Set([...g].map((k) => { const [a, b] = k.split('\t') as [string, string]; return `${si.get(a)}\t${ti.get(b)}`; }));
    out.push({ name: `${sl}-${tl}.${sp}`, srcLang: sl, trgLang: tl, src: S.map((s) => s.sentence), trg: T.map((t) => t.sentence), gold });
  }
  if (!out.length) throw new Error(`--bucc ${dir}: no SRC-TRG.SPLIT.gold files${split ? ` of split '${split}'` : ''} (BUCC format: xx-en.dev.xx, xx-en.dev.en, xx-en.dev.gold)`);
  return out;
}

/**
 * BUCC-like sets from an N-way parallel TSV: for each language pair, `rows` rows drawn with a
 * fixed seed; 60% are kept on both sides (the gold pairs), 20% only on the source side and 20%
 * only on the target side (sentences without a translation, as in BUCC).
 */
export async function parallelSets(file: string, pairs: [string, string][] | null, rows: number, seed = 1, tableRows = 5000, o: { siblings?: boolean; truncated?: boolean } = {}): Promise<LabelledSet[]> {
  const { langs, rows: all } = await loadNWayTsv(file);
  const want = pairs ?? langs.filter((l) => l !== 'en').map((l) => [l, 'en'] as [string, string]);
  const out: LabelledSet[] = [];
  for (const [sl, tl] of want) {
    if (!langs.includes(sl) || !langs.includes(tl)) throw new Error(`--pairs ${sl}-${tl}: --parallel ${file} has no column '${!langs.includes(sl) ? sl : tl}' (it has ${langs.join(' ')})`);
    const both = all.filter((r) => r.get(sl) && r.get(tl));
    if (both.length < 10) continue;
    const pick = new Rng(`${seed}:${sl}-${tl}`).shuffle(both.slice()).slice(0, rows);
    const picked = new Set(pick);
    const nPair = Math.round(pick.length * 0.6), nSrc = Math.round(pick.length * 0.2);
    const src: string[] = [], trg: string[] = [], gold = new Set<string>();
    // with siblings: a translation's sibling (one number or name changed, src/mine/siblings.ts) on the
    // side where its translation is missing, and for a quarter of the gold pairs on either side
    const rng = new Rng(`${seed}:${sl}-${tl}:siblings`), pool = o.siblings ? copiedPool(both.map((r) => [r.get(sl)!, r.get(tl)!])) : [];
    const seen = new Set(pick.flatMap((r) => [r.get(sl)!, r.get(tl)!]));
    const add = (list: string[], text: string | null) => { if (text !== null && !seen.has(text)) { seen.add(text); list.push(text); } };
    pick.forEach((r, i) => {
      const a = r.get(sl)!, b = r.get(tl)!;
      if (i < nPair) { gold.add(`${src.length}\t${trg.length}`); src.push(a); trg.push(b); }
      else if (i < nPair + nSrc) src.push(a);
      else trg.push(b);
      if (o.truncated) {
        // a partial translation where the translation is missing, and beside a quarter of the gold pairs
        const tr = new Rng(`${seed}:${sl}-${tl}:truncated:${i}`);
        if (i < nPair) { if (tr.next() < 0.25) add(trg, truncated(b, tr)); } else if (i < nPair + nSrc) add(trg, truncated(b, tr)); else add(src, truncated(a, tr));
      }
      if (!o.siblings) return;
      if (i < nPair) {
        if (rng.next() < 0.25) add(trg, sibling(a, b, 'b', rng, pool));
        if (rng.next() < 0.25) add(src, sibling(a, b, 'a', rng, pool));
      } else if (i < nPair + nSrc) add(trg, sibling(a, b, 'b', rng, pool));
      else add(src, sibling(a, b, 'a', rng, pool));
    });
    const extra = new Rng(`${seed}:${sl}-${tl}:tables`).shuffle(both.filter((r) => !picked.has(r))).slice(0, tableRows).map((r) => [r.get(sl)!, r.get(tl)!] as [string, string]);
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
    if (!langs.includes(set.srcLang) || !langs.includes(set.trgLang)) throw new Error(`--tables ${file}: no column '${!langs.includes(set.srcLang) ? set.srcLang : set.trgLang}' for ${set.name} (it has ${langs.join(' ')})`);
    const inSet = new Set([...set.src, ...set.trg]);
    const both = all.filter((r) => r.get(set.srcLang) && r.get(set.trgLang) && !inSet.has(r.get(set.srcLang)!) && !inSet.has(r.get(set.trgLang)!));
    set.extra = new Rng(`${seed}:${set.srcLang}-${set.trgLang}:tables`).shuffle(both).slice(0, tableRows).map((r) => [r.get(set.srcLang)!, r.get(set.trgLang)!] as [string, string]);
  }
}

/** The scorer's candidates of one set (k-NN both ways with the model's vectors) and their gold labels. */
export function labelledCandidates(set: LabelledSet, model: string, k: number, center: boolean, label: string, o: { minProb?: number } = {}): { cands: ScoredCandidate[]; labels: number[]; tables: WordTables } {
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

function parsePairs(s: string | undefined): [string, string][] | null {
  if (!s) return null;
  return s.split(',').map((p) => {
    const m = /^([A-Za-z_]+)-([A-Za-z_]+)$/.exec(p.trim());
    if (!m) usage(`--pairs: '${p}' is not SRC-TRG (e.g. de-en,fr-en)`);
    return [m[1]!, m[2]!] as [string, string];
  });
}

const scorerTrainSpec = {
  name: 'xling scorer train',
  summary: 'train the second-stage mining scorer (gold BUCC pairs, or a parallel TSV)',
  options: {
    model: { type: 'string', required: true, metavar: 'DIR', help: 'the model whose vectors the scorer will re-score (xling mine --model uses the same)' },
    bucc: { type: 'string', metavar: 'DIR', help: 'BUCC-format triples SRC-TRG.SPLIT.{SRC,TRG,gold} (every one in DIR)' },
    split: { type: 'string', help: 'with --bucc: only this split (e.g. train)' },
    parallel: { type: 'string', metavar: 'TSV', help: 'no gold needed: an N-way parallel TSV(.gz) (header of language codes); translations are the positives, the nearest wrong candidates the negatives' },
    fromParallel: { type: 'string', metavar: 'TSV', help: 'the same as --parallel' },
    pairs: { type: 'string', metavar: 'SRC-TRG,…', help: 'with --parallel: the language pairs (default: every column with en)' },
    rows: { type: 'number', default: 2000, range: { int: true, min: 10 }, help: 'with --parallel: rows drawn per language pair' },
    tables: { type: 'string', metavar: 'TSV', help: "word translation tables from this N-way parallel TSV(.gz) (every row of a language pair unless --table-rows; never a sentence of the scorer's sets); default: with --bucc, the gold pairs themselves (cross-fitted), with --parallel, --table-rows rows of that TSV outside the drawn ones" },
    tableRows: { type: 'number', range: { int: true, min: 1 }, help: 'rows per language pair for the word tables (default: 5000 with --parallel alone, all with --tables)' },
    tableMinProb: { type: 'number', default: 0.05, range: { min: 0, max: 1 }, help: 'word-table entries t(e|f) below this are not kept (smaller scorer files)' },
    k: { type: 'number', alias: 'k', default: 4, range: { int: true, min: 1 }, help: 'neighbours per direction: the candidates of each sentence' },
    l2: { type: 'number', default: 0.01, range: { min: 0 }, help: 'L2 penalty of the logistic regression (standardised features)' },
    output: { type: 'string', alias: 'o', required: true, metavar: 'DIR', help: 'scorer directory to write (scorer.json)' },
    json: { type: 'string', metavar: 'FILE', help: 'training summary as JSON (- for standard output)' },
    center: EMBED_OPTIONS.center,
    threads: { type: 'number', range: { int: true, min: 1 }, help: 'intra-op threads (default: all cores)' },
    resume: { type: 'boolean', default: false, help: "reuse the language pairs that a killed run (or one with --keep-work) finished: their candidates and word tables are kept in OUT.partial until the scorer is written; a pair made from other data or arguments is done again" },
    keepWork: { type: 'boolean', default: false, help: 'keep OUT.partial (each language pair\'s candidates and word tables) after writing the scorer, so that a later --resume run with more pairs does only the new ones' },
    selfHead: { type: 'boolean', default: false, help: "also fit the regression that mining then uses with word tables trained on the run's own pairs (--self-tables, for language pairs the scorer has no tables for): each set's candidates scored without tables, tables trained on its pairs ≥ 0.5 (cross-fitted by source, as mining then trains them), the regression fitted on the features they give. Its probabilities on such pairs mean what they mean on the others (without it they are too high: the gold-trained scorer loses 4–10 F1 at 0.5 on gettext pairs without tables), but out of its training domain it ranks worse (game dialogue: about −1 F1 at the optimum); see bench/RESULTS.md" },
    pairModel: { type: 'boolean', default: false, help: "also train the pair model: a decomposable-attention classifier that reads a candidate pair word by word (each word a vector of --model's encoder), trained on --pair-rows translations of each language pair (from --tables, else --parallel; never a sentence of the scorer's sets) against their nearest wrong neighbours; its logit and its lead over each sentence's other candidates are 3 more features. Slower to train and better: 6 language pairs of 15,000 translations (270,000 examples, 3 epochs) take about 12 minutes on 2 cores; see bench/RESULTS.md" },
    pairFrom: { type: 'string', metavar: 'DIR', help: 'use the pair model of this scorer (one trained with --pair-model on the same --model) instead of training one' },
    pairRows: { type: 'number', default: 15000, range: { int: true, min: 10 }, help: "with --pair-model: translations per language pair it learns from (each gives up to 1 + 2 × --pair-negatives examples)" },
    pairMaxWords: { type: 'number', default: 48, range: { int: true, min: 1, max: 4096 }, help: "with --pair-model: words it reads of each side (the first ones, as Intl.Segmenter splits them: Unicode word boundaries, dictionary words in Chinese, Japanese and Thai)" },
    pairNegatives: { type: 'number', default: 1, range: { int: true, min: 1, max: 16 }, help: "with --pair-model: nearest wrong neighbours per translation it learns from, in each direction" },
    pairEpochs: { type: 'number', default: 3, range: { int: true, min: 1 }, help: 'with --pair-model: passes over its examples' },
    pairHidden: { type: 'number', default: 128, range: { int: true, min: 4, max: 4096 }, help: 'with --pair-model: its hidden units' },
    siblings: { type: 'boolean', default: false, help: "synthetic siblings: a translation with one number, name or code token changed on one side (\"… 68060\" / \"… 68010\"), as wrong candidates — with --parallel among the sets' sentences (where the translation is missing, and for a quarter of the gold pairs), with --pair-model among its examples (one for each translation that copies a token). Off by default: on the gettext mining sets it taught the scorer what it shows (68060 / 68010 from p = 0.98 to 0.25) and moved F1 by ±0.6 a language pair, not on average (bench/RESULTS.md)" },
    truncated: { type: 'boolean', default: false, help: "with --parallel: partial translations (the first 40–70% of a translation's words) among the sets' sentences, where the translation is missing and beside a quarter of the gold pairs, as wrong candidates — what cleaning a crawled corpus (xling scorer score) meets and mining hardly does" },
    pairMatch: { type: 'boolean', default: false, help: "with --pair-model: its comparison of each word with what it aligned to also reads whether the word occurs as such on the other side, has a digit, or is ASCII (names, numbers and code, whose word vectors are alike: 68060 and 68010). Off by default: on the gettext mining sets it sharpened the pair model on names and code but moved the mean F1 by −0.3 to 0 (bench/RESULTS.md)" },
    pairContext: { type: 'number', default: 0, range: { int: true, min: 0, max: 16 }, help: "with --pair-model: each word is read with the C words either side of it (a convolution over the projected words before the two sides are aligned: word order, phrases); 0: each word alone. Off by default: with 1, nothing on the gettext sets (−0.03 F1) and −0.3 on game dialogue (bench/RESULTS.md)" },
    pairSeed: { type: 'number', default: 1, range: { int: true, min: 0 }, help: "with --pair-model: the seed of its initial weights and of the order it reads its examples in (another seed: another equally good run, to see how much two runs differ)" },
    pairPca: { type: 'number', default: 256, range: { int: true, min: 2, max: 4096 }, help: "with --pair-model: dimensions its word vectors are projected to (a PCA of them; at most the encoder's)" },
  },
} as const;

export const scorerTrainCommand = command(['scorer', 'train'], scorerTrainSpec, (a) => runInterruptible('xling scorer train', (signal) => trainScorerCommand(a, signal)), { ownSignals: true });

async function trainScorerCommand(a: ParsedArgs<typeof scorerTrainSpec>, signal: AbortSignal): Promise<void> {
  const parallel = a.parallel ?? a.fromParallel;
  if (!a.bucc === !parallel) usage('give exactly one of --bucc DIR or --parallel TSV');
  if (a.split && !a.bucc) usage('--split needs --bucc');
  if (a.pairs && !parallel) usage('--pairs needs --parallel');
  const pairs = parsePairs(a.pairs);
  if (a.pairModel && a.pairFrom) usage('give --pair-model (train one) or --pair-from DIR (take one), not both');
  if (a.truncated && !parallel) usage('--truncated adds sentences to --parallel sets: give --parallel');
  if (a.siblings && !parallel && !a.pairModel) usage('--siblings adds sentences to --parallel sets and examples to --pair-model: give one of them');
  if (a.pairModel && !a.tables && !parallel) usage('--pair-model learns from translations: give --tables TSV (or train from --parallel TSV)');
  checkPaths([['--pair-from', a.pairFrom, 'in-dir'], ['--model', a.model, 'in-dir'], ['--bucc', a.bucc, 'in-dir'], ['--parallel', parallel, 'in'], ['--json', a.json, 'out-text'], ['--output', a.output, 'out-dir'], ['--output (its work directory)', `${a.output}.partial`, 'out-dir']]);
  if (a.threads) setNumThreads(a.threads);
  checkPaths([['--tables', a.tables, 'in']]);
  if (a.tableRows !== undefined && !a.tables && !parallel) usage('--table-rows needs --tables or --parallel');
  // one process at a time builds OUT (its OUT.partial above all)
  return withOutputLock(a.output, '--output', () => trainScorerLocked(a, signal, parallel, pairs));
}

async function trainScorerLocked(a: ParsedArgs<typeof scorerTrainSpec>, signal: AbortSignal, parallel: string | undefined, pairs: ReturnType<typeof parsePairs>): Promise<void> {
  const sameTsv = !!a.tables && !!parallel && a.tables === parallel;
  const sets = a.bucc ? await buccSets(a.bucc, a.split) : await parallelSets(parallel!, pairs, a.rows, 1, sameTsv ? (a.tableRows ?? Infinity) : (a.tableRows ?? 5000), { siblings: a.siblings, truncated: a.truncated });
  // every pair's languages known to the model before any work; of a TSV's columns taken by default, the others are left out
  const known = sets.filter((set) => {
    try {
      const what = a.bucc ? `--bucc ${a.bucc} (${set.name})` : `--pairs ${set.srcLang}-${set.trgLang}`;
      checkLangOptions(a.model, [[what, set.srcLang], [what, set.trgLang]]);
      return true;
    } catch (e) {
      // the option's advice ('auto' …) is not for a language pair
      const msg = (e as Error).message.replace(/; give one of them.*$/, '');
      if (a.bucc || pairs) throw new Error(msg);
      process.stderr.write(`[scorer] ${set.srcLang}-${set.trgLang}: left out (${msg.replace(/^--pairs \S+ /, '')})\n`);
      return false;
    }
  });
  if (!known.length) throw new Error(`--parallel ${parallel}: the model knows no language pair of its columns`);
  sets.splice(0, sets.length, ...known);
  // a pair model to take: checked before any work
  let pairFrom: ScorerModel | null = null;
  if (a.pairFrom) {
    pairFrom = loadScorer(a.pairFrom);
    if (!pairFrom.pairModel) throw new Error(`--pair-from ${a.pairFrom}: that scorer has no pair model (train one with --pair-model)`);
    if (pairFrom.pairModel.config.dim !== modelDim(a.model)) throw new Error(`--pair-from ${a.pairFrom}: its pair model reads ${pairFrom.pairModel.config.dim}-dimensional word vectors; --model ${a.model} gives ${modelDim(a.model)} (it was trained with another encoder)`);
    const other = encoderMismatch(pairFrom.pair!.trained, a.model, `--pair-from ${a.pairFrom}'s pair model`, 'its word vectors');
    if (other) process.stderr.write(`[scorer] warning: ${other}\n`);
  }
  if (a.tables && !sameTsv) await attachTables(sets, a.tables, a.tableRows ?? Infinity);
  const perSet: { cands: ScoredCandidate[]; labels: number[] }[] = [];
  const cands: ScoredCandidate[] = [], labels: number[] = [];
  const tables: Record<string, WordTables> = {};
  const per: Record<string, { sentences: [number, number]; gold: number; candidates: number; gold_candidates: number }> = {};
  // each language pair's candidates and tables are kept in OUT.partial as they are made, so that
  // --resume continues a killed run; a pair is reused only when everything it was made from is the same
  const work = `${a.output}.partial`;
  if (!a.resume && existsSync(work)) {
    rmSync(work, { recursive: true, force: true });
    process.stderr.write(`[scorer] removed ${work} of an earlier run (--resume reuses it)\n`);
  }
  mkdirSync(work, { recursive: true });
  const modelStamp = fileStamps(a.model);
  const encoder = encoderFingerprint(a.model);
  const prog = new Progress({ label: 'scorer train', unit: 'pairs', total: sets.length });
  let reused = 0;
  for (const set of sets) {
    const key = createHash('sha256').update(JSON.stringify({ model: modelStamp, k: a.k, center: a.center, minProb: a.tableMinProb, set: set.name, src: set.src, trg: set.trg, gold: [...set.gold], extra: set.extra ?? null })).digest('hex');
    const file = join(work, `${set.name.replace(/[^\w.-]/g, '_')}.json`);
    let r: ReturnType<typeof labelledCandidates> | null = null;
    let fromCache = false;
    if (a.resume && existsSync(file)) {
      try {
        const c = JSON.parse(readFileSync(file, 'utf8')) as { key: string; r: ReturnType<typeof labelledCandidates> };
        if (c.key === key) { r = c.r; reused++; fromCache = true; } else process.stderr.write(`[scorer] ${set.name}: made with other arguments in ${work}; done again\n`);
      } catch { process.stderr.write(`[scorer] ${set.name}: ${file} unreadable; done again\n`); }
    }
    if (!r) {
      r = labelledCandidates(set, a.model, a.k, a.center, 'scorer', { minProb: a.tableMinProb });
      writeFileAtomicSync(file, JSON.stringify({ key, r }));
    }
    perSet.push({ cands: r.cands, labels: r.labels });
    tables[`${set.srcLang}-${set.trgLang}`] = r.tables;
    const hit = r.labels.reduce((x, y) => x + y, 0);
    per[set.name] = { sentences: [set.src.length, set.trg.length], gold: set.gold.size, candidates: r.cands.length, gold_candidates: hit };
    process.stderr.write(`[scorer] ${set.name}: ${set.src.length} × ${set.trg.length} sentences, ${set.gold.size} gold pairs, ${r.cands.length} candidates (${hit} gold among them); word tables from ${set.extra ? `${set.extra.length} parallel rows` : 'the gold pairs'}${fromCache ? ' (reused)' : ''}\n`);
    prog.tick();
    // a signal stops the run here (each pair done is kept in OUT.partial for --resume)
    await pause();
    if (signal.aborted) throw new TrainingInterrupted(null, work);
  }
  prog.done();
  if (reused) process.stderr.write(`[scorer] --resume: ${reused} of ${sets.length} language pairs reused from ${work}\n`);
  // the pair model (trained here or taken from --pair-from), its logits as three more features of every set's candidates
  let pair: { pm: PairModel; table: Tensor; words: WordInfo; ids: { src: number[][]; trg: number[][] }[]; trained: Record<string, unknown> } | null = null;
  if (a.pairModel) {
    const file = a.tables ?? parallel!;
    const rows = await pairModelRows(file, sets.map((s) => ({ srcLang: s.srcLang, trgLang: s.trgLang, exclude: new Set([...s.src, ...s.trg]) })), a.pairRows);
    // (the epochs are not in the key: a resumed run may go on for more of them)
    const key = createHash('sha256').update(JSON.stringify({ model: modelStamp, center: a.center, file: fileStamps(file).join(), rows: a.pairRows, negatives: a.pairNegatives, maxWords: a.pairMaxWords, sets: sets.map((s) => s.name), hidden: a.pairHidden, pca: a.pairPca, match: a.pairMatch, siblings: a.siblings, ...(a.pairContext ? { context: a.pairContext } : {}), ...(a.pairSeed !== 1 ? { seed: a.pairSeed } : {}) })).digest('hex');
    manualSeed(a.pairSeed);
    pair = await trainScorerPairModel(sets.map((s, i) => ({ srcLang: s.srcLang, trgLang: s.trgLang, sentences: { src: s.src, trg: s.trg }, rows: rows[i]! })),
      { model: a.model, dim: modelDim(a.model), center: a.center, hidden: a.pairHidden, pca: a.pairPca, epochs: a.pairEpochs, negatives: a.pairNegatives, maxWords: a.pairMaxWords, match: a.pairMatch, context: a.pairContext, siblings: a.siblings, work, resume: a.resume, key, signal });
    pair.trained = { ...pair.trained, rows_from: file, rows_per_pair: a.pairRows, negatives: a.pairNegatives, seed: a.pairSeed, encoder, encoder_dir: a.model };
  } else if (pairFrom) {
    const pm = pairFrom.pairModel!;
    const e = embedTextWords(a.model, sets.flatMap((s) => [{ key: s.srcLang, lang: s.srcLang, texts: s.src }, { key: s.trgLang, lang: s.trgLang, texts: s.trg }]), pm.config);
    pair = { pm, table: pm.wordTable(e.vectors, e.n), words: e.info, ids: sets.map((_, i) => ({ src: e.ids[2 * i]!, trg: e.ids[2 * i + 1]! })), trained: { ...pairFrom.pair!.trained, from: a.pairFrom } };
  }
  for (const [i, { cands: c, labels: l }] of perSet.entries()) {
    if (pair) {
      const { src, trg } = pair.ids[i]!;
      addPairFeatures(c, await pairLogits(pair.pm, pair.table, c.map((x) => src[x.src]!), c.map((x) => trg[x.trg]!), { words: pair.words }));
    }
    cands.push(...c); labels.push(...l);
  }
  const pairInfo = pair ? { file: 'pair-model.safetensors', config: pair.pm.config, trained: pair.trained } : undefined;
  const m = trainScorer(cands, labels, a.k, { data: a.bucc ? 'bucc' : 'parallel', ...(a.truncated ? { synthetic: 'truncated' } : {}), encoder, encoder_dir: a.model, sets: Object.keys(per), word_tables: a.tables ? `${a.tables}${a.tableRows ? ` (${a.tableRows} rows a pair)` : ''}` : a.bucc ? 'gold pairs' : `${a.tableRows ?? 5000} rows a pair` }, { l2: a.l2, tables, pair: pairInfo, pairModel: pair?.pm });
  let correct = 0;
  cands.forEach((c, i) => { if ((scoreCandidate(m, c.features) >= 0.5 ? 1 : 0) === labels[i]) correct++; });
  m.trained.training_accuracy = correct / cands.length;
  if (a.selfHead) {
    // what mining with self-trained tables does to each set, and the regression fitted on it
    const selfProg = new Progress({ label: 'scorer self-tables regression', unit: 'pairs', total: sets.length });
    const xs: number[][] = [], ys: number[] = [];
    let used = 0, pairs = 0;
    sets.forEach((set, i) => {
      const r = selfTablesFeatures(perSet[i]!.cands, set.src, set.trg, m);
      if (r) { r.cands.forEach((c, j) => { xs.push(c.features); ys.push(perSet[i]!.labels[j]!); }); used++; pairs += r.pairs; }
      selfProg.tick();
    });
    selfProg.done();
    if (used && ys.some((y) => y === 1) && ys.some((y) => y === 0)) {
      m.self = { ...fitLogistic(xs, ys, { l2: a.l2 }), trained: { sets: used, candidates: xs.length, positives: ys.reduce((x, y) => x + y, 0), table_pairs: pairs, tables: 'cross-fitted by source' } };
      process.stderr.write(`[scorer] self-tables regression: ${used} of ${sets.length} sets (tables from ${pairs} pairs their candidates scored ≥ ${SELF_TABLES.threshold} without tables), ${xs.length} candidates\n`);
    } else process.stderr.write(`[scorer] self-tables regression: no set has ${SELF_TABLES.minPairs} pairs scored ≥ ${SELF_TABLES.threshold} without tables; none fitted\n`);
  }
  if (pair) { mkdirSync(a.output, { recursive: true }); savePairModel(pair.pm, join(a.output, 'pair-model.safetensors')); }
  saveScorer(a.output, m);
  if (!a.keepWork) rmSync(work, { recursive: true, force: true });
  const summary = { output: a.output, sets: per, candidates: cands.length, positives: labels.reduce((x, y) => x + y, 0), training_accuracy: correct / cands.length, k: a.k, ...(pair ? { pair_model: pair.trained } : {}), self_head: m.self?.trained ?? null };
  process.stderr.write(`[scorer] ${cands.length} candidates, training accuracy ${(100 * summary.training_accuracy).toFixed(2)}% → ${a.output}\n`);
  if (a.json) writeTextOutput(a.json, JSON.stringify(summary, null, 1) + '\n');
}

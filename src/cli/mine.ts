// xling mine: parallel sentences out of two unaligned corpora, by margin-scored k-NN.
import { readSentences } from '../data/corpus.js';
import { readFileSync } from 'node:fs';
import { candidatesFromKnn, gatherRows, MarginKind, mineTables, mineTablesAsync, Retrieval, unify } from '../mine/mine.js';
import { AutoThreshold, chooseThreshold } from '../mine/auto-threshold.js';
import { FilterOptions, thresholdForPrecision } from '../mine/filters.js';
import { MinedRow, MinedRun, minedFiles } from '../mine/mined-files.js';
import { Assignment, mineTablesWithScorer } from '../mine/scorer.js';
import { openScorer, pairLogitsFor } from './scorer-pair.js';
import { resolveLangCode } from '../embed/language.js';
import { LID_CONFIDENCE, loadLanguageIdentifier } from '../text/lid.js';
import { setNumThreads } from '../tensor/tensor.js';
import { Progress } from '../util/progress.js';
import { command, usage } from './command.js';
import { openIndex } from './index-cmds.js';
import { checkPaths, inContext, writeTextOutput } from './io.js';
import { checkLangOptions, EMBED_OPTIONS, EmbedSettings, LANG_HELP, vectorsFor } from './vectors.js';
import { modelOrDefault } from './default-model.js';

export const MINE_OPTIONS = {
  k: { type: 'number', alias: 'k', default: 4, range: { int: true, min: 1 }, help: 'neighbours per direction for the margin' },
  margin: { type: 'string', default: 'ratio', choices: ['ratio', 'distance', 'absolute', 'eq9', 'eq10'], help: 'candidate scoring' },
  retrieval: { type: 'string', default: 'max', choices: ['fwd', 'bwd', 'intersect', 'max'], help: 'candidate selection' },
} as const;

/** With --model: both sides are embedded as xling embed embeds a file (same options and defaults). */
export const MINE_EMBED_OPTIONS = {
  srcLang: { type: 'string', help: `with --model, language of --src: ${LANG_HELP}` },
  trgLang: { type: 'string', help: 'with --model, language of --trg (as --src-lang)' },
  ...EMBED_OPTIONS,
  threads: { type: 'number', range: { int: true, min: 1 }, help: 'intra-op threads (default: all cores)' },
} as const;

/** How --src and --trg are embedded with --model (as xling embed would, for the same vectors). */
export function embedSettingsOf(a: { center: boolean; forceCenter?: boolean; batchTokens?: number; batchSentences?: number }, lang: string | undefined, langFlag: string, label: string): EmbedSettings {
  return { lang, langFlag, center: a.center, forceCenter: a.forceCenter, batchTokens: a.batchTokens, batchSentences: a.batchSentences, label };
}

/** k for ns sources and nt targets: never more than either side has; said on stderr when capped. */
export function effectiveK(k: number, ns: number, nt: number, label: string): number {
  const used = Math.min(k, ns, nt);
  if (used < k) process.stderr.write(`[${label}] warning: -k ${k} is more than the ${Math.min(ns, nt)} ${ns <= nt ? 'source' : 'target'} sentences; using k=${used}\n`);
  return used;
}

/** The corpora and their vectors, and the score threshold: xling mine's, shared with xling cluster mine. */
export const MINE_INPUT_OPTIONS = {
  src: { type: 'string', required: true, metavar: 'FILE', help: 'source sentences: plain lines or BUCC id<TAB>sentence' },
  trg: { type: 'string', required: true, metavar: 'FILE', help: 'target sentences, same formats' },
  srcVectors: { type: 'string', metavar: 'NPY', help: 'vectors of --src (one row per line)' },
  trgVectors: { type: 'string', metavar: 'NPY', help: 'vectors of --trg' },
  threshold: { type: 'string', metavar: 'T|auto', help: "keep pairs scoring at least T; with --scorer, 'auto': the threshold at which the scorer's probabilities of the run's pairs expect the best F1 (no gold pairs needed; 0.5 or below, lower where fewer pairs are sure)" },
} as const;

export const MINE_SCORING_OPTIONS = {
  scorer: { type: 'string', metavar: 'DIR', help: 're-score the candidates with this second-stage scorer (xling scorer train); rows become probability<TAB>margin<TAB>src<TAB>trg and the threshold (default 0.5) applies to the probability' },
  thresholdFrom: { type: 'string', metavar: 'JSON', help: "apply the threshold calibrated on a dev pair (xling eval bucc --json: its F1-optimal 'threshold', or with --target-precision the one reaching that precision)" },
  targetPrecision: { type: 'number', range: { min: 0, max: 1 }, help: 'with --threshold-from: the lowest threshold whose dev precision reaches P' },
  assignment: { type: 'string', default: 'greedy', choices: ['greedy', 'exchange'], help: "with --scorer: pairs are one to one (each sentence at most once), taken greedily by probability; 'exchange' then improves the assignment by exchanges that raise the summed probability" },
  selfTables: { type: 'boolean', default: true, help: "with --scorer that has no word tables for the language pair: train them on the pairs it scores ≥ 0.5 without them, then score again with them (--no-self-tables: leave its word-alignment features empty)" },
  header: { type: 'boolean', default: false, help: 'first line: # model, margin, retrieval, k, scorer (and its word tables: scorer, self:N or none) and threshold of the run' },
} as const;

export const MINE_FILTER_OPTIONS = {
  minChars: { type: 'number', range: { int: true, min: 0 }, help: 'filter: drop pairs with a side shorter than N characters' },
  maxChars: { type: 'number', range: { int: true, min: 1 }, help: 'filter: drop pairs with a side longer than N characters' },
  maxLengthRatio: { type: 'number', range: { min: 1 }, help: 'filter: drop pairs whose longer side has more than R times the characters of the shorter' },
  dedup: { type: 'string', metavar: 'src,trg,pair', help: 'filter: drop pairs whose source, target or pair (normalised) a better pair already has (a list, or all)' },
  dropIdentical: { type: 'boolean', default: false, help: 'filter: drop pairs whose sides are the same text (normalised)' },
  minLetterShare: { type: 'number', range: { min: 0, max: 1 }, help: 'filter: drop pairs with a side whose non-space characters are less than this share letters (numbers, punctuation, code)' },
  lidFilter: { type: 'boolean', default: false, help: `filter: drop pairs where a side is identified (confidence ≥ ${LID_CONFIDENCE}) as another language than --src-lang / --trg-lang (the identifier of --model, or of --lid; a variant of the language asked, pt and pt_BR, counts as it)` },
  lid: { type: 'string', metavar: 'DIR', help: 'with --lid-filter: a model directory whose language identifier (lid.json) to use (default: --model)' },
  stats: { type: 'string', metavar: 'JSON', help: 'counts of kept and rejected pairs by reason, and the run settings (- for standard output)' },
  keepAll: { type: 'string', metavar: 'TSV', help: 'write the rejected pairs here, each row prefixed by its reason' },
} as const;

export const mineCommand = command(['mine'], {
  name: 'xling mine',
  summary: 'mine parallel sentences from two monolingual corpora',
  options: {
    ...MINE_INPUT_OPTIONS,
    model: { type: 'string', metavar: 'DIR', help: 'embed both sides with this model instead (without both --src-vectors and --trg-vectors, default: the model that comes with xling, models/default)' },
    ...MINE_OPTIONS,
    unify: { type: 'boolean', default: false, help: 'deduplicate identical lines before search' },
    index: { type: 'string', metavar: 'FAISS', help: 'search src→trg through this index over the trg vectors (ids = trg line numbers from 0); the neighbours found are scored exactly, and with --scorer are its candidates' },
    nprobe: { type: 'number', range: { int: true, min: 1 }, help: 'nprobe for --index' },
    output: { type: 'string', alias: 'o', required: true, metavar: 'TSV', help: 'score<TAB>src<TAB>trg (BUCC input: score<TAB>src_id<TAB>trg_id), best first; - for standard output' },
    ...MINE_EMBED_OPTIONS,
    ...MINE_SCORING_OPTIONS,
    ...MINE_FILTER_OPTIONS,
  },
}, async (a) => {
  if (a.unify && a.index) usage('--unify and --index cannot be combined (index rows are the original lines)');
  if (a.assignment !== 'greedy' && !a.scorer) usage('--assignment goes with --scorer (margin mining keeps its --retrieval rule)');
  if (a.targetPrecision !== undefined && !a.thresholdFrom) usage('--target-precision needs --threshold-from (the xling eval bucc --json of a dev pair)');
  if (a.threshold !== undefined && a.thresholdFrom) usage('give --threshold or --threshold-from, not both');
  const asked = parseThreshold(a.threshold);
  if (asked === 'auto' && !a.scorer) usage("--threshold auto goes with --scorer (its probabilities give the threshold; a margin's scale moves with the vectors and the domain: calibrate one on a dev pair with xling eval bucc --json, then --threshold-from)");
  // no --model and a side without --*-vectors: the default model embeds it
  const model = a.model ?? (a.srcVectors && a.trgVectors ? undefined : modelOrDefault(undefined));
  const filters = filterOptionsOf(a);
  filters.lid = lidFilterOf(a, model);
  checkPaths([['--src', a.src, 'in-text'], ['--trg', a.trg, 'in-text'], ['--src-vectors', a.srcVectors, 'in'], ['--trg-vectors', a.trgVectors, 'in'], ['--model', model, 'in-dir'], ['--index', a.index, 'in'], ['--scorer', a.scorer, 'in-dir'], ['--threshold-from', a.thresholdFrom, 'in'], ['--output', a.output, 'out-text'], ['--stats', a.stats, 'out-text'], ['--keep-all', a.keepAll, 'out-text']]);
  const opened = openScorer(a.scorer, model, a.srcLang, a.trgLang, 'mine', { selfTables: a.selfTables });
  const scorer = opened?.scorer ?? null;
  // a scorer's default threshold is 0.5; with 'auto' it is chosen after mining, from every pair's probability
  let threshold = a.thresholdFrom ? thresholdFromFile(a.thresholdFrom, a.targetPrecision, { scorer: !!scorer, margin: a.margin, k: a.k, scorerTables: opened ? !!opened.aligner : undefined }) : asked === 'auto' ? undefined : asked ?? (scorer ? 0.5 : undefined);
  if (a.threads) setNumThreads(a.threads);
  checkLangOptions(model, [['--src-lang', a.srcLang], ['--trg-lang', a.trgLang]]);
  const t0 = performance.now();
  const S = await readSentences(a.src), T = await readSentences(a.trg);
  let sv = vectorsFor(S.sentences, a.srcVectors, model, `--src ${a.src}`, embedSettingsOf(a, a.srcLang, '--src-lang', 'mine'));
  let tv = vectorsFor(T.sentences, a.trgVectors, model, `--trg ${a.trg}`, embedSettingsOf(a, a.trgLang, '--trg-lang', 'mine'));
  if (sv.d !== tv.d) throw new Error(`dimension mismatch: ${a.srcVectors ? `--src-vectors ${a.srcVectors}` : '--model'} gives ${sv.d} columns, ${a.trgVectors ? `--trg-vectors ${a.trgVectors}` : '--model'} ${tv.d}`);
  let sMap: Int32Array | null = null, tMap: Int32Array | null = null;
  if (a.unify) {
    const us = unify(S.sentences), ut = unify(T.sentences);
    sv = { data: gatherRows(sv.data, sv.d, us.first), n: us.first.length, d: sv.d };
    tv = { data: gatherRows(tv.data, tv.d, ut.first), n: ut.first.length, d: tv.d };
    sMap = us.first; tMap = ut.first;
    process.stderr.write(`[mine] unified ${S.sentences.length}→${sv.n} source and ${T.sentences.length}→${tv.n} target lines\n`);
  }
  const index = a.index ? openIndex('--index', a.index, a.nprobe) : undefined;
  if (index) {
    if (index.d !== tv.d) throw new Error(`--index ${a.index}: dimension ${index.d}, but the target vectors have ${tv.d}`);
    if (index.ntotal !== tv.n) throw new Error(`--index ${a.index}: holds ${index.ntotal} vectors, --trg ${a.trg} has ${tv.n} lines`);
  }
  if (scorer && a.k !== scorer.k) process.stderr.write(`[mine] the scorer was trained on candidates of k=${scorer.k}: using k=${scorer.k}\n`);
  const k = effectiveK(scorer ? scorer.k : a.k, sv.n, tv.n, 'mine');
  const su = sMap ? Array.from(sMap, (i) => S.sentences[i]!) : S.sentences, tu = tMap ? Array.from(tMap, (i) => T.sentences[i]!) : T.sentences;
  const pairLogits = scorer?.pairModel ? pairLogitsFor(scorer.pairModel, model!, su, tu, a.srcLang, a.trgLang) : undefined;
  // both directions' k-NN: the exact search off the main thread, so that Ctrl-C stops it between chunks
  const prog = new Progress({ label: 'mine k-NN (both directions)', unit: 'rows', total: sv.n + tv.n });
  const opts = { k, margin: a.margin as MarginKind, retrieval: a.retrieval as Retrieval, threshold, trgIndex: index, chunk: 16384, onProgress: (done: number) => prog.set(done) };
  const tables = await (index ? inContext(`searching --index ${a.index}`, () => mineTables(sv.data, tv.data, sv.d, opts)) : mineTablesAsync(sv.data, tv.data, sv.d, opts));
  prog.done();
  let rows: MinedRow[];
  if (scorer) {
    rows = (await mineTablesWithScorer(tables.fwd, tables.bwd, su, tu, scorer, { aligner: opened!.aligner, selfTables: opened!.selfTables, pairLogits, threshold: threshold ?? 0, assignment: a.assignment as Assignment, onCandidates: candidateProgress() }))
      .map((c) => ({ src: c.src, trg: c.trg, score: c.prob, cos: c.cos, margin: c.margin }));
  } else {
    rows = candidatesFromKnn(tables.fwd, tables.bwd, opts).map((c) => ({ ...c, margin: c.score }));
  }
  index?.dispose();
  let auto: AutoThreshold | null = null;
  if (asked === 'auto') {
    auto = chooseThreshold(rows.map((r) => r.score), (l) => process.stderr.write(`[mine] ${l}\n`));
    threshold = auto.threshold;
    rows = rows.filter((r) => r.score >= auto!.threshold);
  }
  const run: MinedRun = { model: model ?? null, margin: a.margin, retrieval: scorer ? 'scorer' : a.retrieval, k, scorer: a.scorer ?? null, wordTables: opened?.wordTables(), threshold, auto };
  const out = minedFiles(rows, S, T, filters, run, { header: a.header, sMap, tMap });
  if (out.filtered) process.stderr.write(`[mine] ${out.filtered}\n`);
  writeTextOutput(a.output, out.text);
  if (a.keepAll) writeTextOutput(a.keepAll, out.rejected);
  if (a.stats) writeTextOutput(a.stats, out.stats);
  process.stderr.write(`[mine] ${out.pairs} pairs (${scorer ? `scorer ${a.scorer}` : `${a.margin}, ${a.retrieval}`}, k=${k}${threshold !== undefined ? `, threshold ${auto ? `${threshold.toPrecision(6)} (auto)` : threshold}` : ''}) in ${((performance.now() - t0) / 1000).toFixed(1)}s → ${a.output === '-' ? 'standard output' : a.output}\n`);
});

/**
 * Progress of a scorer's passes over the candidates (ScoringOptions.onCandidates): a bar for each
 * pass, one after another — the k-NN's and the pair model's bars are their own.
 */
export function candidateProgress(): (done: number, total: number, pass: number) => void {
  let feats: Progress | null = null;
  return (done, total, pass) => {
    if (done === 0 && !feats) feats = new Progress({ label: pass ? 'scorer features, with the word tables' : 'scorer features', unit: 'candidates', total });
    feats?.set(done);
    if (done === total) { feats?.done(); feats = null; }
  };
}

/** --threshold: a number, or 'auto' (chosen from the run's own scores). */
export function parseThreshold(raw: string | undefined): number | 'auto' | undefined {
  if (raw === undefined) return undefined;
  if (raw.trim().toLowerCase() === 'auto') return 'auto';
  const v = raw.trim() === '' ? NaN : Number(raw);
  if (!Number.isFinite(v)) usage(`--threshold expects a number or 'auto', got '${raw}'`);
  return v;
}

/**
 * --lid-filter: the identifier (of --lid DIR, else of --model: `model`, null for a command without
 * --model) and the languages asked for, checked before any work; undefined without --lid-filter.
 */
export function lidFilterOf(a: { lidFilter: boolean; lid?: string; srcLang?: string; trgLang?: string }, model: string | undefined | null): (NonNullable<FilterOptions['lid']> & { dir: string }) | undefined {
  if (a.lid && !a.lidFilter) usage('--lid goes with --lid-filter');
  if (!a.lidFilter) return undefined;
  const dir = a.lid ?? model;
  if (!dir) usage(`--lid-filter needs ${model === null ? '--lid DIR (a model directory with a language identifier)' : '--model (or --lid DIR)'} for its language identifier`);
  const code = (v: string | undefined) => (v && !/^auto/i.test(v) && v.toLowerCase() !== 'none' ? v : undefined);
  if (!code(a.srcLang) && !code(a.trgLang)) usage('--lid-filter needs the language asked for: --src-lang and/or --trg-lang (a code)');
  checkPaths([['--lid', a.lid, 'in-dir']]);
  const lid = loadLanguageIdentifier(dir);
  if (!lid) throw new Error(`--lid-filter: ${dir} has no language identifier (lid.json; add one with xling train-lid)`);
  const src = code(a.srcLang) && resolveLangCode(a.srcLang!, lid.languages, '--src-lang'), trg = code(a.trgLang) && resolveLangCode(a.trgLang!, lid.languages, '--trg-lang');
  return { dir, identify: (t) => lid.identify(t), src: src || undefined, trg: trg || undefined, minConfidence: LID_CONFIDENCE };
}

/** The filters of a mine command line. */
export function filterOptionsOf(a: { minChars?: number; maxChars?: number; maxLengthRatio?: number; dedup?: string; dropIdentical?: boolean; minLetterShare?: number }): FilterOptions {
  const dd = new Set<string>();
  for (const x of (a.dedup ?? '').split(',').map((y) => y.trim()).filter(Boolean)) {
    if (x === 'all') { dd.add('src'); dd.add('trg'); dd.add('pair'); } else if (['src', 'trg', 'pair'].includes(x)) dd.add(x);
    else usage(`--dedup: '${x}' is not one of src, trg, pair, all`);
  }
  if (a.minChars !== undefined && a.maxChars !== undefined && a.minChars > a.maxChars) usage(`--min-chars ${a.minChars} is more than --max-chars ${a.maxChars}`);
  return { minChars: a.minChars, maxChars: a.maxChars, maxLengthRatio: a.maxLengthRatio, dedupSrc: dd.has('src'), dedupTrg: dd.has('trg'), dedupPair: dd.has('pair'), dropIdentical: a.dropIdentical, minLetterShare: a.minLetterShare };
}

/** How a run scores candidates, to check a calibration file against: with a scorer, or by which margin over how many neighbours. */
export interface ScoringOfRun { scorer: boolean; margin: string; k: number; /** With a scorer: whether it has word tables for this run's language pair. */ scorerTables?: boolean }

/**
 * The threshold of an xling eval bucc --json: its F1-optimal one, or the lowest reaching a
 * precision. Refused when the file's scores are not this run's: calibrated with a scorer and
 * applied without one (or the reverse), or, without a scorer, with another margin, or another k
 * for a margin that depends on the neighbours (all but absolute). Files written before these
 * fields were recorded are taken as they are.
 */
export function thresholdFromFile(file: string, precision: number | undefined, run: ScoringOfRun, label = 'mine'): number {
  let j: { threshold?: unknown; cuts?: unknown; scorer?: unknown; margin?: unknown; k?: unknown; kRequested?: unknown; word_tables?: unknown };
  try { j = JSON.parse(readFileSync(file, 'utf8')) as typeof j; } catch (e) { throw new Error(`--threshold-from ${file}: ${(e as Error).message}`); }
  if (j === null || typeof j !== 'object' || Array.isArray(j)) throw new Error(`--threshold-from ${file}: not an xling eval bucc --json object`);
  if (run.scorer !== (typeof j.scorer === 'string')) throw new Error(`--threshold-from ${file}: calibrated ${typeof j.scorer === 'string' ? 'with' : 'without'} a scorer, but this run is ${run.scorer ? 'with' : 'without'} one (the scores are not comparable)`);
  if (!run.scorer) {
    if (typeof j.margin === 'string' && j.margin !== run.margin) throw new Error(`--threshold-from ${file}: calibrated with --margin ${j.margin}, but this run uses --margin ${run.margin} (the scores are not comparable)`);
    const k = typeof j.kRequested === 'number' ? j.kRequested : j.k;
    if (run.margin !== 'absolute' && typeof k === 'number' && k !== run.k) throw new Error(`--threshold-from ${file}: calibrated with k=${k}, but this run uses k=${run.k} (a ${run.margin} margin's scale depends on the neighbours it averages; give -k ${k})`);
  } else if (run.scorerTables !== undefined && typeof j.word_tables === 'string' && (j.word_tables === 'scorer') !== run.scorerTables) {
    // the same scorer, but its word-alignment features from other tables: the probabilities move (a warning: they stay probabilities)
    process.stderr.write(`[${label}] warning: --threshold-from ${file} was calibrated ${j.word_tables === 'scorer' ? "with the scorer's own word tables for its pair" : `without them (${j.word_tables})`}, and this run ${run.scorerTables ? 'has them' : 'has none for its pair'}: the probabilities are not quite comparable (see bench/RESULTS.md, --self-tables)\n`);
  }
  if (precision === undefined) {
    if (typeof j.threshold !== 'number' || !Number.isFinite(j.threshold)) throw new Error(`--threshold-from ${file}: no finite numeric 'threshold'`);
    return j.threshold;
  }
  if (!Array.isArray(j.cuts)) throw new Error(`--threshold-from ${file}: no 'cuts' (P/R by threshold; made by a newer xling eval bucc --json)`);
  const curve = (j.cuts as unknown[]).map((c, i) => {
    if (!Array.isArray(c) || c.length < 2 || typeof c[0] !== 'number' || typeof c[1] !== 'number') throw new Error(`--threshold-from ${file}: cuts[${i}] is not [threshold, precision, recall]`);
    return { threshold: c[0] as number, precision: c[1] as number };
  });
  const t = thresholdForPrecision(curve, precision);
  if (t === null) throw new Error(`--threshold-from ${file}: no threshold reaches precision ${precision} on that dev set`);
  process.stderr.write(`[${label}] threshold ${t} reaches precision ${precision} on ${file}\n`);
  return t;
}

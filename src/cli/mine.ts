// xling mine: parallel sentences out of two unaligned corpora, by margin-scored k-NN (LASER's
// mine_bitexts), optionally re-scored by a second-stage scorer; tuning knobs in --config.
import { readSentences } from '../data/corpus.js';
import { candidatesFromKnn, gatherRows, MarginKind, mineTables, mineTablesAsync, Retrieval, unify } from '../mine/mine.js';
import { AutoThreshold, chooseThreshold } from '../mine/auto-threshold.js';
import { MinedRow, MinedRun, minedFiles } from '../mine/mined-files.js';
import { Assignment, mineTablesWithScorer } from '../mine/scorer.js';
import { openScorer, pairLogitsFor } from './scorer-pair.js';
import { Progress } from '../util/progress.js';
import { command, usage } from './command.js';
import { openIndex } from './index-cmds.js';
import { checkPaths, inContext, writeTextOutput } from './io.js';
import { checkLangOptions, vectorsFor } from './vectors.js';
import { modelOrDefault } from './default-model.js';
import { candidateProgress, checkTargetPrecision, configWhere, effectiveK, embedSettingsOf, filterOptionsOf, lidFilterOf, MINE_CONFIG_OPTION, MINE_FILTER_OPTIONS, MINE_INPUT_OPTIONS, MINE_MODEL_OPTIONS, MINE_OPTIONS, MINE_SCORING_OPTIONS, parseThreshold, settingsOf, thresholdFromFile } from './mine-options.js';

export const mineCommand = command(['mine'], {
  name: 'xling mine',
  summary: 'mine parallel sentences from two monolingual corpora',
  description: 'Margin-scored k-NN of both directions (LASER), or with --scorer a second-stage scorer\'s probabilities. Tuning knobs (filters, assignment, word tables, nprobe, header, embedding batches, threads) are in the --config file: see docs/mine-and-score.md and configs/scorer-mine.json.',
  options: {
    ...MINE_INPUT_OPTIONS,
    ...MINE_MODEL_OPTIONS,
    output: { type: 'string', alias: 'o', required: true, metavar: 'TSV', help: 'score<TAB>src<TAB>trg, best first (- for stdout)' },
    ...MINE_OPTIONS,
    unify: { type: 'boolean', default: false, help: 'deduplicate identical lines before search' },
    index: { type: 'string', metavar: 'FAISS', help: 'search src→trg through this index of --trg' },
    ...MINE_SCORING_OPTIONS,
    ...MINE_FILTER_OPTIONS,
    config: MINE_CONFIG_OPTION,
  },
  examples: [
    'xling mine --src de.txt --trg en.txt --src-lang de --trg-lang en -o mined.tsv',
    'xling mine --src de.txt --trg en.txt --src-lang de --trg-lang en --scorer scorers/p --config configs/scorer-mine.json --stats stats.json -o mined.tsv',
  ],
}, async (a) => {
  const s = settingsOf('xling mine', a.config);
  if (a.unify && a.index) usage('--unify and --index cannot be combined (index rows are the original lines)');
  if (s.nprobe !== null && !a.index) usage(`${configWhere(a.config)}: 'nprobe' goes with --index`);
  if (s.assignment !== 'greedy' && !a.scorer) usage(`${configWhere(a.config)}: 'assignment' goes with --scorer (margin mining keeps its --retrieval rule)`);
  checkTargetPrecision(s, a.thresholdFrom, a.config);
  if (a.threshold !== undefined && a.thresholdFrom) usage('give --threshold or --threshold-from, not both');
  const asked = parseThreshold(a.threshold);
  if (asked === 'auto' && !a.scorer) usage("--threshold auto goes with --scorer (its probabilities give the threshold; a margin's scale moves with the vectors and the domain: calibrate one on a dev pair with xling eval bucc --json, then --threshold-from)");
  // no --model and a side without --*-vectors: the default model embeds it
  const model = a.model ?? (a.srcVectors && a.trgVectors ? undefined : modelOrDefault(undefined));
  const filters = filterOptionsOf(s.filters, configWhere(a.config));
  filters.lid = lidFilterOf(s.filters, a, model, configWhere(a.config));
  checkPaths([['--src', a.src, 'in-text'], ['--trg', a.trg, 'in-text'], ['--src-vectors', a.srcVectors, 'in'], ['--trg-vectors', a.trgVectors, 'in'], ['--model', model, 'in-dir'], ['--index', a.index, 'in'], ['--scorer', a.scorer, 'in-dir'], ['--threshold-from', a.thresholdFrom, 'in'], ['--output', a.output, 'out-text'], ['--stats', a.stats, 'out-text'], ['--keep-all', a.keepAll, 'out-text']]);
  const opened = openScorer(a.scorer, model, a.srcLang, a.trgLang, 'mine', { selfTables: s.selfTables });
  const scorer = opened?.scorer ?? null;
  // a scorer's default threshold is 0.5; with 'auto' it is chosen after mining, from every pair's probability
  let threshold = a.thresholdFrom ? thresholdFromFile(a.thresholdFrom, s.targetPrecision ?? undefined, { scorer: !!scorer, margin: a.margin, k: a.k, scorerTables: opened ? !!opened.aligner : undefined }) : asked === 'auto' ? undefined : asked ?? (scorer ? 0.5 : undefined);
  checkLangOptions(model, [['--src-lang', a.srcLang], ['--trg-lang', a.trgLang]]);
  const t0 = performance.now();
  const S = await readSentences(a.src), T = await readSentences(a.trg);
  let sv = vectorsFor(S.sentences, a.srcVectors, model, `--src ${a.src}`, embedSettingsOf(s, a.srcLang, '--src-lang', 'mine'));
  let tv = vectorsFor(T.sentences, a.trgVectors, model, `--trg ${a.trg}`, embedSettingsOf(s, a.trgLang, '--trg-lang', 'mine'));
  if (sv.d !== tv.d) throw new Error(`dimension mismatch: ${a.srcVectors ? `--src-vectors ${a.srcVectors}` : '--model'} gives ${sv.d} columns, ${a.trgVectors ? `--trg-vectors ${a.trgVectors}` : '--model'} ${tv.d}`);
  let sMap: Int32Array | null = null, tMap: Int32Array | null = null;
  if (a.unify) {
    const us = unify(S.sentences), ut = unify(T.sentences);
    sv = { data: gatherRows(sv.data, sv.d, us.first), n: us.first.length, d: sv.d };
    tv = { data: gatherRows(tv.data, tv.d, ut.first), n: ut.first.length, d: tv.d };
    sMap = us.first; tMap = ut.first;
    process.stderr.write(`[mine] unified ${S.sentences.length}→${sv.n} source and ${T.sentences.length}→${tv.n} target lines\n`);
  }
  const index = a.index ? openIndex('--index', a.index, s.nprobe ?? undefined) : undefined;
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
    rows = (await mineTablesWithScorer(tables.fwd, tables.bwd, su, tu, scorer, { aligner: opened!.aligner, selfTables: opened!.selfTables, pairLogits, threshold: threshold ?? 0, assignment: s.assignment as Assignment, onCandidates: candidateProgress() }))
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
  const out = minedFiles(rows, S, T, filters, run, { header: s.header, sMap, tMap });
  if (out.filtered) process.stderr.write(`[mine] ${out.filtered}\n`);
  writeTextOutput(a.output, out.text);
  if (a.keepAll) writeTextOutput(a.keepAll, out.rejected);
  if (a.stats) writeTextOutput(a.stats, out.stats);
  process.stderr.write(`[mine] ${out.pairs} pairs (${scorer ? `scorer ${a.scorer}` : `${a.margin}, ${a.retrieval}`}, k=${k}${threshold !== undefined ? `, threshold ${auto ? `${threshold.toPrecision(6)} (auto)` : threshold}` : ''}) in ${((performance.now() - t0) / 1000).toFixed(1)}s → ${a.output === '-' ? 'standard output' : a.output}\n`);
});


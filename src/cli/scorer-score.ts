// xling scorer score: a parallel corpus scored pair by pair, as Bicleaner's classifier and LASER's
// score mode score one — each line's pair gets the second-stage scorer's probability (or, without
// a scorer, its margin score), computed as mining would were the pair its candidate: the k-NN of
// both directions among the distinct sentences of its block of lines give its margins, ranks and
// competitors. Pairs failing a filter (xling mine's) score 0, as Bicleaner's hard rules do.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { cutRows, evaluateAtThreshold, evaluateBucc, prCurveSvg, prfText } from '../eval/bucc.js';
import { dedupRules, languageOfText, normalizeForDedup, pairRuleReason, REJECT_REASONS, RejectReason } from '../mine/filters.js';
import { marginOfPairs, MarginKind, unify } from '../mine/mine.js';
import { openScorer, pairLogitsFor, scoreGivenPairs } from '../mine/scorer/index.js';
import { removeStaleTemporaries, writeFileAtomicSync } from '../util/atomic.js';
import { Progress } from '../util/progress.js';
import { pause } from '../util/pause.js';
import { withOutputLock } from '../util/lock.js';
import { ParsedArgs } from '../util/args.js';
import { Set64, hash64 } from '../util/set64.js';
import { fileStamps } from '../util/stamps.js';
import { command, usage } from './command.js';
import { alignedSource, blockHash, blocksOf, columnsSource, linesOf, scanCorpus } from './corpus-passes.js';
import { checkPaths, summaryWriter, writeJsonOutput, writeTextLines, writeTextOutput } from './io.js';
import {
  candidateProgress,
  checkTargetPrecision,
  configWhere,
  effectiveK,
  embedSettingsOf,
  filterOptionsOf,
  lidFilterOf,
  MINE_CONFIG_OPTION,
  MINE_FILTER_OPTIONS,
  MINE_MODEL_OPTIONS,
  MINE_SCORING_OPTIONS,
  settingsOf,
  thresholdFromFile,
} from './mine-options.js';
import { MineSettings } from '../mine/settings.js';
import { checkLangOptions, vectorsFor } from './vectors.js';

const scorerScoreSpec = {
  name: 'xling scorer score',
  summary: "score the pairs of a parallel corpus (cleaning it, as Bicleaner does): the scorer's probability, or the margin score, appended to each line",
  description:
    "Each pair is scored as xling mine would score it were it a candidate: both directions' k nearest neighbours among the distinct sentences of its block of lines (--block) give its margins, ranks and competitors (a misaligned pair's target is not among its source's neighbours). Lines keep their order; pairs with an empty side, and pairs failing a filter (of the --config file; identical sides by default), score 0. Without --scorer, the margin and k of the --config file (ratio, 4).",
  options: {
    input: { type: 'string', metavar: 'TSV', help: 'the corpus: a pair a line, tab-separated (.gz read)' },
    srcCol: { type: 'number', default: 1, range: { int: true, min: 1 }, help: 'with --input: the source column (from 1)' },
    trgCol: { type: 'number', default: 2, range: { int: true, min: 1 }, help: 'with --input: the target column' },
    labelCol: { type: 'number', range: { int: true, min: 1 }, help: 'with --input: a 1/0 column to evaluate against' },
    src: { type: 'string', metavar: 'FILE', help: 'instead of --input: source lines, aligned with --trg' },
    trg: { type: 'string', metavar: 'FILE', help: 'instead of --input: target lines' },
    model: { type: 'string', required: true, metavar: 'DIR', help: "the sentence encoder (the scorer's)" },
    srcLang: MINE_MODEL_OPTIONS.srcLang,
    trgLang: MINE_MODEL_OPTIONS.trgLang,
    scorer: { type: 'string', metavar: 'DIR', help: 'score with this scorer (default: the margin)' },
    threshold: { type: 'number', metavar: 'T', range: {}, help: 'write only the lines scoring at least T' },
    thresholdFrom: MINE_SCORING_OPTIONS.thresholdFrom,
    json: { type: 'string', metavar: 'FILE', help: 'with --label-col: P/R/F1, AP and cuts as JSON' },
    svg: { type: 'string', metavar: 'FILE', help: 'with --label-col: the precision–recall curve' },
    output: { type: 'string', alias: 'o', required: true, metavar: 'TSV', help: 'each line with its score appended (- for stdout)' },
    resume: { type: 'boolean', default: false, help: 'reuse the blocks a killed run scored' },
    stats: MINE_FILTER_OPTIONS.stats,
    keepAll: { ...MINE_FILTER_OPTIONS.keepAll, help: 'write the lines a filter scored 0 here' },
    config: MINE_CONFIG_OPTION,
  },
  examples: [
    'xling scorer score --input crawled.de-en.tsv.gz --model runs/fast --scorer scorers/gettext --src-lang de --trg-lang en -o scored.tsv',
    "xling scorer score --src corpus.de --trg corpus.en --model runs/fast --src-lang de --trg-lang en --threshold 1.05 -o kept.tsv   # margin score, LASER's score mode",
  ],
} as const;

export const scorerScoreCommand = command(['scorer', 'score'], scorerScoreSpec, scoreCorpusCommand);

async function scoreCorpusCommand(a: ParsedArgs<typeof scorerScoreSpec>): Promise<void> {
  // an untranslated line (the same text both sides) is rated a translation by the scorer and the margin: scored 0 unless the settings say otherwise
  const s = settingsOf('xling scorer score', a.config, { filters: { dropIdentical: true } });
  if (!a.input === !(a.src || a.trg)) usage('give the corpus as --input TSV, or as --src FILE and --trg FILE');
  if (!a.input && !(a.src && a.trg)) usage(`--${a.src ? 'trg' : 'src'} is needed with --${a.src ? 'src' : 'trg'}`);
  if (a.input && a.srcCol === a.trgCol) usage(`--src-col and --trg-col are both ${a.srcCol}`);
  if (a.labelCol !== undefined && !a.input) usage('--label-col goes with --input');
  if (a.labelCol !== undefined && (a.labelCol === a.srcCol || a.labelCol === a.trgCol)) usage(`--label-col ${a.labelCol} is a side's column`);
  if ((a.json || a.svg) && a.labelCol === undefined) usage(`--${a.json ? 'json' : 'svg'} evaluates the scores against --label-col: give it`);
  checkTargetPrecision(s, a.thresholdFrom, a.config);
  if (a.threshold !== undefined && a.thresholdFrom) usage('give --threshold or --threshold-from, not both');
  const work = s.work ?? (a.output !== '-' ? `${a.output}.partial` : undefined);
  if ((a.resume || s.keepWork) && !work)
    usage(
      `${a.resume ? '--resume' : `${configWhere(a.config)}: 'keepWork'`} with -o -: give 'work' in --config (the directory where the scored blocks are kept)`,
    );
  if (work && existsSync(work) && !statSync(work).isDirectory())
    usage(`${s.work ? `${configWhere(a.config)}: 'work' ` : "--output's work directory "}${work}: not a directory`);
  // an earlier run's blocks are removed or reused there: never a directory of anything else
  const foreign = work && existsSync(work) ? readdirSync(work).filter((f) => !WORK_FILE.test(f)) : [];
  if (foreign.length)
    usage(
      `${s.work ? `${configWhere(a.config)}: 'work' ` : "--output's work directory "}${work}: holds files that are not scored blocks (${foreign.slice(0, 3).join(', ')}); give an empty or new directory`,
    );
  const filters = filterOptionsOf(s.filters, configWhere(a.config));
  filters.lid = lidFilterOf(s.filters, a, a.model, configWhere(a.config));
  checkPaths([
    ['--input', a.input, 'in-text'],
    ['--src', a.src, 'in-text'],
    ['--trg', a.trg, 'in-text'],
    ['--model', a.model, 'in-dir'],
    ['--scorer', a.scorer, 'in-dir'],
    ['--threshold-from', a.thresholdFrom, 'in'],
    ['--output', a.output, 'out-text'],
    ['--stats', a.stats, 'out-text'],
    ['--keep-all', a.keepAll, 'out-text'],
    ['--json', a.json, 'out-text'],
    ['--svg', a.svg, 'out-text'],
  ]);
  checkLangOptions(a.model, [
    ['--src-lang', a.srcLang],
    ['--trg-lang', a.trgLang],
  ]);
  // one process at a time keeps its blocks in a work directory
  if (work) await withOutputLock(work, s.work ? `${configWhere(a.config)}: 'work'` : '--output (its work directory)', () => scoreCorpus(a, s, work, filters));
  else await scoreCorpus(a, s, work, filters);
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: to be split: the block store and the label evaluation belong in src/mine
async function scoreCorpus(
  a: ParsedArgs<typeof scorerScoreSpec>,
  s: MineSettings,
  work: string | undefined,
  filters: ReturnType<typeof filterOptionsOf>,
): Promise<void> {
  const opened = openScorer(a.scorer, a.model, a.srcLang, a.trgLang, { selfTables: s.selfTables, say: (l) => process.stderr.write(`[score] ${l}\n`) });
  const scorer = opened?.scorer ?? null;
  const threshold = a.thresholdFrom
    ? thresholdFromFile(
        a.thresholdFrom,
        s.targetPrecision ?? undefined,
        { scorer: !!scorer, margin: s.margin, k: scorer ? scorer.k : s.k, scorerTables: opened ? !!opened.aligner : undefined },
        'score',
      )
    : a.threshold;
  const t0 = performance.now();
  // the corpus is read line by line, as often as needed, and never held whole: a first pass checks
  // and counts it, the second scores it block by block, the last writes each line with its score
  const source = a.input
    ? columnsSource(a.input, a.srcCol - 1, a.trgCol - 1, a.labelCol !== undefined ? a.labelCol - 1 : undefined)
    : alignedSource(a.src!, a.trg!);
  const scan = await scanCorpus(source);
  const n = scan.n,
    nFull = scan.full;
  // (the pairs with both sides, scored block by block: each block's distinct texts embedded once, its
  // pairs' neighbours searched among them — a pair's context is its block: linear in the corpus)
  if (!nFull) throw new Error(`${a.input ?? a.src}: no line has both sides`);
  const what = (side: string) => (a.input ? `--input ${a.input} (${side})` : `--${side} ${side === 'sources' ? a.src : a.trg}`);
  if (scorer && s.k !== scorer.k) process.stderr.write(`[score] the scorer was trained on candidates of k=${scorer.k}: using k=${scorer.k}\n`);
  // blocks of equal size, none larger than the settings' block
  const blocks = Math.ceil(nFull / s.block),
    size = Math.ceil(nFull / blocks);
  // each block's scores are kept in the work directory as it finishes (a killed run loses one block at most)
  const store = work && blocks > 1 ? openBlockStore(work, scoringKey(a, s), a.resume) : null;
  // a block's lines are part of its key: a block is reused only for the same pairs (stdin, a file edited in place)
  const reused: (StoredBlock | null)[] = new Array<StoredBlock | null>(blocks).fill(null);
  // (the blocks' hashes of that reading are kept for storing the blocks scored now)
  const hashes: string[] = [];
  if (store?.any()) for await (const blk of blocksOf(source, size, scan)) reused[blk.b] = store.get(blk.b, (hashes[blk.b] = blockHash(blk.sides)));
  const reusedLines = reused.reduce((s, r) => s + (r ? r.scores.length : 0), 0);
  if (store && !reusedLines)
    process.stderr.write(
      `[score] each block's scores are kept in ${work} as it is scored: after a kill or an interrupt (Ctrl-C; the block in progress is lost), the same command with --resume goes on from there\n`,
    );
  if (store && reusedLines)
    process.stderr.write(`[score] --resume: ${reused.filter((r) => r).length} of ${blocks} blocks (${reusedLines} lines) reused from ${work}\n`);
  const blockBar =
    blocks > 1 && reusedLines < nFull
      ? new Progress({ label: reusedLines ? `score (${reusedLines} lines reused)` : 'score', unit: 'lines', total: nFull - reusedLines })
      : null;
  // per line: its score (0 for a line without both sides, or failing a filter) and its state
  // (EMPTY, KEPT, or a filter's reason: REJECTED + its index in REJECT_REASONS); with dedup rules,
  // the hashes of its normalised sides (what the rules compare once every line is scored)
  const score = new Float64Array(n),
    state = new Uint8Array(n);
  const keys = {
    src: filters.dedupSrc ? new BigUint64Array(n) : null,
    trg: filters.dedupTrg ? new BigUint64Array(n) : null,
    pair: filters.dedupPair ? new BigUint64Array(n) : null,
  };
  let k = 0,
    scoredLines = 0;
  const distinct = { src: 0, trg: 0 };
  for await (const { b, lines, sides } of blocksOf(source, size, scan)) {
    const done = reused[b];
    let got: Float64Array;
    if (done) {
      got = done.scores;
      distinct.src += done.distinct[0];
      distinct.trg += done.distinct[1];
      if (b === 0) k = done.k;
    } else {
      const us = unify(sides.map((x) => x[0])),
        ut = unify(sides.map((x) => x[1]));
      const inBlock = blocks > 1 ? ` (block ${b + 1} of ${blocks})` : '';
      // (how each side is centred is said for the first block scored, not again for every block)
      const quiet = scoredLines > 0;
      const sv = vectorsFor(us.unique, undefined, a.model, what('sources') + inBlock, { ...embedSettingsOf(s, a.srcLang, '--src-lang', 'score'), quiet });
      const tv = vectorsFor(ut.unique, undefined, a.model, what('targets') + inBlock, { ...embedSettingsOf(s, a.trgLang, '--trg-lang', 'score'), quiet });
      distinct.src += sv.n;
      distinct.trg += tv.n;
      const kb = effectiveK(scorer ? scorer.k : s.k, sv.n, tv.n, 'score');
      if (b === 0) k = kb;
      const knn = blockBar ? null : new Progress({ label: 'score k-NN (both directions)', unit: 'rows', total: sv.n + tv.n });
      const onProgress = knn
        ? (d: number, total: number) => {
            knn.set(d);
            if (d === total) knn.done();
          }
        : undefined;
      if (scorer) {
        const pairLogits = scorer.pairModel ? pairLogitsFor(scorer.pairModel, a.model, us.unique, ut.unique, a.srcLang, a.trgLang) : undefined;
        got = (
          await scoreGivenPairs(sv.data, tv.data, sv.d, us.unique, ut.unique, us.of, ut.of, scorer, {
            k: kb,
            aligner: opened!.aligner,
            selfTables: opened!.selfTables,
            pairLogits,
            onProgress,
            onCandidates: blockBar ? undefined : candidateProgress(),
          })
        ).prob;
      } else {
        got = marginOfPairs(sv.data, tv.data, sv.d, us.of, ut.of, { k: kb, margin: s.margin as MarginKind, onProgress }).score;
      }
      knn?.done();
      store?.put(b, got, [sv.n, tv.n], kb, hashes[b] ?? blockHash(sides));
      scoredLines += lines.length;
      blockBar?.set(scoredLines);
    }
    // the filters' rules of each pair alone now, while its block's texts are at hand
    const langOf = filters.lid ? languageOfText(filters.lid) : undefined;
    lines.forEach((i, j) => {
      score[i] = got[j]!;
      const [s, t] = sides[j]!;
      const ns = normalizeForDedup(s),
        nt = normalizeForDedup(t);
      const reason = pairRuleReason(s, t, ns, nt, filters, langOf);
      state[i] = reason ? REJECTED + REJECT_REASONS.indexOf(reason) : KEPT;
      if (!reason) {
        if (keys.src) keys.src[i] = hash64(ns);
        if (keys.trg) keys.trg[i] = hash64(nt);
        if (keys.pair) keys.pair[i] = hash64(`${ns}\t${nt}`);
      }
    });
    // SIGINT / SIGTERM take effect here too (and at the pauses of the reading and the scoring: the blocks scored are kept for --resume)
    await pause();
  }
  blockBar?.done();
  // the duplicate rules: lines best first (a duplicate keeps its best-scoring line)
  if (keys.src || keys.trg || keys.pair) {
    const order = Uint32Array.from({ length: n }, (_, i) => i)
      .filter((i) => state[i] === KEPT)
      .sort((x, y) => score[y]! - score[x]! || x - y);
    const dedup = dedupRules<bigint>(filters, () => new Set64());
    for (const i of order) {
      const ks = keys.src?.[i] ?? 0n,
        kt = keys.trg?.[i] ?? 0n,
        kp = keys.pair?.[i] ?? 0n;
      const reason = dedup.reason(ks, kt, kp);
      if (reason) state[i] = REJECTED + REJECT_REASONS.indexOf(reason);
      else dedup.keep(ks, kt, kp);
    }
  }
  const counts = Object.fromEntries(REJECT_REASONS.map((r) => [r, 0])) as Record<RejectReason, number>;
  let scoreSum = 0;
  for (let i = 0; i < n; i++) {
    if (state[i]! >= REJECTED) {
      counts[REJECT_REASONS[state[i]! - REJECTED]!]++;
      score[i] = 0;
    }
    if (state[i] !== EMPTY) scoreSum += score[i]!;
  }
  const cell = (i: number, line: string) => `${line}\t${score[i]!.toFixed(6)}\n`;
  // written as the corpus is read once more (the lines as they were scored: checked against the first pass)
  let kept = 0;
  await writeTextLines(
    a.output,
    (async function* () {
      for await (const { i, line } of linesOf(source, scan)) {
        if (threshold !== undefined && !(score[i]! >= threshold)) continue;
        kept++;
        yield cell(i, line);
      }
    })(),
  );
  if (a.keepAll) {
    try {
      await writeTextLines(
        a.keepAll,
        (async function* () {
          for await (const { i, line } of linesOf(source, scan)) if (state[i]! >= REJECTED) yield `${REJECT_REASONS[state[i]! - REJECTED]}\t${cell(i, line)}`;
        })(),
      );
    } catch (e) {
      // (the input changed since the output was written: neither is kept)
      if (a.output !== '-') rmSync(a.output, { force: true });
      throw e;
    }
  }
  // (also an earlier run's blocks when this one needed none: the directory holds only blocks, checked above)
  if (work && !s.keepWork && existsSync(work)) rmSync(work, { recursive: true, force: true });
  if (scan.label) evaluateLabels(scan.label, score, a, { scorer: a.scorer ?? null, margin: s.margin, k, threshold });
  const said = REJECT_REASONS.filter((r) => counts[r]).map((r) => `${r} ${counts[r]}`);
  if (a.stats)
    writeTextOutput(
      a.stats,
      JSON.stringify(
        {
          lines: n,
          written: kept,
          empty: n - nFull,
          rejected: counts,
          threshold: threshold ?? null,
          mean_score: scoreSum / nFull,
          model: a.model,
          scorer: a.scorer ?? null,
          ...(opened ? { word_tables: opened.wordTables() } : { margin: s.margin }),
          k,
          block: s.block,
          blocks,
          distinct,
        },
        null,
        1,
      ) + '\n',
    );
  process.stderr.write(
    `[score] ${n} lines scored (${scorer ? `scorer ${a.scorer}` : `${s.margin} margin`}, k=${k}; ${blocks > 1 ? `${blocks} blocks of ${size} lines, ` : ''}${distinct.src} distinct sources, ${distinct.trg} distinct targets${n > nFull ? `; ${n - nFull} with an empty side scored 0` : ''}${said.length ? `; filters scored 0: ${said.join(', ')}` : ''})${threshold !== undefined ? `, ${kept} at least ${threshold} written` : ''} in ${((performance.now() - t0) / 1000).toFixed(1)}s → ${a.output === '-' ? 'standard output' : a.output}\n`,
  );
}

/**
 * What a run's blocks are scored with: the model and scorer (their files' sizes and times), and
 * every option but those applied after scoring (filters, threshold, outputs) and the input's names
 * (each block's own lines are checked: openBlockStore) — a block scored with any other is scored again.
 */
function scoringKey(a: Record<string, unknown>, s: MineSettings): string {
  const after = new Set(['input', 'src', 'trg', 'output', 'threshold', 'thresholdFrom', 'labelCol', 'json', 'svg', 'keepAll', 'stats', 'resume', 'config']);
  const files = (['model', 'scorer'] as const).flatMap((o) => (typeof a[o] === 'string' ? fileStamps(a[o] as string) : []));
  const { threads: _threads, ...embed } = s.embed;
  const scoring = { k: s.k, margin: s.margin, block: s.block, selfTables: s.selfTables, embed };
  const opts = [
    ...Object.keys(a)
      .filter((o) => !after.has(o) && o !== '_')
      .map((o) => [o, a[o]]),
    ...Object.entries(scoring),
  ].sort((x, y) => String(x[0]).localeCompare(String(y[0])));
  return createHash('sha256').update(JSON.stringify({ files, opts })).digest('hex');
}

/** The files of a work directory: the key of its scoring, the scored blocks, and their temporaries. */
const WORK_FILE = /^(key\.json|block-\d+\.json)(\.tmp-\d+-[0-9a-f]{8})?$/;

/** A block's scores as kept in the work directory: its lines' scores, its distinct sentences a side, its k (and in the file, the hash of its pairs). */
interface StoredBlock {
  scores: Float64Array;
  distinct: [number, number];
  k: number;
}

/**
 * The scored blocks of a run in DIR (key.json: the scoring they were made with; block-<b>.json each):
 * without --resume, or when the key differs, what is there is removed first.
 */
function openBlockStore(
  dir: string,
  key: string,
  resume: boolean,
): {
  any(): boolean;
  get(b: number, hash: string): StoredBlock | null;
  put(b: number, scores: Float64Array, distinct: [number, number], k: number, hash: string): void;
} {
  const keyFile = join(dir, 'key.json');
  if (existsSync(dir) && readdirSync(dir).length) {
    let same = false;
    try {
      same = (JSON.parse(readFileSync(keyFile, 'utf8')) as { key?: string }).key === key;
    } catch {
      /* not ours, or unreadable: started again */
    }
    if (!resume || !same) {
      rmSync(dir, { recursive: true, force: true });
      process.stderr.write(
        `[score] removed ${dir} of an earlier run${resume ? ' (made with another model, scorer or scoring options)' : ' (--resume reuses it)'}\n`,
      );
    }
  }
  mkdirSync(dir, { recursive: true });
  removeStaleTemporaries(dir);
  if (!existsSync(keyFile)) writeFileAtomicSync(keyFile, JSON.stringify({ key }) + '\n');
  const file = (b: number) => join(dir, `block-${b}.json`);
  // (with --resume and blocks kept: each block's lines are read and hashed before scoring, to say what is reused)
  const any = resume && readdirSync(dir).some((f) => /^block-\d+\.json$/.test(f));
  return {
    any: () => any,
    get(b, hash) {
      if (!resume || !existsSync(file(b))) return null;
      try {
        const r = JSON.parse(readFileSync(file(b), 'utf8')) as { scores: number[]; distinct: [number, number]; k: number; hash: string };
        if (r.hash !== hash) {
          process.stderr.write(`[score] block ${b + 1} has other lines than when it was kept: scored again\n`);
          return null;
        }
        if (Array.isArray(r.scores) && r.scores.every((x) => typeof x === 'number'))
          return { scores: Float64Array.from(r.scores), distinct: r.distinct, k: r.k };
      } catch {
        /* scored again */
      }
      process.stderr.write(`[score] ${file(b)} unreadable: block ${b + 1} scored again\n`);
      return null;
    },
    put(b, scores, distinct, k, hash) {
      writeFileAtomicSync(file(b), JSON.stringify({ hash, scores: Array.from(scores), distinct, k }));
    },
  };
}

/** Line states: a side empty (not scored), kept, or rejected by a filter (REJECTED + the reason's index in REJECT_REASONS). */
const EMPTY = 0,
  KEPT = 1,
  REJECTED = 2;

/**
 * --label-col: the scores against the labels (each line a candidate, the good ones its gold) —
 * the F1-optimal threshold, AP and P/R at every score in --json (what --threshold-from reads, with
 * the run's scoring to check it against), the PR curve in --svg, said on stdout.
 */
function evaluateLabels(
  label: Uint8Array,
  score: Float64Array,
  a: { output: string; json?: string; svg?: string },
  run: { scorer: string | null; margin: string; k: number; threshold: number | undefined },
): void {
  const cands = Array.from(label, (_, i) => ({ src: String(i), trg: '', score: score[i]! }));
  const gold = new Set(Array.from(label).flatMap((good, i) => (good ? [`${i}\t`] : [])));
  if (!gold.size) throw new Error('--label-col: no line is labelled 1 (a good pair)');
  const r = evaluateBucc(cands, gold);
  // on stderr when standard output carries a file
  const say = summaryWriter(a.output, a.json, a.svg);
  say(
    `${prfText(r)}  at threshold ${r.threshold.toFixed(5)}  (AP ${(100 * r.averagePrecision).toFixed(2)}; ${gold.size} good pairs of ${label.length} lines)\n`,
  );
  const at = run.threshold !== undefined ? evaluateAtThreshold(cands, gold, run.threshold) : null;
  if (at) say(`at threshold ${run.threshold}: ${prfText(at)}\n`);
  if (a.json)
    writeJsonOutput(a.json, {
      precision: r.precision,
      recall: r.recall,
      f1: r.f1,
      threshold: r.threshold,
      averagePrecision: r.averagePrecision,
      tp: r.tp,
      predicted: r.predicted,
      gold: r.gold,
      lines: label.length,
      ...(at ? { atThreshold: at } : {}),
      scorer: run.scorer,
      margin: run.margin,
      k: run.k,
      cuts: cutRows(r),
    });
  if (a.svg) writeTextOutput(a.svg, prCurveSvg(r, `labelled pairs, ${run.scorer ? 'scorer' : `${run.margin} margin`}: F1 ${(100 * r.f1).toFixed(1)}`));
}

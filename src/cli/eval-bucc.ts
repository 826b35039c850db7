// xling eval bucc: mine candidates on a BUCC-format split, then P/R/F1 at the F1-optimal
// threshold, average precision, the PR curve (SVG), and F1 at a threshold tuned elsewhere.
import { readBucc, readGold } from '../data/corpus.js';
import { cutRows, evaluateAtThreshold, evaluateBucc, goldSet, prCurveSvg, prfText } from '../eval/bucc.js';
import { candidatesFromKnn, MarginKind, mineTablesAsync, Retrieval } from '../mine/mine.js';
import { thresholdForPrecision } from '../mine/filters.js';
import { autoSummary, autoThreshold } from '../mine/auto-threshold.js';
import { Assignment, mineTablesWithScorer, openScorer, pairLogitsFor } from '../mine/scorer/index.js';
import { modelOrDefault } from './default-model.js';
import { command, usage } from './command.js';
import { checkPaths, summaryWriter, writeJsonOutput, writeTextOutput } from './io.js';
import {
  configWhere,
  effectiveK,
  embedSettingsOf,
  MINE_CONFIG_OPTION,
  MINE_MODEL_OPTIONS,
  MINE_OPTIONS,
  settingsOf,
  thresholdFromFile,
} from './mine-options.js';
import { checkLangOptions, vectorsFor } from './vectors.js';

export const evalBuccCommand = command(
  ['eval', 'bucc'],
  {
    name: 'xling eval bucc',
    summary: 'BUCC-style bitext mining precision/recall/F1',
    options: {
      src: { type: 'string', required: true, metavar: 'FILE', help: 'id<TAB>sentence (e.g. xx-en.dev.xx)' },
      trg: { type: 'string', required: true, metavar: 'FILE', help: 'id<TAB>sentence (e.g. xx-en.dev.en)' },
      gold: { type: 'string', required: true, metavar: 'FILE', help: 'src_id<TAB>trg_id pairs' },
      srcVectors: { type: 'string', metavar: 'NPY', help: 'vectors of --src (one row per line)' },
      trgVectors: { type: 'string', metavar: 'NPY', help: 'vectors of --trg' },
      ...MINE_MODEL_OPTIONS,
      ...MINE_OPTIONS,
      scorer: { type: 'string', metavar: 'DIR', help: 'rank by this scorer (xling scorer train)' },
      thresholdFrom: { type: 'string', metavar: 'JSON', help: 'also report P/R/F1 at the threshold in this JSON' },
      targetPrecision: { type: 'number', range: { min: 0, max: 1 }, help: 'also report the lowest threshold reaching P' },
      json: { type: 'string', metavar: 'FILE', help: 'the figures and P/R cuts as JSON (- for stdout)' },
      svg: { type: 'string', metavar: 'FILE', help: 'the precision–recall curve (- for stdout)' },
      config: MINE_CONFIG_OPTION,
    },
  },
  async (a) => {
    const s = settingsOf('xling eval bucc', a.config);
    if (s.assignment !== 'greedy' && !a.scorer) usage(`${configWhere(a.config)}: 'assignment' goes with --scorer (margin mining keeps its --retrieval rule)`);
    // no --model and a side without --*-vectors: the default model embeds it
    const model = a.model ?? (a.srcVectors && a.trgVectors ? undefined : modelOrDefault(undefined));
    checkPaths([
      ['--src', a.src, 'in-text'],
      ['--trg', a.trg, 'in-text'],
      ['--gold', a.gold, 'in-text'],
      ['--src-vectors', a.srcVectors, 'in'],
      ['--trg-vectors', a.trgVectors, 'in'],
      ['--model', model, 'in-dir'],
      ['--threshold-from', a.thresholdFrom, 'in'],
      ['--json', a.json, 'out-text'],
      ['--svg', a.svg, 'out-text'],
    ]);
    checkLangOptions(model, [
      ['--src-lang', a.srcLang],
      ['--trg-lang', a.trgLang],
    ]);
    const opened = openScorer(a.scorer, model, a.srcLang, a.trgLang, { selfTables: s.selfTables, say: (l) => process.stderr.write(`[bucc] ${l}\n`) });
    const scorer = opened?.scorer ?? null;
    // the calibration file is checked before any embedding
    const calibrated = a.thresholdFrom
      ? thresholdFromFile(
          a.thresholdFrom,
          undefined,
          { scorer: !!scorer, margin: a.margin, k: a.k, scorerTables: opened ? !!opened.aligner : undefined },
          'bucc',
        )
      : undefined;
    const S = await readBucc(a.src),
      T = await readBucc(a.trg);
    const gold = goldSet(await readGold(a.gold), new Set(S.map((s) => s.id)), new Set(T.map((t) => t.id)), a.gold);
    const sv = vectorsFor(
      S.map((s) => s.sentence),
      a.srcVectors,
      model,
      `--src ${a.src}`,
      embedSettingsOf(s, a.srcLang, '--src-lang', 'bucc'),
    );
    const tv = vectorsFor(
      T.map((t) => t.sentence),
      a.trgVectors,
      model,
      `--trg ${a.trg}`,
      embedSettingsOf(s, a.trgLang, '--trg-lang', 'bucc'),
    );
    if (sv.d !== tv.d)
      throw new Error(
        `dimension mismatch: ${a.srcVectors ? `--src-vectors ${a.srcVectors}` : '--model'} gives ${sv.d} columns, ${a.trgVectors ? `--trg-vectors ${a.trgVectors}` : '--model'} ${tv.d}`,
      );
    if (scorer && a.k !== scorer.k) process.stderr.write(`[bucc] the scorer was trained on candidates of k=${scorer.k}: using k=${scorer.k}\n`);
    const k = effectiveK(scorer ? scorer.k : a.k, sv.n, tv.n, 'bucc');
    let cands: { src: string; trg: string; score: number }[];
    const su = S.map((s) => s.sentence),
      tu = T.map((t) => t.sentence);
    const pairLogits = scorer?.pairModel ? pairLogitsFor(scorer.pairModel, model!, su, tu, a.srcLang, a.trgLang) : undefined;
    // the search off the main thread (Ctrl-C stops it), in the synchronous search's chunks
    const tables = await mineTablesAsync(sv.data, tv.data, sv.d, { k, chunk: 65536 });
    if (scorer) {
      cands = (
        await mineTablesWithScorer(tables.fwd, tables.bwd, su, tu, scorer, {
          aligner: opened!.aligner,
          selfTables: opened!.selfTables,
          pairLogits,
          assignment: s.assignment as Assignment,
        })
      ).map((c) => ({ src: S[c.src]!.id, trg: T[c.trg]!.id, score: c.prob }));
    } else {
      cands = candidatesFromKnn(tables.fwd, tables.bwd, { margin: a.margin as MarginKind, retrieval: a.retrieval as Retrieval }).map((c) => ({
        src: S[c.src]!.id,
        trg: T[c.trg]!.id,
        score: c.score,
      }));
    }
    const r = evaluateBucc(cands, gold);
    const out: Record<string, unknown> = {
      precision: r.precision,
      recall: r.recall,
      f1: r.f1,
      threshold: r.threshold,
      averagePrecision: r.averagePrecision,
      tp: r.tp,
      predicted: r.predicted,
      gold: r.gold,
      candidates: cands.length,
      margin: a.margin,
      retrieval: a.retrieval,
      k,
      ...(k !== a.k ? { kRequested: a.k } : {}),
      scorer: a.scorer ?? null,
      ...(scorer ? { assignment: s.assignment, word_tables: opened!.wordTables() } : {}),
      // P and R at every distinct score (threshold: the candidates scoring at least it): xling mine's targetPrecision reads these
      cuts: cutRows(r),
    };
    const say = summaryWriter(a.json, a.svg);
    if (a.targetPrecision !== undefined) {
      const t = thresholdForPrecision(r.cuts, a.targetPrecision);
      out.threshold_for_precision = { precision: a.targetPrecision, threshold: t };
      process.stderr.write(
        t === null ? `no threshold reaches precision ${a.targetPrecision}\n` : `precision ≥ ${a.targetPrecision} from threshold ${t.toFixed(5)}\n`,
      );
    }
    say(
      `${prfText(r)}  at threshold ${r.threshold.toFixed(5)}  (AP ${(100 * r.averagePrecision).toFixed(2)}; ${scorer ? `scorer ${a.scorer}` : `${a.margin}, ${a.retrieval}`}, k=${k})\n`,
    );
    if (a.thresholdFrom && calibrated !== undefined) {
      const t = calibrated;
      const at = evaluateAtThreshold(cands, gold, t);
      out.atThreshold = at;
      say(`at threshold ${t.toFixed(5)} from ${a.thresholdFrom}: ${prfText(at)}\n`);
    }
    // what xling mine --threshold auto would keep of these candidates (no gold), measured against the gold
    const auto = scorer ? autoThreshold(cands.map((c) => c.score)) : null;
    if (auto) {
      const at = evaluateAtThreshold(cands, gold, auto.threshold);
      out.auto = { ...autoSummary(auto), precision: at.precision, recall: at.recall, f1: at.f1, tp: at.tp, predicted: at.predicted };
      say(`at the automatic threshold ${auto.threshold.toFixed(5)} (--threshold auto; expected F1 ${(100 * auto.expected.f1).toFixed(2)}): ${prfText(at)}\n`);
    } else if (scorer) out.auto = null;
    if (a.json) writeJsonOutput(a.json, out);
    if (a.svg) {
      writeTextOutput(a.svg, prCurveSvg(r, `BUCC ${a.margin}/${a.retrieval}: F1 ${(100 * r.f1).toFixed(1)}`));
    }
  },
);

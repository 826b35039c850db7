// One xling mine run: both corpora read, embedded with the model (or their vectors read), identical
// lines unified if asked, both directions' k-NN (exact, off the main thread, or src→trg through a
// faiss index), the pairs by margin or by a second-stage scorer (pipeline.ts), then what is
// written of them (mined-files.ts); mineToFiles: the whole of xling mine once its options are
// parsed and checked (the scorer opened, the threshold read, the files written).
import { readSentences } from '../train-data/corpus.js';
import { checkLangOptions, EmbedSettings, vectorsFor } from '../embed/input.js';
import { openIndex } from '../index/faiss.js';
import { AutoThreshold } from './auto-threshold.js';
import { candidateProgress } from './candidate-progress.js';
import { thresholdFromFile } from './calibration.js';
import { FilterOptions } from './filters.js';
import { MinedFiles, minedFiles } from './mined-files.js';
import { writeTextOutput } from '../util/atomic.js';
import { gatherRows, MarginKind, Retrieval, unify } from './mine.js';
import { minePairs } from './pipeline.js';
import { Assignment, openScorer, ScorerModel, SelfTables } from './scorer/index.js';
import { embedSettingsOf, MineSettings } from './settings.js';
import type { WordAligner } from './scorer/word-align/features.js';

export interface MineRun {
  src: string;
  trg: string;
  /** Vectors of each side (.npy); a side without is embedded with `model`. */
  srcVectors?: string;
  trgVectors?: string;
  model?: string;
  /** How each side is embedded with the model (its language, centring, batches). */
  srcEmbed: EmbedSettings;
  trgEmbed: EmbedSettings;
  srcLang?: string;
  trgLang?: string;
  k: number;
  margin: MarginKind;
  retrieval: Retrieval;
  /** Deduplicate identical lines before the search. */
  unify: boolean;
  /** Search src→trg through this faiss index over the target vectors (ids: target line numbers). */
  index?: { path: string; nprobe?: number };
  /** Keep pairs scoring at least this; 'auto' with a scorer. */
  threshold?: number | 'auto';
  /** A scorer opened for the run (openScorer). */
  scorer?: {
    dir: string;
    model: ScorerModel;
    aligner: WordAligner | null;
    selfTables: SelfTables | null;
    wordTables: () => string;
    assignment: Assignment;
    onCandidates?: (done: number, total: number, pass: number) => void;
  };
  filters: FilterOptions;
  header: boolean;
  /** Lines said on the way (unified counts, the automatic threshold). */
  say: (line: string) => void;
}

/** The files of a mining run, and the k and threshold it used. */
export async function mineCorpora(o: MineRun): Promise<MinedFiles & { k: number; threshold: number | undefined; auto: AutoThreshold | null }> {
  const S = await readSentences(o.src),
    T = await readSentences(o.trg);
  let sv = vectorsFor(S.sentences, o.srcVectors, o.model, `--src ${o.src}`, o.srcEmbed);
  let tv = vectorsFor(T.sentences, o.trgVectors, o.model, `--trg ${o.trg}`, o.trgEmbed);
  let sMap: Int32Array | null = null,
    tMap: Int32Array | null = null;
  if (o.unify) {
    const us = unify(S.sentences),
      ut = unify(T.sentences);
    sv = { data: gatherRows(sv.data, sv.d, us.first), n: us.first.length, d: sv.d };
    tv = { data: gatherRows(tv.data, tv.d, ut.first), n: ut.first.length, d: tv.d };
    sMap = us.first;
    tMap = ut.first;
    o.say(`unified ${S.sentences.length}→${sv.n} source and ${T.sentences.length}→${tv.n} target lines`);
  }
  const index = o.index ? openIndex('--index', o.index.path, o.index.nprobe, { nprobeName: 'nprobe' }) : undefined;
  try {
    if (index && sv.d === tv.d) {
      // (a dimension mismatch between the sides is said by minePairs)
      if (index.d !== tv.d) throw new Error(`--index ${o.index!.path}: dimension ${index.d}, but the target vectors have ${tv.d}`);
      if (index.ntotal !== tv.n) throw new Error(`--index ${o.index!.path}: holds ${index.ntotal} vectors, --trg ${o.trg} has ${tv.n} lines`);
    }
    const su = sMap ? Array.from(sMap, (i) => S.sentences[i]!) : S.sentences,
      tu = tMap ? Array.from(tMap, (i) => T.sentences[i]!) : T.sentences;
    const sc = o.scorer;
    const picked = await minePairs(
      { vectors: sv, texts: su, what: o.srcVectors ? `--src-vectors ${o.srcVectors}` : '--model' },
      { vectors: tv, texts: tu, what: o.trgVectors ? `--trg-vectors ${o.trgVectors}` : '--model' },
      {
        k: o.k,
        margin: o.margin,
        retrieval: o.retrieval,
        threshold: o.threshold,
        scorer: sc && { ...sc, encoder: o.model, srcLang: o.srcLang, trgLang: o.trgLang },
        index: index && { index, name: `--index ${o.index!.path}` },
        chunk: 16384,
        // both directions' k-NN: the exact search off the main thread, so that Ctrl-C stops it between chunks
        progress: 'mine k-NN (both directions)',
        say: o.say,
      },
    );
    const files = minedFiles(
      picked.rows,
      S,
      T,
      o.filters,
      {
        model: o.model ?? null,
        margin: o.margin,
        retrieval: sc ? 'scorer' : o.retrieval,
        k: picked.k,
        scorer: sc?.dir ?? null,
        wordTables: sc?.wordTables(),
        threshold: picked.threshold,
        auto: picked.auto,
      },
      { header: o.header, sMap, tMap },
    );
    return { ...files, k: picked.k, threshold: picked.threshold, auto: picked.auto };
  } finally {
    index?.dispose();
  }
}

/** xling mine's options, parsed and checked: the run's inputs, knobs and outputs. */
export interface MineJob
  extends Pick<MineRun, 'src' | 'trg' | 'srcVectors' | 'trgVectors' | 'model' | 'srcLang' | 'trgLang' | 'k' | 'margin' | 'retrieval' | 'unify' | 'filters'> {
  /** The --config file's knobs. */
  settings: MineSettings;
  /** Search src→trg through this faiss index of the target vectors. */
  index?: string;
  /** The second-stage scorer's directory. */
  scorer?: string;
  /** --threshold as given: a number, 'auto' (with a scorer), or none. */
  threshold?: number | 'auto';
  /** The threshold of an xling eval bucc --json (at the settings' target precision). */
  thresholdFrom?: string;
  /** The pairs (- for standard output), the counts by reason, the rejected pairs. */
  output: string;
  stats?: string;
  keepAll?: string;
}

/** xling mine: the scorer opened, the threshold decided, the pairs mined and written (with --stats and --keep-all); a summary on standard error. */
export async function mineToFiles(o: MineJob): Promise<void> {
  const s = o.settings;
  const say = (l: string) => process.stderr.write(`[mine] ${l}\n`);
  const opened = openScorer(o.scorer, o.model, o.srcLang, o.trgLang, { selfTables: s.selfTables, say });
  const scorer = opened?.scorer ?? null;
  // a scorer's default threshold is 0.5; with 'auto' it is chosen after mining, from every pair's probability
  const threshold = o.thresholdFrom
    ? thresholdFromFile(o.thresholdFrom, s.targetPrecision ?? undefined, {
        scorer: !!scorer,
        margin: o.margin,
        k: o.k,
        scorerTables: opened ? !!opened.aligner : undefined,
      })
    : o.threshold;
  checkLangOptions(o.model, [
    ['--src-lang', o.srcLang],
    ['--trg-lang', o.trgLang],
  ]);
  if (scorer && o.k !== scorer.k) say(`the scorer was trained on candidates of k=${scorer.k}: using k=${scorer.k}`);
  const t0 = performance.now();
  const out = await mineCorpora({
    ...o,
    srcEmbed: embedSettingsOf(s, o.srcLang, '--src-lang', 'mine'),
    trgEmbed: embedSettingsOf(s, o.trgLang, '--trg-lang', 'mine'),
    index: o.index ? { path: o.index, nprobe: s.nprobe ?? undefined } : undefined,
    threshold,
    scorer: opened
      ? {
          dir: o.scorer!,
          model: opened.scorer,
          aligner: opened.aligner,
          selfTables: opened.selfTables,
          wordTables: opened.wordTables,
          assignment: s.assignment as Assignment,
          onCandidates: candidateProgress(),
        }
      : undefined,
    header: s.header,
    say,
  });
  if (out.filtered) say(out.filtered);
  writeTextOutput(o.output, out.text);
  if (o.keepAll) writeTextOutput(o.keepAll, out.rejected);
  if (o.stats) writeTextOutput(o.stats, out.stats);
  say(
    `${out.pairs} pairs (${scorer ? `scorer ${o.scorer}` : `${o.margin}, ${o.retrieval}`}, k=${out.k}${out.threshold !== undefined ? `, threshold ${out.auto ? `${out.threshold.toPrecision(6)} (auto)` : out.threshold}` : ''}) in ${((performance.now() - t0) / 1000).toFixed(1)}s → ${o.output === '-' ? 'standard output' : o.output}`,
  );
}

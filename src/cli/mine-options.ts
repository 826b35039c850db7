// The option groups of the mining commands (xling mine, cluster mine, scorer score, eval bucc), each
// defined once here, and what turns them into a run's settings: the --config file's knobs
// (src/mine/settings.ts), the filters, the threshold, how each side is embedded.
import { readFileSync } from 'node:fs';
import { resolveLangCode } from '../embed/language.js';
import { FilterOptions, thresholdForPrecision } from '../mine/filters.js';
import { FilterSettings, MineSettings, mineSettings, MiningCommand } from '../mine/settings.js';
import { LID_CONFIDENCE, loadLanguageIdentifier } from '../text/lid.js';
import { setNumThreads } from '../tensor/tensor.js';
import { Progress } from '../util/progress.js';
import { usage } from './command.js';
import { checkPaths } from './io.js';
import { EmbedSettings } from './vectors.js';

/** The two corpora and their vectors. */
export const MINE_INPUT_OPTIONS = {
  src: { type: 'string', required: true, metavar: 'FILE', help: 'source sentences (lines, or BUCC id<TAB>sentence)' },
  trg: { type: 'string', required: true, metavar: 'FILE', help: 'target sentences, same formats' },
  srcVectors: { type: 'string', metavar: 'NPY', help: 'vectors of --src (one row per line)' },
  trgVectors: { type: 'string', metavar: 'NPY', help: 'vectors of --trg' },
} as const;

/** The encoder and the languages of the two sides. */
export const MINE_MODEL_OPTIONS = {
  model: { type: 'string', metavar: 'DIR', help: 'embed with this model (default: models/default)' },
  srcLang: { type: 'string', metavar: 'LANG', help: 'language of --src (code, auto or none)' },
  trgLang: { type: 'string', metavar: 'LANG', help: 'language of --trg (code, auto or none)' },
} as const;

/** LASER's margin scoring (mine_bitexts.py's --neighborhood, --margin, --retrieval). */
export const MINE_OPTIONS = {
  k: { type: 'number', alias: 'k', default: 4, range: { int: true, min: 1 }, help: 'neighbours per direction for the margin' },
  margin: { type: 'string', default: 'ratio', choices: ['ratio', 'distance', 'absolute', 'eq9', 'eq10'], help: 'candidate scoring' },
  retrieval: { type: 'string', default: 'max', choices: ['fwd', 'bwd', 'intersect', 'max'], help: 'candidate selection' },
} as const;

/** The second-stage scorer and the threshold. */
export const MINE_SCORING_OPTIONS = {
  scorer: { type: 'string', metavar: 'DIR', help: 're-score candidates with this scorer (xling scorer train)' },
  threshold: { type: 'string', metavar: 'T|auto', help: "keep pairs scoring ≥ T ('auto' with --scorer)" },
  thresholdFrom: { type: 'string', metavar: 'JSON', help: 'the threshold of an xling eval bucc --json' },
} as const;

/** What the filters did (which filters: the --config file's "filters"). */
export const MINE_FILTER_OPTIONS = {
  stats: { type: 'string', metavar: 'JSON', help: 'kept and rejected counts by reason (- for stdout)' },
  keepAll: { type: 'string', metavar: 'TSV', help: 'write rejected pairs here, with their reason' },
} as const;

/** The settings file of the tuning knobs. */
export const MINE_CONFIG_OPTION = { type: 'string', metavar: 'JSON', help: 'settings file (configs/scorer-mine.json)' } as const;

/** The commands' labels on standard error. */
const LABEL: Record<MiningCommand, string> = {
  'xling mine': 'mine',
  'xling cluster mine': 'cluster',
  'xling scorer score': 'score',
  'xling eval bucc': 'bucc',
};

/** How errors name a settings file: --config FILE. */
export const configWhere = (file: string | undefined): string => `--config ${file ?? '(none)'}`;

/** A mining command's settings (the defaults without --config), the file checked before any work (a setting this command does not read is said); applies its thread count. */
export function settingsOf(command: MiningCommand, file: string | undefined, over: { filters?: Partial<FilterSettings> } = {}): MineSettings {
  checkPaths([['--config', file, 'in']]);
  const s = mineSettings(command, file, {
    over,
    where: configWhere(file),
    unread: (keys) =>
      process.stderr.write(
        `[${LABEL[command]}] note: ${configWhere(file)}: ${keys.map((k) => `'${k}'`).join(', ')} ${keys.length > 1 ? 'are' : 'is'} not read by ${command} (docs/mine-and-score.md says which command reads which; -k, --margin and --retrieval are options where they are not settings)\n`,
      ),
  });
  if (s.embed.threads) setNumThreads(s.embed.threads);
  return s;
}

/** How --src and --trg are embedded with --model (as xling embed would, for the same vectors). */
export function embedSettingsOf(s: MineSettings, lang: string | undefined, langFlag: string, label: string): EmbedSettings {
  const e = s.embed;
  return {
    lang,
    langFlag,
    center: e.center,
    forceCenter: e.forceCenter,
    batchTokens: e.batchTokens ?? undefined,
    batchSentences: e.batchSentences ?? undefined,
    label,
  };
}

/** k for ns sources and nt targets: never more than either side has; said on stderr when capped. */
export function effectiveK(k: number, ns: number, nt: number, label: string): number {
  const used = Math.min(k, ns, nt);
  if (used < k)
    process.stderr.write(`[${label}] warning: -k ${k} is more than the ${Math.min(ns, nt)} ${ns <= nt ? 'source' : 'target'} sentences; using k=${used}\n`);
  return used;
}

/**
 * Progress of a scorer's passes over the candidates (ScoringOptions.onCandidates): a bar for each
 * pass, one after another — the k-NN's and the pair model's bars are their own.
 */
export function candidateProgress(): (done: number, total: number, pass: number) => void {
  let feats: Progress | null = null;
  return (done, total, pass) => {
    if (done === 0 && !feats) feats = new Progress({ label: pass ? 'scorer features, with the word tables' : 'scorer features', unit: 'candidates', total });
    feats?.set(done);
    if (done === total) {
      feats?.done();
      feats = null;
    }
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
 * The settings file's language filter: the identifier (of its lidModel, else of --model: `model`,
 * null for a command without --model) and the languages asked for, checked before any work;
 * undefined when the filter is off.
 */
export function lidFilterOf(
  f: FilterSettings,
  a: { srcLang?: string; trgLang?: string },
  model: string | undefined | null,
  config = 'the settings',
): (NonNullable<FilterOptions['lid']> & { dir: string }) | undefined {
  if (f.lidModel && !f.lid) usage(`${config}: 'filters.lidModel' goes with 'filters.lid': true`);
  if (!f.lid) return undefined;
  const dir = f.lidModel ?? model;
  if (!dir)
    usage(
      `${config}: 'filters.lid' needs ${model === null ? "'filters.lidModel' (a model directory with a language identifier)" : "--model (or 'filters.lidModel')"} for its language identifier`,
    );
  const code = (v: string | undefined) => (v && !/^auto/i.test(v) && v.toLowerCase() !== 'none' ? v : undefined);
  if (!code(a.srcLang) && !code(a.trgLang)) usage(`${config}: 'filters.lid' needs the language asked for: --src-lang and/or --trg-lang (a code)`);
  checkPaths([[`${config}: filters.lidModel`, f.lidModel ?? undefined, 'in-dir']]);
  const lid = loadLanguageIdentifier(dir);
  if (!lid) throw new Error(`${config}: 'filters.lid': ${dir} has no language identifier (lid.json; add one with xling train-lid)`);
  const src = code(a.srcLang) && resolveLangCode(a.srcLang!, lid.languages, '--src-lang'),
    trg = code(a.trgLang) && resolveLangCode(a.trgLang!, lid.languages, '--trg-lang');
  return { dir, identify: (t) => lid.identify(t), src: src || undefined, trg: trg || undefined, minConfidence: LID_CONFIDENCE };
}

/** The filters of a settings file. */
export function filterOptionsOf(f: FilterSettings, config = 'the settings'): FilterOptions {
  const dd = new Set<string>();
  for (const x of f.dedup
    .split(',')
    .map((y) => y.trim())
    .filter(Boolean)) {
    if (x === 'all') {
      dd.add('src');
      dd.add('trg');
      dd.add('pair');
    } else if (['src', 'trg', 'pair'].includes(x)) dd.add(x);
    else usage(`${config}: 'filters.dedup': '${x}' is not one of src, trg, pair, all`);
  }
  const num = (v: number | null) => v ?? undefined;
  if (f.minChars !== null && f.maxChars !== null && f.minChars > f.maxChars)
    usage(`${config}: 'filters.minChars' ${f.minChars} is more than 'filters.maxChars' ${f.maxChars}`);
  return {
    minChars: num(f.minChars),
    maxChars: num(f.maxChars),
    maxLengthRatio: num(f.maxLengthRatio),
    dedupSrc: dd.has('src'),
    dedupTrg: dd.has('trg'),
    dedupPair: dd.has('pair'),
    dropIdentical: f.dropIdentical,
    minLetterShare: num(f.minLetterShare),
  };
}

/** How a run scores candidates, to check a calibration file against: with a scorer, or by which margin over how many neighbours. */
export interface ScoringOfRun {
  scorer: boolean;
  margin: string;
  k: number /** With a scorer: whether it has word tables for this run's language pair. */;
  scorerTables?: boolean;
}

/**
 * The threshold of an xling eval bucc --json: its F1-optimal one, or the lowest reaching a
 * precision. Refused when the file's scores are not this run's: calibrated with a scorer and
 * applied without one (or the reverse), or, without a scorer, with another margin, or another k
 * for a margin that depends on the neighbours (all but absolute). Files written before these
 * fields were recorded are taken as they are.
 */
export function thresholdFromFile(file: string, precision: number | undefined, run: ScoringOfRun, label = 'mine'): number {
  let j: { threshold?: unknown; cuts?: unknown; scorer?: unknown; margin?: unknown; k?: unknown; kRequested?: unknown; word_tables?: unknown };
  try {
    j = JSON.parse(readFileSync(file, 'utf8')) as typeof j;
  } catch (e) {
    throw new Error(`--threshold-from ${file}: ${(e as Error).message}`);
  }
  if (j === null || typeof j !== 'object' || Array.isArray(j)) throw new Error(`--threshold-from ${file}: not an xling eval bucc --json object`);
  if (run.scorer !== (typeof j.scorer === 'string'))
    throw new Error(
      `--threshold-from ${file}: calibrated ${typeof j.scorer === 'string' ? 'with' : 'without'} a scorer, but this run is ${run.scorer ? 'with' : 'without'} one (the scores are not comparable)`,
    );
  if (!run.scorer) {
    if (typeof j.margin === 'string' && j.margin !== run.margin)
      throw new Error(
        `--threshold-from ${file}: calibrated with --margin ${j.margin}, but this run uses --margin ${run.margin} (the scores are not comparable)`,
      );
    const k = typeof j.kRequested === 'number' ? j.kRequested : j.k;
    if (run.margin !== 'absolute' && typeof k === 'number' && k !== run.k)
      throw new Error(
        `--threshold-from ${file}: calibrated with k=${k}, but this run uses k=${run.k} (a ${run.margin} margin's scale depends on the neighbours it averages; give -k ${k})`,
      );
  } else if (run.scorerTables !== undefined && typeof j.word_tables === 'string' && (j.word_tables === 'scorer') !== run.scorerTables) {
    // the same scorer, but its word-alignment features from other tables: the probabilities move (a warning: they stay probabilities)
    process.stderr.write(
      `[${label}] warning: --threshold-from ${file} was calibrated ${j.word_tables === 'scorer' ? "with the scorer's own word tables for its pair" : `without them (${j.word_tables})`}, and this run ${run.scorerTables ? 'has them' : 'has none for its pair'}: the probabilities are not quite comparable (see bench/RESULTS.md, selfTables)\n`,
    );
  }
  if (precision === undefined) {
    if (typeof j.threshold !== 'number' || !Number.isFinite(j.threshold)) throw new Error(`--threshold-from ${file}: no finite numeric 'threshold'`);
    return j.threshold;
  }
  if (!Array.isArray(j.cuts)) throw new Error(`--threshold-from ${file}: no 'cuts' (P/R by threshold; made by a newer xling eval bucc --json)`);
  const curve = (j.cuts as unknown[]).map((c, i) => {
    if (!Array.isArray(c) || c.length < 2 || typeof c[0] !== 'number' || typeof c[1] !== 'number')
      throw new Error(`--threshold-from ${file}: cuts[${i}] is not [threshold, precision, recall]`);
    return { threshold: c[0] as number, precision: c[1] as number };
  });
  const t = thresholdForPrecision(curve, precision);
  if (t === null) throw new Error(`--threshold-from ${file}: no threshold reaches precision ${precision} on that dev set`);
  process.stderr.write(`[${label}] threshold ${t} reaches precision ${precision} on ${file}\n`);
  return t;
}

/** The settings' target precision goes with --threshold-from. */
export function checkTargetPrecision(s: MineSettings, thresholdFrom: string | undefined, config: string | undefined): void {
  if (s.targetPrecision !== null && !thresholdFrom)
    usage(`${configWhere(config)}: 'targetPrecision' needs --threshold-from (the xling eval bucc --json of a dev pair)`);
}

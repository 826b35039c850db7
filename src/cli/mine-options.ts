// The option groups of the mining commands (xling mine, cluster mine, scorer score, eval bucc), each
// defined once here, and what turns them into a run's settings: the --config file's knobs
// (src/mine/settings.ts), the filters, the threshold, how each side is embedded.
import { resolveLangCode } from '../embed/language.js';
import { FilterOptions } from '../mine/filters.js';
import { FilterSettings, MineSettings, mineSettings, MiningCommand } from '../mine/settings.js';
import { LID_CONFIDENCE, loadLanguageIdentifier } from '../text/lid.js';
import { setNumThreads } from '../tensor/tensor.js';
import { usage } from './command.js';
import { checkPaths } from './io.js';

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

// how a side is embedded, and the scorer's progress: library functions, named here with the option groups
export { candidateProgress } from '../mine/candidate-progress.js';
export { embedSettingsOf } from '../mine/settings.js';

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

/** The settings' target precision goes with --threshold-from. */
export function checkTargetPrecision(s: MineSettings, thresholdFrom: string | undefined, config: string | undefined): void {
  if (s.targetPrecision !== null && !thresholdFrom)
    usage(`${configWhere(config)}: 'targetPrecision' needs --threshold-from (the xling eval bucc --json of a dev pair)`);
}

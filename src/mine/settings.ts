// Settings files (--config FILE, JSON) of the mining commands: xling scorer train's hyperparameters
// (configs/scorer.json) and the tuning knobs of xling mine, cluster mine, scorer score and eval bucc
// (configs/scorer-mine.json). Defaults live here; a file gives only what it changes. Every key and
// value is checked, and a bad one is refused naming the file and the key (as src/models/config.ts
// checks training configurations).
import type { EmbedSettings } from '../embed/input.js';
import { checkChoice, checkNumber, NumberRule } from '../util/check.js';
import { readJsonFile } from '../util/json-file.js';

/** One setting: its kind and allowed values; `nullable`: null (or absent) means "not set". */
type Rule =
  | { type: 'number'; range: NumberRule; nullable?: boolean }
  | { type: 'boolean' }
  | { type: 'string'; choices?: readonly string[]; nullable?: boolean }
  | { type: 'object'; keys: Schema };
type Schema = Record<string, Rule>;

const num = (range: NumberRule, nullable = false): Rule => ({ type: 'number', range, nullable });
const bool: Rule = { type: 'boolean' };

/** xling scorer train: the regression, its candidates, its word tables and its optional pair model. */
export interface ScorerTrainSettings {
  /** Neighbours per direction: the candidates of each sentence (xling mine then uses the scorer's k). */
  k: number;
  /** L2 penalty of the logistic regression (standardised features). */
  l2: number;
  /** Rows per language pair for the word tables (null: 5000 with --parallel alone, all with --tables). */
  tableRows: number | null;
  /** Word-table entries t(e|f) below this are not kept. */
  tableMinProb: number;
  /** Per-language centring of the sentence vectors. */
  center: boolean;
  /** Intra-op threads (null: all cores). */
  threads: number | null;
  /** Also fit the regression used with self-trained word tables (ScorerModel.self; bench/RESULTS.md). */
  selfHead: boolean;
  /** With --parallel: partial translations among the sets' sentences, as wrong candidates (a cleaning scorer). */
  truncated: boolean;
  /** The pair model of --pair-model. */
  pairModel: { rows: number; maxWords: number; negatives: number; epochs: number; hidden: number; pca: number; seed: number };
}

export const SCORER_TRAIN_DEFAULTS: ScorerTrainSettings = {
  k: 4,
  l2: 0.01,
  tableRows: null,
  tableMinProb: 0.05,
  center: true,
  threads: null,
  selfHead: false,
  truncated: false,
  pairModel: { rows: 15000, maxWords: 48, negatives: 1, epochs: 3, hidden: 128, pca: 256, seed: 1 },
};

const SCORER_TRAIN_SCHEMA: Schema = {
  k: num({ int: true, min: 1 }),
  l2: num({ min: 0 }),
  tableRows: num({ int: true, min: 1 }, true),
  tableMinProb: num({ min: 0, max: 1 }),
  center: bool,
  threads: num({ int: true, min: 1 }, true),
  selfHead: bool,
  truncated: bool,
  pairModel: {
    type: 'object',
    keys: {
      rows: num({ int: true, min: 10 }),
      maxWords: num({ int: true, min: 1, max: 4096 }),
      negatives: num({ int: true, min: 1, max: 16 }),
      epochs: num({ int: true, min: 1 }),
      hidden: num({ int: true, min: 4, max: 4096 }),
      pca: num({ int: true, min: 2, max: 4096 }),
      seed: num({ int: true, min: 0 }),
    },
  },
};

/** xling mine's filters (src/mine/filters.ts), as a settings file gives them. */
export interface FilterSettings {
  minChars: number | null;
  maxChars: number | null;
  maxLengthRatio: number | null;
  /** 'src', 'trg', 'pair' (comma-separated) or 'all'; '' none. */
  dedup: string;
  dropIdentical: boolean;
  minLetterShare: number | null;
  /** Drop pairs a side of which the language identifier takes for another language than --src-lang / --trg-lang. */
  lid: boolean;
  /** With lid: the model directory whose identifier (lid.json) to use (null: --model). */
  lidModel: string | null;
}

/** How the sentences are embedded with --model (xling embed's options). */
export interface EmbedKnobs {
  center: boolean;
  forceCenter: boolean;
  batchTokens: number | null;
  batchSentences: number | null;
  threads: number | null;
}

/** The tuning knobs of the mining commands; each command reads the keys of MINE_SETTINGS_KEYS. */
export interface MineSettings {
  /** With a scorer: greedy one-to-one pairs by probability, or improved by exchanges. */
  assignment: 'greedy' | 'exchange';
  /** With a scorer without word tables for the pair: train them on its own pairs scored ≥ 0.5. */
  selfTables: boolean;
  /** With --threshold-from: the lowest threshold whose dev precision reaches this (null: the F1-optimal one). */
  targetPrecision: number | null;
  /** nprobe of xling mine --index (null: the index's). */
  nprobe: number | null;
  /** First line of the output: the run's settings. */
  header: boolean;
  /** Candidate selection of xling cluster mine (xling mine's --retrieval). */
  retrieval: 'fwd' | 'bwd' | 'intersect' | 'max';
  /** xling scorer score without a scorer: the margin and its neighbours (xling cluster mine: the margin). */
  margin: 'ratio' | 'distance' | 'absolute' | 'eq9' | 'eq10';
  k: number;
  /** xling scorer score: lines scored together, where the scored blocks are kept, and whether they stay. */
  block: number;
  work: string | null;
  keepWork: boolean;
  /** xling cluster mine: tries per job, and no progress lines. */
  attempts: number;
  quiet: boolean;
  filters: FilterSettings;
  embed: EmbedKnobs;
}

export const MINE_DEFAULTS: MineSettings = {
  assignment: 'greedy',
  selfTables: true,
  targetPrecision: null,
  nprobe: null,
  header: false,
  retrieval: 'max',
  margin: 'ratio',
  k: 4,
  block: 20000,
  work: null,
  keepWork: false,
  attempts: 3,
  quiet: false,
  filters: { minChars: null, maxChars: null, maxLengthRatio: null, dedup: '', dropIdentical: false, minLetterShare: null, lid: false, lidModel: null },
  embed: { center: true, forceCenter: false, batchTokens: null, batchSentences: null, threads: null },
};

const MINE_SCHEMA: Schema = {
  assignment: { type: 'string', choices: ['greedy', 'exchange'] },
  selfTables: bool,
  targetPrecision: num({ min: 0, max: 1 }, true),
  nprobe: num({ int: true, min: 1 }, true),
  header: bool,
  retrieval: { type: 'string', choices: ['fwd', 'bwd', 'intersect', 'max'] },
  margin: { type: 'string', choices: ['ratio', 'distance', 'absolute', 'eq9', 'eq10'] },
  k: num({ int: true, min: 1 }),
  block: num({ int: true, min: 2 }),
  work: { type: 'string', nullable: true },
  keepWork: bool,
  attempts: num({ int: true, min: 1, max: 100 }),
  quiet: bool,
  filters: {
    type: 'object',
    keys: {
      minChars: num({ int: true, min: 0 }, true),
      maxChars: num({ int: true, min: 1 }, true),
      maxLengthRatio: num({ min: 1 }, true),
      dedup: { type: 'string' },
      dropIdentical: bool,
      minLetterShare: num({ min: 0, max: 1 }, true),
      lid: bool,
      lidModel: { type: 'string', nullable: true },
    },
  },
  embed: {
    type: 'object',
    keys: {
      center: bool,
      forceCenter: bool,
      batchTokens: num({ int: true, min: 1 }, true),
      batchSentences: num({ int: true, min: 1 }, true),
      threads: num({ int: true, min: 1 }, true),
    },
  },
};

/** The mining commands whose knobs a settings file gives, and the keys each reads. */
export type MiningCommand = 'xling mine' | 'xling cluster mine' | 'xling scorer score' | 'xling eval bucc';
export const MINE_SETTINGS_KEYS: Record<MiningCommand, readonly (keyof MineSettings)[]> = {
  'xling mine': ['assignment', 'selfTables', 'targetPrecision', 'nprobe', 'header', 'filters', 'embed'],
  'xling cluster mine': ['assignment', 'selfTables', 'targetPrecision', 'header', 'margin', 'retrieval', 'attempts', 'quiet', 'filters'],
  'xling scorer score': ['selfTables', 'targetPrecision', 'margin', 'k', 'block', 'work', 'keepWork', 'filters', 'embed'],
  'xling eval bucc': ['assignment', 'selfTables', 'embed'],
};

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `user` over `def`, every key and value checked against `schema` (`allowed`: the top-level keys this command takes). */
function merge(def: Record<string, unknown>, user: unknown, schema: Schema, file: string, path: string): Record<string, unknown> {
  if (!isObj(user)) throw new Error(`${file}: ${path ? `'${path}' must be an object` : 'a settings file must be a JSON object'}, got ${JSON.stringify(user)}`);
  const out: Record<string, unknown> = { ...def };
  for (const [k, v] of Object.entries(user)) {
    const key = path ? `${path}.${k}` : k;
    if (!(k in schema)) throw new Error(`${file}: unknown setting '${key}' (known: ${Object.keys(schema).join(', ')})`);
    const r = schema[k]!;
    if (r.type === 'object') {
      out[k] = merge(def[k] as Record<string, unknown>, v, r.keys, file, key);
      continue;
    }
    if (v === null && (r.type === 'number' || r.type === 'string') && r.nullable) {
      out[k] = null;
      continue;
    }
    if (r.type === 'number') checkNumber(file, key, v, r.range);
    else if (r.type === 'boolean') {
      if (typeof v !== 'boolean') throw new Error(`${file}: '${key}' must be true or false, got ${JSON.stringify(v)}`);
    } else if (r.choices) checkChoice(file, key, v, r.choices);
    else if (typeof v !== 'string') throw new Error(`${file}: '${key}' must be a string, got ${JSON.stringify(v)}`);
    out[k] = v;
  }
  return out;
}

/** A settings file's value; errors name `where` (cannot read the settings file, not JSON). */
function readSettings(file: string, where: string): unknown {
  return readJsonFile(file, {
    unreadable: (e) => `${where}: cannot read the settings file (${e.code ?? e.message})`,
    invalid: (e) => `${where}: not JSON (${e.message})`,
  });
}

/** xling scorer train's settings: the defaults, with a settings file's values over them (none: the defaults); errors name `where`. */
export function scorerTrainSettings(file?: string, where = file ?? 'settings', user: unknown = file ? readSettings(file, where) : {}): ScorerTrainSettings {
  return merge(SCORER_TRAIN_DEFAULTS as unknown as Record<string, unknown>, user, SCORER_TRAIN_SCHEMA, where, '') as unknown as ScorerTrainSettings;
}

/**
 * A mining command's settings: the defaults (`over`: the command's own, e.g. scorer score drops
 * identical sides by default), with a settings file's values over them. One file serves every
 * mining command: a setting the command does not read (MINE_SETTINGS_KEYS) is checked like the
 * others and, unless it holds the default, passed to `unread` (the caller says so); an unknown one is refused.
 */
export function mineSettings(
  command: MiningCommand,
  file?: string,
  o: { over?: { filters?: Partial<FilterSettings> }; where?: string; unread?: (keys: string[]) => void; user?: unknown } = {},
): MineSettings {
  const where = o.where ?? file ?? 'settings';
  const user = o.user !== undefined ? o.user : file ? readSettings(file, where) : {};
  const def = { ...MINE_DEFAULTS, filters: { ...MINE_DEFAULTS.filters, ...o.over?.filters } };
  const s = merge(def as unknown as Record<string, unknown>, user, MINE_SCHEMA, where, '') as unknown as MineSettings;
  // (a setting left at its default does not matter to the command either way: not said)
  const given = user as Record<string, unknown>,
    d = def as unknown as Record<string, unknown>;
  const unread = Object.keys(given).filter(
    (k) =>
      !(MINE_SETTINGS_KEYS[command] as readonly string[]).includes(k) &&
      JSON.stringify(merge(d, { [k]: given[k] }, MINE_SCHEMA, where, '')[k]) !== JSON.stringify(d[k]),
  );
  if (unread.length) o.unread?.(unread);
  return s;
}

/** How a mining command embeds one side with --model (as xling embed would, for the same vectors). */
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

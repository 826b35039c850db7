// Training configuration: plain JSON values (nanoGPT style). Generic settings (src/models/family.ts
// TrainConfig) plus the sections of the model family named by `model`; unknown keys, wrong types
// and out-of-range values are errors naming the file and the key, found before any work starts.
import { PathConfig } from '../train-data/examples.js';
import { TrainConfig } from './family.js';
import { getFamily } from './registry.js';
import { readJson } from '../nn/serialize.js';
import { checkChoice, checkInt, checkNumber } from '../util/check.js';

export type { TrainConfig, PathConfig };

/** Defaults of the generic settings (a family may override some, see ModelFamily.defaults). */
export const GENERIC_DEFAULTS: TrainConfig = {
  model: 'laser',
  seed: 1,
  vocab: { size: 16000, type: 'bpe', temperature: 5, lowercase: true, romanize: false, sampleSentences: 400000 },
  paths: [
    { kind: '1:1', src: '*', trg: ['en'] },
    { kind: '1:1', src: ['en'], trg: ['es'] },
  ],
  batch: { size: 64, maxTokens: 0, sortChunk: 50, pairTemperature: 0, langTemperature: 0, langMinRows: 0, langMaxRepeat: 10 },
  maxLen: 64,
  optim: { lr: 1e-3, betas: [0.9, 0.98], clip: 5, warmup: 0, schedule: 'constant', minLr: 0, decay: 0.98, decayEvery: 10000, weightDecay: 0, sparseLr: 0 },
  dropout: 0,
  budget: { pairs: 16000 },
  checkpointEvery: 50,
  checkpointMinutes: 0,
  validate: { every: 0, langs: ['de', 'fr', 'es', 'ru', 'zh', 'ja', 'it', 'pt_br', 'pl', 'cs', 'sv', 'tr'], maxRows: 1000 },
  logEvery: 10,
  center: { perLang: 2000 },
};

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Deep-merges user values over defaults, rejecting unknown keys and wrong types. */
function merge(def: unknown, user: unknown, path: string, file: string): unknown {
  if (user === undefined) return def;
  if (isObj(def)) {
    if (!isObj(user)) throw new Error(`${file}: '${path}' must be an object`);
    const out: Record<string, unknown> = { ...def };
    for (const [k, v] of Object.entries(user)) {
      if (!(k in def)) throw new Error(`${file}: unknown setting '${path ? path + '.' : ''}${k}' (known: ${Object.keys(def).join(', ')})`);
      out[k] = merge(def[k], v, path ? `${path}.${k}` : k, file);
    }
    return out;
  }
  if (def !== undefined && typeof def !== typeof user && !(Array.isArray(def) && Array.isArray(user)))
    throw new Error(`${file}: '${path}' must be a ${Array.isArray(def) ? 'list' : typeof def}, got ${JSON.stringify(user)}`);
  return user;
}

/** Every default of a family's configuration: generic settings, the family's overrides, its sections. */
export function defaultConfig(kind = 'laser'): TrainConfig & Record<string, unknown> {
  const fam = getFamily(kind);
  const { budget, paths, ...rest } = (fam.defaults ?? {}) as Partial<TrainConfig>;
  const generic = merge(GENERIC_DEFAULTS, rest, '', `${kind} family defaults`) as TrainConfig;
  // whole-object settings replace the generic default, as a user's do
  return structuredClone({ ...generic, ...(budget ? { budget } : {}), ...(paths ? { paths } : {}), ...fam.sections, model: kind });
}

/** Checks the generic settings' ranges (a family checks its own sections). */
function validateGeneric(cfg: TrainConfig, file: string): void {
  const int = (key: string, v: unknown, min: number) => checkInt(file, key, v, min);
  int('seed', cfg.seed, 0);
  checkChoice(file, 'vocab.type', cfg.vocab.type, ['bpe', 'unigram', 'words', 'none']);
  int('vocab.size', cfg.vocab.size, 300);
  checkNumber(file, 'vocab.temperature', cfg.vocab.temperature, { above: 0 });
  int('vocab.sampleSentences', cfg.vocab.sampleSentences, 1);
  if (!cfg.paths.length) throw new Error(`${file}: 'paths' must list at least one path`);
  for (const [i, p] of cfg.paths.entries()) {
    if (!['1:1', '1:N', 'M:1'].includes(p.kind)) throw new Error(`${file}: paths[${i}].kind must be 1:1, 1:N or M:1`);
    if (p.trg === '*') {
      if (p.kind !== '1:1' || p.src !== '*') throw new Error(`${file}: paths[${i}]: trg '*' (every pair of languages of a row) needs kind '1:1' and src '*'`);
    } else if (!Array.isArray(p.trg) || !p.trg.length || p.trg.some((l) => typeof l !== 'string'))
      throw new Error(`${file}: paths[${i}].trg must be '*' or list target languages`);
    if (p.src !== '*' && (!Array.isArray(p.src) || !p.src.length || p.src.some((l) => typeof l !== 'string')))
      throw new Error(`${file}: paths[${i}].src must be '*' or a list`);
    if (p.weight !== undefined) checkNumber(file, `paths[${i}].weight`, p.weight, { above: 0 });
    if (p.sources !== undefined && (!Array.isArray(p.sources) || !p.sources.length || p.sources.some((s) => typeof s !== 'string' || !s)))
      throw new Error(`${file}: paths[${i}].sources must list source names (the corpus's #source column)`);
  }
  int('batch.size', cfg.batch.size, 1);
  int('batch.maxTokens', cfg.batch.maxTokens, 0);
  int('batch.sortChunk', cfg.batch.sortChunk, 0);
  checkNumber(file, 'batch.pairTemperature', cfg.batch.pairTemperature, { min: 0 });
  checkNumber(file, 'batch.langTemperature', cfg.batch.langTemperature, { min: 0 });
  int('batch.langMinRows', cfg.batch.langMinRows, 0);
  checkNumber(file, 'batch.langMaxRepeat', cfg.batch.langMaxRepeat, { min: 1 });
  if (cfg.batch.pairTemperature > 0 && (cfg.batch.langTemperature > 0 || cfg.batch.langMinRows > 0))
    throw new Error(
      `${file}: 'batch.pairTemperature' (one language pair a batch) and 'batch.langTemperature' / 'batch.langMinRows' (mixed batches) exclude each other`,
    );
  int('maxLen', cfg.maxLen, 2);
  checkNumber(file, 'optim.lr', cfg.optim.lr, { above: 0 });
  checkNumber(file, 'optim.sparseLr', cfg.optim.sparseLr, { min: 0 });
  if (cfg.optim.betas.length !== 2) throw new Error(`${file}: 'optim.betas' must be a list of two numbers`);
  cfg.optim.betas.forEach((b, i) => checkNumber(file, `optim.betas[${i}]`, b, { min: 0, below: 1 }));
  checkNumber(file, 'optim.clip', cfg.optim.clip, { min: 0 });
  int('optim.warmup', cfg.optim.warmup, 0);
  checkChoice(file, 'optim.schedule', cfg.optim.schedule, ['constant', 'invsqrt', 'plateau', 'linear', 'cosine', 'step']);
  checkNumber(file, 'optim.decay', cfg.optim.decay, { above: 0, max: 1 });
  int('optim.decayEvery', cfg.optim.decayEvery, 1);
  checkNumber(file, 'optim.minLr', cfg.optim.minLr, { min: 0, max: cfg.optim.lr });
  checkNumber(file, 'optim.weightDecay', cfg.optim.weightDecay, { min: 0 });
  checkNumber(file, 'dropout', cfg.dropout, { min: 0, below: 1 });
  const { pairs = 0, minutes = 0 } = cfg.budget;
  int('budget.pairs', pairs, 0);
  checkNumber(file, 'budget.minutes', minutes, { min: 0 });
  if (!(pairs > 0) && !(minutes > 0)) throw new Error(`${file}: 'budget' needs pairs > 0 or minutes > 0 (got ${JSON.stringify(cfg.budget)})`);
  int('checkpointEvery', cfg.checkpointEvery, 1);
  checkNumber(file, 'checkpointMinutes', cfg.checkpointMinutes, { min: 0 });
  int('validate.every', cfg.validate.every, 0);
  int('validate.maxRows', cfg.validate.maxRows, 1);
  int('logEvery', cfg.logEvery, 1);
  int('center.perLang', cfg.center.perLang, 0);
}

/**
 * A validated configuration from user JSON: `model` picks the family (default 'laser'); user
 * values are merged over that family's defaults. `overrides` (e.g. command-line budgets) replace
 * whole top-level settings before anything is checked.
 */
export function parseConfig<C extends TrainConfig = TrainConfig & Record<string, unknown>>(user: unknown, file = 'config', overrides: Partial<C> = {}): C {
  if (!isObj(user)) throw new Error(`${file}: a training configuration must be a JSON object`);
  const kind = user.model === undefined ? 'laser' : user.model;
  if (typeof kind !== 'string') throw new Error(`${file}: 'model' must be a string`);
  const fam = getFamily(kind, `${file}: 'model'`);
  const defaults = defaultConfig(kind);
  // Whole-object settings: a user's budget or paths replace the default, never merge with it.
  const base = { ...defaults, budget: { pairs: 0, minutes: 0 }, paths: [] };
  const u = { ...user, ...overrides };
  const cfg = merge(base, u, '', file) as TrainConfig & Record<string, unknown>;
  if (!('paths' in u)) cfg.paths = defaults.paths;
  if (!('budget' in u)) cfg.budget = defaults.budget;
  validateGeneric(cfg, file);
  fam.validate(cfg, file);
  return cfg as unknown as C;
}

/** A validated configuration from a JSON file (C: the family's typed view, e.g. DualTrainConfig). */
export function loadConfig<C extends TrainConfig = TrainConfig & Record<string, unknown>>(file: string, overrides: Partial<C> = {}): C {
  return parseConfig<C>(readJson(file), file, overrides);
}

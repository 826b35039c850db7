// Training configuration: plain JSON values (nanoGPT style), validated with clear errors.
import { readJson } from '../nn/serialize.js';

/**
 * A training path. '1:1': each source language → one target language. '1:N': one source decoded
 * into several target languages in the same step (losses summed). 'M:1': several source
 * languages of the same sentence, sentence vectors averaged, one target.
 * Language lists accept '*' = every language of the corpus except the targets.
 */
export interface PathConfig {
  kind: '1:1' | '1:N' | 'M:1';
  src: string[] | '*';
  trg: string[];
  /** Relative sampling weight of this path's examples (default 1). */
  weight?: number;
}

export interface TrainConfig {
  model: 'laser';
  seed: number;
  vocab: { size: number; type: 'bpe' | 'unigram'; temperature: number; lowercase: boolean; romanize: boolean; sampleSentences: number };
  encoder: { embedDim: number; hidden: number; layers: number; bidirectional: boolean; pooling: 'max' | 'last' };
  /** outBias 'unigram': output bias starts at the log frequency of target tokens ('uniform': PyTorch's init). */
  decoder: { embedDim: number; hidden: number; langEmbedDim: number; outBias: 'uniform' | 'unigram' };
  paths: PathConfig[];
  /**
   * maxTokens caps padded source tokens per batch (0 = off); sortChunk: batches are cut from
   * length-sorted chunks of size × sortChunk examples; pairTemperature > 0: every batch holds one
   * language pair, pairs drawn ∝ n^(1/T) (0 = batches mix all pairs).
   */
  batch: { size: number; maxTokens: number; sortChunk: number; pairTemperature: number };
  maxLen: number;
  optim: { lr: number; betas: [number, number]; clip: number; warmup: number; schedule: 'constant' | 'invsqrt' | 'plateau'; weightDecay: number };
  dropout: number;
  /** Stop after this many training pairs (exact, counted in (source, target) pairs) or minutes. */
  budget: { pairs?: number; minutes?: number };
  checkpointEvery: number;
  /** Validation on dev (similarity-search error) every N steps (0 = only at the end). */
  validate: { every: number; langs: string[]; maxRows: number };
  logEvery: number;
  /** Per-language mean vectors fitted on this many training sentences per language at the end (0 = none). */
  center: { perLang: number };
}

export const DEFAULT_CONFIG: TrainConfig = {
  model: 'laser',
  seed: 1,
  vocab: { size: 16000, type: 'bpe', temperature: 5, lowercase: true, romanize: false, sampleSentences: 400000 },
  encoder: { embedDim: 320, hidden: 512, layers: 1, bidirectional: true, pooling: 'max' },
  decoder: { embedDim: 320, hidden: 1024, langEmbedDim: 32, outBias: 'unigram' },
  paths: [
    { kind: '1:1', src: '*', trg: ['en'] },
    { kind: '1:1', src: ['en'], trg: ['es'] },
  ],
  batch: { size: 64, maxTokens: 0, sortChunk: 50, pairTemperature: 0 },
  maxLen: 64,
  optim: { lr: 1e-3, betas: [0.9, 0.98], clip: 5, warmup: 0, schedule: 'constant', weightDecay: 0 },
  dropout: 0,
  budget: { pairs: 16000 },
  checkpointEvery: 50,
  validate: { every: 0, langs: ['de', 'fr', 'es', 'ru', 'zh', 'ja', 'it', 'pt_br', 'pl', 'cs', 'sv', 'tr'], maxRows: 1000 },
  logEvery: 10,
  center: { perLang: 2000 },
};

function isObj(v: unknown): v is Record<string, unknown> { return typeof v === 'object' && v !== null && !Array.isArray(v); }

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

export function parseConfig(user: unknown, file = 'config'): TrainConfig {
  const defaults: Record<string, unknown> = { ...DEFAULT_CONFIG, budget: { pairs: 0, minutes: 0 }, paths: [] };
  const cfg = merge(defaults, user, '', file) as TrainConfig;
  if (!isObj(user) || !('paths' in user)) cfg.paths = DEFAULT_CONFIG.paths;
  if (!isObj(user) || !('budget' in user)) cfg.budget = DEFAULT_CONFIG.budget;
  if (cfg.model !== 'laser') throw new Error(`${file}: model must be 'laser'`);
  for (const [i, p] of cfg.paths.entries()) {
    if (!['1:1', '1:N', 'M:1'].includes(p.kind)) throw new Error(`${file}: paths[${i}].kind must be 1:1, 1:N or M:1`);
    if (!Array.isArray(p.trg) || !p.trg.length) throw new Error(`${file}: paths[${i}].trg must list target languages`);
    if (p.src !== '*' && (!Array.isArray(p.src) || !p.src.length)) throw new Error(`${file}: paths[${i}].src must be '*' or a list`);
    if (p.kind === '1:1' && p.trg.length !== 1) throw new Error(`${file}: paths[${i}]: a 1:1 path has one target language`);
  }
  if (!cfg.budget.pairs && !cfg.budget.minutes) throw new Error(`${file}: budget needs pairs or minutes`);
  if (!(cfg.batch.pairTemperature >= 0)) throw new Error(`${file}: batch.pairTemperature must be >= 0`);
  if (cfg.batch.size < 1) throw new Error(`${file}: batch.size must be >= 1`);
  if (!['bpe', 'unigram'].includes(cfg.vocab.type)) throw new Error(`${file}: vocab.type must be 'bpe' or 'unigram', got ${JSON.stringify(cfg.vocab.type)}`);
  if (!['uniform', 'unigram'].includes(cfg.decoder.outBias)) throw new Error(`${file}: decoder.outBias must be 'uniform' or 'unigram', got ${JSON.stringify(cfg.decoder.outBias)}`);
  if (cfg.vocab.size < 300) throw new Error(`${file}: vocab.size must be >= 300`);
  return cfg;
}

export function loadConfig(file: string): TrainConfig {
  return parseConfig(readJson(file), file);
}

// A scorer on disk: scorer.json (the regression, its features, k, how it was trained, the word
// tables by language pair) and its pair model's pair-model.safetensors beside it; and the encoder
// fingerprint a scorer records, to warn when it is used with another encoder.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { writeFileAtomicSync } from '../../util/atomic.js';
import { WordTables } from './word-align/features.js';
import { scorerFeatures } from './features.js';
import type { Regression } from './logistic.js';
import { loadPairModel, PairModel, PairModelConfig } from './pair-model.js';

export interface ScorerModel extends Regression {
  format: 'xling-scorer';
  version: 1;
  features: string[];
  /** Neighbours per direction the candidates were retrieved with (mining with the scorer uses the same). */
  k: number;
  /** How it was trained: data, pairs, positives, held-out accuracy. */
  trained: Record<string, unknown>;
  /** Word translation tables by language pair ("de-en"), for the alignment features. */
  tables: Record<string, WordTables>;
  /** The pair model (pair-model.ts) whose logits are PAIR_FEATURES: its file beside scorer.json, config and training. */
  pair?: { file: string; config: PairModelConfig; trained: Record<string, unknown> };
  /** The pair model itself, when loaded (in memory only). */
  pairModel?: PairModel;
  /**
   * The regression for a run's second pass with word tables trained on its own pairs (SelfTables):
   * the same features, fitted on the training sets' candidates with such tables (selfTablesFeatures),
   * which a run with it then cross-fits by source (crossFittedTables). Tables a run trains on its
   * pairs are not the tables the first regression was fitted with; scored by the first regression its
   * probabilities on such pairs are far too high (bench/RESULTS.md, "The self-tables regression").
   * Fitted by xling scorer train with the setting selfHead (opt-in: better calibrated in its training domain,
   * worse ranking off it); absent, a run keeps tables from all the pairs and the first regression.
   */
  self?: SelfHead;
}

/** A second logistic regression over the scorer's features (ScorerModel.self). */
export interface SelfHead {
  mean: number[];
  std: number[];
  weights: number[];
  bias: number;
  trained: Record<string, unknown>;
}

/** The scorer with its self-tables regression in place of the first, where it has one. */
export function withSelfHead(m: ScorerModel): ScorerModel {
  return m.self ? { ...m, mean: m.self.mean, std: m.self.std, weights: m.self.weights, bias: m.self.bias } : m;
}

export function saveScorer(dir: string, m: ScorerModel): void {
  mkdirSync(dir, { recursive: true });
  // the word tables on one line (indented, their number triples would be most of the file)
  const { tables, pairModel: _, ...rest } = m;
  const head = JSON.stringify(rest, null, 1);
  writeFileAtomicSync(join(dir, 'scorer.json'), `${head.slice(0, -2)},\n "tables": ${JSON.stringify(tables)}\n}\n`);
}

/** Reads a scorer directory (or its scorer.json); refuses another format or other features. */
export function loadScorer(path: string): ScorerModel {
  const f = existsSync(path) && statSync(path).isDirectory() ? join(path, 'scorer.json') : path;
  if (!existsSync(f)) throw new Error(`${path}: not a scorer (no scorer.json; make one with xling scorer train)`);
  let m: ScorerModel;
  try {
    m = JSON.parse(readFileSync(f, 'utf8')) as ScorerModel;
  } catch (e) {
    throw new Error(`${f}: invalid JSON: ${(e as Error).message}`);
  }
  if (m.format !== 'xling-scorer' || m.version !== 1)
    throw new Error(`${f}: not an xling scorer (format ${JSON.stringify(m.format)}, version ${JSON.stringify(m.version)})`);
  if (m.pair !== undefined && (typeof m.pair !== 'object' || m.pair === null || typeof m.pair.file !== 'string' || !/^[\w.-]+$/.test(m.pair.file)))
    throw new Error(`${f}: 'pair' must name its pair model's file beside scorer.json`);
  const want = scorerFeatures(!!m.pair);
  const same = Array.isArray(m.features) && m.features.length === want.length && m.features.every((x, i) => x === want[i]);
  if (!same) throw new Error(`${f}: made with other features (${String(m.features?.length)}; this xling computes ${want.length}); train it again`);
  // a regression: its standardisation and weights, one per feature, and its bias
  const checkRegression = (r: Record<string, unknown>, at: string) => {
    for (const key of ['mean', 'std', 'weights'] as const) {
      const v = r[key];
      if (!Array.isArray(v) || v.length !== want.length || !v.every((x) => typeof x === 'number' && Number.isFinite(x)))
        throw new Error(`${f}: '${at}${key}' must hold ${want.length} finite numbers`);
    }
    if (typeof r.bias !== 'number' || !Number.isFinite(r.bias)) throw new Error(`${f}: '${at}bias' must be a finite number`);
  };
  checkRegression(m as unknown as Record<string, unknown>, '');
  if (m.self !== undefined) {
    if (typeof m.self !== 'object' || m.self === null) throw new Error(`${f}: 'self' must be an object (the self-tables regression)`);
    checkRegression(m.self as unknown as Record<string, unknown>, 'self.');
  }
  if (!Number.isInteger(m.k) || m.k < 1) throw new Error(`${f}: 'k' must be a positive integer`);
  if (typeof m.tables !== 'object' || m.tables === null || Array.isArray(m.tables))
    throw new Error(`${f}: 'tables' must be an object of word translation tables by language pair`);
  for (const [pair, t] of Object.entries(m.tables))
    if (!Array.isArray(t?.src_words) || !Array.isArray(t?.trg_words) || !Array.isArray(t?.fwd) || !Array.isArray(t?.bwd))
      throw new Error(`${f}: tables['${pair}'] is not a word translation table (src_words, trg_words, fwd, bwd)`);
  if (m.pair) {
    const pf = join(dirname(f), m.pair.file);
    if (!existsSync(pf)) throw new Error(`${f}: its pair model ${pf} is missing (a scorer directory is scorer.json and ${m.pair.file} together)`);
    m.pairModel = loadPairModel(pf);
    m.pair.config = m.pairModel.config;
  }
  return m;
}

/**
 * A fingerprint of a model directory (its files' names and sizes, config.json's text): the same
 * for a copy, different for another encoder. A pair model reads the word vectors of the encoder it
 * was trained with.
 */
export function encoderFingerprint(dir: string): string {
  const h = createHash('sha256');
  for (const f of readdirSync(dir).sort()) h.update(`${f}\t${statSync(join(dir, f)).size}\n`);
  if (existsSync(join(dir, 'config.json'))) h.update(readFileSync(join(dir, 'config.json')));
  return h.digest('hex').slice(0, 16);
}

/** A warning when a scorer or its pair model (`what`) was trained with another encoder than `model` (null: the same, or not recorded); `reads`: what of the encoder's vectors it learnt from. */
export function encoderMismatch(trained: Record<string, unknown> | undefined, model: string, what: string, reads: string): string | null {
  const fp = trained?.encoder;
  if (typeof fp !== 'string' || fp === encoderFingerprint(model)) return null;
  return `${what} was trained with another encoder than ${model} (${String(trained?.encoder_dir ?? 'unknown')}): ${reads} will not be the ones it learnt from`;
}

// `xling train --init DIR`: continue training an imported encoder (a model directory whose kind's
// loader is `adaptable`: hf-bert, hf-xlm-roberta, hf-distilbert, laser-lstm) on parallel data with
// the dual encoder's loss — the bidirectional additive-margin softmax over in-batch negatives
// (src/models/dual/loss.ts), with loss.hardNegatives mined by the dual family's miner
// (src/models/dual/negatives.ts) — and write a model directory of the same kind (same tokenizer
// and shape, new weights).
// Which configuration sections apply: the training ones (loss, optim, batch, budget, paths,
// validate, seed, checkpoints, logging, center); the text features and the encoder's shape come
// from the init model, so `vocab`, `features`, `encoder`, `maxLen` and `dropout` are refused.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EncodedCorpus } from '../train-data/examples.js';
import { readModelConfig } from '../embed/model-dir.js';
import { parseConfig } from '../models/config.js';
import { DualTrainConfig } from '../models/dual/family.js';
import { MarginPairTask } from '../models/dual/task.js';
import { EncodeOptions, SentenceEncoder } from '../models/encoder.js';
import { AdaptableEncoder, LoadedEncoder, SavedModelConfig, TrainConfig } from '../models/family.js';
import { getLoader, loaderKinds } from '../models/registry.js';
import { Module } from '../nn/module.js';
import { loadModule, readJson } from '../nn/serialize.js';
import { Tensor } from '../tensor/tensor.js';
import { readSafetensorsHeader } from '../io/safetensors.js';

/** Top-level settings that the init model fixes (its tokenizer and shape): refused with --init. */
const FROM_INIT: Record<string, string> = {
  vocab: "the tokenizer is the init model's",
  features: "the text features are the init model's tokenizer",
  encoder: "the encoder's shape is the init model's",
  maxLen: "inputs are cut at the init model's max_seq_length",
  dropout: 'the imported encoder trains without dropout',
};

/** Defaults for adapting a pretrained encoder where the user's configuration is silent (fine-tuning rates, not from-scratch ones). */
const INIT_DEFAULTS = {
  batch: { size: 32, sortChunk: 20 },
  optim: { lr: 2e-5, warmup: 50, clip: 1 },
  budget: { minutes: 10 },
  center: { perLang: 0 },
  checkpointEvery: 200,
  logEvery: 10,
};

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The kinds whose models `--init` takes. */
export function adaptableKinds(): string[] {
  return loaderKinds().filter((k) => getLoader(k).adaptable);
}

/**
 * Checks that `dir` is a model directory `--init` can continue (read only config.json and the
 * weights' header: no weights are loaded). Errors name the argument and the file.
 */
export function checkInitModel(dir: string): SavedModelConfig {
  let saved: SavedModelConfig;
  try {
    saved = readModelConfig(dir);
  } catch (e) {
    throw new Error(`--init ${(e as Error).message}`);
  }
  const loader = getLoader(saved.kind, `--init ${join(dir, 'config.json')}`);
  if (!loader.adaptable)
    throw new Error(
      `--init ${dir}: a ${saved.kind} model cannot be trained further yet (--init takes ${adaptableKinds().join(', ')}; the kinds xling trains continue with --resume)`,
    );
  if (saved.export) throw new Error(`--init ${dir}: a compact export (${saved.export.dtype}) cannot be trained further; give the imported model directory`);
  const weights = join(dir, 'model.safetensors');
  if (!existsSync(weights)) throw new Error(`--init ${dir}: model.safetensors is missing`);
  try {
    readSafetensorsHeader(weights);
  } catch (e) {
    throw new Error(`--init ${weights}: ${(e as Error).message}`);
  }
  if (saved.tokenizer && !existsSync(join(dir, saved.tokenizer))) throw new Error(`--init ${dir}: ${saved.tokenizer} is missing`);
  return saved;
}

/**
 * The training configuration of an adaptation: the user's file, its loss/optim/batch/… over the
 * dual family's defaults and INIT_DEFAULTS; settings the init model fixes are errors naming the key.
 */
export function loadAdaptConfig(file: string, overrides: Partial<TrainConfig> = {}): DualTrainConfig {
  const user = readJson<unknown>(file);
  if (!isObj(user)) throw new Error(`${file}: a training configuration must be a JSON object`);
  for (const [k, why] of Object.entries(FROM_INIT)) {
    if (k in user) throw new Error(`${file}: '${k}' does not apply with --init (${why}); remove it`);
  }
  if (user.model !== undefined && user.model !== 'dual')
    throw new Error(
      `${file}: 'model' must be "dual" (or left out) with --init: the init model is trained with the dual encoder's additive-margin loss, got ${JSON.stringify(user.model)}`,
    );
  const merged: Record<string, unknown> = { ...user, model: 'dual' };
  for (const [k, v] of Object.entries(INIT_DEFAULTS)) {
    if (k === 'budget') {
      if (!('budget' in user)) merged.budget = v;
      continue;
    }
    merged[k] = isObj(v) ? (isObj(user[k]) ? { ...v, ...user[k] } : (user[k] ?? v)) : (user[k] ?? v);
  }
  return parseConfig<DualTrainConfig>(merged, file, overrides as Partial<DualTrainConfig>);
}

/** Loads the init model's encoder opened for training (with its tokenizer). */
export function loadAdaptable(dir: string): { loaded: LoadedEncoder; net: AdaptableEncoder; saved: SavedModelConfig; tokenizerText: string } {
  const saved = checkInitModel(dir);
  const file = join(dir, 'model.safetensors');
  const loaded = getLoader(saved.kind).loadEncoder(dir, saved, (m, o) => loadModule(m, file, { prefix: o?.prefix ?? 'encoder.', rename: o?.rename }));
  const net = loaded.adaptable?.();
  if (!net) {
    loaded.dispose();
    throw new Error(`--init ${dir}: the ${saved.kind} loader gave no trainable encoder`);
  }
  return { loaded, net, saved, tokenizerText: saved.tokenizer ? readFileSync(join(dir, saved.tokenizer), 'utf8') : JSON.stringify(saved.model) };
}

/** The module saved as model.safetensors: the encoder under `encoder.` (the names the loader reads). */
class InitModel extends Module {
  constructor(net: Module) {
    super();
    this.module('encoder', net);
  }
}

/** The SentenceEncoder over the live weights: the derived inference caches are rebuilt first. */
class LiveEncoder implements SentenceEncoder {
  constructor(private readonly inner: SentenceEncoder) {}
  get dim(): number {
    return this.inner.dim;
  }
  get batchLimits() {
    return this.inner.batchLimits;
  }
  encode(seqs: Int32Array[], o?: EncodeOptions): Float32Array {
    return this.inner.encode(seqs, o);
  }
  encodeAsync(seqs: Int32Array[], o?: EncodeOptions): Promise<Float32Array> {
    return this.inner.encodeAsync(seqs, o);
  }
}

/** The model config of an adapted model: its `source` says that it was trained further (a string gets a suffix, an object a field). */
function markAdapted(mc: unknown): unknown {
  if (!isObj(mc)) return mc;
  const mark = ' (adapted with xling train --init)';
  if (typeof mc.source === 'string') return mc.source.endsWith(mark) ? mc : { ...mc, source: mc.source + mark };
  if (isObj(mc.source)) return { ...mc, source: { ...mc.source, adapted: 'xling train --init' } };
  return mc;
}

/** The dual encoder's training task (MarginPairTask) over an init model's encoder. */
export class AdaptTask extends MarginPairTask {
  readonly module: InitModel;
  readonly modelConfig: unknown;

  constructor(
    cfg: DualTrainConfig,
    private readonly init: { loaded: LoadedEncoder; net: AdaptableEncoder },
    corpus: EncodedCorpus,
    private readonly source: string,
  ) {
    super(cfg, corpus, cfg.loss);
    this.module = new InitModel(init.net.module);
    // the model shape is the init model's; its `source` says that it was adapted
    this.modelConfig = markAdapted(init.net.modelConfig);
  }

  protected forward(seqs: Int32Array[]): Tensor {
    return this.init.net.forward(seqs);
  }

  encoder(): SentenceEncoder {
    // the optimiser changed the weights in place since the last call (or a checkpoint was loaded)
    this.init.net.weightsChanged();
    return new LiveEncoder(this.init.loaded.encoder);
  }

  describe(): string[] {
    const l = this.lossConfig;
    return [
      `adapting ${this.source}: ${this.init.net.describe()}; margin ${l.margin}, scale ${l.scale}, ${l.bidirectional ? 'both directions' : 'one direction'}, in-batch negatives${this.miner.enabled ? ` + ${this.miner.describe()}` : ''}`,
    ];
  }

  override dispose(): void {
    super.dispose();
    // the module (the encoder's weights) is disposed by the caller with task.module; the tokenizer here
    (this.init.loaded.tokenizer as { dispose?(): void }).dispose?.();
  }
}

// Two plug-in interfaces, registered by kind in ./registry.ts:
// - EncoderLoader: loads an encoder (and its tokenizer) back from a model directory. Every kind has
//   one, also kinds xling only imports (LASER checkpoints, Hugging Face encoders).
// - TrainingPlugin: its own config sections, their defaults and checks. Only the kinds xling
//   trains have one.
// A trained family (laser, dual, jmt) is both: a ModelFamily. Its training code, which builds a
// model and its training task (batches + loss) for the generic trainer (src/train/trainer.ts), is
// a module of its own (a TrainingModule), imported by the registry when a run trains.
import type { BatchSettings, EncodedCorpus, PathConfig } from '../train-data/examples.js';
import { Module } from '../nn/module.js';
import { Optimizer } from '../nn/optim.js';
import { Tensor } from '../tensor/tensor.js';
import { TextTokenizer } from '../text/text-tokenizer.js';
import { openXlingTokenizer, type TokenizerSpec } from '../text/spec.js';
import { Tokenizer } from '../text/tokenizer.js';
import { SentenceEncoder } from './encoder.js';

/**
 * The generic training settings every family shares (src/train/config.ts has the defaults and the
 * checks). A family's own sections (e.g. LASER's encoder and decoder) sit beside these keys in the
 * same JSON object; the family reads them with its own type.
 */
export interface TrainConfig {
  /** The model family (kind): 'laser', 'dual', … */
  model: string;
  seed: number;
  /** type 'words': whole words; 'none': no vocabulary (families that bring their own text features). */
  vocab: { size: number; type: 'bpe' | 'unigram' | 'words' | 'none'; temperature: number; lowercase: boolean; romanize: boolean; sampleSentences: number };
  paths: PathConfig[];
  /**
   * maxTokens caps padded source tokens per batch (0 = off); sortChunk: batches are cut from
   * length-sorted chunks of size × sortChunk examples; pairTemperature > 0: every batch holds one
   * language pair, pairs drawn ∝ n^(1/T) (0 = batches mix all pairs); langTemperature > 0: batches
   * mix pairs, each pair's share of an epoch ∝ n^(1/T) (0 or 1: in proportion to its examples);
   * langMinRows > 0: a pair with fewer examples takes that many an epoch, repeating its own at most
   * langMaxRepeat times.
   */
  batch: BatchSettings;
  maxLen: number;
  /**
   * sparseLr: learning rate of row-sparse parameters (hashed feature tables); 0 = lr. schedule
   * 'linear' / 'cosine' decay from lr to minLr over the budget (pairs or minutes, whichever is
   * nearer its end), after `warmup` steps; 'step' multiplies by `decay` every `decayEvery` steps.
   */
  optim: {
    lr: number;
    betas: [number, number];
    clip: number;
    warmup: number;
    schedule: 'constant' | 'invsqrt' | 'plateau' | 'linear' | 'cosine' | 'step';
    minLr: number;
    decay: number;
    decayEvery: number;
    weightDecay: number;
    sparseLr: number;
  };
  dropout: number;
  /** Stop after this many training pairs (exact, counted in (source, target) pairs) or minutes. */
  budget: { pairs?: number; minutes?: number };
  /** Checkpoint every N steps, and at least every M minutes (0 = by steps only). */
  checkpointEvery: number;
  checkpointMinutes: number;
  /** Validation on dev (similarity-search error) every N steps (0 = only at the end). */
  validate: { every: number; langs: string[]; maxRows: number };
  logEvery: number;
  /** Per-language mean vectors fitted on this many training sentences per language at the end (0 = none). */
  center: { perLang: number };
}

/** An optimiser of the training loop: its learning rate follows the schedule from baseLr. */
export interface OptimizerSlot {
  /** Names its checkpoint file; stepsWith() picks slots by it. */
  name: string;
  opt: Optimizer;
  baseLr: number;
  params: Tensor[];
  /** Whether optim.clip applies to these parameters (dense ones). */
  clip: boolean;
}

/** What a family's training step needs, built once per run (the trainer owns the loop). */
export interface TrainingTask<B = unknown> {
  /** Every trained weight, with PyTorch names: saved in checkpoints and model.safetensors. */
  readonly module: Module;
  /** The model's shape, stored as `model` in config.json and given back to loadEncoder. */
  readonly modelConfig: unknown;
  /** Parameters with row-sparse gradients (hashed feature tables): updated by SparseAdam. */
  readonly sparseParameters?: Tensor[];
  /** The next training batch; `streamState` (plain JSON) resumes the stream exactly. */
  nextBatch(): B;
  streamState: unknown;
  /** (source, target) pairs in a batch, its tokens (for the rate line), and the batch cut to n pairs. */
  pairs(b: B): number;
  tokens(b: B): number;
  truncate(b: B, n: number): B;
  /** The training loss of a batch (training mode; the trainer seeds dropout per step). */
  loss(b: B, step: number): Tensor;
  /** Inference encoder over the live weights (validation, per-language means). */
  encoder(): SentenceEncoder;
  /**
   * The task's own optimisers (default: Adam for dense parameters, SparseAdam for sparseParameters),
   * and which of them a batch steps (default: all). For tasks that alternate objectives.
   */
  optimizers?(): OptimizerSlot[];
  stepsWith?(b: B): string[];
  /** Work before a step (e.g. mining hard negatives with the current model). */
  beforeStep?(step: number): void | Promise<void>;
  /** Extra state that a checkpoint must hold for an exact resume (e.g. mined negatives). */
  checkpointState?(): { tensors: Map<string, Tensor>; meta: unknown } | undefined;
  loadCheckpointState?(s: { tensors: Map<string, Tensor>; meta: unknown }): void;
  /** Lines worth logging once at the start (model size, feature counts). */
  describe?(): string[];
  dispose?(): void;
}

/** A model directory's config.json (format 2; format 1 was LASER-only, see src/embed/model-dir.ts). */
export interface SavedModelConfig {
  format: 'xling';
  version: 2;
  kind: string;
  encoderOnly: boolean;
  /** The family's model shape (TrainingTask.modelConfig). */
  model: unknown;
  /** The training configuration. */
  train?: unknown;
  /** 'tokenizer.json' when the model has a subword vocabulary (Hugging Face format). */
  tokenizer: string | null;
  /**
   * What tokenises (src/text/spec.ts): type, file, special ids, BOS/EOS, maximum length,
   * normalisation. readModelConfig always fills it (derived from the legacy fields for
   * directories written before it existed); loaders read it, never `train`.
   */
  tokenizerSpec?: TokenizerSpec;
  /** A compact export (xling export --dtype/--dims/--prune-unused): how it was made. */
  export?: { dtype: string; dims?: number; prune?: { buckets: number; kept: number; share: number; fallback: number } };
}

export interface LoadedEncoder {
  encoder: SentenceEncoder;
  tokenizer: TextTokenizer;
  dispose(): void;
  /** The encoder's weights for further training (`xling train --init`): kinds whose loader has `adaptable`. */
  adaptable?(): AdaptableEncoder;
}

/**
 * A loaded encoder opened for training (`xling train --init`): its module (parameter names as
 * stored under `encoder.` in model.safetensors), a differentiable forward, and a call that drops
 * inference caches derived from the weights (e.g. stacked Q/K/V) after they changed.
 */
export interface AdaptableEncoder {
  readonly module: Module;
  /** Sentence vectors [B, dim] (not normalised) with gradient. */
  forward(seqs: Int32Array[]): Tensor;
  /** The weights changed (an optimiser step, a checkpoint loaded): rebuild derived copies before the next inference. */
  weightsChanged(): void;
  /** The model's config.json `model` section (written unchanged with the new weights). */
  readonly modelConfig: unknown;
  /** One line for the training log. */
  describe(): string;
}

/**
 * Reads weights of model.safetensors into a module: by default the tensors named
 * `encoder.<name>`; `prefix` picks another prefix, `rename` maps a module's parameter name to the
 * stored name (null: not stored, left as built), for loaders whose stored names differ.
 */
export type LoadWeights = (m: Module, o?: { prefix?: string; rename?: (name: string) => string | null }) => void;

/** Loads the encoder of a model directory of one kind. */
export interface EncoderLoader {
  readonly kind: string;
  /** One line for --help and errors. */
  readonly summary: string;
  /** The keys of the kind's model shape (config.json's `model`); a model directory with others is refused. */
  readonly modelKeys: readonly string[];
  /**
   * The inference encoder of a model directory: the loader builds the encoder module (large tables
   * uninitialised: withoutTableInit) and calls load(module), which reads model.safetensors'
   * `encoder.*` weights straight into it.
   */
  loadEncoder(dir: string, saved: SavedModelConfig, load: LoadWeights, opts?: { precision?: 'fp32' | 'bf16' }): LoadedEncoder;
  /** The inference precisions its encoders offer besides the stored one (`precision` of loadEncoder's opts). */
  readonly precisions?: readonly ('fp32' | 'bf16')[];
  /** Whether its encoders can be trained further (`xling train --init`): loadEncoder then gives `adaptable`. */
  readonly adaptable?: boolean;
}

/** What `xling train` needs of a kind it trains. */
export interface TrainingPlugin {
  readonly kind: string;
  readonly summary: string;
  /** Defaults of the family's own top-level config sections (unknown keys in them are errors). */
  readonly sections: Record<string, unknown>;
  /** The family's defaults for generic settings, deep-merged over the generic defaults. */
  readonly defaults?: Record<string, unknown>;
  /** Checks the family's sections and the generic settings it constrains; errors name file and key. */
  validate(cfg: TrainConfig, file: string): void;
  /**
   * Text → ids when the family brings its own (e.g. hashed character n-grams); undefined: the
   * pipeline trains the subword vocabulary of cfg.vocab and saves it as tokenizer.json.
   */
  fixedTokenizer?(cfg: TrainConfig): TextTokenizer | undefined;
}

/**
 * Builds the model (its initial weights come from the torch RNG, seeded by the trainer) and its
 * training task: what a family's training module (e.g. ./dual/train.ts) exports as `createTask`.
 * The registry imports that module only when a run trains, so reading or loading a model never
 * loads training code.
 */
export type CreateTask = (cfg: TrainConfig, tok: TextTokenizer, corpus: EncodedCorpus, log: (line: string) => void) => TrainingTask;

/** A family's training module. */
export interface TrainingModule {
  createTask: CreateTask;
}

/** The tokenizer spec of a loaded config (readModelConfig fills it; a config without one is refused). */
export function specOf(dir: string, saved: SavedModelConfig): TokenizerSpec {
  if (!saved.tokenizerSpec) throw new Error(`${dir}/config.json: no 'tokenizerSpec' (and none can be derived for a ${saved.kind} model)`);
  return saved.tokenizerSpec;
}

/** xling's subword tokenizer of a model directory (laser, jmt, dual with unit 'token'), from its spec. */
export function subwordTokenizer(dir: string, saved: SavedModelConfig): Tokenizer {
  const spec = specOf(dir, saved);
  if (spec.type !== 'xling-subword')
    throw new Error(`${dir}/config.json: a ${saved.kind} model reads xling's subword tokenizer, but tokenizerSpec says ${spec.type}`);
  return openXlingTokenizer(dir, spec) as Tokenizer;
}

/** A built encoder module with its weights read (a loader's `load`), in eval mode; disposed of where reading fails. */
export function withWeights<M extends Module>(net: M, load: LoadWeights): M {
  try {
    load(net);
  } catch (e) {
    net.dispose();
    throw e;
  }
  return net.eval();
}

/** A family xling trains and loads. */
export type ModelFamily = EncoderLoader & TrainingPlugin;

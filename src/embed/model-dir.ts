// A model is a directory: config.json (format, model kind, the family's model shape, the training
// config), model.safetensors (PyTorch-style names: encoder.* for the sentence encoder, anything
// else the family trains beside it, center.<lang> for per-language means) and, for subword
// models, tokenizer.json (Hugging Face format). An exported directory holds only encoder.* and
// center.*. Format 1 (`xling-laser`, before model families) still loads.
import { LID_FILE, loadLanguageIdentifier } from '../text/lid.js';
import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SavedModelConfig, TrainingTask } from '../models/family.js';
import { getLoader } from '../models/registry.js';
import { parseConfig } from '../models/config.js';
import { readSafetensorsHeader } from '../io/safetensors.js';
import { loadModule, loadTensors, readJson, saveTensors, writeJson } from '../nn/serialize.js';
import { EmbeddingBag } from '../nn/layers.js';
import { fromArray, noGrad, Tensor, tidy } from '../tensor/tensor.js';
import { replaceDir, writeDirAtomically } from '../util/atomic.js';
import { hashesOf } from '../text/ngrams.js';
import { checkTokenizerSpec, TokenizerSpec, XLING_SPECIALS } from '../text/spec.js';
import { LASER_TOKENIZER_FILE } from '../models/laser-lstm/tokenizer.js';
import { SentenceEncoderModel } from './model.js';
import { dequantizePqInto, readPqTable } from './table-pq.js';

const SAVED_KEYS = ['format', 'version', 'kind', 'encoderOnly', 'model', 'train', 'tokenizer', 'tokenizerSpec', 'export'];

/**
 * Writes config.json and model.safetensors of a trained task into dir (each file atomically);
 * a tokenizer.json must already be there when `tokenizer` names it.
 */
export function writeModelFiles(
  dir: string,
  kind: string,
  task: TrainingTask,
  train: unknown,
  tokenizer: string | null,
  centers: Map<string, Float32Array> = new Map(),
  tokenizerSpec?: TokenizerSpec,
): void {
  mkdirSync(dir, { recursive: true });
  if (tokenizer && !existsSync(join(dir, tokenizer))) throw new Error(`${dir}: ${tokenizer} is missing`);
  const cfg: SavedModelConfig = {
    format: 'xling',
    version: 2,
    kind,
    encoderOnly: false,
    model: task.modelConfig,
    train,
    tokenizer,
    ...(tokenizerSpec ? { tokenizerSpec } : {}),
  };
  const sd = task.module.stateDict();
  const extra = [...centers].map(([l, v]) => [`center.${l}`, fromArray(v)] as const);
  for (const [k, t] of extra) sd.set(k, t);
  try {
    saveTensors(join(dir, 'model.safetensors'), sd, { format: 'pt' });
  } finally {
    for (const [, t] of extra) t.dispose();
  }
  writeJson(join(dir, 'config.json'), cfg);
}

/** Whether dir holds an xling model (its config.json says so). */
export function isModelDir(dir: string): boolean {
  try {
    const c = readJson<{ format?: string }>(join(dir, 'config.json'));
    return c.format === 'xling' || c.format === 'xling-laser';
  } catch {
    return false;
  }
}

/**
 * Refuses to replace `dir` unless it is missing, empty or an xling model directory: a model
 * output replaces its directory whole, so it must never be a user's folder of other files.
 */
export function checkReplaceable(dir: string, what: string): void {
  if (!existsSync(dir)) return;
  if (!statSync(dir).isDirectory()) throw new Error(`${what}: ${dir} exists and is not a directory`);
  if (readdirSync(dir).length && !isModelDir(dir))
    throw new Error(`${what}: ${dir} exists and is not an xling model directory (it would be replaced); choose a new directory`);
}

/**
 * Builds a model directory in a temporary beside outDir (write fills it) and swaps it in whole;
 * the temporary is removed on failure. Every command that writes a model directory goes through here.
 */
export function writeModelDirAtomically(outDir: string, write: (tmp: string) => void): void {
  writeDirAtomically(outDir, write);
}

/** Copies what a model needs beside its weights (the tokenizer file, the language identifier) from modelDir into dir. */
export function copyModelSideFiles(modelDir: string, dir: string, cfg: SavedModelConfig): void {
  if (cfg.tokenizer) copyFileSync(join(modelDir, cfg.tokenizer), join(dir, cfg.tokenizer));
  if (existsSync(join(modelDir, LID_FILE))) copyFileSync(join(modelDir, LID_FILE), join(dir, LID_FILE));
}

/** Writes a directory with the encoder alone (for embedding), atomically. */
export function exportEncoder(modelDir: string, outDir: string): void {
  const cfg = readModelConfig(modelDir);
  checkReplaceable(outDir, '--out');
  const { tensors } = loadTensors(join(modelDir, 'model.safetensors'));
  try {
    const enc = new Map<string, Tensor>();
    for (const [k, t] of tensors) if (k.startsWith('encoder.') || k.startsWith('center.')) enc.set(k, t);
    writeModelDirAtomically(outDir, (tmp) => {
      writeJson(join(tmp, 'config.json'), { ...cfg, encoderOnly: true });
      // the config in the file's metadata too: the file alone is a model (xling/lite)
      saveTensors(join(tmp, 'model.safetensors'), enc, { format: 'pt', 'xling.config': JSON.stringify({ ...cfg, encoderOnly: true }) });
      copyModelSideFiles(modelDir, tmp, cfg);
    });
  } finally {
    for (const t of tensors.values()) t.dispose();
  }
}

export { replaceDir };

/** Refuses keys of a model shape that its family does not know (as the training config refuses unknown settings). */
function checkModelKeys(model: unknown, kind: string, f: string, section: string): void {
  if (typeof model !== 'object' || model === null || Array.isArray(model)) throw new Error(`${f}: '${section}' must be an object`);
  const known = getLoader(kind, f).modelKeys;
  for (const k of Object.keys(model))
    if (!known.includes(k)) throw new Error(`${f}: unknown key '${section}.${k}' for a ${kind} model (known: ${known.join(', ')})`);
}

/**
 * config.json of a model directory, in format 2 (format 1 is converted). Unknown keys are errors,
 * also in the model shape and (format 2) the training configuration.
 */
export function readModelConfig(dir: string): SavedModelConfig {
  const f = join(dir, 'config.json');
  if (!existsSync(f) || !statSync(dir).isDirectory()) throw new Error(`${dir}: not a model directory (no config.json)`);
  const c = readJson<Record<string, unknown>>(f);
  if (c.format === 'xling-laser') {
    // format 1: LASER only, the model shape under `laser` (its training config is an older schema)
    for (const k of Object.keys(c)) if (!['format', 'version', 'encoderOnly', 'laser', 'train'].includes(k)) throw new Error(`${f}: unknown key '${k}'`);
    checkModelKeys(c.laser, 'laser', f, 'laser');
    const v1: SavedModelConfig = {
      format: 'xling',
      version: 2,
      kind: 'laser',
      encoderOnly: !!c.encoderOnly,
      model: c.laser,
      train: c.train,
      tokenizer: 'tokenizer.json',
    };
    return { ...v1, tokenizerSpec: legacyTokenizerSpec(v1) };
  }
  if (c.format !== 'xling') throw new Error(`${f}: unknown model format '${String(c.format)}'`);
  if (c.version !== 2) throw new Error(`${f}: unsupported format version ${String(c.version)} (this xling reads 2)`);
  for (const k of Object.keys(c)) if (!SAVED_KEYS.includes(k)) throw new Error(`${f}: unknown key '${k}' (known: ${SAVED_KEYS.join(', ')})`);
  if (typeof c.kind !== 'string') throw new Error(`${f}: 'kind' must be a string`);
  checkModelKeys(c.model, c.kind, f, 'model');
  // the same checks as when it was trained: unknown settings, types, ranges
  if (c.train !== undefined) parseConfig(c.train, `${f}: 'train'`);
  const cfg = c as unknown as SavedModelConfig;
  if (c.tokenizerSpec !== undefined) {
    const spec = checkTokenizerSpec(c.tokenizerSpec, f);
    if ((spec.file ?? null) !== (cfg.tokenizer ?? null))
      throw new Error(`${f}: 'tokenizerSpec.file' (${JSON.stringify(spec.file)}) and 'tokenizer' (${JSON.stringify(cfg.tokenizer)}) name different files`);
    return cfg;
  }
  return { ...cfg, tokenizerSpec: legacyTokenizerSpec(cfg) };
}

/**
 * The tokenizer spec of a model directory written before config.json recorded one: derived from
 * the legacy fields (the kind, the tokenizer file's name and the training configuration's
 * `vocab` and `features`), here only; loaders read the spec, never the training configuration.
 * undefined for kinds whose loader needs none.
 */
export function legacyTokenizerSpec(cfg: SavedModelConfig): TokenizerSpec | undefined {
  const train = cfg.train as
    | {
        vocab?: { lowercase?: boolean; romanize?: boolean };
        maxLen?: number;
        features?: { ngrams: [number, number]; buckets: number; words: boolean; maxFeatures: number; hashes?: number };
      }
    | undefined;
  const norm = { lowercase: train?.vocab?.lowercase ?? true, romanize: train?.vocab?.romanize ?? false };
  const subword = (): TokenizerSpec => ({
    type: 'xling-subword',
    file: cfg.tokenizer ?? 'tokenizer.json',
    special: { ...XLING_SPECIALS },
    addBos: false,
    addEos: true,
    maxLength: train?.maxLen ?? 64,
    ...norm,
  });
  switch (cfg.kind) {
    case 'laser':
    case 'jmt':
      return subword();
    case 'dual': {
      if ((cfg.model as { unit?: string }).unit === 'token') return subword();
      const f = train?.features;
      if (!f) throw new Error(`${cfg.kind} model: config.json has neither 'tokenizerSpec' nor 'train.features' (the n-gram settings of this model)`);
      return {
        type: 'hashed-ngrams',
        hash: 'fnv1a32-utf16',
        file: null,
        ngrams: f.ngrams,
        buckets: f.buckets,
        words: f.words,
        maxFeatures: f.maxFeatures,
        ...hashesOf(f.hashes),
        special: { ...XLING_SPECIALS },
        addBos: false,
        addEos: false,
        maxLength: f.maxFeatures,
        ...norm,
      };
    }
    case 'laser-lstm':
      return { type: 'laser-spm', file: cfg.tokenizer ?? LASER_TOKENIZER_FILE };
    default:
      if (cfg.kind.startsWith('hf-') && cfg.tokenizer) return { type: 'hf-tokenizer', file: cfg.tokenizer };
      return undefined;
  }
}

/** How a model directory is opened for inference. */
export interface LoadOptions {
  /**
   * 'bf16': the encoder's large matrices in bfloat16 (imported Hugging Face encoders: about twice
   * the speed on CPUs with AVX512_BF16; cosine to the fp32 vectors > 0.999); 'fp32' (default): as stored.
   */
  precision?: 'fp32' | 'bf16';
}

/** Loads the sentence encoder, tokenizer and per-language means of a model directory (full or exported). */
export function loadSentenceEncoder(dir: string, opts: LoadOptions = {}): SentenceEncoderModel {
  const cfg = readModelConfig(dir);
  const loader = getLoader(cfg.kind, join(dir, 'config.json'));
  const precision = opts.precision ?? 'fp32';
  if (precision !== 'fp32' && precision !== 'bf16') throw new Error(`--precision: 'fp32' or 'bf16', got ${JSON.stringify(precision)}`);
  if (precision === 'bf16' && !loader.precisions?.includes('bf16')) {
    throw new Error(
      `--precision bf16: ${dir} is a ${cfg.kind} model; bfloat16 inference is for imported Hugging Face encoders (hf-bert, hf-xlm-roberta, hf-distilbert)`,
    );
  }
  const file = join(dir, 'model.safetensors');
  const { tensors } = loadTensors(file, (k) => k.startsWith('center.'));
  const centers = new Map<string, Float32Array>();
  for (const [k, t] of tensors) {
    centers.set(
      k.slice('center.'.length),
      noGrad(() => tidy(() => t.float().toFloat32Array())),
    );
    t.dispose();
  }
  // int8 tables of a compact export (src/embed/export.ts): `scale.<name>` holds their row scales
  const header = readSafetensorsHeader(file);
  const scaled = new Set(
    Object.keys(header.entries)
      .filter((k) => k.startsWith('scale.'))
      .map((k) => k.slice('scale.'.length)),
  );
  // a product-quantised n-gram table (xling export --dtype pq) is read back into the model's table
  const pq = readPqTable(file, header);
  const skip = pq ? new Set([...scaled, 'encoder.embed.weight']) : scaled;
  const { encoder, tokenizer } = loader.loadEncoder(
    dir,
    cfg,
    (m, o) => {
      const prefix = o?.prefix ?? 'encoder.';
      loadModule(m, file, { prefix, rename: o?.rename, skip });
      if (pq) {
        const table = [...m.stateDict()].find(([k]) => (o?.rename ? o.rename(k) : prefix + k) === 'encoder.embed.weight')?.[1];
        if (!table) throw new Error(`${file}: a product-quantised table (pq.*) in a model without an n-gram table`);
        dequantizePqInto(pq, table);
      }
      if (!scaled.size) return;
      const stored = (k: string) => (o?.rename ? o.rename(k) : prefix + k);
      // embedding bags keep an int8 table as it is (their kernel dequantises each row as it reads
      // it: a quarter of the memory and of the bytes moved); any other table is dequantised here
      const kept = new Set<string>();
      for (const [path, sub] of m.namedModules()) {
        const name = stored(path ? `${path}.weight` : 'weight');
        if (!(sub instanceof EmbeddingBag) || !name || !scaled.has(name)) continue;
        const { q, scale } = readInt8Table(file, name, sub.weight.shape);
        sub.setInt8(q, scale);
        kept.add(name);
      }
      for (const [k, t] of m.stateDict()) {
        const name = stored(k);
        if (name && scaled.has(name) && !kept.has(name)) dequantizeInto(t, file, name);
      }
    },
    { precision },
  );
  const model = new SentenceEncoderModel(encoder, tokenizer, centers, cfg, loadLanguageIdentifier(dir));
  model.precision = precision;
  return model;
}

/** An int8 table with its per-row float32 scales (`scale.<name>`) as stored, checked against the model's shape. */
function readInt8Table(file: string, name: string, shape: readonly number[]): { q: Tensor; scale: Tensor } {
  const { tensors } = loadTensors(file, (k) => k === name || k === `scale.${name}`);
  const q = tensors.get(name)!,
    s = tensors.get(`scale.${name}`)!;
  if (q.dtype !== 'int8' || q.shape.join(',') !== shape.join(',') || s.dtype !== 'float32' || s.shape.length !== 1 || s.shape[0] !== shape[0]) {
    for (const x of tensors.values()) x.dispose();
    throw new Error(
      `${file}: '${name}' (${q.dtype} [${q.shape.join(', ')}]) with scales (${s.dtype} [${s.shape.join(', ')}]) does not fit the model's [${shape.join(', ')}]`,
    );
  }
  return { q, scale: s };
}

/** Reads an int8 table with per-row scales (q · scale) into a float tensor of the same shape. */
function dequantizeInto(t: Tensor, file: string, name: string): void {
  const { q, scale } = readInt8Table(file, name, t.shape);
  try {
    noGrad(() =>
      tidy(() => {
        t.copy_(q.float().mul(scale.unsqueeze(1)));
      }),
    );
  } finally {
    q.dispose();
    scale.dispose();
  }
}

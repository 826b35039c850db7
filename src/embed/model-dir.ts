// A model is a directory: config.json (training config + model shape + text normalisation),
// model.safetensors (PyTorch-style names: encoder.*, decoder.*) and tokenizer.json (HF format).
// An exported encoder directory holds only the encoder.* weights.
import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { LaserConfig, LaserEncoder, LaserModel } from '../models/laser.js';
import { TextTokenizer } from '../models/text-tokenizer.js';
import { loadTensors, readJson, saveTensors, writeJson } from '../nn/serialize.js';
import { fromArray, Tensor } from '../tensor/tensor.js';
import { Tokenizer } from '../text/tokenizer.js';
import { SentenceEncoderModel } from './model.js';

export interface ModelDirConfig {
  format: 'xling-laser';
  version: 1;
  encoderOnly: boolean;
  laser: LaserConfig;
  train?: unknown;
}

/** Writes a complete model directory atomically (temp dir + rename); centers → center.<lang> tensors. */
export function saveModelDir(dir: string, model: LaserModel, tokenizerFile: string, train: unknown, centers: Map<string, Float32Array> = new Map()): void {
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const cfg: ModelDirConfig = { format: 'xling-laser', version: 1, encoderOnly: false, laser: model.cfg, train };
  writeJson(join(tmp, 'config.json'), cfg);
  const sd = model.stateDict();
  const extra = [...centers].map(([l, v]) => [`center.${l}`, fromArray(v)] as const);
  for (const [k, t] of extra) sd.set(k, t);
  try { saveTensors(join(tmp, 'model.safetensors'), sd, { format: 'pt' }); } finally { for (const [, t] of extra) t.dispose(); }
  copyFileSync(tokenizerFile, join(tmp, 'tokenizer.json'));
  replaceDir(tmp, dir);
}

function replaceDir(tmp: string, dir: string): void {
  // Keep anything else already in dir (checkpoints, logs): move our three files in.
  mkdirSync(dir, { recursive: true });
  for (const f of ['config.json', 'model.safetensors', 'tokenizer.json']) renameSync(join(tmp, f), join(dir, f));
  rmSync(tmp, { recursive: true, force: true });
}

/** Writes a directory with the encoder alone (for embedding). */
export function exportEncoder(modelDir: string, outDir: string): void {
  const cfg = readModelConfig(modelDir);
  const { tensors } = loadTensors(join(modelDir, 'model.safetensors'));
  const enc = new Map<string, Tensor>();
  for (const [k, t] of tensors) if (k.startsWith('encoder.') || k.startsWith('center.')) enc.set(k, t);
  const tmp = `${outDir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  writeJson(join(tmp, 'config.json'), { ...cfg, encoderOnly: true });
  saveTensors(join(tmp, 'model.safetensors'), enc, { format: 'pt' });
  copyFileSync(join(modelDir, 'tokenizer.json'), join(tmp, 'tokenizer.json'));
  for (const t of tensors.values()) t.dispose();
  replaceDir(tmp, outDir);
}

export function readModelConfig(dir: string): ModelDirConfig {
  const f = join(dir, 'config.json');
  if (!existsSync(f)) throw new Error(`${dir}: not a model directory (no config.json)`);
  const c = readJson<ModelDirConfig>(f);
  if (c.format !== 'xling-laser') throw new Error(`${f}: unknown model format '${String(c.format)}'`);
  return c;
}

/** Loads the encoder + tokenizer of a model directory (full or exported). */
export function loadSentenceEncoder(dir: string): SentenceEncoderModel {
  const cfg = readModelConfig(dir);
  const romanize = (cfg.train as { vocab?: { romanize?: boolean } } | undefined)?.vocab?.romanize ?? false;
  const tok: TextTokenizer = Tokenizer.load(join(dir, 'tokenizer.json'), { romanize });
  const enc = new LaserEncoder(cfg.laser);
  const { tensors } = loadTensors(join(dir, 'model.safetensors'));
  const sd = new Map<string, Tensor>();
  const centers = new Map<string, Float32Array>();
  for (const [k, t] of tensors) {
    if (k.startsWith('encoder.')) sd.set(k.slice('encoder.'.length), t);
    else if (k.startsWith('center.')) centers.set(k.slice('center.'.length), t.float().toFloat32Array());
  }
  try { enc.loadStateDict(sd); } finally { for (const t of tensors.values()) t.dispose(); }
  enc.eval();
  return new SentenceEncoderModel(enc, tok, cfg, centers);
}

// Weights as safetensors (PyTorch-compatible names), configs as JSON beside them.
import { readFileSync } from 'node:fs';
import { readSafetensors, RawTensor, writeSafetensors, fromSafetensorsDtype } from '../io/safetensors.js';
import { writeFileAtomicSync } from '../util/atomic.js';
import { DType } from '../tensor/dtype.js';
import { native } from '../native.js';
import { fromArray, Tensor } from '../tensor/tensor.js';
import { Module } from './module.js';

function toRaw(t: Tensor): RawTensor {
  const buf = native.torch.toBuffer(t.handle) as ArrayBuffer;
  return { dtype: t.dtype, shape: t.shape, data: new Uint8Array(buf) };
}

function fromRaw(r: RawTensor): Tensor {
  const d = (r.dtype in { F32: 1, F64: 1, F16: 1, BF16: 1, I64: 1, I32: 1, I16: 1, I8: 1, U8: 1, BOOL: 1 } ? fromSafetensorsDtype(r.dtype) : r.dtype) as DType;
  // Copy into an aligned buffer: safetensors data may sit at any byte offset.
  const bytes = new Uint8Array(r.data.byteLength);
  bytes.set(r.data);
  return fromArray(bytes, r.shape, d);
}

/** Writes named tensors to a .safetensors file (atomically). */
export function saveTensors(path: string, tensors: Map<string, Tensor> | Record<string, Tensor>, metadata?: Record<string, string>): void {
  const m = tensors instanceof Map ? tensors : new Map(Object.entries(tensors));
  const raw: Record<string, RawTensor> = {};
  for (const [k, t] of m) raw[k] = toRaw(t);
  writeSafetensors(path, raw, metadata);
}

/** Reads every tensor of a .safetensors file (new tensors; caller owns them). */
export function loadTensors(path: string): { tensors: Map<string, Tensor>; metadata: Record<string, string> } {
  const f = readSafetensors(path);
  const tensors = new Map<string, Tensor>();
  for (const [k, r] of Object.entries(f.tensors)) tensors.set(k, fromRaw(r));
  return { tensors, metadata: f.metadata };
}

/** Saves a module's state dict. */
export function saveModule(m: Module, path: string, metadata?: Record<string, string>): void {
  saveTensors(path, m.stateDict(), metadata);
}

/** Loads weights into a module (strict by default); temporary tensors are freed. */
export function loadModule(m: Module, path: string, strict = true): void {
  const { tensors } = loadTensors(path);
  try { m.loadStateDict(tensors, strict); } finally { for (const t of tensors.values()) t.dispose(); }
}

export function writeJson(path: string, value: unknown): void {
  writeFileAtomicSync(path, JSON.stringify(value, null, 2) + '\n');
}

export function readJson<T = unknown>(path: string): T {
  let text: string;
  try { text = readFileSync(path, 'utf8'); } catch (e) { throw new Error(`cannot read ${path}: ${(e as Error).message}`); }
  try { return JSON.parse(text) as T; } catch (e) { throw new Error(`${path}: invalid JSON: ${(e as Error).message}`); }
}

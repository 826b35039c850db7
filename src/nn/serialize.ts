// Weights as safetensors (PyTorch-compatible names), configs as JSON beside them. Tensor bytes go
// between file and tensor storage natively (no JS copies: fresh memory is slow to first-touch).
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { fromSafetensorsDtype, readSafetensorsHeader, safetensorsLayout } from '../io/safetensors.js';
import { atomicOutputSync, writeFileAtomicSync } from '../util/atomic.js';
import { readJsonFile } from '../util/json-file.js';
import { DType, DTYPE_BYTES } from '../tensor/dtype.js';
import { readInto, writeFrom } from '../tensor/kernels.js';
import { empty } from '../tensor/ops.js';
import { keep, noGrad, Tensor, tidy } from '../tensor/tensor.js';
import { Module } from './module.js';

/** Writes named tensors to a .safetensors file (atomically), straight from their storage. */
export function saveTensors(path: string, tensors: Map<string, Tensor> | Record<string, Tensor>, metadata?: Record<string, string>): void {
  const m = tensors instanceof Map ? tensors : new Map(Object.entries(tensors));
  tidy(() => {
    const list = [...m].map(([name, t]) => [name, t.contiguous()] as const);
    const { header, offsets } = safetensorsLayout(
      path,
      list.map(([name, t]) => ({ name, dtype: t.dtype, shape: t.shape, nbytes: t.numel * dtypeSize(t.dtype) })),
      metadata,
    );
    atomicOutputSync(path, (tmp) => {
      const fd = openSync(tmp, 'w');
      try {
        writeSync(fd, header, 0, header.length, 0);
        writeFrom(
          fd,
          list.map(([, t], i) => [t, offsets[i]!]),
        );
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    });
  });
}

function dtypeSize(d: DType): number {
  return DTYPE_BYTES[d];
}

/**
 * Reads the tensors of a .safetensors file (all, or those `only` accepts) into new tensors of
 * their own (the caller owns them).
 */
export function loadTensors(path: string, only?: (name: string) => boolean): { tensors: Map<string, Tensor>; metadata: Record<string, string> } {
  const h = readSafetensorsHeader(path);
  const tensors = new Map<string, Tensor>();
  const entries: [Tensor, number][] = [];
  for (const [k, e] of Object.entries(h.entries)) {
    if (only && !only(k)) continue;
    const t = keep(empty(e.shape, fromSafetensorsDtype(e.dtype) as DType));
    tensors.set(k, t);
    entries.push([t, h.dataStart + e.dataOffsets[0]]);
  }
  readInto(path, entries);
  return { tensors, metadata: h.metadata };
}

/** Saves a module's state dict. */
export function saveModule(m: Module, path: string, metadata?: Record<string, string>): void {
  saveTensors(path, m.stateDict(), metadata);
}

/**
 * Reads a module's weights from a .safetensors file straight into its tensors (names = the
 * module's state-dict names after `prefix`). Strict: every weight present, with its shape; other
 * names in the file that start with the prefix are errors too.
 */
export function loadModule(
  m: Module,
  path: string,
  o: { prefix?: string; strict?: boolean; rename?: (name: string) => string | null; skip?: ReadonlySet<string> } = {},
): void {
  const prefix = o.prefix ?? '',
    strict = o.strict ?? true;
  const h = readSafetensorsHeader(path);
  const own = m.stateDict();
  // the stored name of each of the module's tensors (rename: a loader's own mapping; null: not stored)
  const stored = new Map<string, string | null>([...own.keys()].map((k) => [k, o.rename ? o.rename(k) : prefix + k]));
  const storedNames = new Set([...stored.values()].filter((x): x is string => x !== null));
  // skip: stored names the caller reads itself (e.g. quantised tables it dequantises; a
  // product-quantised table is not stored under its name at all)
  const skip = o.skip ?? new Set<string>();
  const missing = [...own.keys()].filter((k) => stored.get(k) !== null && !skip.has(stored.get(k)!) && !(stored.get(k)! in h.entries));
  const unexpected = Object.keys(h.entries).filter((k) => k.startsWith(prefix) && !storedNames.has(k));
  if (strict && (missing.length || unexpected.length)) throw new Error(`${path}: missing [${missing.join(', ')}], unexpected [${unexpected.join(', ')}]`);
  const direct: [Tensor, number][] = [];
  for (const [k, t] of own) {
    const name = stored.get(k);
    const e = name ? h.entries[name] : undefined;
    if (!e || !name || skip.has(name)) continue;
    if (e.shape.join(',') !== t.shape.join(','))
      throw new Error(`${path}: '${name}' has shape [${e.shape.join(', ')}], the model expects [${t.shape.join(', ')}]`);
    const dtype = fromSafetensorsDtype(e.dtype) as DType;
    if (dtype === t.dtype) {
      direct.push([t, h.dataStart + e.dataOffsets[0]]);
      continue;
    }
    // another dtype: read it as stored, convert on copy
    noGrad(() =>
      tidy(() => {
        const tmp = empty(e.shape, dtype);
        readInto(path, [[tmp, h.dataStart + e.dataOffsets[0]]]);
        t.copy_(tmp);
      }),
    );
  }
  readInto(path, direct);
}

export function writeJson(path: string, value: unknown): void {
  writeFileAtomicSync(path, JSON.stringify(value, null, 2) + '\n');
}

/** The value of a JSON file (`cannot read PATH: …`, `PATH: invalid JSON: …` when it cannot be had). */
export function readJson<T = unknown>(path: string): T {
  return readJsonFile<T>(path);
}

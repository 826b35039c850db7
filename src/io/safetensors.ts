// safetensors reader/writer over a neutral byte record (independent of the tensor class).
// Layout: u64 little-endian header length N | N bytes of JSON (padded with spaces to a multiple
// of 8) | byte buffer. JSON: {"__metadata__"?: {str: str}, name: {dtype, shape, data_offsets}}.
// data_offsets are [begin, end) relative to the start of the byte buffer; the buffer must be
// covered exactly, without holes or overlaps.

import * as fs from 'node:fs';
import { atomicWriteSync } from '../util/atomic.js';
import { readFully, withFile, writeParts } from '../util/fd.js';
import { NpyDType, viewNpyArray } from './npy.js';

/** A tensor as raw little-endian bytes. `dtype` is a safetensors code ("F32", ...) or an xling name ("float32", ...). */
export interface RawTensor {
  dtype: string;
  shape: number[];
  data: Uint8Array;
}

export interface SafetensorsFile {
  /** Tensors in file order; dtype is always the safetensors code. */
  tensors: Record<string, RawTensor>;
  metadata: Record<string, string>;
}

export interface SafetensorsEntry {
  dtype: string;
  shape: number[];
  dataOffsets: [number, number];
}
export interface SafetensorsHeader {
  entries: Record<string, SafetensorsEntry>;
  metadata: Record<string, string>;
  /** Absolute file offset of the byte buffer (8 + header length). */
  dataStart: number;
}

/** Bytes per element for each safetensors dtype code. */
export const SAFETENSORS_ITEMSIZE: Readonly<Record<string, number>> = {
  F64: 8,
  F32: 4,
  F16: 2,
  BF16: 2,
  I64: 8,
  I32: 4,
  I16: 2,
  I8: 1,
  U64: 8,
  U32: 4,
  U16: 2,
  U8: 1,
  BOOL: 1,
  F8_E4M3: 1,
  F8_E5M2: 1,
};

const NAME_TO_CODE: Record<string, string> = {
  float64: 'F64',
  float32: 'F32',
  float16: 'F16',
  bfloat16: 'BF16',
  int64: 'I64',
  int32: 'I32',
  int16: 'I16',
  int8: 'I8',
  uint8: 'U8',
  bool: 'BOOL',
};
const CODE_TO_NAME: Record<string, string> = Object.fromEntries(Object.entries(NAME_TO_CODE).map(([k, v]) => [v, k]));

/** 'float32' → 'F32' (codes pass through). Throws on unknown names. */
export function toSafetensorsDtype(dtype: string): string {
  if (dtype in SAFETENSORS_ITEMSIZE) return dtype;
  const c = NAME_TO_CODE[dtype];
  if (!c)
    throw new Error(
      `unsupported safetensors dtype '${dtype}' (expected one of ${Object.keys(SAFETENSORS_ITEMSIZE).join(', ')} or ${Object.keys(NAME_TO_CODE).join(', ')})`,
    );
  return c;
}

/** 'F32' → 'float32' (xling/npy dtype name). Throws for codes without an xling equivalent. */
export function fromSafetensorsDtype(code: string): string {
  const n = CODE_TO_NAME[code];
  if (!n) throw new Error(`safetensors dtype '${code}' has no xling equivalent`);
  return n;
}

const MAX_HEADER = 100_000_000;

function product(shape: readonly number[]): number {
  let n = 1;
  for (const s of shape) n *= s;
  return n;
}

/** A raw record from a typed array (bytes are viewed, not copied). `dtype` defaults from the array type. */
export function rawFromArray(
  data: Float32Array | Float64Array | Uint16Array | BigInt64Array | Int32Array | Int16Array | Int8Array | Uint8Array,
  shape: number[],
  dtype?: string,
): RawTensor {
  const d =
    dtype ??
    (data instanceof Float32Array
      ? 'F32'
      : data instanceof Float64Array
        ? 'F64'
        : data instanceof Uint16Array
          ? 'F16'
          : data instanceof BigInt64Array
            ? 'I64'
            : data instanceof Int32Array
              ? 'I32'
              : data instanceof Int16Array
                ? 'I16'
                : data instanceof Int8Array
                  ? 'I8'
                  : 'U8');
  const code = toSafetensorsDtype(d);
  if (SAFETENSORS_ITEMSIZE[code] !== data.BYTES_PER_ELEMENT) {
    throw new Error(`array type ${data.constructor.name} does not match dtype ${d}`);
  }
  if (product(shape) !== data.length) {
    throw new Error(`shape [${shape.join(', ')}] has ${product(shape)} elements but the array has ${data.length}`);
  }
  return { dtype: code, shape: [...shape], data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
}

/**
 * Views (or, when misaligned, copies) a raw record as the matching typed array:
 * F32→Float32Array, F64→Float64Array, F16/BF16→Uint16Array (raw bits), I64→BigInt64Array,
 * I32→Int32Array, I16→Int16Array, I8→Int8Array, U8/BOOL→Uint8Array.
 */
export function rawToArray(t: RawTensor): Float32Array | Float64Array | Uint16Array | BigInt64Array | Int32Array | Int16Array | Int8Array | Uint8Array {
  const code = toSafetensorsDtype(t.dtype);
  const size = SAFETENSORS_ITEMSIZE[code]!;
  let bytes = t.data;
  if (bytes.byteOffset % size !== 0) bytes = bytes.slice();
  const n = bytes.byteLength / size;
  const as = VIEW_AS[code];
  if (!as) throw new Error(`no typed array for safetensors dtype ${code}`);
  return viewNpyArray(bytes.buffer, as, bytes.byteOffset, n);
}

/** The .npy dtype whose typed array holds a safetensors dtype's elements (raw bits for BF16, U16 and the 8-bit floats). */
const VIEW_AS: Record<string, NpyDType> = {
  F32: 'float32',
  F64: 'float64',
  F16: 'float16',
  BF16: 'float16',
  U16: 'float16',
  I64: 'int64',
  I32: 'int32',
  I16: 'int16',
  I8: 'int8',
  U8: 'uint8',
  BOOL: 'uint8',
  F8_E4M3: 'uint8',
  F8_E5M2: 'uint8',
};

function checkShape(shape: unknown, where: string): number[] {
  if (!Array.isArray(shape) || !shape.every((s) => Number.isSafeInteger(s) && (s as number) >= 0)) {
    throw new Error(`${where}: invalid shape ${JSON.stringify(shape)}`);
  }
  return shape as number[];
}

/** A tensor's place in a safetensors file to be written: dtype code, shape, byte count. */
export interface SafetensorsLayoutEntry {
  name: string;
  dtype: string;
  shape: readonly number[];
  nbytes: number;
}

/**
 * The header bytes (u64 length + JSON padded with spaces to a multiple of 8) of a file holding
 * these tensors in this order, and each tensor's absolute file offset.
 */
export function safetensorsLayout(file: string, entries: SafetensorsLayoutEntry[], metadata?: Record<string, string>): { header: Buffer; offsets: number[] } {
  const header: Record<string, unknown> = {};
  if (metadata && Object.keys(metadata).length > 0) {
    for (const [k, v] of Object.entries(metadata)) {
      if (typeof v !== 'string') throw new Error(`${file}: metadata value for '${k}' must be a string, got ${typeof v}`);
    }
    header.__metadata__ = metadata;
  }
  const rel: number[] = [];
  let offset = 0;
  for (const e of entries) {
    if (e.name === '__metadata__') throw new Error(`${file}: '__metadata__' is reserved and cannot be a tensor name`);
    const where = `${file}: tensor '${e.name}'`;
    const code = toSafetensorsDtype(e.dtype);
    const shape = checkShape(e.shape, where);
    const nbytes = product(shape) * SAFETENSORS_ITEMSIZE[code]!;
    if (e.nbytes !== nbytes) throw new Error(`${where}: shape [${shape.join(', ')}] ${code} needs ${nbytes} bytes, data has ${e.nbytes}`);
    header[e.name] = { dtype: code, shape, data_offsets: [offset, offset + nbytes] };
    rel.push(offset);
    offset += nbytes;
  }
  let json = Buffer.from(JSON.stringify(header), 'utf8');
  const padded = Math.ceil(json.length / 8) * 8;
  if (padded !== json.length) json = Buffer.concat([json, Buffer.alloc(padded - json.length, 0x20)]);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  const start = 8 + json.length;
  return { header: Buffer.concat([len, json]), offsets: rel.map((o) => start + o) };
}

/** Writes tensors (in the given order) and optional string metadata atomically. */
export function writeSafetensors(file: string, tensors: Record<string, RawTensor>, metadata?: Record<string, string>): void {
  const list = Object.entries(tensors);
  for (const [name, t] of list) if (!(t.data instanceof Uint8Array)) throw new Error(`${file}: tensor '${name}': data must be a Uint8Array of raw bytes`);
  const { header } = safetensorsLayout(
    file,
    list.map(([name, t]) => ({ name, dtype: t.dtype, shape: t.shape, nbytes: t.data.byteLength })),
    metadata,
  );
  atomicWriteSync(file, (fd) => writeParts(fd, [header, ...list.map(([, t]) => t.data)]));
}

function readHeaderFd(fd: number, file: string): SafetensorsHeader & { fileSize: number } {
  const fileSize = fs.fstatSync(fd).size;
  if (fileSize < 8) throw new Error(`${file}: not a safetensors file (only ${fileSize} bytes, header length missing)`);
  const lenBuf = Buffer.alloc(8);
  fs.readSync(fd, lenBuf, 0, 8, 0);
  const n64 = lenBuf.readBigUInt64LE(0);
  if (n64 > BigInt(MAX_HEADER)) throw new Error(`${file}: not a safetensors file (header length ${n64} is implausible)`);
  const n = Number(n64);
  if (8 + n > fileSize) throw new Error(`${file}: truncated safetensors header (needs ${n} bytes, file has ${fileSize - 8})`);
  const jbuf = Buffer.alloc(n);
  fs.readSync(fd, jbuf, 0, n, 8);
  const text = jbuf.toString('utf8');
  if (!text.startsWith('{')) throw new Error(`${file}: not a safetensors file (header does not start with '{')`);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new Error(`${file}: invalid safetensors JSON header: ${(e as Error).message}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new Error(`${file}: safetensors header is not a JSON object`);
  const dataStart = 8 + n;
  const dataLen = fileSize - dataStart;
  const metadata: Record<string, string> = {};
  const entries: Record<string, SafetensorsEntry> = {};
  for (const [name, v] of Object.entries(raw as Record<string, unknown>)) {
    if (name === '__metadata__') {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`${file}: __metadata__ must be an object of strings`);
      for (const [k, s] of Object.entries(v as Record<string, unknown>)) {
        if (typeof s !== 'string') throw new Error(`${file}: __metadata__['${k}'] must be a string`);
        metadata[k] = s;
      }
      continue;
    }
    const where = `${file}: tensor '${name}'`;
    if (typeof v !== 'object' || v === null) throw new Error(`${where}: header entry is not an object`);
    const e = v as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    if (typeof e.dtype !== 'string' || !(e.dtype in SAFETENSORS_ITEMSIZE)) {
      throw new Error(`${where}: unsupported dtype ${JSON.stringify(e.dtype)}`);
    }
    const shape = checkShape(e.shape, where);
    const off = e.data_offsets;
    if (!Array.isArray(off) || off.length !== 2 || !off.every((x) => Number.isSafeInteger(x) && (x as number) >= 0) || off[0] > off[1]) {
      throw new Error(`${where}: invalid data_offsets ${JSON.stringify(off)}`);
    }
    const [b, en] = off as [number, number];
    const need = product(shape) * SAFETENSORS_ITEMSIZE[e.dtype]!;
    if (en - b !== need) {
      throw new Error(`${where}: data_offsets [${b}, ${en}] span ${en - b} bytes but shape [${shape.join(', ')}] ${e.dtype} needs ${need}`);
    }
    if (en > dataLen) throw new Error(`${where}: truncated data (ends at byte ${en} of the buffer, which has ${dataLen})`);
    entries[name] = { dtype: e.dtype, shape, dataOffsets: [b, en] };
  }
  // The buffer must be covered exactly: no overlaps, holes or trailing bytes.
  const sorted = Object.entries(entries).sort((x, y) => x[1].dataOffsets[0] - y[1].dataOffsets[0] || x[1].dataOffsets[1] - y[1].dataOffsets[1]);
  let pos = 0;
  for (const [name, e] of sorted) {
    const [b, en] = e.dataOffsets;
    if (b < pos) throw new Error(`${file}: tensor '${name}' data_offsets [${b}, ${en}] overlap the previous tensor (ends at ${pos})`);
    if (b > pos) throw new Error(`${file}: hole in the byte buffer before tensor '${name}' (bytes ${pos}..${b} unused)`);
    pos = en;
  }
  if (pos !== dataLen) throw new Error(`${file}: ${dataLen - pos} unexpected trailing bytes after the last tensor`);
  return { entries, metadata, dataStart, fileSize };
}

/** Reads and checks only the header (names, dtypes, shapes, offsets, metadata). */
export function readSafetensorsHeader(file: string): SafetensorsHeader {
  const { fileSize: _s, ...h } = withFile(file, 'r', (fd) => readHeaderFd(fd, file));
  return h;
}

/**
 * Reads tensors (all, or only `opts.names`) and metadata. Each tensor gets its own buffer, so
 * rawToArray() never needs to copy.
 */
export function readSafetensors(file: string, opts: { names?: string[] } = {}): SafetensorsFile {
  return withFile(file, 'r', (fd) => {
    const h = readHeaderFd(fd, file);
    if (opts.names) {
      for (const n of opts.names) if (!(n in h.entries)) throw new Error(`${file}: no tensor named '${n}'`);
    }
    const want = opts.names ? new Set(opts.names) : null;
    const tensors: Record<string, RawTensor> = {};
    const ordered = Object.entries(h.entries).sort((x, y) => x[1].dataOffsets[0] - y[1].dataOffsets[0]);
    for (const [name, e] of ordered) {
      if (want && !want.has(name)) continue;
      const [b, en] = e.dataOffsets;
      const data = new Uint8Array(en - b);
      readFully(fd, data, h.dataStart + b, `${file}: tensor '${name}'`);
      tensors[name] = { dtype: e.dtype, shape: e.shape, data };
    }
    return { tensors, metadata: h.metadata };
  });
}

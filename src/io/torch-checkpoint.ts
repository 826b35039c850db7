// PyTorch checkpoint files (torch.save) read in TypeScript, through the allow-list unpickler of
// ./torch-pickle.ts (nothing is executed). Both formats of torch/serialization.py:
// - zip (PyTorch ≥ 1.6): an archive `<name>/data.pkl` (the object, tensors as persistent ids
//   ('storage', storage type, key, location, numel)), `<name>/data/<key>` (raw little-endian
//   storages), `<name>/byteorder` (absent or "little"), `<name>/version`;
// - legacy: five pickles in a row — magic number, protocol version (1001), system info, the
//   object (persistent ids ('storage', storage type, key, location, numel, view metadata)), the
//   sorted list of storage keys — then each storage in that order: int64 element count + bytes.
//
// readTorchCheckpoint(path) returns plain JavaScript values (see torch-pickle.ts: dicts are Maps,
// tuples and lists arrays, argparse.Namespace a PyObject) with every tensor a TorchTensor:
// dtype, shape and its elements copied out contiguously in row-major order (`data`).
import * as fs from 'node:fs';
import { AllowedGlobal, containerGlobals, PyGlobal, TorchTensorMarker, unpickle, UnpickleError } from './torch-pickle.js';
import { isZip, ZipArchive } from './zip.js';
import { ARRAY_TYPE, DTYPE_BYTES } from '../util/dtype.js';

export type TorchDType = 'float64' | 'float32' | 'float16' | 'bfloat16' | 'int64' | 'int32' | 'int16' | 'int8' | 'uint8' | 'bool';
export type TorchData = Float64Array | Float32Array | Uint16Array | BigInt64Array | Int32Array | Int16Array | Int8Array | Uint8Array;

/** A tensor of a checkpoint: its elements in row-major order (float16/bfloat16 as raw Uint16 bits). */
export class TorchTensor extends TorchTensorMarker {
  constructor(
    readonly dtype: TorchDType,
    readonly shape: number[],
    readonly data: TorchData,
    readonly requiresGrad = false,
  ) {
    super();
  }
  get numel(): number {
    return this.shape.reduce((a, b) => a * b, 1);
  }
  /** The elements as float32 (float16/bfloat16 widened, integers converted). */
  toFloat32(): Float32Array {
    const d = this.data;
    if (d instanceof Float32Array) return d;
    if (this.dtype === 'float16') return Float32Array.from(d as Uint16Array, halfToFloat);
    if (this.dtype === 'bfloat16') {
      const u = new Uint32Array(d.length);
      for (let i = 0; i < d.length; i++) u[i] = (d as Uint16Array)[i]! << 16;
      return new Float32Array(u.buffer);
    }
    if (d instanceof BigInt64Array) return Float32Array.from(d, (v) => Number(v));
    return Float32Array.from(d as ArrayLike<number>);
  }
  /** The raw little-endian bytes (e.g. for safetensors). */
  bytes(): Uint8Array {
    return new Uint8Array(this.data.buffer, this.data.byteOffset, this.data.byteLength);
  }
}

function halfToFloat(h: number): number {
  const s = h & 0x8000 ? -1 : 1,
    e = (h >> 10) & 0x1f,
    f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

const STORAGE_DTYPES: Record<string, [TorchDType, number]> = {
  DoubleStorage: ['float64', 8],
  FloatStorage: ['float32', 4],
  HalfStorage: ['float16', 2],
  BFloat16Storage: ['bfloat16', 2],
  LongStorage: ['int64', 8],
  IntStorage: ['int32', 4],
  ShortStorage: ['int16', 2],
  CharStorage: ['int8', 1],
  ByteStorage: ['uint8', 1],
  BoolStorage: ['bool', 1],
};
const DTYPE_NAMES: Record<string, [TorchDType, number]> = {
  float64: ['float64', 8],
  double: ['float64', 8],
  float32: ['float32', 4],
  float: ['float32', 4],
  float16: ['float16', 2],
  half: ['float16', 2],
  bfloat16: ['bfloat16', 2],
  int64: ['int64', 8],
  long: ['int64', 8],
  int32: ['int32', 4],
  int: ['int32', 4],
  int16: ['int16', 2],
  short: ['int16', 2],
  int8: ['int8', 1],
  uint8: ['uint8', 1],
  bool: ['bool', 1],
};

/** A storage as the unpickler sees it: its dtype and bytes (filled after the pickle for legacy files). */
class Storage {
  bytes: Uint8Array | null = null;
  constructor(
    readonly dtype: TorchDType,
    readonly itemSize: number,
    readonly key: string,
    readonly numel: number,
  ) {}
}
/** A view of a storage (legacy view metadata). */
class StorageView {
  constructor(
    readonly base: Storage,
    readonly offset: number,
    readonly numel: number,
  ) {}
}

/** Tensors are materialised once the storages are read; the unpickler builds these first. */
class PendingTensor extends TorchTensorMarker {
  constructor(
    readonly storage: Storage | StorageView,
    readonly offset: number,
    readonly shape: number[],
    readonly stride: number[],
    readonly requiresGrad: boolean,
  ) {
    super();
  }
}

function torchGlobals(): Map<string, AllowedGlobal> {
  const m = containerGlobals();
  for (const name of Object.keys(STORAGE_DTYPES)) m.set(`torch.${name}`, { value: new PyGlobal('torch', name) });
  m.set('torch.UntypedStorage', { value: new PyGlobal('torch', 'UntypedStorage') });
  for (const name of Object.keys(DTYPE_NAMES)) m.set(`torch.${name}`, { value: new PyGlobal('torch', name) });
  const rebuild = (args: unknown[], v2: boolean): PendingTensor => {
    const [storage, offset, size, stride] = args;
    const requiresGrad = v2 ? args[4] === true : false;
    if (!(storage instanceof Storage || storage instanceof StorageView)) throw new Error('expects a storage');
    const ints = (x: unknown, what: string): number[] => {
      if (!Array.isArray(x) || !x.every((n) => Number.isSafeInteger(n) && (n as number) >= 0)) throw new Error(`bad ${what}`);
      return x as number[];
    };
    if (!Number.isSafeInteger(offset) || (offset as number) < 0) throw new Error('bad storage offset');
    const shape = ints(size, 'size'),
      st = ints(stride, 'stride');
    if (shape.length !== st.length) throw new Error('size and stride differ in length');
    // the last element the view reaches must lie inside the storage
    let last = offset as number;
    let empty = false;
    for (let i = 0; i < shape.length; i++) {
      if (shape[i] === 0) empty = true;
      else last += (shape[i]! - 1) * st[i]!;
    }
    const n = storage instanceof Storage ? storage.numel : storage.numel;
    const count = shape.reduce((a, b) => a * b, 1);
    if (count > Math.max(n, 1)) throw new Error(`tensor of ${count} elements over a storage of ${n} (overlapping views are not supported)`);
    if (!empty && last >= n) throw new Error(`tensor view (offset ${offset as number}, size [${shape}], stride [${st}]) exceeds its storage of ${n} elements`);
    return new PendingTensor(storage, offset as number, shape, st, requiresGrad);
  };
  m.set('torch._utils._rebuild_tensor_v2', { call: (a) => rebuild(a, true) });
  m.set('torch._utils._rebuild_tensor', { call: (a) => rebuild(a, false) });
  m.set('torch._utils._rebuild_parameter', {
    call(a) {
      if (!(a[0] instanceof PendingTensor)) throw new Error('expects a tensor');
      const t = a[0];
      return new PendingTensor(t.storage, t.offset, t.shape, t.stride, a[1] === true);
    },
  });
  m.set('torch._utils._rebuild_parameter_with_state', m.get('torch._utils._rebuild_parameter')!);
  // torch._tensor._rebuild_from_type_v2(func, new_type, args, state): a plain tensor subclass
  m.set('torch.Tensor', { value: new PyGlobal('torch', 'Tensor') });
  m.set('torch.nn.parameter.Parameter', { value: new PyGlobal('torch.nn.parameter', 'Parameter') });
  m.set('torch._tensor._rebuild_from_type_v2', {
    call(a) {
      const [fn, , args] = a as [unknown, unknown, unknown];
      if (!Array.isArray(args)) throw new Error('expects an argument tuple');
      const f = [...m.entries()].find(([, g]) => g === (fn as { g?: AllowedGlobal })?.g);
      if (!f?.[1].call) throw new Error('expects a tensor rebuild function');
      return f[1].call(args);
    },
  });
  return m;
}

function storageOf(pid: unknown, storages: Map<string, Storage>, what: string): Storage | StorageView {
  if (!Array.isArray(pid) || pid[0] !== 'storage') throw new Error(`${what}: unsupported persistent id`);
  const [, type, key, , numel, view] = pid as [string, unknown, unknown, unknown, unknown, unknown];
  if (!(type instanceof PyGlobal)) throw new Error(`${what}: storage type is not a torch storage`);
  const dt = STORAGE_DTYPES[type.name] ?? (type.name === 'UntypedStorage' ? (['uint8', 1] as [TorchDType, number]) : DTYPE_NAMES[type.name]);
  if (!dt) throw new Error(`${what}: unknown storage type ${type.qualified}`);
  if (typeof key !== 'string') throw new Error(`${what}: storage key is not a string`);
  if (!Number.isSafeInteger(numel) || (numel as number) < 0) throw new Error(`${what}: bad storage size`);
  let s = storages.get(key);
  if (!s) {
    s = new Storage(dt[0], dt[1], key, numel as number);
    storages.set(key, s);
  } else if (s.dtype !== dt[0]) throw new Error(`${what}: storage ${key} is used with two dtypes`);
  if (view !== undefined && view !== null) {
    if (!Array.isArray(view) || view.length !== 3) throw new Error(`${what}: bad storage view`);
    const [, off, size] = view as [unknown, number, number];
    if (!Number.isSafeInteger(off) || !Number.isSafeInteger(size) || off < 0 || size < 0 || off + size > s.numel)
      throw new Error(`${what}: storage view out of range`);
    return new StorageView(s, off, size);
  }
  return s;
}

/** Copies a tensor's elements (any strides) out of its storage into a contiguous array. */
function materialise(t: PendingTensor, what: string): TorchTensor {
  const base = t.storage instanceof StorageView ? t.storage.base : t.storage;
  const baseOffset = t.storage instanceof StorageView ? t.storage.offset : 0;
  if (!base.bytes) throw new Error(`${what}: storage ${base.key} has no data`);
  const n = t.shape.reduce((a, b) => a * b, 1);
  const out = makeArray(base.dtype, n);
  const src = makeView(base.dtype, base.bytes);
  const rank = t.shape.length;
  // row-major walk over the view with an index counter
  const idx = new Array<number>(rank).fill(0);
  let pos = baseOffset + t.offset;
  for (let i = 0; i < n; i++) {
    (out as { [k: number]: unknown })[i] = (src as { [k: number]: unknown })[pos];
    for (let d = rank - 1; d >= 0; d--) {
      idx[d]!++;
      pos += t.stride[d]!;
      if (idx[d]! < t.shape[d]!) break;
      pos -= t.stride[d]! * t.shape[d]!;
      idx[d] = 0;
    }
  }
  return new TorchTensor(base.dtype, t.shape, out, t.requiresGrad);
}

function makeArray(dtype: TorchDType, n: number): TorchData {
  return new ARRAY_TYPE[dtype](n) as TorchData;
}
function makeView(dtype: TorchDType, b: Uint8Array): TorchData {
  // copy into an aligned buffer when the bytes are not aligned for the element size
  const size = DTYPE_BYTES[dtype];
  const a = b.byteOffset % size === 0 ? b : b.slice();
  return new ARRAY_TYPE[dtype](a.buffer, a.byteOffset, Math.floor(a.byteLength / size)) as TorchData;
}

/** Replaces every PendingTensor in a value (Maps, arrays, objects' attributes) by its TorchTensor. */
function finish(v: unknown, what: string, seen = new Map<unknown, unknown>()): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (seen.has(v)) return seen.get(v);
  if (v instanceof PendingTensor) {
    const t = materialise(v, what);
    seen.set(v, t);
    return t;
  }
  if (v instanceof Map) {
    seen.set(v, v);
    for (const [k, x] of v) v.set(k, finish(x, what, seen));
    return v;
  }
  if (Array.isArray(v)) {
    seen.set(v, v);
    for (let i = 0; i < v.length; i++) v[i] = finish(v[i], what, seen);
    return v;
  }
  if (v instanceof Set) return v;
  const attrs = (v as { attrs?: unknown }).attrs;
  if (attrs instanceof Map) {
    seen.set(v, v);
    finish(attrs, what, seen);
  }
  return v;
}

/** Reads a checkpoint from bytes (see readTorchCheckpoint). */
export function parseTorchCheckpoint(buf: Uint8Array, what = 'checkpoint'): unknown {
  if (buf.length === 0) throw new Error(`${what}: empty file`);
  try {
    return isZip(buf) ? parseZip(buf, what) : parseLegacy(buf, what);
  } catch (e) {
    if (e instanceof UnpickleError) throw new Error(e.message);
    if (e instanceof Error && !(e instanceof RangeError) && !(e instanceof TypeError)) throw e;
    // a RangeError/TypeError would be a bug of a bounds check: still an Error naming the file
    throw new Error(`${what}: corrupt checkpoint (${(e as Error).message})`);
  }
}

function parseZip(buf: Uint8Array, what: string): unknown {
  const zip = new ZipArchive(buf, what);
  const pkl = [...zip.entries.keys()].find((n) => n === 'data.pkl' || /^[^/]*\/data\.pkl$/.test(n));
  if (!pkl) throw new Error(`${what}: a zip archive without data.pkl (not a torch.save file)`);
  const prefix = pkl.slice(0, pkl.length - 'data.pkl'.length);
  if (zip.entries.has(`${prefix}byteorder`)) {
    const order = new TextDecoder().decode(zip.read(`${prefix}byteorder`)).trim();
    if (order !== 'little') throw new Error(`${what}: byte order ${JSON.stringify(order)} is not supported (little-endian only)`);
  }
  const storages = new Map<string, Storage>();
  const { value } = unpickle(zip.read(pkl), { globals: torchGlobals(), what: `${what} (${pkl})`, persistentLoad: (pid) => storageOf(pid, storages, what) });
  for (const s of storages.values()) {
    const name = `${prefix}data/${s.key}`;
    const b = zip.read(name);
    if (b.length < s.numel * s.itemSize) throw new Error(`${what}: ${name} holds ${b.length} bytes, expected ${s.numel * s.itemSize}`);
    s.bytes = b;
  }
  return finish(value, what);
}

const LEGACY_MAGIC = 0x1950a86a20f9469cfc6cn;

function parseLegacy(buf: Uint8Array, what: string): unknown {
  if (buf[0] !== 0x80) throw new Error(`${what}: not a PyTorch checkpoint (neither a zip archive nor a pickle)`);
  const plain = { globals: containerGlobals(), what };
  let r = unpickle(buf, plain, 0);
  if (r.value !== LEGACY_MAGIC) throw new Error(`${what}: not a PyTorch checkpoint (bad magic number)`);
  r = unpickle(buf, plain, r.end);
  if (r.value !== 1001) throw new Error(`${what}: unsupported legacy protocol version ${String(r.value)}`);
  r = unpickle(buf, plain, r.end); // system info: {protocol_version, little_endian, type_sizes}
  if (r.value instanceof Map && r.value.get('little_endian') === false) throw new Error(`${what}: big-endian checkpoints are not supported`);
  const storages = new Map<string, Storage>();
  const obj = unpickle(buf, { globals: torchGlobals(), what, persistentLoad: (pid) => storageOf(pid, storages, what) }, r.end);
  const keys = unpickle(buf, plain, obj.end);
  if (!Array.isArray(keys.value) || !keys.value.every((k) => typeof k === 'string')) throw new Error(`${what}: corrupt storage key list`);
  let p = keys.end;
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  for (const key of keys.value as string[]) {
    const s = storages.get(key);
    if (!s) throw new Error(`${what}: storage ${key} is listed but never used`);
    if (p + 8 > buf.length) throw new Error(`${what}: truncated before storage ${key}`);
    const n = dv.getBigInt64(p, true);
    p += 8;
    if (n !== BigInt(s.numel)) throw new Error(`${what}: storage ${key} holds ${n} elements, its tensors say ${s.numel}`);
    const len = s.numel * s.itemSize;
    if (p + len > buf.length) throw new Error(`${what}: truncated in storage ${key}`);
    s.bytes = buf.subarray(p, p + len);
    p += len;
  }
  for (const s of storages.values()) if (!s.bytes) throw new Error(`${what}: storage ${s.key} is missing`);
  return finish(obj.value, what);
}

/**
 * Reads a PyTorch checkpoint (torch.save, zip or legacy format) into plain JavaScript values:
 * Maps for dicts/OrderedDicts, arrays for lists/tuples, TorchTensor for tensors and parameters,
 * PyObject for argparse.Namespace. Only an allow-list of Python globals is accepted; anything
 * else (a class or function the file names) is an Error naming it. Nothing is executed.
 */
export function readTorchCheckpoint(path: string): unknown {
  let buf: Buffer;
  try {
    buf = fs.readFileSync(path);
  } catch (e) {
    throw new Error(`${path}: ${(e as Error).message}`);
  }
  return parseTorchCheckpoint(new Uint8Array(buf.buffer, buf.byteOffset, buf.length), path);
}

/** A Map's tensors by name (e.g. a state dict), with an error naming a key that is not a tensor. */
export function tensorsOf(v: unknown, what: string): Map<string, TorchTensor> {
  if (!(v instanceof Map)) throw new Error(`${what}: expected a dict of tensors`);
  const out = new Map<string, TorchTensor>();
  for (const [k, t] of v) {
    if (typeof k !== 'string' || !(t instanceof TorchTensor)) throw new Error(`${what}: entry ${String(k)} is not a tensor`);
    out.set(k, t);
  }
  return out;
}

// NumPy .npy reader/writer (format versions 1.0, 2.0, 3.0 read; 1.0/2.0 written), C order only.
// Also streaming row access for 2-D files larger than RAM, and raw float32 (LASER) files.
// Spec: https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html

import * as fs from 'node:fs';
import * as os from 'node:os';
import { atomicWriteSync, releaseTemp, tempPathFor } from '../util/atomic.js';
import { openFor, readFully, withFile, writeFully, writeParts } from '../util/fd.js';
import { halfBitsToFloat } from './half.js';
import { ARRAY_TYPE, DTYPE_BYTES, dtypeOfArray } from '../util/dtype.js';

export type NpyDType = 'float32' | 'float64' | 'float16' | 'int64' | 'int32' | 'int16' | 'int8' | 'uint8' | 'bool';

/** Typed arrays used for element storage. float16 is raw bits in Uint16Array, bool is 0/1 in Uint8Array. */
export type NpyArray = Float32Array | Float64Array | Uint16Array | BigInt64Array | Int32Array | Int16Array | Int8Array | Uint8Array;

export interface NpyData {
  dtype: NpyDType;
  shape: number[];
  data: NpyArray;
}
export interface NpyHeader {
  dtype: NpyDType;
  shape: number[];
  /** Offset of the first data byte (magic + length field + header dict + padding). */
  headerBytes: number;
  /** Format version, e.g. [1, 0]. */
  version: [number, number];
}

if (os.endianness() !== 'LE') throw new Error('xling io: big-endian hosts are not supported');

const MAGIC = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]); // \x93NUMPY

const DESCR: Record<NpyDType, string> = {
  float32: '<f4',
  float64: '<f8',
  float16: '<f2',
  int64: '<i8',
  int32: '<i4',
  int16: '<i2',
  int8: '|i1',
  uint8: '|u1',
  bool: '|b1',
};
const ITEMSIZE: Record<NpyDType, number> = DTYPE_BYTES;
const KIND_TO_DTYPE: Record<string, NpyDType> = {
  f4: 'float32',
  f8: 'float64',
  f2: 'float16',
  i8: 'int64',
  i4: 'int32',
  i2: 'int16',
  i1: 'int8',
  u1: 'uint8',
  b1: 'bool',
};

function product(shape: readonly number[]): number {
  let n = 1;
  for (const s of shape) n *= s;
  return n;
}

function checkShape(shape: readonly number[], what: string): void {
  for (const s of shape) {
    if (!Number.isSafeInteger(s) || s < 0) throw new Error(`${what}: invalid shape [${shape.join(', ')}]`);
  }
}

/** The dtype a typed array maps to by default (Uint16Array → float16, Uint8Array → uint8). */
export function npyDtypeOfArray(a: NpyArray): NpyDType {
  return dtypeOfArray(a) as NpyDType; // never bfloat16/bool: those need an explicit dtype
}

function arrayMatchesDtype(a: NpyArray, d: NpyDType): boolean {
  return a instanceof ARRAY_TYPE[d];
}

/** Allocates a typed array for `n` elements of dtype `d`. */
export function allocNpyArray(d: NpyDType, n: number): NpyArray {
  return viewNpyArray(new ArrayBuffer(n * ITEMSIZE[d]), d);
}

/** Views an (aligned) ArrayBuffer region as the typed array for dtype `d`. */
export function viewNpyArray(buf: ArrayBufferLike, d: NpyDType, byteOffset = 0, length?: number): NpyArray {
  return new ARRAY_TYPE[d](buf, byteOffset, length ?? (buf.byteLength - byteOffset) / ITEMSIZE[d]) as NpyArray;
}

// ---------------------------------------------------------------- header

function headerDictString(dtype: NpyDType, shape: readonly number[]): string {
  const shp = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  return `{'descr': '${DESCR[dtype]}', 'fortran_order': False, 'shape': ${shp}, }`;
}

/**
 * Builds a complete header (magic, version, length, dict, padding, '\n') whose total size is a
 * multiple of 64. With `minTotal`, pads to at least that many bytes (used to reserve room).
 */
function buildHeader(dtype: NpyDType, shape: readonly number[], minTotal = 0): Buffer {
  const dict = headerDictString(dtype, shape);
  let version = 1;
  let pre = 10; // magic(6) + version(2) + u16 len
  let total = Math.ceil((pre + dict.length + 1) / 64) * 64;
  if (total - pre > 0xffff) {
    version = 2;
    pre = 12;
    total = Math.ceil((pre + dict.length + 1) / 64) * 64;
  }
  if (minTotal > total) {
    if (minTotal % 64 !== 0) throw new Error('internal: reserved npy header size must be a multiple of 64');
    total = minTotal;
    if (version === 1 && total - 10 > 0xffff) {
      version = 2;
      pre = 12;
    }
  }
  const hlen = total - pre;
  const buf = Buffer.alloc(total, 0x20);
  MAGIC.copy(buf, 0);
  buf[6] = version;
  buf[7] = 0;
  if (version === 1) buf.writeUInt16LE(hlen, 8);
  else buf.writeUInt32LE(hlen, 8);
  buf.write(dict, pre, 'latin1');
  buf[total - 1] = 0x0a;
  return buf;
}

/** Parses the header from the first bytes of a file. Throws with `file` in the message. */
function parseHeader(head: Buffer, file: string, fileSize: number): NpyHeader {
  if (head.length < 10 || !head.subarray(0, 6).equals(MAGIC)) {
    throw new Error(`${file}: not a .npy file (bad magic ${JSON.stringify(head.subarray(0, 6).toString('latin1'))})`);
  }
  const major = head[6]!;
  const minor = head[7]!;
  let pre: number;
  let hlen: number;
  if (major === 1) {
    pre = 10;
    hlen = head.readUInt16LE(8);
  } else if (major === 2 || major === 3) {
    if (head.length < 12) throw new Error(`${file}: truncated .npy header`);
    pre = 12;
    hlen = head.readUInt32LE(8);
  } else {
    throw new Error(`${file}: unsupported .npy format version ${major}.${minor}`);
  }
  const headerBytes = pre + hlen;
  if (headerBytes > fileSize || headerBytes > head.length) {
    throw new Error(`${file}: truncated .npy header (needs ${headerBytes} bytes, file has ${fileSize})`);
  }
  const dict = head.subarray(pre, headerBytes).toString(major === 3 ? 'utf8' : 'latin1');
  const descrM = /['"]descr['"]\s*:\s*(['"])([^'"]*)\1/.exec(dict);
  if (!descrM) {
    if (/['"]descr['"]\s*:\s*\[/.test(dict)) throw new Error(`${file}: unsupported dtype (structured arrays are not supported)`);
    throw new Error(`${file}: malformed .npy header (no 'descr'): ${dict.trim()}`);
  }
  const descr = descrM[2]!;
  const order = descr[0];
  const kind = descr.slice(1);
  const dtype = KIND_TO_DTYPE[kind];
  if (!dtype || !(order === '<' || order === '|' || order === '=' || (order === '>' && ITEMSIZE[dtype] === 1))) {
    const why = order === '>' ? ' (big-endian data is not supported)' : '';
    throw new Error(`${file}: unsupported dtype '${descr}'${why}; supported: ${Object.values(DESCR).join(' ')}`);
  }
  const fortM = /['"]fortran_order['"]\s*:\s*(True|False)/.exec(dict);
  if (!fortM) throw new Error(`${file}: malformed .npy header (no 'fortran_order'): ${dict.trim()}`);
  if (fortM[1] === 'True') {
    throw new Error(`${file}: fortran_order=True arrays are not supported; save a C-ordered array (np.ascontiguousarray)`);
  }
  const shapeM = /['"]shape['"]\s*:\s*\(([^)]*)\)/.exec(dict);
  if (!shapeM) throw new Error(`${file}: malformed .npy header (no 'shape'): ${dict.trim()}`);
  const parts = shapeM[1]!
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  const shape = parts.map((p) => {
    const v = Number(p.replace(/L$/, ''));
    if (!Number.isSafeInteger(v) || v < 0) throw new Error(`${file}: malformed shape (${shapeM[1]}) in .npy header`);
    return v;
  });
  return { dtype, shape, headerBytes, version: [major, minor] };
}

function readHeaderFd(fd: number, file: string): NpyHeader & { fileSize: number } {
  const fileSize = fs.fstatSync(fd).size;
  const first = Buffer.alloc(Math.min(fileSize, 12));
  fs.readSync(fd, first, 0, first.length, 0);
  if (first.length < 10 || !first.subarray(0, 6).equals(MAGIC)) {
    throw new Error(`${file}: not a .npy file (bad magic ${JSON.stringify(first.subarray(0, 6).toString('latin1'))})`);
  }
  const pre = first[6] === 1 ? 10 : 12;
  const hlen = first[6] === 1 ? first.readUInt16LE(8) : first.length >= 12 ? first.readUInt32LE(8) : 0;
  const need = Math.min(pre + hlen, fileSize);
  const head = Buffer.alloc(need);
  fs.readSync(fd, head, 0, need, 0);
  return { ...parseHeader(head, file, fileSize), fileSize };
}

/** Reads just the header of a .npy file. */
export function readNpyHeader(file: string): NpyHeader {
  const { fileSize: _s, ...h } = withFile(file, 'r', (fd) => readHeaderFd(fd, file));
  return h;
}

/** Reads a whole .npy file into memory. */
export function readNpy(file: string): NpyData {
  return withFile(file, 'r', (fd) => {
    const h = readHeaderFd(fd, file);
    const n = product(h.shape);
    const nbytes = n * ITEMSIZE[h.dtype];
    const avail = h.fileSize - h.headerBytes;
    if (avail < nbytes) {
      throw new Error(`${file}: truncated data: shape [${h.shape.join(', ')}] ${h.dtype} needs ${nbytes} bytes, file has ${avail}`);
    }
    if (avail > nbytes) {
      throw new Error(`${file}: ${avail - nbytes} unexpected trailing bytes after data of shape [${h.shape.join(', ')}] ${h.dtype}`);
    }
    const data = allocNpyArray(h.dtype, n);
    readFully(fd, data, h.headerBytes, file);
    return { dtype: h.dtype, shape: h.shape, data };
  });
}

/**
 * Writes a C-ordered array as .npy atomically (temp file in the same dir, then rename).
 * `dtype` defaults from the array type; pass 'bool' for a Uint8Array of 0/1.
 */
export function writeNpy(file: string, data: NpyArray, shape: readonly number[], dtype?: NpyDType): void {
  const d = dtype ?? npyDtypeOfArray(data);
  if (!(d in DESCR)) throw new Error(`${file}: unsupported dtype '${String(d)}'`);
  if (!arrayMatchesDtype(data, d)) {
    throw new Error(`${file}: array type ${data.constructor.name} does not match dtype ${d}`);
  }
  checkShape(shape, file);
  if (product(shape) !== data.length) {
    throw new Error(`${file}: shape [${shape.join(', ')}] has ${product(shape)} elements but the data has ${data.length}`);
  }
  const header = buildHeader(d, shape);
  atomicWriteSync(file, (fd) => writeParts(fd, [header, data]));
}

// ---------------------------------------------------------------- streaming row reader

function toFloat32(src: NpyArray, d: NpyDType, out: Float32Array): void {
  if (d === 'float16') {
    const s = src as Uint16Array;
    for (let i = 0; i < s.length; i++) out[i] = halfBitsToFloat(s[i]!);
  } else if (d === 'int64') {
    const s = src as BigInt64Array;
    for (let i = 0; i < s.length; i++) out[i] = Number(s[i]!);
  } else {
    out.set(src as Exclude<NpyArray, BigInt64Array>);
  }
}

/**
 * Random access to the rows of a 2-D (or N-D, rows = shape[0]) .npy file, or of a headerless
 * float32 file, without loading it: each read is an fs.readSync at the right offset.
 */
export class NpyRowReader {
  readonly rows: number;
  /** Elements per row (product of shape[1:]). */
  readonly cols: number;
  readonly rowBytes: number;
  private fd: number | null;

  private constructor(
    readonly path: string,
    fd: number,
    readonly dtype: NpyDType,
    readonly shape: number[],
    readonly headerBytes: number,
  ) {
    this.fd = fd;
    this.rows = shape.length === 0 ? 1 : shape[0]!;
    this.cols = shape.length <= 1 ? 1 : product(shape.slice(1));
    this.rowBytes = this.cols * ITEMSIZE[dtype];
  }

  /** Opens a .npy file; validates that the file is long enough for its header's shape. */
  static open(file: string): NpyRowReader {
    return openFor(file, 'r', (fd) => {
      const h = readHeaderFd(fd, file);
      const need = product(h.shape) * ITEMSIZE[h.dtype];
      if (h.fileSize - h.headerBytes < need) {
        throw new Error(`${file}: truncated data: shape [${h.shape.join(', ')}] ${h.dtype} needs ${need} bytes, file has ${h.fileSize - h.headerBytes}`);
      }
      return new NpyRowReader(file, fd, h.dtype, h.shape, h.headerBytes);
    });
  }

  /** Opens a headerless little-endian float32 file (LASER format) with `dim` values per row. */
  static openRawF32(file: string, dim: number): NpyRowReader {
    if (!Number.isSafeInteger(dim) || dim <= 0) throw new Error(`${file}: invalid dimension ${dim}`);
    const fd = fs.openSync(file, 'r');
    const size = fs.fstatSync(fd).size;
    if (size % (4 * dim) !== 0) {
      fs.closeSync(fd);
      throw new Error(`${file}: size ${size} bytes is not a multiple of ${4 * dim} (dim ${dim} float32); wrong dim or truncated file`);
    }
    return new NpyRowReader(file, fd, 'float32', [size / (4 * dim), dim], 0);
  }

  private checkRange(start: number, end: number): void {
    if (this.fd === null) throw new Error(`${this.path}: reader is closed`);
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start || end > this.rows) {
      throw new Error(`${this.path}: row range [${start}, ${end}) out of bounds (rows: ${this.rows})`);
    }
  }

  /** Reads rows [start, end) in the file's own dtype. */
  readRowsRaw(start: number, end: number): NpyArray {
    this.checkRange(start, end);
    const out = allocNpyArray(this.dtype, (end - start) * this.cols);
    readFully(this.fd!, out, this.headerBytes + start * this.rowBytes, this.path);
    return out;
  }

  /**
   * Reads rows [start, end) as float32 (converting float16/float64/integer data), into `out`
   * when given (must hold at least (end-start)*cols values; the returned array is a view of it).
   */
  readRows(start: number, end: number, out?: Float32Array): Float32Array {
    this.checkRange(start, end);
    const n = (end - start) * this.cols;
    if (out && out.length < n) throw new Error(`${this.path}: output buffer holds ${out.length} values, ${n} needed`);
    const dst = out ? out.subarray(0, n) : new Float32Array(n);
    if (this.dtype === 'float32') {
      readFully(this.fd!, dst, this.headerBytes + start * this.rowBytes, this.path);
    } else {
      toFloat32(this.readRowsRaw(start, end), this.dtype, dst);
    }
    return dst;
  }

  /** Iterates over the file in blocks of `blockRows` rows (float32). */
  *blocks(blockRows: number, start = 0, end = this.rows): Generator<{ start: number; end: number; data: Float32Array }> {
    if (!(blockRows > 0)) throw new Error(`${this.path}: blockRows must be positive`);
    for (let i = start; i < end; i += blockRows) {
      const j = Math.min(end, i + blockRows);
      yield { start: i, end: j, data: this.readRows(i, j) };
    }
  }

  close(): void {
    if (this.fd !== null) {
      fs.closeSync(this.fd);
      this.fd = null;
    }
  }
}

// ---------------------------------------------------------------- streaming writer

const openWriters = new Set<NpyWriter>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const w of openWriters) w.abort();
  });
}

const MAX_ROWS_PLACEHOLDER = Number.MAX_SAFE_INTEGER;

/**
 * Streams rows into a .npy file of shape [rows, ...rowShape] whose row count is unknown up front.
 * Data goes to `${path}.tmp-…`; close() patches the header with the final count and renames it
 * into place. If the process dies first, no file exists at `path` (an exit hook removes the temp
 * file on normal exits).
 */
export class NpyWriter {
  readonly tmpPath: string;
  readonly cols: number;
  readonly rowShape: number[];
  private fd: number | null;
  private readonly headerBytes: number;
  private nRows = 0;

  private constructor(
    readonly path: string,
    rowShape: number[],
    readonly dtype: NpyDType,
  ) {
    checkShape(rowShape, path);
    if (!(dtype in DESCR)) throw new Error(`${path}: unsupported dtype '${String(dtype)}'`);
    this.rowShape = rowShape;
    this.cols = product(rowShape);
    this.tmpPath = tempPathFor(path);
    const reserve = buildHeader(dtype, [MAX_ROWS_PLACEHOLDER, ...rowShape]);
    this.headerBytes = reserve.length;
    this.fd = fs.openSync(this.tmpPath, 'w');
    try {
      writeFully(this.fd, buildHeader(dtype, [0, ...rowShape], this.headerBytes), 0);
    } catch (e) {
      fs.closeSync(this.fd);
      fs.rmSync(this.tmpPath, { force: true });
      releaseTemp(this.tmpPath);
      throw e;
    }
    openWriters.add(this);
    installExitHook();
  }

  /** Opens a writer; `cols` is the row length, or the row shape for N-D output. */
  static open(file: string, cols: number | number[], dtype: NpyDType = 'float32'): NpyWriter {
    return new NpyWriter(file, typeof cols === 'number' ? [cols] : [...cols], dtype);
  }

  get rows(): number {
    return this.nRows;
  }

  /** Appends whole rows; `block.length` must be a multiple of cols. */
  append(block: NpyArray): void {
    if (this.fd === null) throw new Error(`${this.path}: writer is closed`);
    if (!arrayMatchesDtype(block, this.dtype)) {
      throw new Error(`${this.path}: block type ${block.constructor.name} does not match dtype ${this.dtype}`);
    }
    if (this.cols === 0 ? block.length !== 0 : block.length % this.cols !== 0) {
      throw new Error(`${this.path}: block of ${block.length} values is not a whole number of rows of ${this.cols}`);
    }
    if (block.length === 0) return;
    const rowBytes = this.cols * ITEMSIZE[this.dtype];
    writeFully(this.fd, block, this.headerBytes + this.nRows * rowBytes);
    this.nRows += block.length / this.cols;
  }

  /** Finalises: patches the header with the row count, fsyncs and renames into place. */
  close(): void {
    if (this.fd === null) throw new Error(`${this.path}: writer is already closed`);
    const fd = this.fd;
    try {
      const header = buildHeader(this.dtype, [this.nRows, ...this.rowShape], this.headerBytes);
      if (header.length !== this.headerBytes) throw new Error(`${this.path}: internal error: header size changed`);
      writeFully(fd, header, 0);
      fs.fsyncSync(fd);
      fs.closeSync(fd);
      this.fd = null;
      fs.renameSync(this.tmpPath, this.path);
      releaseTemp(this.tmpPath);
      openWriters.delete(this);
    } catch (e) {
      this.abort();
      throw e;
    }
  }

  /** Discards everything written; no file is created at `path`. Safe to call twice. */
  abort(): void {
    if (this.fd !== null) {
      try {
        fs.closeSync(this.fd);
      } catch {
        /* ignore */
      }
      this.fd = null;
    }
    try {
      fs.rmSync(this.tmpPath, { force: true });
    } catch {
      /* ignore */
    }
    releaseTemp(this.tmpPath);
    openWriters.delete(this);
  }
}

/**
 * Writes rows at given positions of a .npy file whose shape is known up front (made by
 * createNpyFile: header, then every row's bytes, sparse until written). Writers of disjoint row
 * ranges — other processes, other machines on a shared filesystem — can fill one file without a
 * copy; the caller decides when it is complete (see src/cluster).
 */
export class NpyRowWriter {
  private fd: number | null;
  private constructor(
    readonly path: string,
    fd: number,
    readonly dtype: NpyDType,
    readonly rows: number,
    readonly cols: number,
    private readonly headerBytes: number,
  ) {
    this.fd = fd;
  }

  /** Creates (or replaces) `file` with the header of [rows, cols] and room for every row. */
  static create(file: string, rows: number, cols: number, dtype: NpyDType): void {
    checkShape([rows, cols], file);
    const header = buildHeader(dtype, [rows, cols]);
    withFile(file, 'w', (fd) => {
      writeFully(fd, header, 0);
      fs.ftruncateSync(fd, header.length + rows * cols * ITEMSIZE[dtype]);
    });
  }

  /** Opens a file made by create() for writing rows (its header says the shape and dtype). */
  static open(file: string): NpyRowWriter {
    return openFor(file, 'r+', (fd) => {
      const h = readHeaderFd(fd, file);
      if (h.shape.length !== 2) throw new Error(`${file}: expected a 2-D .npy, got shape [${h.shape.join(', ')}]`);
      const [rows, cols] = h.shape as [number, number];
      if (h.fileSize < h.headerBytes + rows * cols * ITEMSIZE[h.dtype]) throw new Error(`${file}: shorter than its shape [${rows}, ${cols}]`);
      return new NpyRowWriter(file, fd, h.dtype, rows, cols, h.headerBytes);
    });
  }

  /** Writes whole rows starting at row `start`. */
  write(start: number, block: NpyArray): void {
    if (this.fd === null) throw new Error(`${this.path}: writer is closed`);
    if (!arrayMatchesDtype(block, this.dtype)) throw new Error(`${this.path}: block type ${block.constructor.name} does not match dtype ${this.dtype}`);
    if (block.length % this.cols !== 0) throw new Error(`${this.path}: block of ${block.length} values is not a whole number of rows of ${this.cols}`);
    const n = block.length / this.cols;
    if (!Number.isInteger(start) || start < 0 || start + n > this.rows)
      throw new Error(`${this.path}: rows ${start}..${start + n} outside its ${this.rows} rows`);
    writeFully(this.fd, block, this.headerBytes + start * this.cols * ITEMSIZE[this.dtype]);
  }

  /** Flushes to disk (fsync) and closes: what was written is durable when this returns. */
  close(): void {
    if (this.fd === null) return;
    const fd = this.fd;
    this.fd = null;
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  }
}

// ---------------------------------------------------------------- raw float32 (LASER)

/** Writes headerless little-endian float32 values (LASER embedding format) atomically. */
export function writeRawF32(file: string, data: Float32Array): void {
  atomicWriteSync(file, (fd) => writeFully(fd, data, 0));
}

/** Reads a headerless float32 file with `dim` values per row. */
export function readRawF32(file: string, dim: number): { rows: number; cols: number; data: Float32Array } {
  const r = NpyRowReader.openRawF32(file, dim);
  try {
    return { rows: r.rows, cols: r.cols, data: r.readRows(0, r.rows) };
  } finally {
    r.close();
  }
}

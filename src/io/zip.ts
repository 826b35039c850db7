// A read-only zip archive reader (PKWARE APPNOTE 6.3): the end-of-central-directory record (and
// its zip64 form), the central directory, local headers; entries stored (method 0) or deflated
// (method 8, through node:zlib). Enough for torch.save's archives (stored entries, zip64 when
// large) and other model files. Every offset and length is checked against the buffer: a
// truncated or corrupt archive is an Error naming what is wrong, never an out-of-bounds read.
import { inflateRawSync } from 'node:zlib';

export interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  size: number;
  localOffset: number;
}

export class ZipArchive {
  readonly entries = new Map<string, ZipEntry>();
  constructor(
    readonly buf: Uint8Array,
    readonly what = 'zip archive',
  ) {
    const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    const fail = (m: string): never => {
      throw new Error(`${what}: ${m}`);
    };
    // the end-of-central-directory record: the last 22 bytes plus a comment of at most 64 KiB
    let eocd = -1;
    for (let p = buf.length - 22; p >= 0 && p >= buf.length - 22 - 0xffff; p--) {
      if (dv.getUint32(p, true) === 0x06054b50) {
        eocd = p;
        break;
      }
    }
    if (eocd < 0) fail('no end-of-central-directory record (not a zip file, or truncated)');
    let count = dv.getUint16(eocd + 10, true);
    let cdSize = dv.getUint32(eocd + 12, true);
    let cdOffset = dv.getUint32(eocd + 16, true);
    if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
      // zip64: the locator sits just before the EOCD record
      const loc = eocd - 20;
      if (loc < 0 || dv.getUint32(loc, true) !== 0x07064b50) fail('zip64 locator missing');
      const rec = num64(dv, loc + 8, fail);
      if (rec + 56 > buf.length || dv.getUint32(rec, true) !== 0x06064b50) fail('zip64 end-of-central-directory record missing');
      count = num64(dv, rec + 32, fail);
      cdSize = num64(dv, rec + 40, fail);
      cdOffset = num64(dv, rec + 48, fail);
    }
    if (cdOffset + cdSize > buf.length) fail('central directory lies beyond the end of the file (truncated?)');
    let p = cdOffset;
    const dec = new TextDecoder('utf-8');
    for (let i = 0; i < count; i++) {
      if (p + 46 > cdOffset + cdSize || dv.getUint32(p, true) !== 0x02014b50) fail(`central directory entry ${i} is corrupt`);
      const method = dv.getUint16(p + 10, true);
      let compressedSize = dv.getUint32(p + 20, true);
      let size = dv.getUint32(p + 24, true);
      const nameLen = dv.getUint16(p + 28, true),
        extraLen = dv.getUint16(p + 30, true),
        commentLen = dv.getUint16(p + 32, true);
      let localOffset = dv.getUint32(p + 42, true);
      const end = p + 46 + nameLen + extraLen + commentLen;
      if (end > cdOffset + cdSize) fail(`central directory entry ${i} is corrupt`);
      const name = dec.decode(buf.subarray(p + 46, p + 46 + nameLen));
      // zip64 extended information: the 64-bit values, in this order, of the fields set to 0xffffffff
      let q = p + 46 + nameLen;
      const extraEnd = q + extraLen;
      while (q + 4 <= extraEnd) {
        const id = dv.getUint16(q, true),
          len = dv.getUint16(q + 2, true);
        if (q + 4 + len > extraEnd) fail(`entry ${name}: corrupt extra field`);
        if (id === 0x0001) {
          let r = q + 4;
          const next = (): number => {
            if (r + 8 > q + 4 + len) fail(`entry ${name}: corrupt zip64 field`);
            const v = num64(dv, r, fail);
            r += 8;
            return v;
          };
          if (size === 0xffffffff) size = next();
          if (compressedSize === 0xffffffff) compressedSize = next();
          if (localOffset === 0xffffffff) localOffset = next();
        }
        q += 4 + len;
      }
      this.entries.set(name, { name, method, compressedSize, size, localOffset });
      p = end;
    }
  }

  /** The bytes of an entry (a view into the archive when stored). */
  read(name: string): Uint8Array {
    const e = this.entries.get(name);
    if (!e) throw new Error(`${this.what}: no entry ${JSON.stringify(name)}`);
    const dv = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
    const p = e.localOffset;
    if (p + 30 > this.buf.length || dv.getUint32(p, true) !== 0x04034b50) throw new Error(`${this.what}: entry ${name}: corrupt local header`);
    const start = p + 30 + dv.getUint16(p + 26, true) + dv.getUint16(p + 28, true);
    if (start + e.compressedSize > this.buf.length) throw new Error(`${this.what}: entry ${name} runs past the end of the file (truncated?)`);
    const raw = this.buf.subarray(start, start + e.compressedSize);
    if (e.method === 0) {
      if (e.size !== e.compressedSize) throw new Error(`${this.what}: entry ${name}: stored sizes disagree`);
      return raw;
    }
    if (e.method === 8) {
      let out: Buffer;
      try {
        out = inflateRawSync(raw, { maxOutputLength: Math.max(1, e.size) });
      } catch (err) {
        throw new Error(`${this.what}: entry ${name}: ${(err as Error).message}`);
      }
      if (out.length !== e.size) throw new Error(`${this.what}: entry ${name}: inflated to ${out.length} bytes, expected ${e.size}`);
      return new Uint8Array(out.buffer, out.byteOffset, out.length);
    }
    throw new Error(`${this.what}: entry ${name}: unsupported compression method ${e.method}`);
  }
}

function num64(dv: DataView, p: number, fail: (m: string) => never): number {
  if (p < 0 || p + 8 > dv.byteLength) fail('zip64 field beyond the end of the file');
  const v = dv.getBigUint64(p, true);
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) fail('zip64 value out of range');
  return Number(v);
}

/** Whether bytes start like a zip archive (a local file header). */
export function isZip(buf: Uint8Array): boolean {
  return buf.length >= 4 && buf[0] === 0x50 && buf[1] === 0x4b && buf[2] === 0x03 && buf[3] === 0x04;
}

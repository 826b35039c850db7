// A safetensors reader over bytes already in memory (a file read whole, a fetch response), for the
// runtime without native code: no Node API, works in a browser. Layout as src/io/safetensors.ts:
// u64 little-endian header length N | N bytes of JSON | the byte buffer.

export interface LiteTensor {
  dtype: string;
  shape: number[];
  /** The tensor's bytes (a view into the file's buffer). */
  bytes: Uint8Array;
}

export interface LiteSafetensors {
  tensors: Map<string, LiteTensor>;
  metadata: Record<string, string>;
}

const ITEMSIZE: Record<string, number> = { F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, BOOL: 1 };

/** The header length a safetensors file's first 8 bytes give (u64 little-endian), or -1 with fewer bytes. */
export function safetensorsHeaderLength(buf: Uint8Array): number {
  return buf.byteLength < 8 ? -1 : Number(new DataView(buf.buffer, buf.byteOffset, 8).getBigUint64(0, true));
}

/** Parses a safetensors file's bytes; `where` names it in errors. */
export function parseSafetensors(buf: Uint8Array, where: string): LiteSafetensors {
  if (buf.byteLength < 8) throw new Error(`${where}: not a safetensors file (${buf.byteLength} bytes)`);
  const n = safetensorsHeaderLength(buf);
  if (!(n > 1 && 8 + n <= buf.byteLength)) throw new Error(`${where}: not a safetensors file (header length ${n})`);
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(new TextDecoder().decode(buf.subarray(8, 8 + n))) as Record<string, unknown>;
  } catch (e) {
    throw new Error(`${where}: invalid safetensors header: ${(e as Error).message}`);
  }
  const start = 8 + n;
  const tensors = new Map<string, LiteTensor>();
  let metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(header)) {
    if (k === '__metadata__') {
      metadata = (v ?? {}) as Record<string, string>;
      continue;
    }
    const e = v as { dtype?: string; shape?: number[]; data_offsets?: [number, number] };
    const size = e.dtype ? ITEMSIZE[e.dtype] : undefined;
    if (!size || !Array.isArray(e.shape) || !Array.isArray(e.data_offsets)) throw new Error(`${where}: tensor '${k}': unsupported entry ${JSON.stringify(v)}`);
    const [a, b] = e.data_offsets;
    const count = e.shape.reduce((x, y) => x * y, 1);
    if (!(Number.isSafeInteger(a) && Number.isSafeInteger(b) && a >= 0 && b - a === count * size && start + b <= buf.byteLength))
      throw new Error(`${where}: tensor '${k}': data offsets [${a}, ${b}] do not fit its shape or the file`);
    tensors.set(k, { dtype: e.dtype!, shape: e.shape, bytes: buf.subarray(start + a, start + b) });
  }
  return { tensors, metadata };
}

/** A typed view of a tensor (copied when its bytes are not aligned for the type). */
export function typedView(t: LiteTensor, where: string): Float32Array | Uint16Array | Int8Array | Uint8Array | Int32Array {
  const make = (size: number) => {
    let b = t.bytes;
    if (b.byteOffset % size !== 0) {
      // keep a shared buffer shared (worker threads view the same table)
      const Ctor = (b.buffer instanceof ArrayBuffer ? ArrayBuffer : SharedArrayBuffer) as ArrayBufferConstructor;
      const copy = new Uint8Array(new Ctor(b.byteLength));
      copy.set(b);
      b = copy;
    }
    return { buf: b.buffer, off: b.byteOffset, n: b.byteLength / size };
  };
  switch (t.dtype) {
    case 'F32': {
      const v = make(4);
      return new Float32Array(v.buf, v.off, v.n);
    }
    case 'F16': {
      const v = make(2);
      return new Uint16Array(v.buf, v.off, v.n);
    }
    case 'I32': {
      const v = make(4);
      return new Int32Array(v.buf, v.off, v.n);
    }
    case 'I8':
      return new Int8Array(t.bytes.buffer, t.bytes.byteOffset, t.bytes.byteLength);
    case 'U8':
      return new Uint8Array(t.bytes.buffer, t.bytes.byteOffset, t.bytes.byteLength);
    default:
      throw new Error(`${where}: dtype ${t.dtype} is not read by xling/lite`);
  }
}

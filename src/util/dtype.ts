// Tensor element types. Codes are c10::ScalarType values (the addon passes them through).

export type DType = 'float32' | 'float64' | 'float16' | 'bfloat16' | 'int64' | 'int32' | 'int16' | 'int8' | 'uint8' | 'bool';

export const DTYPE_CODE: Record<DType, number> = {
  uint8: 0,
  int8: 1,
  int16: 2,
  int32: 3,
  int64: 4,
  float16: 5,
  float32: 6,
  float64: 7,
  bool: 11,
  bfloat16: 15,
};

const CODE_DTYPE = new Map<number, DType>(Object.entries(DTYPE_CODE).map(([k, v]) => [v, k as DType]));

export function dtypeFromCode(code: number): DType {
  const d = CODE_DTYPE.get(code);
  if (!d) throw new Error(`unsupported tensor dtype code ${code}`);
  return d;
}

export function dtypeCode(d: DType): number {
  const c = DTYPE_CODE[d];
  if (c === undefined) throw new Error(`unknown dtype '${String(d)}' (expected one of ${Object.keys(DTYPE_CODE).join(', ')})`);
  return c;
}

export const DTYPE_BYTES: Record<DType, number> = {
  uint8: 1,
  int8: 1,
  bool: 1,
  int16: 2,
  float16: 2,
  bfloat16: 2,
  int32: 4,
  float32: 4,
  int64: 8,
  float64: 8,
};

export type TypedArray = Float32Array | Float64Array | Uint16Array | BigInt64Array | Int32Array | Int16Array | Int8Array | Uint8Array;

/** The dtype a typed array maps to by default (Uint16Array holds raw float16 bits). */
export function dtypeOfArray(a: TypedArray): DType {
  if (a instanceof Float32Array) return 'float32';
  if (a instanceof Float64Array) return 'float64';
  if (a instanceof Uint16Array) return 'float16';
  if (a instanceof BigInt64Array) return 'int64';
  if (a instanceof Int32Array) return 'int32';
  if (a instanceof Int16Array) return 'int16';
  if (a instanceof Int8Array) return 'int8';
  if (a instanceof Uint8Array) return 'uint8';
  throw new Error('unsupported typed array');
}

/** A typed array's constructor: a length, or a view of bytes. */
export interface TypedArrayConstructor {
  new (length: number): TypedArray;
  new (buffer: ArrayBufferLike, byteOffset?: number, length?: number): TypedArray;
}

/** The typed array that holds each dtype's elements (float16 and bfloat16 as their raw bits, bool as 0/1 bytes). */
export const ARRAY_TYPE: Record<DType, TypedArrayConstructor> = {
  float32: Float32Array,
  float64: Float64Array,
  float16: Uint16Array,
  bfloat16: Uint16Array,
  int64: BigInt64Array,
  int32: Int32Array,
  int16: Int16Array,
  int8: Int8Array,
  uint8: Uint8Array,
  bool: Uint8Array,
};

/** Views raw bytes as the typed array that matches a dtype. */
export function arrayOfDtype(buf: ArrayBuffer, d: DType): TypedArray {
  return new ARRAY_TYPE[d](buf);
}

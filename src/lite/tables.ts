// The weights of a bag-of-n-grams model file as xling/lite reads them (src/lite/model.ts): the
// feature table (fp32, fp16, int8 rows with per-row scales, or product-quantised codes: each
// checked against the row count the config implies), the projection, and where they lie in the
// file's buffer for the WebAssembly kernels.
import { halfBitsToFloat } from '../io/half.js';
import { checkPqEntries, checkPqShapes, PQ_KEYS, pqOffsets } from '../io/pq-layout.js';
import { LiteSafetensors, LiteTensor, typedView } from './safetensors.js';

/** Storage of the feature table: 'fp32', 'fp16', 'int8' or 'pq' (product-quantised codes). */
export type TableDtype = 'fp32' | 'fp16' | 'int8' | 'pq';

/** A product-quantised table (src/io/pq-layout.ts), its subspaces' offsets, and scratch of its K coordinates. */
export interface PqTable {
  codes: Uint8Array;
  widths: Int32Array;
  offsets: Int32Array;
  codebooks: Float32Array;
  basis: Float32Array;
  mean: Float32Array;
  K: number;
  z: Float64Array;
}

/** Where a product-quantised table's parts lie in the file's buffer (for the WebAssembly kernel). */
export interface PqOffsets {
  widths: number;
  codebooks: number;
  basis: number;
  mean: number;
}

/** The feature table: its tensor (pq: the codes), row width and storage, the typed views of the one it has. */
export interface FeatureTable {
  tensor: LiteTensor;
  featureDim: number;
  dtype: TableDtype;
  f32?: Float32Array;
  f16?: Uint16Array;
  /** float16 bits → float32 (fp16 tables). */
  lut?: Float32Array;
  i8?: Int8Array;
  /** int8 tables: the per-row scales and their tensor. */
  scales?: Float32Array;
  scaleTensor?: LiteTensor;
  pq?: PqTable;
  /** null: not all in the codes' buffer. */
  pqAt?: PqOffsets | null;
}

/** Byte offsets of the weights in their buffer (an empty buffer: not all in one). */
export interface WeightOffsets {
  buffer: ArrayBufferLike;
  table: number;
  scales: number;
  W: number;
  b: number;
}

export type TensorOf = (k: string) => LiteTensor;

/** A file's tensor by name; a missing one is an error naming `where`. */
export function tensorGetter(file: LiteSafetensors, where: string): TensorOf {
  return (k) => {
    const t = file.tensors.get(k);
    if (!t) throw new Error(`${where}: tensor '${k}' is missing`);
    return t;
  };
}

let halfTable: Float32Array | null = null;
function halfLut(): Float32Array {
  if (!halfTable) {
    halfTable = new Float32Array(65536);
    for (let h = 0; h < 65536; h++) halfTable[h] = halfBitsToFloat(h);
  }
  return halfTable;
}

/** The feature table of a file, which must have `rows` rows. */
export function readFeatureTable(file: LiteSafetensors, where: string, rows: number): FeatureTable {
  return file.tensors.has('pq.codes') ? readPqTable(file, where, rows) : readDenseTable(tensorGetter(file, where), where, rows);
}

/** A product-quantised table (xling export --dtype pq): rows summed as coordinates (LiteModel's pqFeatures). */
function readPqTable(file: LiteSafetensors, where: string, expectRows: number): FeatureTable {
  const wrong = checkPqEntries((k) => file.tensors.get(k));
  if (wrong) throw new Error(`${where}: ${wrong}`);
  const get = tensorGetter(file, where);
  const t = Object.fromEntries(PQ_KEYS.map((k) => [k, get(k)])) as Record<(typeof PQ_KEYS)[number], LiteTensor>;
  const codes = typedView(t['pq.codes'], where) as Uint8Array,
    widths = typedView(t['pq.widths'], where) as Int32Array;
  const codebooks = typedView(t['pq.codebooks'], where) as Float32Array,
    basis = typedView(t['pq.basis'], where) as Float32Array,
    mean = typedView(t['pq.mean'], where) as Float32Array;
  const K = t['pq.basis'].shape[1]!;
  const tensor = t['pq.codes'];
  const rows = tensor.shape[0]!,
    fd = t['pq.basis'].shape[0]!;
  const bad = checkPqShapes({ rows, dim: fd, dims: K, codes: codes.length, widths, codebooks: codebooks.length, basis: basis.length, mean: mean.length });
  if (bad) throw new Error(`${where}: ${bad}`);
  if (rows !== expectRows) throw new Error(`${where}: 'pq.codes' has ${rows} rows, the config implies ${expectRows}`);
  const pq = { codes, widths, offsets: pqOffsets(widths), codebooks, basis, mean, K, z: new Float64Array(K) };
  const parts = [t['pq.widths'], t['pq.codebooks'], t['pq.basis'], t['pq.mean']];
  // the kernel reads the parts where they lie in the file: 4-byte aligned, in the codes' buffer
  const inPlace = parts.every((x) => x.bytes.buffer === tensor.bytes.buffer && x.bytes.byteOffset % 4 === 0);
  const [w, cb, ba, me] = parts.map((x) => x.bytes.byteOffset) as [number, number, number, number];
  return { tensor, featureDim: fd, dtype: 'pq', pq, pqAt: inPlace ? { widths: w, codebooks: cb, basis: ba, mean: me } : null };
}

/** A table of fp32, fp16 or int8 rows (int8: with its per-row scales). */
function readDenseTable(get: TensorOf, where: string, expectRows: number): FeatureTable {
  const tensor = get('encoder.embed.weight');
  const [rows, fd] = tensor.shape as [number, number];
  if (tensor.shape.length !== 2 || rows !== expectRows)
    throw new Error(`${where}: 'encoder.embed.weight' has shape [${tensor.shape.join(', ')}], the config implies ${expectRows} rows`);
  if (tensor.dtype === 'F32') return { tensor, featureDim: fd, dtype: 'fp32', f32: typedView(tensor, where) as Float32Array };
  if (tensor.dtype === 'F16') return { tensor, featureDim: fd, dtype: 'fp16', f16: typedView(tensor, where) as Uint16Array, lut: halfLut() };
  if (tensor.dtype !== 'I8') throw new Error(`${where}: 'encoder.embed.weight' has dtype ${tensor.dtype} (fp32, fp16 or int8 expected)`);
  const i8 = typedView(tensor, where) as Int8Array;
  const s = get('scale.encoder.embed.weight');
  if (s.dtype !== 'F32' || s.shape.join() !== String(rows)) throw new Error(`${where}: 'scale.encoder.embed.weight' must be F32 [${rows}]`);
  return { tensor, featureDim: fd, dtype: 'int8', i8, scales: typedView(s, where) as Float32Array, scaleTensor: s };
}

/** The projection after the pooled features: W [outDim, featureDim] and its bias, both F32. */
export function readProjection(get: TensorOf, where: string, fd: number): { W: LiteTensor; b: LiteTensor } {
  const W = get('encoder.proj.weight'),
    b = get('encoder.proj.bias');
  if (W.dtype !== 'F32' || W.shape.length !== 2 || W.shape[1] !== fd || b.dtype !== 'F32' || b.shape[0] !== W.shape[0])
    throw new Error(`${where}: the projection must be F32 [outDim, ${fd}] with a bias [outDim]`);
  return { W, b };
}

/** Where the table, its scales and the projection lie in the table's buffer (an empty buffer when one lies elsewhere). */
export function weightOffsets(t: FeatureTable, W: LiteTensor, b: LiteTensor): WeightOffsets {
  const buffer = t.tensor.bytes.buffer;
  const inBuffer = [W, b, ...(t.scaleTensor ? [t.scaleTensor] : [])].every((x) => x.bytes.buffer === buffer);
  return {
    buffer: inBuffer ? buffer : new ArrayBuffer(0),
    table: t.tensor.bytes.byteOffset,
    scales: t.scaleTensor ? t.scaleTensor.bytes.byteOffset : 0,
    W: W.bytes.byteOffset,
    b: b.bytes.byteOffset,
  };
}

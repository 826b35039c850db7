// The Tensor class: a handle to a libtorch tensor plus typed methods over ATen operators.
// Memory is released deterministically with dispose() or tidy(); native finalizers are the
// safety net (and report bytes to V8 so the GC sees native memory).
import { native } from '../native.js';
import { arrayOfDtype, DType, dtypeCode, dtypeFromCode, dtypeOfArray, TypedArray } from './dtype.js';

// The addon loads on the first call (src/native.ts sets its default threads then): importing the
// tensor layer needs no native backend.
const T = native.torch;

type Handle = unknown;

// ------------------------------------------------------------------------------------------------
// Scopes: tidy(fn) frees every tensor created inside fn except those it returns (or keep()s).

const scopes: Set<Tensor>[] = [];

function track(t: Tensor): void {
  const top = scopes[scopes.length - 1];
  if (top) top.add(t);
}

/** Collects the tensors reachable from a tidy() result (arrays, plain objects, Maps). */
function collect(v: unknown, out: Set<Tensor>, depth = 0): void {
  if (depth > 8 || v === null || v === undefined) return;
  if (v instanceof Tensor) {
    out.add(v);
    return;
  }
  if (Array.isArray(v)) {
    for (const x of v) collect(x, out, depth + 1);
    return;
  }
  if (v instanceof Map) {
    for (const x of v.values()) collect(x, out, depth + 1);
    return;
  }
  if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    for (const x of Object.values(v as Record<string, unknown>)) collect(x, out, depth + 1);
  }
}

/**
 * Runs fn and disposes every tensor created during it, except the tensors in its result
 * (which move to the enclosing scope). Nestable. fn must be synchronous.
 */
export function tidy<R>(fn: () => R): R {
  const scope = new Set<Tensor>();
  scopes.push(scope);
  let result: R;
  try {
    result = fn();
  } catch (e) {
    scopes.pop();
    for (const t of scope) t.dispose();
    throw e;
  }
  scopes.pop();
  if (result instanceof Promise) throw new Error('tidy(): fn must be synchronous (got a Promise)');
  const kept = new Set<Tensor>();
  collect(result, kept);
  for (const t of scope) {
    if (kept.has(t)) track(t);
    else t.dispose();
  }
  return result;
}

/** Removes tensors from every enclosing tidy() scope so they survive it. */
export function keep<X extends Tensor | Tensor[]>(x: X): X {
  const list = Array.isArray(x) ? x : [x];
  for (const t of list) for (const s of scopes) s.delete(t);
  return x;
}

/** Disposes tensors found in a value (arrays, objects). */
export function dispose(v: unknown): void {
  const s = new Set<Tensor>();
  collect(v, s);
  for (const t of s) t.dispose();
}

// ------------------------------------------------------------------------------------------------
// Operator calls by name: resolved once to an id, then called with JS values.

// An id names the operator here at once; the addon resolves it on its first call (so that the
// modules' tables of ids are built at import without the addon).
const opIds = new Map<string, number>();
const opNames: [string, string][] = [];
const opNative: number[] = [];

export function opId(name: string, overload = ''): number {
  const key = `${name}.${overload}`;
  let id = opIds.get(key);
  if (id === undefined) {
    id = opNames.length;
    opNames.push([name.includes('::') ? name : `aten::${name}`, overload]);
    opNative.push(-1);
    opIds.set(key, id);
  }
  return id;
}

/** The addon's id of the operator opId named id (resolved on first use). */
function nativeOp(id: number): number {
  const n = opNative[id];
  if (n === undefined) throw new Error(`unknown operator id ${id}`);
  if (n >= 0) return n;
  const [name, overload] = opNames[id]!;
  return (opNative[id] = T.op(name, overload) as number);
}

/** Printable schema of an ATen operator, e.g. opSchema('add', 'Tensor'). */
export function opSchema(name: string, overload = ''): string {
  return T.opSchema(nativeOp(opId(name, overload))) as string;
}

function unwrap(a: unknown): unknown {
  if (a instanceof Tensor) return a.handle;
  if (Array.isArray(a)) return a.map(unwrap);
  return a;
}

function wrapResult(r: unknown): unknown {
  if (r === null || r === undefined) return r;
  if (Array.isArray(r)) return r.map(wrapResult);
  if (typeof r === 'object') return new Tensor(r);
  return r;
}

// Optional op-level profile (XLING_PROFILE=1): wall time per ATen operator, printed at exit.
const profile = process.env.XLING_PROFILE ? new Map<number, { n: number; ms: number }>() : null;
if (profile) {
  process.on('exit', () => {
    const names = new Map([...opIds].map(([k, v]) => [v, k]));
    const rows = [...profile].sort((a, b) => b[1].ms - a[1].ms).slice(0, 40);
    const total = [...profile.values()].reduce((a, r) => a + r.ms, 0);
    process.stderr.write(`op profile (forward + optimizer ops; backward runs inside 'backward'): total ${total.toFixed(0)} ms\n`);
    for (const [id, r] of rows) process.stderr.write(`${r.ms.toFixed(1).padStart(10)} ms ${String(r.n).padStart(8)}x  ${names.get(id) ?? id}\n`);
  });
}
function profiled(id: number, fn: () => unknown): unknown {
  const t0 = performance.now();
  const r = fn();
  const e = profile!.get(id) ?? { n: 0, ms: 0 };
  e.n++;
  e.ms += performance.now() - t0;
  profile!.set(id, e);
  return r;
}

/** Calls an ATen operator with schema-ordered arguments (Tensors, numbers, booleans, arrays, null). */
export function callOp(id: number, args: unknown[]): unknown {
  if (profile) return profiled(id, () => wrapResult(T.call(nativeOp(id), args.map(unwrap))));
  return wrapResult(T.call(nativeOp(id), args.map(unwrap)));
}

/** Same, off the JS thread, in no-grad mode. */
export async function callOpAsync(id: number, args: unknown[]): Promise<unknown> {
  return wrapResult(await T.callAsync(nativeOp(id), args.map(unwrap)));
}

/** Calls an in-place operator and discards its (aliasing) outputs. */
function callInPlace(id: number, args: unknown[]): void {
  if (profile) {
    profiled(id, () => T.call(nativeOp(id), args.map(unwrap), true));
    return;
  }
  T.call(nativeOp(id), args.map(unwrap), true);
}

const ID = {
  add: opId('add', 'Tensor'),
  addS: opId('add', 'Scalar'),
  sub: opId('sub', 'Tensor'),
  subS: opId('sub', 'Scalar'),
  rsubS: opId('rsub', 'Scalar'),
  mul: opId('mul', 'Tensor'),
  mulS: opId('mul', 'Scalar'),
  div: opId('div', 'Tensor'),
  divS: opId('div', 'Scalar'),
  pow: opId('pow', 'Tensor_Scalar'),
  powT: opId('pow', 'Tensor_Tensor'),
  matmul: opId('matmul'),
  bmm: opId('bmm'),
  mm: opId('mm'),
  linear: opId('linear'),
  neg: opId('neg'),
  exp: opId('exp'),
  log: opId('log'),
  tanh: opId('tanh'),
  sigmoid: opId('sigmoid'),
  relu: opId('relu'),
  logSigmoid: opId('log_sigmoid'),
  gelu: opId('gelu'),
  sqrt: opId('sqrt'),
  rsqrt: opId('rsqrt'),
  abs: opId('abs'),
  sign: opId('sign'),
  clamp: opId('clamp'),
  clampMin: opId('clamp_min'),
  maximum: opId('maximum'),
  minimum: opId('minimum'),
  reshape: opId('reshape'),
  view: opId('view'),
  permute: opId('permute'),
  transpose: opId('transpose', 'int'),
  t: opId('t'),
  contiguous: opId('contiguous'),
  expand: opId('expand'),
  unsqueeze: opId('unsqueeze'),
  squeeze: opId('squeeze'),
  squeezeDim: opId('squeeze', 'dim'),
  flatten: opId('flatten', 'using_ints'),
  slice: opId('slice', 'Tensor'),
  narrow: opId('narrow'),
  select: opId('select', 'int'),
  split: opId('split', 'Tensor'),
  splitSizes: opId('split_with_sizes'),
  chunk: opId('chunk'),
  unbind: opId('unbind', 'int'),
  indexSelect: opId('index_select'),
  gather: opId('gather'),
  maskedFill: opId('masked_fill', 'Scalar'),
  maskedFillT: opId('masked_fill', 'Tensor'),
  index: opId('index', 'Tensor'),
  repeat: opId('repeat'),
  sum: opId('sum'),
  sumDim: opId('sum', 'dim_IntList'),
  mean: opId('mean'),
  meanDim: opId('mean', 'dim'),
  max: opId('max'),
  maxDim: opId('max', 'dim'),
  min: opId('min'),
  minDim: opId('min', 'dim'),
  argmax: opId('argmax'),
  argmin: opId('argmin'),
  topk: opId('topk'),
  sort: opId('sort'),
  argsort: opId('argsort'),
  logsumexp: opId('logsumexp'),
  norm: opId('linalg_vector_norm'),
  cumsum: opId('cumsum'),
  softmax: opId('softmax', 'int'),
  logSoftmax: opId('log_softmax', 'int'),
  eq: opId('eq', 'Tensor'),
  eqS: opId('eq', 'Scalar'),
  ne: opId('ne', 'Tensor'),
  neS: opId('ne', 'Scalar'),
  lt: opId('lt', 'Tensor'),
  ltS: opId('lt', 'Scalar'),
  le: opId('le', 'Tensor'),
  leS: opId('le', 'Scalar'),
  gt: opId('gt', 'Tensor'),
  gtS: opId('gt', 'Scalar'),
  ge: opId('ge', 'Tensor'),
  geS: opId('ge', 'Scalar'),
  logicalNot: opId('logical_not'),
  logicalAnd: opId('logical_and'),
  logicalOr: opId('logical_or'),
  any: opId('any'),
  all: opId('all'),
  isnan: opId('isnan'),
  toDtype: opId('to', 'dtype'),
  toDevice: opId('to', 'device'),
  clone: opId('clone'),
  detach: opId('detach'),
  addI: opId('add_', 'Tensor'),
  addSI: opId('add_', 'Scalar'),
  mulI: opId('mul_', 'Tensor'),
  mulSI: opId('mul_', 'Scalar'),
  divSI: opId('div_', 'Scalar'),
  subI: opId('sub_', 'Tensor'),
  addcmulI: opId('addcmul_'),
  addcdivI: opId('addcdiv_'),
  lerpI: opId('lerp_', 'Scalar'),
  zeroI: opId('zero_'),
  copyI: opId('copy_'),
  fillI: opId('fill_', 'Scalar'),
  uniformI: opId('uniform_'),
  normalI: opId('normal_'),
  maskedFillI: opId('masked_fill_', 'Scalar'),
  clampI: opId('clamp_'),
  indexAdd: opId('index_add'),
  indexAddI: opId('index_add_'),
  indexFill: opId('index_fill', 'int_Scalar'),
  toDense: opId('to_dense'),
  nnz: opId('_nnz'),
};

// ------------------------------------------------------------------------------------------------

export type Scalar = number | boolean;
export type Shape = readonly number[];

export class Tensor {
  /** Opaque native handle (a type-tagged N-API external). */
  readonly handle: Handle;

  /** Wraps a native handle; registers the tensor with the current tidy() scope. */
  constructor(handle: Handle) {
    this.handle = handle;
    track(this);
  }

  // ---- metadata
  get shape(): number[] {
    return T.shape(this.handle) as number[];
  }
  get dtype(): DType {
    return dtypeFromCode((T.meta(this.handle) as [number])[0]);
  }
  get device(): string {
    return (T.meta(this.handle) as [number, string])[1];
  }
  get ndim(): number {
    return this.shape.length;
  }
  get numel(): number {
    return this.shape.reduce((a, b) => a * b, 1);
  }
  size(dim: number): number {
    const s = this.shape;
    return s[dim < 0 ? s.length + dim : dim]!;
  }
  get isDisposed(): boolean {
    return T.isDisposed(this.handle) as boolean;
  }
  /** Frees the native tensor now. Later use throws "tensor was disposed". Idempotent. */
  dispose(): void {
    T.dispose(this.handle);
  }

  // ---- autograd
  get requiresGrad(): boolean {
    return (T.meta(this.handle) as unknown[])[2] as boolean;
  }
  set requiresGrad(v: boolean) {
    T.setRequiresGrad(this.handle, v);
  }
  requiresGrad_(v = true): this {
    T.setRequiresGrad(this.handle, v);
    return this;
  }
  get isLeaf(): boolean {
    return (T.meta(this.handle) as unknown[])[3] as boolean;
  }
  /** The accumulated gradient (a new handle sharing the storage), or null. */
  get grad(): Tensor | null {
    const g = T.grad(this.handle);
    return g ? new Tensor(g) : null;
  }
  set grad(g: Tensor | null) {
    T.setGrad(this.handle, g ? g.handle : null);
  }
  zeroGrad(): void {
    T.setGrad(this.handle, null);
  }
  backward(grad?: Tensor, retainGraph = false): void {
    if (profile) {
      profiled(-1, () => T.backward(this.handle, grad ? grad.handle : null, retainGraph));
      return;
    }
    T.backward(this.handle, grad ? grad.handle : null, retainGraph);
  }
  detach(): Tensor {
    return callOp(ID.detach, [this]) as Tensor;
  }

  // ---- data export
  /** Copies the elements out (row-major) as the matching typed array. */
  data(): TypedArray {
    return arrayOfDtype(T.toBuffer(this.handle) as ArrayBuffer, this.dtype);
  }
  toFloat32Array(): Float32Array {
    if (this.dtype === 'float32') return new Float32Array(T.toBuffer(this.handle) as ArrayBuffer);
    return tidy(() => this.to('float32').toFloat32Array());
  }
  /** Copies into an existing typed array of exactly the right byte length. */
  copyInto(out: TypedArray): void {
    T.copyInto(this.handle, out);
  }
  /** Elements as a flat array of JS numbers. */
  toArray(): number[] {
    const d = this.dtype;
    if (d === 'float16' || d === 'bfloat16') return tidy(() => this.to('float32').toArray());
    const a = this.data();
    return a instanceof BigInt64Array ? Array.from(a, Number) : Array.from(a as ArrayLike<number>);
  }
  item(): number {
    return Number(T.item(this.handle));
  }
  toString(): string {
    return `Tensor(shape=[${this.shape.join(', ')}], dtype=${this.dtype}, device=${this.device})`;
  }

  // ---- conversion
  to(dtype: DType): Tensor {
    return callOp(ID.toDtype, [this, dtypeCode(dtype)]) as Tensor;
  }
  toDevice(device: string, dtype?: DType): Tensor {
    return callOp(ID.toDevice, [this, device, dtypeCode(dtype ?? this.dtype)]) as Tensor;
  }
  float(): Tensor {
    return this.to('float32');
  }
  long(): Tensor {
    return this.to('int64');
  }
  clone(): Tensor {
    return callOp(ID.clone, [this]) as Tensor;
  }

  // ---- arithmetic (broadcasting)
  add(o: Tensor | Scalar, alpha = 1): Tensor {
    return callOp(o instanceof Tensor ? ID.add : ID.addS, [this, o, alpha]) as Tensor;
  }
  sub(o: Tensor | Scalar, alpha = 1): Tensor {
    return callOp(o instanceof Tensor ? ID.sub : ID.subS, [this, o, alpha]) as Tensor;
  }
  /** s - this */
  rsub(s: Scalar): Tensor {
    return callOp(ID.rsubS, [this, s, 1]) as Tensor;
  }
  mul(o: Tensor | Scalar): Tensor {
    return callOp(o instanceof Tensor ? ID.mul : ID.mulS, [this, o]) as Tensor;
  }
  div(o: Tensor | Scalar): Tensor {
    return callOp(o instanceof Tensor ? ID.div : ID.divS, [this, o]) as Tensor;
  }
  pow(e: Tensor | Scalar): Tensor {
    return callOp(e instanceof Tensor ? ID.powT : ID.pow, [this, e]) as Tensor;
  }
  neg(): Tensor {
    return callOp(ID.neg, [this]) as Tensor;
  }
  matmul(o: Tensor): Tensor {
    return callOp(ID.matmul, [this, o]) as Tensor;
  }
  mm(o: Tensor): Tensor {
    return callOp(ID.mm, [this, o]) as Tensor;
  }
  bmm(o: Tensor): Tensor {
    return callOp(ID.bmm, [this, o]) as Tensor;
  }
  maximum(o: Tensor): Tensor {
    return callOp(ID.maximum, [this, o]) as Tensor;
  }
  minimum(o: Tensor): Tensor {
    return callOp(ID.minimum, [this, o]) as Tensor;
  }

  // ---- elementwise
  exp(): Tensor {
    return callOp(ID.exp, [this]) as Tensor;
  }
  log(): Tensor {
    return callOp(ID.log, [this]) as Tensor;
  }
  tanh(): Tensor {
    return callOp(ID.tanh, [this]) as Tensor;
  }
  sigmoid(): Tensor {
    return callOp(ID.sigmoid, [this]) as Tensor;
  }
  relu(): Tensor {
    return callOp(ID.relu, [this]) as Tensor;
  }
  logSigmoid(): Tensor {
    return callOp(ID.logSigmoid, [this]) as Tensor;
  }
  gelu(approximate: 'none' | 'tanh' = 'none'): Tensor {
    return callOp(ID.gelu, [this, approximate]) as Tensor;
  }
  sqrt(): Tensor {
    return callOp(ID.sqrt, [this]) as Tensor;
  }
  rsqrt(): Tensor {
    return callOp(ID.rsqrt, [this]) as Tensor;
  }
  abs(): Tensor {
    return callOp(ID.abs, [this]) as Tensor;
  }
  sign(): Tensor {
    return callOp(ID.sign, [this]) as Tensor;
  }
  clamp(min: number | null, max: number | null = null): Tensor {
    return callOp(ID.clamp, [this, min, max]) as Tensor;
  }
  clampMin(min: number): Tensor {
    return callOp(ID.clampMin, [this, min]) as Tensor;
  }
  isnan(): Tensor {
    return callOp(ID.isnan, [this]) as Tensor;
  }

  // ---- comparison (bool results)
  eq(o: Tensor | Scalar): Tensor {
    return callOp(o instanceof Tensor ? ID.eq : ID.eqS, [this, o]) as Tensor;
  }
  ne(o: Tensor | Scalar): Tensor {
    return callOp(o instanceof Tensor ? ID.ne : ID.neS, [this, o]) as Tensor;
  }
  lt(o: Tensor | Scalar): Tensor {
    return callOp(o instanceof Tensor ? ID.lt : ID.ltS, [this, o]) as Tensor;
  }
  le(o: Tensor | Scalar): Tensor {
    return callOp(o instanceof Tensor ? ID.le : ID.leS, [this, o]) as Tensor;
  }
  gt(o: Tensor | Scalar): Tensor {
    return callOp(o instanceof Tensor ? ID.gt : ID.gtS, [this, o]) as Tensor;
  }
  ge(o: Tensor | Scalar): Tensor {
    return callOp(o instanceof Tensor ? ID.ge : ID.geS, [this, o]) as Tensor;
  }
  logicalNot(): Tensor {
    return callOp(ID.logicalNot, [this]) as Tensor;
  }
  logicalAnd(o: Tensor): Tensor {
    return callOp(ID.logicalAnd, [this, o]) as Tensor;
  }
  logicalOr(o: Tensor): Tensor {
    return callOp(ID.logicalOr, [this, o]) as Tensor;
  }
  any(): Tensor {
    return callOp(ID.any, [this]) as Tensor;
  }
  all(): Tensor {
    return callOp(ID.all, [this]) as Tensor;
  }

  // ---- shape
  reshape(shape: Shape): Tensor {
    return callOp(ID.reshape, [this, shape]) as Tensor;
  }
  view(shape: Shape): Tensor {
    return callOp(ID.view, [this, shape]) as Tensor;
  }
  permute(dims: Shape): Tensor {
    return callOp(ID.permute, [this, dims]) as Tensor;
  }
  transpose(d0: number, d1: number): Tensor {
    return callOp(ID.transpose, [this, d0, d1]) as Tensor;
  }
  /** 2-D transpose. */
  t(): Tensor {
    return callOp(ID.t, [this]) as Tensor;
  }
  contiguous(): Tensor {
    return callOp(ID.contiguous, [this]) as Tensor;
  }
  expand(shape: Shape): Tensor {
    return callOp(ID.expand, [this, shape]) as Tensor;
  }
  expandAs(o: Tensor): Tensor {
    return this.expand(o.shape);
  }
  unsqueeze(dim: number): Tensor {
    return callOp(ID.unsqueeze, [this, dim]) as Tensor;
  }
  squeeze(dim?: number): Tensor {
    return (dim === undefined ? callOp(ID.squeeze, [this]) : callOp(ID.squeezeDim, [this, dim])) as Tensor;
  }
  flatten(startDim = 0, endDim = -1): Tensor {
    return callOp(ID.flatten, [this, startDim, endDim]) as Tensor;
  }
  repeat(times: Shape): Tensor {
    return callOp(ID.repeat, [this, times]) as Tensor;
  }

  // ---- slicing and indexing
  /** Elements [start, end) along dim with a step (a view). */
  slice(dim: number, start: number | null, end: number | null = null, step = 1): Tensor {
    return callOp(ID.slice, [this, dim, start, end, step]) as Tensor;
  }
  narrow(dim: number, start: number, length: number): Tensor {
    return callOp(ID.narrow, [this, dim, start, length]) as Tensor;
  }
  /** Index i along dim, removing that dim. */
  select(dim: number, i: number): Tensor {
    return callOp(ID.select, [this, dim, i]) as Tensor;
  }
  split(size: number | number[], dim = 0): Tensor[] {
    return (Array.isArray(size) ? callOp(ID.splitSizes, [this, size, dim]) : callOp(ID.split, [this, size, dim])) as Tensor[];
  }
  chunk(chunks: number, dim = 0): Tensor[] {
    return callOp(ID.chunk, [this, chunks, dim]) as Tensor[];
  }
  unbind(dim = 0): Tensor[] {
    return callOp(ID.unbind, [this, dim]) as Tensor[];
  }
  indexSelect(dim: number, index: Tensor): Tensor {
    return callOp(ID.indexSelect, [this, dim, index]) as Tensor;
  }
  /** Copy with source's slices added at the given indices along dim (repeats accumulate). */
  indexAdd(dim: number, index: Tensor, source: Tensor, alpha = 1): Tensor {
    return callOp(ID.indexAdd, [this, dim, index, source, alpha]) as Tensor;
  }
  /** A sparse tensor as a dense (strided) one. */
  toDense(): Tensor {
    return callOp(ID.toDense, [this, null]) as Tensor;
  }
  /** Stored entries (rows, for a row-sparse gradient) of a sparse tensor; an error for a dense one. */
  nnz(): number {
    return callOp(ID.nnz, [this]) as number;
  }
  /** Copy with the slices at the given indices along dim set to value. */
  indexFill(dim: number, index: Tensor, value: number): Tensor {
    return callOp(ID.indexFill, [this, dim, index, value]) as Tensor;
  }
  gather(dim: number, index: Tensor): Tensor {
    return callOp(ID.gather, [this, dim, index]) as Tensor;
  }
  /** Advanced indexing: t[i0, i1, ...] with index tensors (null = full slice). */
  index(indices: (Tensor | null)[]): Tensor {
    return callOp(ID.index, [this, indices]) as Tensor;
  }
  maskedFill(mask: Tensor, value: Scalar | Tensor): Tensor {
    return callOp(value instanceof Tensor ? ID.maskedFillT : ID.maskedFill, [this, mask, value]) as Tensor;
  }

  // ---- reductions
  sum(dim?: number | number[], keepdim = false): Tensor {
    return (dim === undefined ? callOp(ID.sum, [this]) : callOp(ID.sumDim, [this, dim, keepdim])) as Tensor;
  }
  mean(dim?: number | number[], keepdim = false): Tensor {
    return (dim === undefined ? callOp(ID.mean, [this]) : callOp(ID.meanDim, [this, dim, keepdim])) as Tensor;
  }
  /** Global max (no dim) */
  max(): Tensor;
  /** Max along dim: [values, indices] */
  max(dim: number, keepdim?: boolean): [Tensor, Tensor];
  max(dim?: number, keepdim = false): Tensor | [Tensor, Tensor] {
    return (dim === undefined ? callOp(ID.max, [this]) : callOp(ID.maxDim, [this, dim, keepdim])) as Tensor | [Tensor, Tensor];
  }
  min(): Tensor;
  min(dim: number, keepdim?: boolean): [Tensor, Tensor];
  min(dim?: number, keepdim = false): Tensor | [Tensor, Tensor] {
    return (dim === undefined ? callOp(ID.min, [this]) : callOp(ID.minDim, [this, dim, keepdim])) as Tensor | [Tensor, Tensor];
  }
  argmax(dim?: number, keepdim = false): Tensor {
    return callOp(ID.argmax, [this, dim ?? null, keepdim]) as Tensor;
  }
  argmin(dim?: number, keepdim = false): Tensor {
    return callOp(ID.argmin, [this, dim ?? null, keepdim]) as Tensor;
  }
  /** [values, indices] */
  topk(k: number, dim = -1, largest = true, sorted = true): [Tensor, Tensor] {
    return callOp(ID.topk, [this, k, dim, largest, sorted]) as [Tensor, Tensor];
  }
  /** [values, indices] */
  sort(dim = -1, descending = false): [Tensor, Tensor] {
    return callOp(ID.sort, [this, dim, descending]) as [Tensor, Tensor];
  }
  argsort(dim = -1, descending = false): Tensor {
    return callOp(ID.argsort, [this, dim, descending]) as Tensor;
  }
  logsumexp(dim: number | number[], keepdim = false): Tensor {
    return callOp(ID.logsumexp, [this, dim, keepdim]) as Tensor;
  }
  /** Vector p-norm over dims (all when omitted). */
  norm(p = 2, dim?: number | number[], keepdim = false): Tensor {
    return callOp(ID.norm, [this, p, dim ?? null, keepdim]) as Tensor;
  }
  cumsum(dim: number): Tensor {
    return callOp(ID.cumsum, [this, dim]) as Tensor;
  }
  softmax(dim: number): Tensor {
    return callOp(ID.softmax, [this, dim]) as Tensor;
  }
  logSoftmax(dim: number): Tensor {
    return callOp(ID.logSoftmax, [this, dim]) as Tensor;
  }

  // ---- in-place (return this; used by optimizers and initialisers)
  add_(o: Tensor | Scalar, alpha = 1): this {
    callInPlace(o instanceof Tensor ? ID.addI : ID.addSI, [this, o, alpha]);
    return this;
  }
  sub_(o: Tensor, alpha = 1): this {
    callInPlace(ID.subI, [this, o, alpha]);
    return this;
  }
  mul_(o: Tensor | Scalar): this {
    callInPlace(o instanceof Tensor ? ID.mulI : ID.mulSI, [this, o]);
    return this;
  }
  div_(s: Scalar): this {
    callInPlace(ID.divSI, [this, s]);
    return this;
  }
  addcmul_(a: Tensor, b: Tensor, value = 1): this {
    callInPlace(ID.addcmulI, [this, a, b, value]);
    return this;
  }
  addcdiv_(a: Tensor, b: Tensor, value = 1): this {
    callInPlace(ID.addcdivI, [this, a, b, value]);
    return this;
  }
  lerp_(end: Tensor, weight: number): this {
    callInPlace(ID.lerpI, [this, end, weight]);
    return this;
  }
  zero_(): this {
    callInPlace(ID.zeroI, [this]);
    return this;
  }
  indexAdd_(dim: number, index: Tensor, source: Tensor, alpha = 1): this {
    callInPlace(ID.indexAddI, [this, dim, index, source, alpha]);
    return this;
  }
  fill_(v: Scalar): this {
    callInPlace(ID.fillI, [this, v]);
    return this;
  }
  copy_(src: Tensor): this {
    callInPlace(ID.copyI, [this, src, false]);
    return this;
  }
  uniform_(from = 0, to = 1): this {
    callInPlace(ID.uniformI, [this, from, to, null]);
    return this;
  }
  normal_(mean = 0, std = 1): this {
    callInPlace(ID.normalI, [this, mean, std, null]);
    return this;
  }
  maskedFill_(mask: Tensor, value: Scalar): this {
    callInPlace(ID.maskedFillI, [this, mask, value]);
    return this;
  }
  clamp_(min: number | null, max: number | null = null): this {
    callInPlace(ID.clampI, [this, min, max]);
    return this;
  }
}

// ------------------------------------------------------------------------------------------------
// Creation.

/** Copies a typed array into a new tensor of the given shape (default: 1-D). */
export function fromArray(data: TypedArray, shape?: Shape, dtype?: DType): Tensor {
  const d = dtype ?? dtypeOfArray(data);
  return new Tensor(T.fromBuffer(data, shape ?? [data.length], dtypeCode(d)));
}

/** Creates a tensor from numbers (nested arrays allowed) — float32 unless dtype says otherwise. */
export function tensor(values: number | boolean | NestedArray, dtype: DType = 'float32'): Tensor {
  const shape: number[] = [];
  let v: unknown = values;
  while (Array.isArray(v)) {
    shape.push(v.length);
    v = v[0];
  }
  const flat = (Array.isArray(values) ? (values as unknown[]).flat(Infinity) : [values]) as (number | boolean)[];
  const numel = shape.reduce((a, b) => a * b, 1);
  if (flat.length !== numel) throw new Error(`tensor(): ragged nested array (shape [${shape.join(', ')}] needs ${numel} values, got ${flat.length})`);
  let arr: TypedArray;
  switch (dtype) {
    case 'int64':
      arr = BigInt64Array.from(flat, (x) => BigInt(Math.trunc(Number(x))));
      break;
    case 'int32':
      arr = Int32Array.from(flat, Number);
      break;
    case 'uint8':
    case 'bool':
      arr = Uint8Array.from(flat, Number);
      break;
    case 'float64':
      arr = Float64Array.from(flat, Number);
      break;
    default: {
      const f = fromArray(Float32Array.from(flat, Number), shape);
      if (dtype === 'float32') return f;
      return tidy(() => f.to(dtype));
    }
  }
  return fromArray(arr, shape, dtype);
}
export type NestedArray = (number | boolean | NestedArray)[];

export function setNumThreads(n: number): void {
  T.setNumThreads(n);
}
export function getNumThreads(): number {
  return T.getNumThreads() as number;
}
export function manualSeed(seed: number): void {
  T.manualSeed(seed);
}
export function hasCuda(): boolean {
  return T.hasCuda() as boolean;
}
/** Live native tensor handles and the bytes they hold (for leak checks). */
export function memoryStats(): { handles: number; bytes: number } {
  return T.memoryStats() as { handles: number; bytes: number };
}

/** Runs fn with autograd recording disabled (synchronous fn only). */
export function noGrad<R>(fn: () => R): R {
  const prev = T.setGradEnabled(false) as boolean;
  try {
    return fn();
  } finally {
    T.setGradEnabled(prev);
  }
}
export function isGradEnabled(): boolean {
  return T.isGradEnabled() as boolean;
}

/** Frees the large CPU blocks the caching allocator keeps for reuse. */
export function emptyCpuCache(): void {
  T.emptyCpuCache();
}
/** Bytes held in the CPU block cache, bytes of live cached-class blocks, and the cache limit. */
export function cpuCacheStats(): { cachedBytes: number; liveLargeBytes: number; limitBytes: number } {
  return T.cpuCacheStats() as { cachedBytes: number; liveLargeBytes: number; limitBytes: number };
}

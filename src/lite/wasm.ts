// xling/lite's WebAssembly SIMD kernels (assembly/lite-kernels.ts, compiled into ./kernels-wasm.ts):
// the model file is read into a WebAssembly memory, each thread that embeds (the calling thread,
// each worker) gets a scratch slot after it, and the kernels compute the mean of the feature rows,
// tanh and the projection of a batch of sentences there (src/lite/model.ts: embedWasm). Where
// WebAssembly SIMD is missing, or the model does not fit a 32-bit memory, nothing here is used and
// the pure-TypeScript path embeds (the same vectors to ≤ 1e-6: test/lite/lite-wasm.test.ts).
//
// Memory layout: page 0 unused | the model file (placed so that its byte buffer starts on a cache
// line) | slot 0 | slot 1 | … (SLOT_BYTES each). Node's worker threads share one memory
// (shared: true); a browser tab gets a plain memory, one slot.
import { KERNELS_WASM_PLAIN, KERNELS_WASM_SHARED } from './kernels-wasm.js';

// The few WebAssembly types used here (the project's TypeScript libraries declare none outside the DOM's).
/** A WasmMemory. */
export interface WasmMemory {
  readonly buffer: ArrayBuffer | SharedArrayBuffer;
}
/** A compiled WasmModule. */
export interface WasmModule {
  readonly __wasmModule?: never;
}
interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  compile(bytes: Uint8Array): Promise<WasmModule>;
  instantiate(m: WasmModule, imports: Record<string, Record<string, unknown>>): Promise<{ exports: Record<string, unknown> }>;
  Memory: new (d: { initial: number; maximum?: number; shared?: boolean }) => WasmMemory;
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (m: WasmModule, imports: Record<string, Record<string, unknown>>) => { exports: Record<string, unknown> };
}
const wasmApi = (): WasmApi | undefined => (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;

const PAGE = 65536;
/** Feature ids one batch may hold (a sentence has at most the model's maxFeatures). */
export const IDS_CAP = 65536;
/** Bytes of the pooled features and of the projections of one batch (each). */
const ROWS_BYTES = 65536;
/** Coordinates of a product-quantised table's rows the scratch z holds (its K). */
export const PQ_DIMS_CAP = 1024;
/** At most this many sentences per kernel call. */
const MAX_BATCH = 16;
/** Bytes of the packed codebooks of a product-quantised table (embedBatchPq's pack: a header, then 4 KB for each of up to 256 subspaces). */
const PACK_BYTES = 16 + 256 * 4096;
const SLOT_IDS = 0,
  SLOT_OFFS = IDS_CAP * 4,
  SLOT_H = SLOT_OFFS + 4096,
  SLOT_Y = SLOT_H + ROWS_BYTES,
  SLOT_Z = SLOT_Y + ROWS_BYTES,
  SLOT_PACK = SLOT_Z + (MAX_BATCH * PQ_DIMS_CAP + 4) * 4;
const SLOT_BYTES = Math.ceil((SLOT_PACK + PACK_BYTES) / PAGE) * PAGE;

/** What both kernels take after their table: the features' width, the activation, the projection (W, b, d outputs) and the batch's ids. */
type BatchArgs = [fd: number, act: number, W: number, b: number, d: number, ids: number, offs: number, nb: number];

export interface KernelExports {
  embedBatch(...args: [dtype: number, table: number, scales: number, ...BatchArgs, h: number, y: number]): void;
  embedBatchPq(
    ...args: [
      codes: number,
      M: number,
      widths: number,
      codebooks: number,
      K: number,
      basis: number,
      mean: number,
      ...BatchArgs,
      z: number,
      pack: number,
      h: number,
      y: number,
    ]
  ): void;
}

/** One thread's kernel: the instance, the memory and its scratch slot. */
export interface WasmKernel {
  readonly exports: KernelExports;
  readonly memory: WasmMemory;
  readonly ids: number;
  readonly offs: number;
  readonly h: number;
  readonly y: number;
  /** Scratch of a batch's rows of PQ_DIMS_CAP float32, and 4 more (embedBatchPq's z). */
  readonly z: number;
  /** Scratch of PACK_BYTES (embedBatchPq's packed codebooks). */
  readonly pack: number;
  /** Sentences per call for features of fd and vectors of d floats (0: too wide for a slot). */
  batch(fd: number, d: number): number;
}

/** Where a model file of `size` bytes (safetensors header of headerLen bytes) lies in the memory, and its pages with `slots` slots. */
export interface Arena {
  base: number;
  size: number;
  slots: number;
  pages: number;
  shared: boolean;
}

function decode64(s: string): Uint8Array {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

const compiled = new Map<boolean, Promise<WasmModule | null>>();

/** The kernels' bytes (shared: the build importing a shared memory), or null where this engine cannot compile them. */
function kernelBytes(wa: WasmApi | undefined, shared: boolean): Uint8Array | null {
  if (!wa || (shared && typeof SharedArrayBuffer === 'undefined')) return null;
  const bytes = decode64(shared ? KERNELS_WASM_SHARED : KERNELS_WASM_PLAIN);
  return wa.validate(bytes) ? bytes : null;
}

/** What `make` makes of the kernels' bytes (shared: the build for a shared memory), or null where this engine cannot compile them. */
function fromKernelBytes<T>(shared: boolean, make: (wa: WasmApi, bytes: Uint8Array) => T): T | null {
  const wa = wasmApi();
  const bytes = kernelBytes(wa, shared);
  if (!bytes) return null;
  try {
    return make(wa!, bytes);
  } catch {
    return null;
  }
}

/** The compiled kernels (shared: for a shared memory), or null where WebAssembly SIMD (or shared memory) is missing. */
export function kernelModule(shared: boolean): Promise<WasmModule | null> {
  let p = compiled.get(shared);
  if (!p) {
    p = fromKernelBytes(shared, (wa, bytes) => wa.compile(bytes).catch(() => null)) ?? Promise.resolve(null);
    compiled.set(shared, p);
  }
  return p;
}

/**
 * kernelModule compiled synchronously (Node, where a synchronous caller loads a model: the CLI's
 * portable runtime; browsers refuse large synchronous compiles on their main thread, these
 * kernels are a few kilobytes).
 */
export function kernelModuleSync(shared: boolean): WasmModule | null {
  return fromKernelBytes(shared, (wa, bytes) => new wa.Module(bytes));
}

/** The layout for a model file, or null when it does not fit a 32-bit WebAssembly memory. */
export function planArena(size: number, headerLen: number, slots: number, shared: boolean): Arena | null {
  // the file's byte buffer (after 8 + headerLen bytes) on a 64-byte boundary
  const base = PAGE + ((64 - ((PAGE + 8 + headerLen) % 64)) % 64);
  const end = Math.ceil((base + size) / PAGE) * PAGE;
  const pages = (end + slots * SLOT_BYTES) / PAGE;
  return pages <= 65536 ? { base, size, slots, pages, shared } : null;
}

/** A memory for an arena (null if the engine refuses one, e.g. shared memory in a page without cross-origin isolation). */
export function arenaMemory(a: Arena): WasmMemory | null {
  try {
    const M = wasmApi()!.Memory;
    return new M(a.shared ? { initial: a.pages, maximum: a.pages, shared: true } : { initial: a.pages });
  } catch {
    return null;
  }
}

/** A kernel over a memory laid out as `a`, using slot number `slot`. */
export async function instantiateKernel(module: WasmModule, memory: WasmMemory, a: Arena, slot: number): Promise<WasmKernel> {
  checkSlot(a, slot);
  return kernelAt((await wasmApi()!.instantiate(module, { env: { memory } })).exports, memory, a, slot);
}

/** instantiateKernel, synchronously (see kernelModuleSync). */
export function instantiateKernelSync(module: WasmModule, memory: WasmMemory, a: Arena, slot: number): WasmKernel {
  checkSlot(a, slot);
  return kernelAt(new (wasmApi()!.Instance)(module, { env: { memory } }).exports, memory, a, slot);
}

function checkSlot(a: Arena, slot: number): void {
  if (!(slot >= 0 && slot < a.slots)) throw new Error(`xling/lite: no scratch slot ${slot} (the memory has ${a.slots})`);
}

function kernelAt(exports: Record<string, unknown>, memory: WasmMemory, a: Arena, slot: number): WasmKernel {
  const at = Math.ceil((a.base + a.size) / PAGE) * PAGE + slot * SLOT_BYTES;
  return {
    exports: exports as unknown as KernelExports,
    memory,
    ids: at + SLOT_IDS,
    offs: at + SLOT_OFFS,
    h: at + SLOT_H,
    y: at + SLOT_Y,
    z: at + SLOT_Z,
    pack: at + SLOT_PACK,
    batch: (fd, d) => {
      // the projection takes four sentences at a time: room for the batch rounded up to four
      const n = Math.min(MAX_BATCH, Math.floor(ROWS_BYTES / (4 * fd)), Math.floor(ROWS_BYTES / (4 * d))) & ~3;
      return n >= 4 ? n : 0;
    },
  };
}

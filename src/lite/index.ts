// xling/lite: embed with an exported bag-of-n-grams dual encoder without native code — in any
// Node (no libtorch, no addon) and in the browser. Nothing here imports the addon or the tensor
// layer (test/lite.test.ts checks the import graph and runs it where the addon cannot load).
//
//   import { loadModel } from 'xling/lite';
//   const m = await loadModel('models/fast-int8');            // a directory, a .safetensors file or a URL
//   const v = await m.embed(['Open the file', 'Datei öffnen'], { lang: 'de' });  // n × m.dim, unit rows
//
// A model is what `xling export` writes: a directory (config.json + model.safetensors), or its
// model.safetensors alone (the config is in the file's metadata). In Node, `threads: N` embeds on
// N worker threads sharing one copy of the table. Over HTTP, `headers` go with every request for
// the model's files (e.g. `{ authorization: 'Bearer KEY' }` for a server started with --api-key).
import { LanguageIdentifier } from '../text/lid-core.js';
import { LiteEmbedOptions, LiteModel } from './model.js';
import { parseSafetensors, safetensorsHeaderLength } from './safetensors.js';
import { Arena, WasmMemory, arenaMemory, instantiateKernel, kernelModule, planArena } from './wasm.js';

export { LiteModel } from './model.js';
export type { LiteEmbedOptions } from './model.js';

export interface LoadOptions {
  /** Node only: embed on this many worker threads (default 1: the calling thread). */
  threads?: number;
  /** A URL source: HTTP headers sent with each request for the model's files (e.g. authorization). */
  headers?: Record<string, string>;
  /**
   * What computes: 'auto' (the default): WebAssembly SIMD kernels where the engine has them and the
   * model fits a 32-bit memory, else pure TypeScript; 'wasm': the kernels or an error; 'js': pure
   * TypeScript (the same vectors to ≤ 1e-6).
   */
  kernel?: 'auto' | 'wasm' | 'js';
}

/** A loaded model: embed() → Float32Array of sentences.length × dim rows, L2-normalised. */
export interface LoadedLiteModel {
  readonly dim: number;
  readonly languages: string[];
  readonly dtype: string;
  /** What embeds: 'wasm-simd' (WebAssembly SIMD kernels) or 'js' (pure TypeScript). */
  readonly kernel: 'wasm-simd' | 'js';
  embed(sentences: readonly string[], o?: LiteEmbedOptions): Promise<Float32Array>;
  /** The feature ids of a sentence (as xling's native tokenizer gives them). */
  tokenize(s: string): Int32Array;
  /** Stops the worker threads (if any). */
  close(): Promise<void>;
}

const isNode = typeof process !== 'undefined' && !!process.versions?.node;

function isUrl(s: string | URL): boolean {
  return s instanceof URL || /^(https?|blob|data):/i.test(s) || (!isNode && typeof s === 'string');
}

async function fetchBytes(url: string, headers?: Record<string, string>): Promise<Uint8Array> {
  const r = await fetch(url, headers ? { headers } : undefined);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
}

/**
 * Where the model file's bytes go: given its size and its safetensors header length, a view of that
 * size to read them into, or null for a buffer of their own.
 */
export type Place = (size: number, headerLen: number) => Uint8Array | null;

/** The header length of a safetensors file (its first 8 bytes), or -1 (too short, or no safe integer). */
function headerLength(first: Uint8Array): number {
  const n = safetensorsHeaderLength(first);
  return Number.isSafeInteger(n) ? n : -1;
}

/** Reads a whole file into a SharedArrayBuffer, or where place says (worker threads then view the same bytes). */
async function readShared(path: string, place?: Place): Promise<Uint8Array> {
  const fs = await import('node:fs');
  const fd = fs.openSync(path, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    const first = new Uint8Array(8);
    fs.readSync(fd, first, 0, 8, 0);
    const out = place?.(size, headerLength(first)) ?? new Uint8Array(new SharedArrayBuffer(size));
    let at = 0;
    while (at < size) {
      const n = fs.readSync(fd, out, at, Math.min(1 << 26, size - at), at);
      if (n <= 0) throw new Error(`${path}: unexpected end of file`);
      at += n;
    }
    return out;
  } finally {
    fs.closeSync(fd);
  }
}

/** The model file's bytes and its config (config.json beside it, or the file's metadata). */
export async function readModelBytes(source: string | URL, headers?: Record<string, string>, place?: Place): Promise<{ bytes: Uint8Array; config: unknown; where: string; lid: LanguageIdentifier | null }> {
  let bytes: Uint8Array, configText: string | undefined, where: string;
  // the language identifier (lid.json beside the weights; optional: without it 'auto' does not centre)
  let lidText: string | null = null, lidWhere = '';
  if (isUrl(source)) {
    const base = String(source);
    if (/\.safetensors(\?|#|$)/.test(base)) { bytes = await fetchBytes(base, headers); where = base; }
    else {
      const dir = base.endsWith('/') ? base : `${base}/`;
      where = `${dir}model.safetensors`;
      lidWhere = `${dir}lid.json`;
      [bytes, configText, lidText] = await Promise.all([fetchBytes(where, headers), fetchBytes(`${dir}config.json`, headers).then((b) => new TextDecoder().decode(b)), fetch(lidWhere, headers ? { headers } : undefined).then(async (r) => (r.ok ? r.text() : null), () => null)]);
    }
  } else {
    const { statSync, existsSync, readFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const path = String(source);
    if (!existsSync(path)) throw new Error(`${path}: no such model (a directory from xling export, or its model.safetensors)`);
    if (statSync(path).isDirectory()) {
      where = join(path, 'model.safetensors');
      if (!existsSync(join(path, 'config.json'))) throw new Error(`${path}: not a model directory (no config.json)`);
      configText = readFileSync(join(path, 'config.json'), 'utf8');
      lidWhere = join(path, 'lid.json');
      if (existsSync(lidWhere)) lidText = readFileSync(lidWhere, 'utf8');
    } else where = path;
    bytes = await readShared(where, place);
  }
  if (place && isUrl(source)) {
    const to = place(bytes.byteLength, headerLength(bytes));
    if (to) { to.set(bytes); bytes = to; }
  }
  const file = parseSafetensors(bytes, where);
  let config: unknown;
  try { config = JSON.parse(configText ?? file.metadata['xling.config'] ?? 'null'); } catch (e) { throw new Error(`${where}: invalid model config: ${(e as Error).message}`); }
  if (!config) throw new Error(`${where}: no config.json beside it and no 'xling.config' in its metadata (export the model with a current xling export)`);
  let lid: LanguageIdentifier | null = null;
  if (lidText !== null) {
    let x: unknown;
    try { x = JSON.parse(lidText); } catch (e) { throw new Error(`${lidWhere}: not valid JSON (${(e as Error).message})`); }
    lid = LanguageIdentifier.fromJSON(x, lidWhere);
  }
  return { bytes, config, where, lid };
}

/** Loads an exported bag-of-n-grams dual encoder from a directory, a .safetensors file or a URL. */
export async function loadModel(source: string | URL, o: LoadOptions = {}): Promise<LoadedLiteModel> {
  const threads = o.threads ?? 1;
  if (!(Number.isInteger(threads) && threads >= 1)) throw new Error(`xling/lite: threads must be a positive integer, got ${threads}`);
  if (o.headers !== undefined && (typeof o.headers !== 'object' || o.headers === null || Object.values(o.headers).some((v) => typeof v !== 'string'))) throw new Error('xling/lite: headers must be an object of header names to string values');
  const kernel = o.kernel ?? 'auto';
  if (kernel !== 'auto' && kernel !== 'wasm' && kernel !== 'js') throw new Error(`xling/lite: kernel must be 'auto', 'wasm' or 'js', got ${String(kernel)}`);
  // the WebAssembly kernels: the file is read into their memory (shared by the worker threads in Node)
  const pool = threads > 1 && isNode;
  const shared = isNode && typeof SharedArrayBuffer !== 'undefined';
  const module = kernel === 'js' ? null : await kernelModule(shared);
  let arena: Arena | null = null, memory: WasmMemory | null = null;
  const place: Place | undefined = module ? (size, headerLen) => {
    // slot 0: this thread; 1..threads: the workers
    arena = headerLen >= 0 ? planArena(size, headerLen, pool ? threads + 1 : 1, shared) : null;
    memory = arena && arenaMemory(arena);
    return memory && new Uint8Array(memory.buffer, arena!.base, size);
  } : undefined;
  const { bytes, config, where, lid } = await readModelBytes(source, o.headers, place);
  const model = new LiteModel(config as ConstructorParameters<typeof LiteModel>[0], parseSafetensors(bytes, where), where);
  model.lid = lid;
  const a = arena as Arena | null, mem = memory as WasmMemory | null;
  if (module && a && mem) model.useWasm(await instantiateKernel(module, mem, a, 0));
  if (kernel === 'wasm' && model.kernel !== 'wasm-simd') throw new Error(`${where}: xling/lite cannot embed this model with its WebAssembly kernels here (${!module ? 'no WebAssembly SIMD in this engine' : !a ? 'the model does not fit a 32-bit WebAssembly memory' : 'its shapes or settings are not ones the kernels take'}); kernel 'auto' falls back to TypeScript`);
  if (pool && bytes.buffer instanceof SharedArrayBuffer) {
    // a computed specifier: bundlers for the browser (the explorer) leave the Node-only pool out
    const poolModule = './pool.js';
    const { WorkerPool } = (await import(poolModule)) as typeof import('./pool.js');
    const pool = new WorkerPool(threads, model.kernel === 'wasm-simd' ? { memory: mem!, arena: a! } : { bytes }, config, where);
    await pool.ready();
    return {
      dim: model.dim, languages: model.languages, dtype: model.dtype, kernel: model.kernel,
      tokenize: (s) => model.tokenize(s),
      embed: (sentences, eo = {}) => pool.embed(model, sentences, eo),
      close: () => pool.close(),
    };
  }
  return {
    dim: model.dim, languages: model.languages, dtype: model.dtype, kernel: model.kernel,
    tokenize: (s) => model.tokenize(s),
    embed: async (sentences, eo = {}) => model.embedSync(sentences, eo),
    close: async () => {},
  };
}

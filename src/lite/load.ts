// Loading an exported bag-of-n-grams dual encoder into xling/lite, the part that needs no Node API:
// the options, fetching a model's files over HTTP (config.json, model.safetensors, lid.json), reading
// its config and language identifier, and building the model over the WebAssembly kernels' memory
// (or the pure-TypeScript path). The Node entry (./index.ts) adds reading files and worker threads;
// the browser entry (./browser.ts) takes URLs only, so that its bundle holds no Node module.
import { LanguageIdentifier } from '../text/lid-core.js';
import { LiteEmbedOptions, LiteModel } from './model.js';
import { parseSafetensors, safetensorsHeaderLength } from './safetensors.js';
import { Arena, WasmMemory, arenaMemory, instantiateKernel, kernelModule, planArena } from './wasm.js';

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

/**
 * Where the model file's bytes go: given its size and its safetensors header length, a view of that
 * size to read them into, or null for a buffer of their own.
 */
export type Place = (size: number, headerLen: number) => Uint8Array | null;

/** A model's files as read: the weights' bytes, config.json's text (if beside them), lid.json's text (if any). */
export interface ModelFiles {
  bytes: Uint8Array;
  configText: string | undefined;
  where: string;
  lidText: string | null;
  lidWhere: string;
}

/** A model read: its weights' bytes, its config, and its language identifier (null without lid.json). */
export interface ModelBytes {
  bytes: Uint8Array;
  config: unknown;
  where: string;
  lid: LanguageIdentifier | null;
}

/** The header length of a safetensors file (its first 8 bytes), or -1 (too short, or no safe integer). */
export function headerLength(first: Uint8Array): number {
  const n = safetensorsHeaderLength(first);
  return Number.isSafeInteger(n) ? n : -1;
}

async function fetchBytes(url: string, headers?: Record<string, string>): Promise<Uint8Array> {
  let r: Response;
  // a refused connection (offline, a blocked origin) rejects with no URL in its message
  try {
    r = await fetch(url, headers ? { headers } : undefined);
  } catch (e) {
    throw new Error(`${url}: ${(e as Error).message}`);
  }
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
}

/** A model's files over HTTP: a .safetensors URL alone, or a directory's config.json, model.safetensors and lid.json (optional). */
export async function fetchModelFiles(source: string | URL, headers?: Record<string, string>, place?: Place): Promise<ModelFiles> {
  const base = String(source);
  let bytes: Uint8Array,
    configText: string | undefined,
    where: string,
    lidText: string | null = null,
    lidWhere = '';
  if (/\.safetensors(\?|#|$)/.test(base)) {
    bytes = await fetchBytes(base, headers);
    where = base;
  } else {
    const dir = base.endsWith('/') ? base : `${base}/`;
    where = `${dir}model.safetensors`;
    lidWhere = `${dir}lid.json`;
    [bytes, configText, lidText] = await Promise.all([
      fetchBytes(where, headers),
      fetchBytes(`${dir}config.json`, headers).then((b) => new TextDecoder().decode(b)),
      fetch(lidWhere, headers ? { headers } : undefined).then(
        async (r) => (r.ok ? r.text() : null),
        () => null,
      ),
    ]);
  }
  if (place) {
    const to = place(bytes.byteLength, headerLength(bytes));
    if (to) {
      to.set(bytes);
      bytes = to;
    }
  }
  return { bytes, configText, where, lidText, lidWhere };
}

/** The config (config.json, else the file's 'xling.config' metadata) and the language identifier of a model's files. */
export function parseModelFiles(f: ModelFiles): ModelBytes {
  const { bytes, where } = f;
  const file = parseSafetensors(bytes, where);
  let config: unknown;
  try {
    config = JSON.parse(f.configText ?? file.metadata['xling.config'] ?? 'null');
  } catch (e) {
    throw new Error(`${where}: invalid model config: ${(e as Error).message}`);
  }
  if (!config) throw new Error(`${where}: no config.json beside it and no 'xling.config' in its metadata (export the model with a current xling export)`);
  let lid: LanguageIdentifier | null = null;
  if (f.lidText !== null) {
    let x: unknown;
    try {
      x = JSON.parse(f.lidText);
    } catch (e) {
      throw new Error(`${f.lidWhere}: not valid JSON (${(e as Error).message})`);
    }
    lid = LanguageIdentifier.fromJSON(x, f.lidWhere);
  }
  return { bytes, config, where, lid };
}

/** What the worker threads view: the model file's bytes (a SharedArrayBuffer), or the kernels' shared memory holding it. */
export type PoolView = { bytes: Uint8Array } | { memory: WasmMemory; arena: Arena };

/** A started pool of worker threads (Node: ./pool.ts). */
export interface StartedPool {
  embed(model: LiteModel, sentences: readonly string[], o: LiteEmbedOptions): Promise<Float32Array>;
  close(): Promise<void>;
}

/** Where a model is loaded: whether its memory is shared (worker threads), and how worker threads start (none: one thread). */
export interface LoadEnv {
  shared: boolean;
  startPool?: (threads: number, view: PoolView, config: unknown, where: string) => Promise<StartedPool>;
}

/** Loads a model that `read` reads (into the bytes `place` gives, when it gives any) with options o. */
export async function loadWith(read: (place?: Place) => Promise<ModelBytes>, o: LoadOptions, env: LoadEnv): Promise<LoadedLiteModel> {
  const threads = o.threads ?? 1;
  if (!(Number.isInteger(threads) && threads >= 1)) throw new Error(`xling/lite: threads must be a positive integer, got ${threads}`);
  if (o.headers !== undefined && (typeof o.headers !== 'object' || o.headers === null || Object.values(o.headers).some((v) => typeof v !== 'string')))
    throw new Error('xling/lite: headers must be an object of header names to string values');
  const kernel = o.kernel ?? 'auto';
  if (kernel !== 'auto' && kernel !== 'wasm' && kernel !== 'js') throw new Error(`xling/lite: kernel must be 'auto', 'wasm' or 'js', got ${String(kernel)}`);
  // the WebAssembly kernels: the file is read into their memory (shared by the worker threads in Node)
  const pool = threads > 1 && !!env.startPool;
  const shared = env.shared;
  const module = kernel === 'js' ? null : await kernelModule(shared);
  let arena: Arena | null = null,
    memory: WasmMemory | null = null;
  const place: Place | undefined = module
    ? (size, headerLen) => {
        // slot 0: this thread; 1..threads: the workers
        arena = headerLen >= 0 ? planArena(size, headerLen, pool ? threads + 1 : 1, shared) : null;
        memory = arena && arenaMemory(arena);
        return memory && new Uint8Array(memory.buffer, arena!.base, size);
      }
    : undefined;
  const { bytes, config, where, lid } = await read(place);
  const model = new LiteModel(config as ConstructorParameters<typeof LiteModel>[0], parseSafetensors(bytes, where), where);
  model.lid = lid;
  const a = arena as Arena | null,
    mem = memory as WasmMemory | null;
  if (module && a && mem) model.useWasm(await instantiateKernel(module, mem, a, 0));
  if (kernel === 'wasm' && model.kernel !== 'wasm-simd')
    throw new Error(
      `${where}: xling/lite cannot embed this model with its WebAssembly kernels here (${!module ? 'no WebAssembly SIMD in this engine' : !a ? 'the model does not fit a 32-bit WebAssembly memory' : 'its shapes or settings are not ones the kernels take'}); kernel 'auto' falls back to TypeScript`,
    );
  if (pool && bytes.buffer instanceof SharedArrayBuffer) {
    const p = await env.startPool!(threads, model.kernel === 'wasm-simd' ? { memory: mem!, arena: a! } : { bytes }, config, where);
    return handleOf(
      model,
      (sentences, eo = {}) => p.embed(model, sentences, eo),
      () => p.close(),
    );
  }
  return handleOf(
    model,
    async (sentences, eo = {}) => model.embedSync(sentences, eo),
    async () => {},
  );
}

/** The handle of a loaded model that embeds with `embed` (on this thread or a pool's). */
function handleOf(model: LiteModel, embed: LoadedLiteModel['embed'], close: LoadedLiteModel['close']): LoadedLiteModel {
  return { dim: model.dim, languages: model.languages, dtype: model.dtype, kernel: model.kernel, tokenize: (s) => model.tokenize(s), embed, close };
}

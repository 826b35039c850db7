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
import { parseSafetensors } from './safetensors.js';

export { LiteModel } from './model.js';
export type { LiteEmbedOptions } from './model.js';

export interface LoadOptions {
  /** Node only: embed on this many worker threads (default 1: the calling thread). */
  threads?: number;
  /** A URL source: HTTP headers sent with each request for the model's files (e.g. authorization). */
  headers?: Record<string, string>;
}

/** A loaded model: embed() → Float32Array of sentences.length × dim rows, L2-normalised. */
export interface LoadedLiteModel {
  readonly dim: number;
  readonly languages: string[];
  readonly dtype: string;
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

/** Reads a whole file into a SharedArrayBuffer (worker threads then view the same bytes). */
async function readShared(path: string): Promise<Uint8Array> {
  const fs = await import('node:fs');
  const fd = fs.openSync(path, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    const out = new Uint8Array(new SharedArrayBuffer(size));
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
export async function readModelBytes(source: string | URL, headers?: Record<string, string>): Promise<{ bytes: Uint8Array; config: unknown; where: string; lid: LanguageIdentifier | null }> {
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
    bytes = await readShared(where);
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
  const { bytes, config, where, lid } = await readModelBytes(source, o.headers);
  const model = new LiteModel(config as ConstructorParameters<typeof LiteModel>[0], parseSafetensors(bytes, where), where);
  model.lid = lid;
  if (threads > 1 && isNode && bytes.buffer instanceof SharedArrayBuffer) {
    // a computed specifier: bundlers for the browser (the explorer) leave the Node-only pool out
    const poolModule = './pool.js';
    const { WorkerPool } = (await import(poolModule)) as typeof import('./pool.js');
    const pool = new WorkerPool(threads, bytes, config, where);
    return {
      dim: model.dim, languages: model.languages, dtype: model.dtype,
      tokenize: (s) => model.tokenize(s),
      embed: (sentences, eo = {}) => pool.embed(model, sentences, eo),
      close: () => pool.close(),
    };
  }
  return {
    dim: model.dim, languages: model.languages, dtype: model.dtype,
    tokenize: (s) => model.tokenize(s),
    embed: async (sentences, eo = {}) => model.embedSync(sentences, eo),
    close: async () => {},
  };
}

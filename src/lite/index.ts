// xling/lite: embed with an exported bag-of-n-grams dual encoder without native code — in any
// Node (no libtorch, no addon) and in the browser. Nothing here imports the addon or the tensor
// layer (test/lite/lite.test.ts checks the import graph and runs it where the addon cannot load).
//
//   import { loadModel } from 'xling/lite';
//   const m = await loadModel('models/fast-int8');            // a directory, a .safetensors file or a URL
//   const v = await m.embed(['Open the file', 'Datei öffnen'], { lang: 'de' });  // n × m.dim, unit rows
//
// A model is what `xling export` writes: a directory (config.json + model.safetensors), or its
// model.safetensors alone (the config is in the file's metadata). In Node, `threads: N` embeds on
// N worker threads sharing one copy of the table. Over HTTP, `headers` go with every request for
// the model's files (e.g. `{ authorization: 'Bearer KEY' }` for a server started with --api-key).
// This is the Node entry (files and worker threads; its Node modules are imported lazily); what needs
// no Node API is in ./load.ts, and ./browser.ts is the entry of the browser bundle (URLs only).
import { defaultModelPath, defaultModelUrl } from './default-model.js';
import {
  fetchModelFiles,
  headerLength,
  LoadedLiteModel,
  LoadOptions,
  loadWith,
  ModelBytes,
  ModelFiles,
  parseModelFiles,
  Place,
  PoolView,
  StartedPool,
} from './load.js';

export { LiteModel } from './model.js';
export { defaultModelPath, defaultModelUrl } from './default-model.js';
export type { LiteEmbedOptions } from './model.js';
export type { LoadedLiteModel, LoadOptions, Place } from './load.js';

const isNode = typeof process !== 'undefined' && !!process.versions?.node;

function isUrl(s: string | URL): boolean {
  return s instanceof URL || /^(https?|blob|data):/i.test(s) || (!isNode && typeof s === 'string');
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
export async function readModelBytes(source: string | URL, headers?: Record<string, string>, place?: Place): Promise<ModelBytes> {
  if (isUrl(source)) return parseModelFiles(await fetchModelFiles(source, headers, place));
  const { statSync, existsSync, readFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const path = String(source);
  if (!existsSync(path)) throw new Error(`${path}: no such model (a directory from xling export, or its model.safetensors)`);
  const f: ModelFiles = { bytes: new Uint8Array(0), configText: undefined, where: path, lidText: null, lidWhere: '' };
  if (statSync(path).isDirectory()) {
    f.where = join(path, 'model.safetensors');
    if (!existsSync(join(path, 'config.json'))) throw new Error(`${path}: not a model directory (no config.json)`);
    f.configText = readFileSync(join(path, 'config.json'), 'utf8');
    f.lidWhere = join(path, 'lid.json');
    if (existsSync(f.lidWhere)) f.lidText = readFileSync(f.lidWhere, 'utf8');
  }
  f.bytes = await readShared(f.where, place);
  return parseModelFiles(f);
}

/** Worker threads over the model's shared bytes (Node). */
async function startPool(threads: number, view: PoolView, config: unknown, where: string): Promise<StartedPool> {
  // a computed specifier: bundlers for the browser (the explorer) leave the Node-only pool out
  const poolModule = './pool.js';
  const { WorkerPool } = (await import(poolModule)) as typeof import('./pool.js');
  const pool = new WorkerPool(threads, view, config, where);
  await pool.ready();
  return pool;
}

/**
 * Loads an exported bag-of-n-grams dual encoder from a directory, a .safetensors file or a URL;
 * without a source, the package's default model (models/default, found from this module's file).
 */
export async function loadModel(source?: string | URL, o: LoadOptions = {}): Promise<LoadedLiteModel> {
  if (source === undefined) source = isNode ? defaultModelPath() : defaultModelUrl();
  return loadWith((place) => readModelBytes(source, o.headers, place), o, {
    shared: isNode && typeof SharedArrayBuffer !== 'undefined',
    startPool: isNode ? startPool : undefined,
  });
}

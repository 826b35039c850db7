// xling/lite for the browser: the entry of the browser bundle (scripts/build-browser.mjs writes
// dist/browser/xling-lite.js, an ES module with no Node module in it). Models are fetched by URL
// (relative URLs resolve against the page, as fetch does); loadModel() without a source loads the
// package's default model (models/default) from beside the bundle. WebAssembly SIMD kernels where
// the page may compile WebAssembly (a Content-Security-Policy with 'wasm-unsafe-eval', or none),
// otherwise the pure-TypeScript path: the same vectors either way (≤ 1e-6). No worker threads here
// (`threads` is Node's); the module holds no eval or new Function.
//
//   import { loadModel } from './node_modules/xling/dist/browser/xling-lite.js';
//   const m = await loadModel();                                   // the default model
//   const v = await m.embed(['Open the file', 'Datei öffnen']);     // Float32Array, n × m.dim, unit rows
import { defaultModelUrl as defaultModelFrom } from './default-model.js';
import { fetchModelFiles, LoadedLiteModel, LoadOptions, loadWith, parseModelFiles } from './load.js';

export { LiteModel } from './model.js';
export type { LiteEmbedOptions } from './model.js';
export type { LoadedLiteModel, LoadOptions } from './load.js';

// set by esbuild's `define` in the browser bundle only (scripts/build-browser.mjs): the package's
// dist/src/lite/ from the bundle (elsewhere undeclared: typeof gives 'undefined')
declare const XLING_BUNDLE_TO_LITE: string | undefined;

/**
 * The URL of the package's default model (models/default/), from this module's own URL: tsc's
 * output lies in dist/src/lite/ (where ./default-model.ts counts from), the bundle in dist/browser/.
 */
export function defaultModelUrl(): URL {
  return defaultModelFrom(new URL(typeof XLING_BUNDLE_TO_LITE === 'string' ? XLING_BUNDLE_TO_LITE : './', import.meta.url));
}

/**
 * Loads an exported bag-of-n-grams dual encoder by URL: a directory (config.json, model.safetensors,
 * lid.json if there) or a .safetensors file; without a source, the package's default model.
 */
export async function loadModel(source?: string | URL, o: LoadOptions = {}): Promise<LoadedLiteModel> {
  if (source !== undefined && !(source instanceof URL) && (typeof source !== 'string' || !source))
    throw new Error(`xling/lite: a model URL (a string or URL) expected, got ${source === '' ? 'an empty string' : typeof source}`);
  const url = source ?? defaultModelUrl();
  return loadWith(
    async (place) => {
      try {
        return parseModelFiles(await fetchModelFiles(url, o.headers, place));
      } catch (e) {
        if (source === undefined)
          throw new Error(`xling/lite: the default model (models/default beside the bundle, ${url}) could not be loaded: ${(e as Error).message}`);
        throw e;
      }
    },
    o,
    { shared: false },
  );
}

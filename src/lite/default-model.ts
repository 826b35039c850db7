// Where xling's default model is: models/default/ of the package (an exported bag-of-n-grams dual
// encoder: config.json, model.safetensors, lid.json), found from this module's own URL, never from
// the current directory. Used by loadModel() of xling/lite without a source and by the CLI
// (src/embed/default-model.ts names the same folder for the native side). No Node API here: the
// browser bundle uses defaultModelUrl() (a bundle that lands elsewhere passes its own base).

/** The package's models/default/ as a URL, relative to base (default: this module, dist/src/lite/). */
export function defaultModelUrl(base: string | URL = import.meta.url): URL {
  return new URL('../../../models/default/', base);
}

/** Node: the default model's directory as a file path (from this module's file: URL). */
export function defaultModelPath(): string {
  const u = defaultModelUrl();
  if (u.protocol !== 'file:') throw new Error(`xling/lite: the default model is at ${u.href}, not a file path (load it by its URL)`);
  // fileURLToPath without node:url (this module is in the browser bundle too)
  const p = decodeURIComponent(u.pathname);
  const dir = p.replace(/\/$/, '');
  return /^\/[A-Za-z]:\//.test(dir) ? dir.slice(1).replace(/\//g, '\\') : dir;
}

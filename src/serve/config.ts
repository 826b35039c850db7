// xling serve's optional JSON configuration file (--config FILE, e.g. configs/serve.json): the
// tuning knobs a client of the HTTP API rarely touches — the body limit, the request, headers and
// keep-alive timeouts (seconds) and the connection cap. Every key is optional; unknown keys, wrong
// types and out-of-range values are errors naming the file and the key, found before the model loads.
import { readJson } from '../nn/serialize.js';
import { checkNumber, NumberRule } from '../util/check.js';
import type { ServeOptions } from './settings.js';

/** The file's keys, their rules, and the ServeOptions field each sets (seconds become milliseconds). */
const KEYS: Record<string, { rule: NumberRule; set: (v: number) => Partial<ServeOptions> }> = {
  maxBodyBytes: { rule: { int: true, min: 1024 }, set: (v) => ({ bodyLimit: v }) },
  requestTimeout: { rule: { above: 0 }, set: (v) => ({ requestTimeoutMs: v * 1000 }) },
  headersTimeout: { rule: { above: 0 }, set: (v) => ({ headersTimeoutMs: v * 1000 }) },
  keepAliveTimeout: { rule: { above: 0 }, set: (v) => ({ keepAliveTimeoutMs: v * 1000 }) },
  maxConnections: { rule: { int: true, min: 1 }, set: (v) => ({ maxConnections: v }) },
};

/** The ServeOptions a configuration sets (user: the parsed JSON; file: named in errors). */
export function parseServeConfig(user: unknown, file: string): Partial<ServeOptions> {
  if (typeof user !== 'object' || user === null || Array.isArray(user)) throw new Error(`${file}: a serve configuration must be a JSON object`);
  let out: Partial<ServeOptions> = {};
  for (const [key, v] of Object.entries(user)) {
    const k = Object.hasOwn(KEYS, key) ? KEYS[key] : undefined;
    if (!k) throw new Error(`${file}: unknown setting '${key}' (known: ${Object.keys(KEYS).join(', ')})`);
    checkNumber(file, key, v, k.rule);
    out = { ...out, ...k.set(v as number) };
  }
  return out;
}

/** The ServeOptions a configuration file sets. */
export function loadServeConfig(file: string): Partial<ServeOptions> {
  return parseServeConfig(readJson(file), file);
}

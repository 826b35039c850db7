// Typed wrappers of the addon's kernels that work on plain arrays (no tensors): the bottom layers
// (io) call these, never the addon itself.
import { native } from './native.js';

/** UTF-8 JSON text: parts[0] row₀ parts[1] … parts[n], rows as shortest float32 decimals (NaN/inf: null). */
export function formatJoinRows(v: Float32Array, d: number, parts: string[]): Buffer {
  return native.format.joinRows!(v, d, parts) as Buffer;
}

/**
 * formatJoinRows on a libuv worker thread (the caller's event loop stays free); `v` must not be
 * changed until the promise settles. An addon built before it existed formats on this thread.
 */
export function formatJoinRowsAsync(v: Float32Array, d: number, parts: string[]): Promise<Buffer> {
  const f = native.format.joinRowsAsync;
  return f ? (f(v, d, parts) as Promise<Buffer>) : Promise.resolve(formatJoinRows(v, d, parts));
}

// Typed wrappers of the addon's kernels that work on plain arrays (no tensors): the bottom layers
// (io) call these, never the addon itself.
import { native, nativeLoaded } from './native.js';
import { joinRowsText } from './util/float-text.js';

/**
 * UTF-8 JSON text: parts[0] row₀ parts[1] … parts[n], rows as shortest float32 decimals (NaN/inf:
 * null): by the addon where it is loaded, else the same bytes in TypeScript (src/util/float-text.ts;
 * loading the addon, and libtorch with it, only to format numbers would cost a second and hundreds
 * of megabytes).
 */
export function formatJoinRows(v: Float32Array, d: number, parts: string[]): Buffer {
  return nativeLoaded() ? (native.format.joinRows!(v, d, parts) as Buffer) : joinRowsText(v, d, parts);
}

/**
 * formatJoinRows on a libuv worker thread where the addon is loaded (the caller's event loop stays
 * free; `v` must not be changed until the promise settles), else on this thread. An addon built
 * before it existed formats on this thread.
 */
export function formatJoinRowsAsync(v: Float32Array, d: number, parts: string[]): Promise<Buffer> {
  const f = nativeLoaded() ? native.format.joinRowsAsync : undefined;
  return f ? (f(v, d, parts) as Promise<Buffer>) : new Promise((resolve) => resolve(formatJoinRows(v, d, parts)));
}

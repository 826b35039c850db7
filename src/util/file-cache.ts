// A value read from a file, kept per file while the file's modification time stays: the corpus
// readers that pair every file of a folder with the folder's English file read that file once.
import { statSync } from 'node:fs';

/** Where the values are kept: file path → the modification time it was read at and its value. */
export type FileCache<T> = Map<string, { mtimeMs: number; value: T }>;

/**
 * The kept value of `file`, or `read(file)` when there is none or the file changed since. A
 * missing file is an error `FILE: no such file; WHY`; a read that throws, or whose promise
 * rejects, is not kept.
 */
export function readCached<T>(cache: FileCache<T>, file: string, why: string, read: (file: string) => T): T {
  let mtimeMs: number;
  try {
    mtimeMs = statSync(file).mtimeMs;
  } catch {
    throw new Error(`${file}: no such file; ${why}`);
  }
  const kept = cache.get(file);
  if (kept && kept.mtimeMs === mtimeMs) return kept.value;
  const value = read(file);
  cache.set(file, { mtimeMs, value });
  if (value instanceof Promise) value.catch(() => cache.delete(file));
  return value;
}

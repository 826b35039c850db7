// Atomic file output: write to a temporary sibling, rename over the target on success.
// A crash mid-write leaves at most a stray `*.tmp-<pid>-<rand>` file, never a truncated target.

import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';

/** A fresh temporary path in the same directory as `target` (same filesystem, so rename is atomic). */
export function tempPathFor(target: string): string {
  const dir = path.dirname(target);
  const base = path.basename(target);
  return path.join(dir, `${base}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
}

function unlinkQuiet(p: string): void {
  try { fs.unlinkSync(p); } catch { /* already gone */ }
}

/** Writes `data` to `target` atomically (temp file + fsync + rename). Synchronous. */
export function writeFileAtomicSync(target: string, data: string | Uint8Array): void {
  const tmp = tempPathFor(target);
  let fd: number | undefined;
  try {
    fd = fs.openSync(tmp, 'w');
    fs.writeFileSync(fd, data);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(tmp, target);
  } catch (e) {
    if (fd !== undefined) { try { fs.closeSync(fd); } catch { /* ignore */ } }
    unlinkQuiet(tmp);
    throw e;
  }
}

/** Writes `data` to `target` atomically (temp file + fsync + rename). */
export async function writeFileAtomic(target: string, data: string | Uint8Array): Promise<void> {
  await atomicOutput(target, async (tmp) => {
    const fh = await fsp.open(tmp, 'w');
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
  });
}

/**
 * Runs `fn(tmpPath)`, which must create the file at `tmpPath`; on success renames it to
 * `target` and returns fn's result, on failure removes the temp file and rethrows.
 */
export async function atomicOutput<T>(target: string, fn: (tmpPath: string) => Promise<T> | T): Promise<T> {
  const tmp = tempPathFor(target);
  try {
    const result = await fn(tmp);
    await fsp.rename(tmp, target);
    return result;
  } catch (e) {
    await fsp.unlink(tmp).catch(() => undefined);
    throw e;
  }
}

/** Synchronous variant of {@link atomicOutput}. */
export function atomicOutputSync<T>(target: string, fn: (tmpPath: string) => T): T {
  const tmp = tempPathFor(target);
  try {
    const result = fn(tmp);
    fs.renameSync(tmp, target);
    return result;
  } catch (e) {
    unlinkQuiet(tmp);
    throw e;
  }
}

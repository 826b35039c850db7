// Atomic file output: write to a temporary sibling, rename over the target on success.
// A crash mid-write leaves at most a stray `*.tmp-<pid>-<rand>` file, never a truncated target;
// temporaries are registered so that the CLI removes them on SIGINT/SIGTERM
// (removeTemporariesOnSignals).

import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { withFile } from './fd.js';

/** Temporary files and directories of this process that an interrupted run must not leave behind. */
const temporaries = new Set<string>();

/**
 * A fresh temporary path (file or directory) in the same directory as `target` (same filesystem,
 * so rename is atomic). It is registered for removal on SIGINT/SIGTERM until releaseTemp(path).
 */
export function tempPathFor(target: string): string {
  const dir = path.dirname(target);
  const base = path.basename(target);
  const tmp = path.join(dir, `${base}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  temporaries.add(tmp);
  return tmp;
}

/** The temporary was renamed into place or removed: no longer ours to clean up. */
export function releaseTemp(tmp: string): void {
  temporaries.delete(tmp);
}

/** Removes every registered temporary (synchronously; for signal handlers and exit hooks). */
export function removeTemporaries(): void {
  for (const p of temporaries) {
    try {
      fs.rmSync(p, { recursive: true, force: true });
    } catch {
      /* nothing more to do while exiting */
    }
  }
  temporaries.clear();
}

/**
 * For the CLI: on SIGINT/SIGTERM remove the registered temporaries and exit with 130/143 (the
 * shell's 128 + signal). Node runs the handler between JavaScript tasks, so a temporary written
 * by one synchronous call is never removed half-way; long synchronous steps delay the exit.
 */
export function removeTemporariesOnSignals(onSignal?: (signal: NodeJS.Signals) => void): void {
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.on(signal, () => {
      onSignal?.(signal);
      removeTemporaries();
      process.exit(code);
    });
  }
}

/** A name {@link tempPathFor} makes: `<target>.tmp-<pid>-<8 hex>`. */
const TEMP_NAME = /\.tmp-\d+-[0-9a-f]{8}$/;

/**
 * Removes the temporaries that a killed process (kill -9, power loss: no signal handler ran) left
 * in `dir` and its subfolders, so that a resumed run does not carry them into its output. Only for
 * a directory this process owns (a training work directory), never a user's folder.
 */
export function removeStaleTemporaries(dir: string): string[] {
  const removed: string[] = [];
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (TEMP_NAME.test(e.name) && !temporaries.has(p)) {
        fs.rmSync(p, { recursive: true, force: true });
        removed.push(p);
      } else if (e.isDirectory()) walk(p);
    }
  };
  if (fs.existsSync(dir)) walk(dir);
  return removed;
}

function unlinkQuiet(p: string): void {
  try {
    fs.unlinkSync(p);
  } catch {
    /* already gone */
  }
  releaseTemp(p);
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
    releaseTemp(tmp);
  } catch (e) {
    if (fd !== undefined) {
      try {
        fs.closeSync(fd);
      } catch {
        /* ignore */
      }
    }
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
    releaseTemp(tmp);
    return result;
  } catch (e) {
    await fsp.unlink(tmp).catch(() => undefined);
    releaseTemp(tmp);
    throw e;
  }
}

/** Writes a text output atomically, or to standard output for '-'. */
export function writeTextOutput(path: string, text: string): void {
  if (path === '-') process.stdout.write(text);
  else writeFileAtomicSync(path, text);
}

/** Synchronous variant of {@link atomicOutput}. */
export function atomicOutputSync<T>(target: string, fn: (tmpPath: string) => T): T {
  const tmp = tempPathFor(target);
  try {
    const result = fn(tmp);
    fs.renameSync(tmp, target);
    releaseTemp(tmp);
    return result;
  } catch (e) {
    unlinkQuiet(tmp);
    throw e;
  }
}

/**
 * Writes `target` atomically through a file descriptor: `write(fd)` fills the temp file, which is
 * then fsynced, closed and renamed into place.
 */
export function atomicWriteSync(target: string, write: (fd: number) => void): void {
  atomicOutputSync(target, (tmp) =>
    withFile(tmp, 'w', (fd) => {
      write(fd);
      fs.fsyncSync(fd);
    }),
  );
}

/** Replaces dir by tmp (a complete directory); the old dir is removed only after the rename. */
export function replaceDir(tmp: string, dir: string): void {
  const old = `${dir}.old-${process.pid}`;
  if (fs.existsSync(dir)) fs.renameSync(dir, old);
  fs.renameSync(tmp, dir);
  fs.rmSync(old, { recursive: true, force: true });
}

/**
 * The one directory swap: builds a directory in a temporary beside outDir (write fills it) and
 * swaps it in whole (replaceDir); the temporary is removed on failure. Returns write's result.
 */
export function writeDirAtomically<T>(outDir: string, write: (tmp: string) => T): T {
  const tmp = tempPathFor(outDir);
  try {
    fs.mkdirSync(tmp, { recursive: true });
    const r = write(tmp);
    replaceDir(tmp, outDir);
    return r;
  } catch (e) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw e;
  } finally {
    releaseTemp(tmp);
  }
}

// One writer per output: a command that builds OUT in a work directory (OUT.partial) and swaps it
// in at the end holds OUT.lock while it runs, so that a second process given the same OUT (a
// script started twice, a queue job retried while the first still runs) is refused before it
// touches the first one's checkpoint, instead of both writing one work directory.
//
// The lock is a small JSON file ({ pid, host, started, command }) made by link(2) from a complete
// temporary file, so that no reader ever sees it half-written. A lock whose process is gone (kill
// -9, a crash: no exit hook ran) is stale and taken over; one of another host cannot be checked
// and is kept, with a message that says how to remove it.

import { hostname } from 'node:os';
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { releaseTemp, tempPathFor } from './atomic.js';

export interface WorkLock {
  /** The lock file (OUT.lock). */
  readonly path: string;
  /** Removes the lock (idempotent; also done when the process exits). */
  release(): void;
}

interface LockInfo {
  pid: number;
  host: string;
  started: string;
  command: string;
}

/** The lock file of an output: beside it, so that the output and its work directory can be replaced under it. */
export const lockPathOf = (out: string) => `${out.replace(/(.)[/]+$/, '$1')}.lock`;

/** The lock files this process holds. */
const ours = new Set<string>();

function readLock(path: string): LockInfo | null {
  try {
    const j = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockInfo>;
    return typeof j.pid === 'number' && Number.isInteger(j.pid) && j.pid > 0 && typeof j.host === 'string'
      ? { pid: j.pid, host: j.host, started: String(j.started ?? '?'), command: String(j.command ?? '?') }
      : null;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw e;
    return null;
  }
}

/** Whether process `pid` of this host runs (EPERM: it runs as another user). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the lock of output `out` (`flag` names it in messages, e.g. '--out'), or throws when
 * another running process holds it — this process too, if it took it already. A lock file that
 * cannot be read as one (not written by xling) is refused as held, never removed.
 */
export function lockOutput(out: string, flag: string): WorkLock {
  const path = lockPathOf(out);
  const me: LockInfo = { pid: process.pid, host: hostname(), started: new Date().toISOString(), command: ['xling', ...process.argv.slice(2)].join(' ') };
  mkdirSync(dirname(path), { recursive: true });
  const tmp = tempPathFor(path);
  writeFileSync(tmp, `${JSON.stringify(me)}\n`);
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(tmp, path);
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        if (attempt === 3) throw new Error(`${flag} ${out}: could not take ${path} (other processes keep taking it); try again`);
      }
      let held: LockInfo | null;
      try {
        held = readLock(path);
      } catch {
        continue;
      } // removed meanwhile: try again
      if (!held) throw new Error(`${flag} ${out}: ${path} exists and is not a lock of xling; if no xling process is writing ${out}, remove it`);
      const since = `since ${held.started}: ${held.command}`;
      if (held.host !== me.host)
        throw new Error(
          `${flag} ${out} is locked by process ${held.pid} of host ${held.host} (${since}); wait for it to finish, or remove ${path} if it no longer runs`,
        );
      if (held.pid === process.pid && ours.has(path)) throw new Error(`${flag} ${out} is already being written by this process (${since})`);
      if (held.pid !== process.pid && alive(held.pid))
        throw new Error(
          `${flag} ${out} is being written by another process (pid ${held.pid}, ${since}); wait for it to finish or stop it (if pid ${held.pid} is not an xling process, remove ${path})`,
        );
      // the process that held it is gone (or had this pid before a reboot): a stale lock, removed
      // unless another process took it over meanwhile
      try {
        const now = readLock(path);
        if (now && now.pid === held.pid && now.started === held.started) rmSync(path, { force: true });
      } catch {
        /* removed meanwhile */
      }
    }
  } finally {
    rmSync(tmp, { force: true });
    releaseTemp(tmp);
  }
  ours.add(path);
  let held = true;
  const release = () => {
    if (!held) return;
    held = false;
    ours.delete(path);
    process.removeListener('exit', release);
    try {
      if (readLock(path)?.pid === process.pid) rmSync(path, { force: true });
    } catch {
      /* already gone */
    }
  };
  process.on('exit', release);
  return { path, release };
}

/** Runs `f` holding the lock of output `out`; the lock is released however `f` ends. */
export async function withOutputLock<T>(out: string, flag: string, f: () => Promise<T>): Promise<T> {
  const lock = lockOutput(out, flag);
  try {
    return await f();
  } finally {
    lock.release();
  }
}

// The files of a command line, checked before any work: inputs exist (a file where a file is
// expected), outputs never overwrite an input (the same file by device and inode, so hard links
// and symlinks count; or a file inside an input directory), two outputs never name one file, and
// `-` means standard output for text outputs only.
import { realpathSync, statSync, Stats } from 'node:fs';
import { basename, dirname, join, relative, resolve, isAbsolute } from 'node:path';
import { faissMessage } from '../index/faiss.js';
import { writeFileAtomicSync } from '../util/atomic.js';
import { usage } from './command.js';

/**
 * in: an input file; in-dir: an input directory (a model, a folder of vectors; the loader says
 * what is missing in it); out: a binary output file; out-text: a text output file or '-'
 * (standard output); out-dir: an output directory that is replaced whole.
 */
export type PathRole = 'in' | 'in-dir' | 'out' | 'out-text' | 'out-dir';
export type PathArg = readonly [flag: string, path: string | undefined, role: PathRole];

function statOrNull(p: string): Stats | null {
  try { return statSync(p); } catch { return null; }
}

/** p's real path when it exists, else its real parent directory joined with its name. */
function realOrResolved(p: string): string {
  try { return realpathSync(p); } catch { /* not there (yet) */ }
  try { return join(realpathSync(dirname(p)), basename(p)); } catch { return resolve(p); }
}

function inside(child: string, dir: string): boolean {
  const r = relative(dir, child);
  return r === '' || (!r.startsWith('..') && !isAbsolute(r));
}

/** Checks a command's files (see PathRole); missing inputs are errors, misplaced outputs usage errors. */
export function checkPaths(args: readonly PathArg[]): void {
  const given = args.filter((a): a is readonly [string, string, PathRole] => a[1] !== undefined);
  const inputs: { flag: string; path: string; st: Stats; real: string }[] = [];
  for (const [flag, path, role] of given) {
    if (role !== 'in' && role !== 'in-dir') continue;
    const st = statOrNull(path);
    if (!st) {
      if (role === 'in') throw new Error(`cannot read ${flag} ${path}: no such file`);
      continue; // the loader names what is missing (e.g. "not a model directory")
    }
    if (role === 'in' && st.isDirectory()) throw new Error(`cannot read ${flag} ${path}: it is a directory, expected a file`);
    if (role === 'in-dir' && !st.isDirectory()) throw new Error(`${flag} ${path}: not a directory`);
    inputs.push({ flag, path, st, real: realOrResolved(path) });
  }
  const outputs: { flag: string; path: string; real: string }[] = [];
  for (const [flag, path, role] of given) {
    if (role === 'in' || role === 'in-dir') continue;
    if (path === '-') {
      if (role === 'out-text') continue;
      usage(`${flag} -: only text outputs can go to standard output; give a file name`);
    }
    const st = statOrNull(path);
    const real = realOrResolved(path);
    if (role !== 'out-dir') {
      if (st?.isDirectory()) usage(`${flag} ${path}: is a directory, expected a file name`);
      if (!statOrNull(dirname(path))?.isDirectory()) usage(`${flag} ${path}: the directory ${dirname(path)} does not exist`);
    }
    for (const i of inputs) {
      const same = st && st.dev === i.st.dev && st.ino === i.st.ino;
      const overwrites = same || (st && i.st.isDirectory() && inside(real, i.real));
      if (overwrites) usage(`${flag} ${path} would overwrite the input ${i.flag} ${i.path}${same ? '' : ` (it is inside it)`}; choose another output`);
      if (role === 'out-dir' && inside(i.real, real)) usage(`${flag} ${path} would replace the directory holding the input ${i.flag} ${i.path}; choose another output`);
    }
    const twin = outputs.find((o) => o.real === real);
    if (twin) usage(`${twin.flag} and ${flag} name the same file ${path}`);
    outputs.push({ flag, path, real });
  }
}

/** Writes a text output atomically, or to standard output for '-'. */
export function writeTextOutput(path: string, text: string): void {
  if (path === '-') process.stdout.write(text);
  else writeFileAtomicSync(path, text);
}

/**
 * Runs fn; an error it throws (or rejects with) gets `what` (the file or option the user gave)
 * in front, and loses faiss's C++ function and source location.
 */
export function inContext<T>(what: string, fn: () => T): T {
  const fail = (e: unknown): never => { throw new Error(`${what}: ${faissMessage(e)}`); };
  let r: T;
  try { r = fn(); } catch (e) { return fail(e); }
  return (r instanceof Promise ? r.catch(fail) : r) as T;
}

// The files of a command line, checked before any work: inputs exist (a file where a file is
// expected; `-` is standard input for text inputs), outputs never overwrite an input (the same
// file by device and inode, so hard links and symlinks count; or a file inside an input
// directory), two outputs never name one file, and `-` means standard output for text outputs
// only (one of them). One rule for the directories of outputs: missing parent directories are
// created (as mkdir -p) once the whole command line is checked, and removed again when the
// command fails and they are still empty (removeCreatedDirectories).
import { accessSync, closeSync, constants, mkdirSync, openSync, realpathSync, rmdirSync, statSync, Stats, writeSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, isAbsolute } from 'node:path';
import { isStdin } from '../io/input.js';
import { atomicOutput, writeTextOutput } from '../util/atomic.js';

export { writeTextOutput };
import { usage } from './command.js';

/**
 * in: an input file (binary: vectors, an index); in-text: a text input file, or '-' (standard
 * input; pipes and /dev/fd/N work as files); in-dir: an input directory (a model, a folder of vectors; the loader says
 * what is missing in it); out: a binary output file; out-text: a text output file or '-'
 * (standard output); out-dir: an output directory that is replaced whole.
 */
export type PathRole = 'in' | 'in-text' | 'in-dir' | 'out' | 'out-text' | 'out-dir';
export type PathArg = readonly [flag: string, path: string | undefined, role: PathRole];

function statOrNull(p: string): Stats | null {
  try {
    return statSync(p);
  } catch {
    return null;
  }
}

/** p's real path when it exists, else its real parent directory joined with its name. */
function realOrResolved(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    /* not there (yet) */
  }
  try {
    return join(realpathSync(dirname(p)), basename(p));
  } catch {
    return resolve(p);
  }
}

function inside(child: string, dir: string): boolean {
  const r = relative(dir, child);
  return r === '' || (!r.startsWith('..') && !isAbsolute(r));
}

/** The nearest existing ancestor of a (missing) path, and the directories below it that are missing, top first. */
function missingParents(path: string): { existing: string; missing: string[] } {
  const missing: string[] = [];
  let p = dirname(resolve(path));
  while (!statOrNull(p)) {
    missing.unshift(p);
    const up = dirname(p);
    if (up === p) break;
    p = up;
  }
  return { existing: p, missing };
}

/** Directories checkPaths created for outputs (deepest last), removed again if the command fails. */
const created: string[] = [];

/** Removes the directories checkPaths created that are still empty (the command failed before writing). */
export function removeCreatedDirectories(): void {
  for (const d of created.reverse()) {
    try {
      rmdirSync(d);
    } catch {
      /* not empty (something was written) or gone */
    }
  }
  created.length = 0;
}

/** Checks a command's files (see PathRole); missing inputs are errors, misplaced outputs usage errors. */
export function checkPaths(args: readonly PathArg[]): void {
  const given = args.filter((a): a is readonly [string, string, PathRole] => a[1] !== undefined);
  const inputs: { flag: string; path: string; st: Stats; real: string }[] = [];
  let stdinFlag: string | undefined;
  const isInput = (role: PathRole) => role === 'in' || role === 'in-text' || role === 'in-dir';
  for (const [flag, path, role] of given) {
    if (!isInput(role)) continue;
    if (path === '-' && role !== 'in-text') usage(`${flag} -: only text inputs can be read from standard input; give a file name`);
    if (role === 'in-text' && isStdin(path)) {
      if (stdinFlag) usage(`${stdinFlag} and ${flag} both read standard input; give at most one of them as -`);
      stdinFlag = flag;
      continue;
    }
    const st = statOrNull(path);
    if (!st) {
      if (role !== 'in-dir') throw new Error(`cannot read ${flag} ${path}: no such file`);
      continue; // the loader names what is missing (e.g. "not a model directory")
    }
    if (role !== 'in-dir' && st.isDirectory()) throw new Error(`cannot read ${flag} ${path}: it is a directory, expected a file`);
    if (role === 'in-dir' && !st.isDirectory()) throw new Error(`${flag} ${path}: not a directory`);
    inputs.push({ flag, path, st, real: realOrResolved(path) });
  }
  const outputs: { flag: string; path: string; real: string }[] = [];
  const toCreate: string[][] = [];
  let stdoutFlag: string | undefined;
  for (const [flag, path, role] of given) {
    if (isInput(role)) continue;
    if (path === '-') {
      if (role !== 'out-text') usage(`${flag} -: only text outputs can go to standard output; give a file name`);
      if (stdoutFlag) usage(`${stdoutFlag} - and ${flag} - both write to standard output; give one of them a file name`);
      stdoutFlag = flag;
      continue;
    }
    const st = statOrNull(path);
    const real = realOrResolved(path);
    if (role !== 'out-dir' && st?.isDirectory()) usage(`${flag} ${path}: is a directory, expected a file name`);
    const { existing, missing } = missingParents(path);
    const ex = statOrNull(existing);
    if (!ex?.isDirectory()) usage(`${flag} ${path}: ${existing} is not a directory`);
    try {
      accessSync(existing, constants.W_OK);
    } catch {
      if (missing.length) usage(`${flag} ${path}: cannot create a directory in ${existing} (permission denied)`);
    }
    if (missing.length) toCreate.push(missing);
    for (const i of inputs) {
      const same = st && st.dev === i.st.dev && st.ino === i.st.ino;
      const overwrites = same || (st && i.st.isDirectory() && inside(real, i.real));
      if (overwrites) usage(`${flag} ${path} would overwrite the input ${i.flag} ${i.path}${same ? '' : ` (it is inside it)`}; choose another output`);
      if (role === 'out-dir' && inside(i.real, real))
        usage(`${flag} ${path} would replace the directory holding the input ${i.flag} ${i.path}; choose another output`);
    }
    const twin = outputs.find((o) => o.real === real);
    if (twin) usage(`${twin.flag} and ${flag} name the same file ${path}`);
    outputs.push({ flag, path, real });
  }
  for (const dirs of toCreate) {
    for (const d of dirs) {
      if (statOrNull(d)) continue;
      try {
        mkdirSync(d);
      } catch (e) {
        throw new Error(`cannot create the directory ${d}: ${(e as Error).message}`);
      }
      created.push(d);
    }
  }
}

/**
 * Where a command's human summary goes: standard error when one of its outputs is standard output
 * (`--json -`, `--svg -`, `-o -`), so that standard output carries only that output; else
 * standard output.
 */
export function summaryWriter(...outputs: (string | undefined)[]): (text: string) => void {
  const stream = outputs.includes('-') ? process.stderr : process.stdout;
  return (text) => {
    stream.write(text);
  };
}

const CAMEL = /^[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+$/;

/** A JSON value with camelCase keys written snake_case (the one style of every JSON output) and NaN as null. */
export function jsonText(value: unknown): string {
  const fix = (v: unknown): unknown => {
    if (typeof v === 'number') return Number.isNaN(v) ? null : v;
    if (Array.isArray(v)) return v.map(fix);
    if (ArrayBuffer.isView(v) && !(v instanceof DataView)) return Array.from(v as unknown as ArrayLike<number>, fix);
    if (v && typeof v === 'object') {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [CAMEL.test(k) ? k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) : k, fix(x)]));
    }
    return v;
  };
  return JSON.stringify(fix(value), null, 1) + '\n';
}

/** Writes a JSON output (see jsonText) atomically, or to standard output for '-'. */
export function writeJsonOutput(path: string, value: unknown): void {
  writeTextOutput(path, jsonText(value));
}

/**
 * writeTextOutput for text made piece by piece (a corpus's lines, possibly as an input is read
 * again): written in chunks of about a megabyte, to a temporary file renamed into place only when
 * the pieces end without an error (or to standard output for -, waiting when its pipe is full).
 */
export async function writeTextLines(path: string, pieces: AsyncIterable<string> | Iterable<string>): Promise<void> {
  const chunks = async function* () {
    let buf = '';
    for await (const p of pieces) {
      buf += p;
      if (buf.length >= 1 << 20) {
        yield buf;
        buf = '';
      }
    }
    if (buf) yield buf;
  };
  if (path === '-') {
    for await (const c of chunks()) if (!process.stdout.write(c)) await new Promise((r) => process.stdout.once('drain', r));
    return;
  }
  await atomicOutput(path, async (tmp) => {
    const fd = openSync(tmp, 'w');
    try {
      for await (const c of chunks()) writeSync(fd, c);
    } finally {
      closeSync(fd);
    }
  });
}

/** Runs fn with the user's file or option in front of its errors (faiss's C++ locations dropped). */
export { inContext } from '../index/context.js';

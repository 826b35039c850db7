// A file descriptor held for one synchronous task, and typed arrays read and written whole at a
// position: in windows of at most 1 GiB, since one Uint8Array view over an array of more than 2³²
// bytes (10M × 128 float32 rows) is a RangeError in V8.
import * as fs from 'node:fs';

/** Runs `fn` with `file` open (`flags` as fs.openSync takes them) and closes it after, also when fn throws. */
export function withFile<T>(file: string, flags: string, fn: (fd: number) => T): T {
  const fd = fs.openSync(file, flags);
  try {
    return fn(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Opens `file` for what `fn` makes of it (a reader that keeps the descriptor); closes it only when fn throws. */
export function openFor<T>(file: string, flags: string, fn: (fd: number) => T): T {
  const fd = fs.openSync(file, flags);
  try {
    return fn(fd);
  } catch (e) {
    fs.closeSync(fd);
    throw e;
  }
}

const WINDOW = 1 << 30;

/** Fills `dst` from `fd` at byte `position`; the end of the file before it is full is an error naming `file`. */
export function readFully(fd: number, dst: ArrayBufferView, position: number, file: string): void {
  let done = 0;
  while (done < dst.byteLength) {
    const len = Math.min(WINDOW, dst.byteLength - done);
    const n = fs.readSync(fd, new Uint8Array(dst.buffer, dst.byteOffset + done, len), 0, len, position + done);
    if (n === 0) throw new Error(`${file}: truncated data (unexpected end of file at byte ${position + done})`);
    done += n;
  }
}

/** Writes all of `src` to `fd` at byte `position`. */
export function writeFully(fd: number, src: ArrayBufferView, position: number): void {
  let done = 0;
  while (done < src.byteLength) {
    const len = Math.min(WINDOW, src.byteLength - done);
    done += fs.writeSync(fd, new Uint8Array(src.buffer, src.byteOffset + done, len), 0, len, position + done);
  }
}

/** Writes `parts` one after another from the start of the file. */
export function writeParts(fd: number, parts: readonly ArrayBufferView[]): void {
  let pos = 0;
  for (const p of parts) {
    writeFully(fd, p, pos);
    pos += p.byteLength;
  }
}

// What a resumable step's key says of the files it reads: each file's path, size and modification
// time, so that the key changes when a file does (and a directory's files, in name order).
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** 'path:size:mtime' of a file, or of every file under a directory (sorted by name, recursively). */
export function fileStamps(path: string): string[] {
  const st = statSync(path);
  return st.isDirectory()
    ? readdirSync(path)
        .sort()
        .flatMap((f) => fileStamps(join(path, f)))
    : [`${resolve(path)}:${st.size}:${st.mtimeMs}`];
}

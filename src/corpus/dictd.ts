// dictd databases, the files a DICT protocol server (RFC 2229; dictd, dictfmt) serves: NAME.index
// and NAME.dict, or NAME.dict.dz compressed with dictzip. The index has one line per headword,
// `headword TAB offset TAB length` (a fourth field, the original headword, may follow), offset
// and length written in dictd's base 64 (digits A–Z a–z 0–9 + /, most significant first) and
// counting bytes of the uncompressed .dict. dictzip is gzip with an extra header field for random
// access: a plain gunzip stream reads it whole. Entries are read in the order of their offsets,
// streaming the data once; memory is bounded by the index and one entry.
import { createReadStream, existsSync } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { isGzipFile, readLines } from '../io/lines.js';

export interface DictdEntry {
  headword: string;
  /** byte offset and length of the entry's text in the uncompressed data */
  offset: number;
  length: number;
  /** the index line (1-based) */
  line: number;
}

/** Entries longer than this are reported and not read (a dictionary entry is a few KB at most). */
export const MAX_ENTRY_BYTES = 1 << 20;

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** A number in dictd's base 64 (`B` → 1, `BA` → 64), or undefined when it is not one. */
export function decodeDictdNumber(s: string): number | undefined {
  if (s === '' || s.length > 8) return undefined;
  let v = 0;
  for (const c of s) {
    const d = B64.indexOf(c);
    if (d < 0) return undefined;
    v = v * 64 + d;
  }
  return v;
}

/** The data file beside an index (NAME.dict.dz, else NAME.dict), or undefined when there is none. */
export function dictdDataFile(index: string): string | undefined {
  const stem = index.replace(/\.index$/, '');
  return [`${stem}.dict.dz`, `${stem}.dict`].find((f) => existsSync(f));
}

/**
 * The entries of an index, sorted by offset, each (offset, length) once (several headwords may
 * point at one entry: the first is kept). A line that is not `headword TAB offset TAB length` and
 * an entry longer than MAX_ENTRY_BYTES are reported with their line and skipped.
 */
export async function readDictdIndex(index: string, onProblem: (line: number, message: string) => void): Promise<DictdEntry[]> {
  const entries: DictdEntry[] = [];
  for await (const { line, no } of readLines(index, { maxChars: 100_000 })) {
    if (line === '') continue;
    const f = line.split('\t');
    const offset = f.length === 3 || f.length === 4 ? decodeDictdNumber(f[1]!) : undefined;
    const length = offset === undefined ? undefined : decodeDictdNumber(f[2]!);
    if (offset === undefined || length === undefined) {
      onProblem(no, 'not a dictd index line (headword TAB offset TAB length, in base 64); skipped');
      continue;
    }
    if (length > MAX_ENTRY_BYTES) {
      onProblem(no, `an entry of ${length} bytes (more than ${MAX_ENTRY_BYTES}); skipped`);
      continue;
    }
    entries.push({ headword: f[0]!, offset, length, line: no });
  }
  entries.sort((a, b) => a.offset - b.offset || a.length - b.length || a.line - b.line);
  return entries.filter((e, i) => i === 0 || e.offset !== entries[i - 1]!.offset || e.length !== entries[i - 1]!.length);
}

/**
 * The bytes of each entry (sorted by offset, as readDictdIndex gives them), read from the data file
 * in one pass. A stream that is not gzip where gzip is expected, or that is corrupt, is an error
 * naming the file and the compressed byte where it failed; an entry past the end of the data is an
 * error naming the index line. Stopping early (a `break`) closes the file.
 */
export async function* dictdEntries(data: string, entries: DictdEntry[], index: string): AsyncGenerator<{ entry: DictdEntry; bytes: Buffer }> {
  const file = createReadStream(data);
  const gz = isGzipFile(data) ? createGunzip() : undefined;
  const stream = gz ? file.pipe(gz) : file;
  if (gz) file.on('error', (e) => gz.destroy(e));
  let buf: Buffer = Buffer.alloc(0);
  let base = 0; // offset in the data of buf[0]
  let next = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      for (; next < entries.length && entries[next]!.offset + entries[next]!.length <= base + buf.length; next++) {
        const e = entries[next]!;
        if (e.offset < base) throw new Error(`${index}:${e.line}: internal: entry before the read position`);
        yield { entry: e, bytes: Buffer.from(buf.subarray(e.offset - base, e.offset - base + e.length)) };
      }
      if (next === entries.length) return;
      const keep = Math.min(entries[next]!.offset, base + buf.length);
      buf = buf.subarray(keep - base);
      base = keep;
    }
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'ENOENT') throw new Error(`${data}: no such file`);
    if (gz && /^Z_|ERR_/.test(err.code ?? '')) throw new Error(`${data}: corrupt compressed data near byte ${gz.bytesWritten} (${err.message})`);
    throw e;
  } finally {
    stream.destroy();
    file.destroy();
  }
  if (next < entries.length) {
    const e = entries[next]!;
    throw new Error(`${index}:${e.line}: the entry at bytes ${e.offset}–${e.offset + e.length} lies past the end of ${data} (${base + buf.length} bytes)`);
  }
}

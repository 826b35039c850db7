// Streaming line reader over files of any size (optionally gzip), strict UTF-8: invalid bytes
// are an error naming the file and line. Yields lines without the trailing newline (and \r), each
// with its number and the byte offset where it starts (in the decompressed stream for .gz), so a
// later reader of a plain file can start at a line without reading what comes before it.
// gzip is recognised by its magic bytes, not the name. `-` is standard input; it and other inputs
// that can be read only once (pipes, process substitution /dev/fd/N) are copied to a temporary
// file on first read, so that commands that read an input twice (a language sample, then the
// lines) read the same bytes.
import { closeSync, createReadStream, createWriteStream, mkdtempSync, openSync, readFileSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';

/** Whether path names standard input. */
export function isStdin(path: string): boolean {
  return path === '-' || path === '/dev/stdin';
}

/** How a path is named in messages ('-' is standard input). */
export function shownPath(path: string): string {
  return path === '-' ? 'standard input' : path;
}

/** Whether a path can be read only once: standard input, a pipe (process substitution), a socket, a character device. */
export function readOnce(path: string): boolean {
  if (isStdin(path)) return true;
  try {
    const st = statSync(path);
    return st.isFIFO() || st.isSocket() || st.isCharacterDevice();
  } catch {
    return false;
  }
}

const spools = new Map<string, Promise<string>>();
let spoolDir: string | null = null;

/** The file to read for path: path itself, or (read-once inputs) a temporary copy made on first use. */
export function readablePath(path: string): Promise<string> {
  if (!readOnce(path)) return Promise.resolve(path);
  const key = isStdin(path) ? '-' : path;
  let p = spools.get(key);
  if (!p) {
    if (!spoolDir) {
      const dir = (spoolDir = mkdtempSync(join(tmpdir(), 'xling-input-')));
      process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    }
    const file = join(spoolDir, `input-${spools.size}`);
    const src = key === '-' ? process.stdin : createReadStream(path);
    p = pipeline(src, createWriteStream(file)).then(
      () => file,
      (e: NodeJS.ErrnoException) => {
        if (e.code === 'ENOENT') throw new Error(`${path}: no such file`);
        throw new Error(`${shownPath(path)}: ${e.message}`);
      },
    );
    spools.set(key, p);
  }
  return p;
}

/** Whether a file starts with gzip's magic bytes (1f 8b). */
export function isGzipFile(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return false;
  }
  try {
    const b = Buffer.alloc(2);
    return readSync(fd, b, 0, 2, 0) === 2 && b[0] === 0x1f && b[1] === 0x8b;
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}

/**
 * The one hard limit on a line of text, the same in every command: a line longer than this many
 * characters is cut to it when read (with one warning naming the file and the count; no model
 * reads that far: each cuts its inputs much earlier, to its maximum input length, and says so).
 * Bytes past it are never held in memory.
 */
export const MAX_LINE_CHARS = 10_000_000;

export interface LineReadOptions {
  /** Lines longer than this are cut to it (default and upper bound: MAX_LINE_CHARS). */
  maxChars?: number;
  /** Called once at the end with the number of lines cut (default: one warning on stderr naming the file). */
  onCut?: (lines: number) => void;
  /** Start reading at this byte offset (a line start; plain files only) … */
  startByte?: number;
  /** … which is the start of this line (1-based; for numbering and messages). */
  firstLine?: number;
  /** The text encoding (a WHATWG label such as 'euc-jp'; default 'utf-8'); a byte sequence invalid in it is an error naming the line. */
  encoding?: string;
}

/** The lines (1-based) of data whose bytes are not UTF-8, at most `most` of them (none: valid UTF-8). */
export function invalidUtf8Lines(data: Uint8Array, most = Infinity): number[] {
  const dec = new TextDecoder('utf-8', { fatal: true });
  try {
    dec.decode(data);
    return [];
  } catch {
    /* find the lines */
  }
  const bad: number[] = [];
  for (let start = 0, no = 1; start <= data.length && bad.length < most; no++) {
    let nl = data.indexOf(10, start);
    if (nl < 0) nl = data.length;
    try {
      dec.decode(data.subarray(start, nl));
    } catch {
      bad.push(no);
    }
    start = nl + 1;
  }
  return bad;
}

/** A whole UTF-8 text file (a leading byte order mark kept); bytes that are not UTF-8 are an error naming the file and line, as readLines says it. */
export function readUtf8File(file: string): string {
  const data = readFileSync(file);
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(data);
  } catch (e) {
    if (e instanceof TypeError) throw new Error(`${file}:${invalidUtf8Lines(data, 1)[0] ?? 1}: invalid UTF-8`);
    throw e;
  }
}

/** The warning of lines cut at maxChars (one per file). */
export function cutWarning(path: string, lines: number, maxChars: number): string {
  return `[xling] warning: ${path}: ${lines} line${lines > 1 ? 's' : ''} longer than ${maxChars} characters ${lines > 1 ? 'were' : 'was'} cut to ${maxChars}\n`;
}

/** Decodes one line, cut to maxChars (a line cut at maxBytes may end inside a character); invalid bytes are an error naming the line. */
function lineDecoder(encoding: string, maxChars: number, path: string): (buf: Buffer, no: number, over: boolean) => { text: string; cut: boolean } {
  const dec = new TextDecoder(encoding, { fatal: true });
  const name = encoding === 'utf-8' ? 'UTF-8' : encoding.toUpperCase();
  return (buf, no, over) => {
    let s: string;
    try {
      // streaming keeps an unfinished character at the end back instead of refusing it
      s = over ? new TextDecoder(encoding, { fatal: true }).decode(buf, { stream: true }) : dec.decode(buf);
    } catch {
      throw new Error(`${path}:${no}: invalid ${name}`);
    }
    if (s.length <= maxChars) return { text: s, cut: over };
    const end = maxChars - (/[\uD800-\uDBFF]/.test(s[maxChars - 1]!) ? 1 : 0);
    return { text: s.slice(0, end), cut: true };
  };
}

/** Node's errors of reading a file, with the file named (and zlib's own words made readable). */
function readError(e: unknown, path: string): Error {
  const code = (e as NodeJS.ErrnoException).code;
  const msg = (e as Error).message ?? String(e);
  if (code === 'ENOENT') return new Error(`${path}: no such file`);
  if (code === 'EISDIR') return new Error(`${path}: is a directory, expected a file`);
  if (msg.includes('incorrect header check')) return new Error(`${path}: not a gzip file`);
  // zlib's own errors (a truncated or corrupt .gz: "unexpected end of file") name no file
  if (code?.startsWith('Z_') || code?.startsWith('ERR_ZLIB')) return new Error(`${path}: corrupt or truncated gzip data (${msg})`);
  if (code && !msg.includes(path)) return new Error(`${path}: ${msg}`);
  return e as Error;
}

/**
 * Lines of a text file (see the top of this file). A line longer than maxChars (MAX_LINE_CHARS)
 * is cut to it, never an error: its bytes past the limit are skipped unread, and the count of cut
 * lines is said once at the end (o.onCut).
 */
export async function* readLines(given: string, o: LineReadOptions = {}): AsyncGenerator<{ line: string; no: number; offset: number }> {
  const encoding = o.encoding ?? 'utf-8';
  const maxChars = Math.min(o.maxChars ?? MAX_LINE_CHARS, MAX_LINE_CHARS);
  // a character is at most 4 bytes in the encodings read: enough bytes for maxChars characters
  const maxBytes = 4 * maxChars;
  const startByte = o.startByte ?? 0;
  const path = shownPath(given);
  const decode = lineDecoder(encoding, maxChars, path);
  const file = await readablePath(given);
  const gz = isGzipFile(file);
  if (startByte && gz) throw new Error(`${path}: a gzip file cannot be read from a byte offset`);
  let src: NodeJS.ReadableStream = createReadStream(file, { highWaterMark: 1 << 20, start: startByte });
  if (gz) src = src.pipe(createGunzip());
  let no = (o.firstLine ?? 1) - 1;
  let cut = 0;
  // the current line's bytes from earlier chunks (at most maxBytes; `over`: more were dropped)
  let parts: Buffer[] = [];
  let partBytes = 0;
  let over = false;
  const keep = (b: Buffer): void => {
    if (over) return;
    if (b.length > maxBytes - partBytes) {
      b = b.subarray(0, maxBytes - partBytes);
      over = true;
    }
    parts.push(Buffer.from(b));
    partBytes += b.length;
  };
  const emit = (buf: Buffer): string => {
    no++;
    if (buf.length > maxBytes) {
      buf = buf.subarray(0, maxBytes);
      over = true;
    }
    let end = buf.length;
    if (!over && end && buf[end - 1] === 13) end--;
    if (encoding === 'utf-8' && no === 1 && end >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) {
      // BOM
      buf = buf.subarray(3);
      end -= 3;
    }
    const r = decode(buf.subarray(0, end), no, over);
    if (r.cut) cut++;
    over = false;
    return r.text;
  };
  let lineAt = startByte, // byte offset of the current line's start (in the decompressed stream for .gz)
    chunkAt = startByte;
  try {
    for await (const chunk of src as AsyncIterable<Buffer>) {
      let start = 0;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, start)) {
        let line = chunk.subarray(start, i);
        if (parts.length || over) {
          keep(line);
          line = Buffer.concat(parts);
          parts = [];
          partBytes = 0;
        }
        yield { line: emit(line), no, offset: lineAt };
        start = i + 1;
        lineAt = chunkAt + start;
      }
      if (start < chunk.length) keep(chunk.subarray(start));
      chunkAt += chunk.length;
    }
  } catch (e) {
    throw readError(e, path);
  }
  if (parts.length || over) yield { line: emit(Buffer.concat(parts)), no, offset: lineAt };
  if (cut) (o.onCut ?? ((n: number) => process.stderr.write(cutWarning(path, n, maxChars))))(cut);
}

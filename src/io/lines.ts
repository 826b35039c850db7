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

export interface LineReadOptions {
  maxChars?: number;
  /** Start reading at this byte offset (a line start; plain files only) … */
  startByte?: number;
  /** … which is the start of this line (1-based; for numbering and messages). */
  firstLine?: number;
  /** The text encoding (a WHATWG label such as 'euc-jp'; default 'utf-8'); a byte sequence invalid in it is an error naming the line. */
  encoding?: string;
}

/** A whole UTF-8 text file (a leading byte order mark kept); bytes that are not UTF-8 are an error naming the file. */
export function readUtf8File(file: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(readFileSync(file));
  } catch (e) {
    if (e instanceof TypeError) throw new Error(`${file}: not UTF-8 text`);
    throw e;
  }
}

export async function* readLines(given: string, o: LineReadOptions = {}): AsyncGenerator<{ line: string; no: number; offset: number }> {
  const encoding = o.encoding ?? 'utf-8';
  const dec = new TextDecoder(encoding, { fatal: true });
  const startByte = o.startByte ?? 0;
  const path = shownPath(given);
  const file = await readablePath(given);
  const gz = isGzipFile(file);
  if (startByte && gz) throw new Error(`${path}: a gzip file cannot be read from a byte offset`);
  let src: NodeJS.ReadableStream = createReadStream(file, { highWaterMark: 1 << 20, start: startByte });
  if (gz) src = src.pipe(createGunzip());
  let carry: Buffer | null = null;
  let no = (o.firstLine ?? 1) - 1;
  let bufAt = startByte; // byte offset of buf[0]
  const emit = (buf: Buffer): string => {
    no++;
    let end = buf.length;
    if (end && buf[end - 1] === 13) end--;
    if (encoding === 'utf-8' && no === 1 && end >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) {
      // BOM
      buf = buf.subarray(3);
      end -= 3;
    }
    let s: string;
    try {
      s = dec.decode(buf.subarray(0, end));
    } catch {
      throw new Error(`${path}:${no}: invalid ${encoding === 'utf-8' ? 'UTF-8' : encoding.toUpperCase()}`);
    }
    if (o.maxChars && s.length > o.maxChars) throw new Error(`${path}:${no}: line longer than ${o.maxChars} characters`);
    return s;
  };
  try {
    for await (const chunk of src as AsyncIterable<Buffer>) {
      const buf: Buffer = carry ? Buffer.concat([carry, chunk]) : chunk;
      let start = 0;
      for (let i = buf.indexOf(10, start); i !== -1; i = buf.indexOf(10, start)) {
        yield { line: emit(buf.subarray(start, i)), no, offset: bufAt + start };
        start = i + 1;
      }
      bufAt += start;
      carry = start < buf.length ? Buffer.from(buf.subarray(start)) : null;
    }
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const msg = (e as Error).message ?? String(e);
    if (code === 'ENOENT') throw new Error(`${path}: no such file`);
    if (code === 'EISDIR') throw new Error(`${path}: is a directory, expected a file`);
    if (msg.includes('incorrect header check')) throw new Error(`${path}: not a gzip file`);
    // zlib's own errors (a truncated or corrupt .gz: "unexpected end of file") name no file
    if (code?.startsWith('Z_') || code?.startsWith('ERR_ZLIB')) throw new Error(`${path}: corrupt or truncated gzip data (${msg})`);
    if (code && !msg.includes(path)) throw new Error(`${path}: ${msg}`);
    throw e;
  }
  if (carry?.length) yield { line: emit(carry), no, offset: bufAt };
}

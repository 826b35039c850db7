// Streaming line reader over files of any size (optionally gzip), strict UTF-8: invalid bytes
// are an error naming the file and line. Yields lines without the trailing newline (and \r), each
// with its number and the byte offset where it starts (in the decompressed stream for .gz), so a
// later reader of a plain file can start at a line without reading what comes before it.
import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';

export interface LineReadOptions {
  maxChars?: number;
  /** Start reading at this byte offset (a line start; plain files only) … */
  startByte?: number;
  /** … which is the start of this line (1-based; for numbering and messages). */
  firstLine?: number;
}

export async function* readLines(path: string, o: LineReadOptions = {}): AsyncGenerator<{ line: string; no: number; offset: number }> {
  const dec = new TextDecoder('utf-8', { fatal: true });
  const startByte = o.startByte ?? 0;
  if (startByte && path.endsWith('.gz')) throw new Error(`${path}: a gzip file cannot be read from a byte offset`);
  let src: NodeJS.ReadableStream = createReadStream(path, { highWaterMark: 1 << 20, start: startByte });
  if (path.endsWith('.gz')) src = src.pipe(createGunzip());
  let carry: Buffer | null = null;
  let no = (o.firstLine ?? 1) - 1;
  let bufAt = startByte; // byte offset of buf[0]
  const emit = (buf: Buffer): string => {
    no++;
    let end = buf.length;
    if (end && buf[end - 1] === 13) end--;
    if (no === 1 && end >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) buf = buf.subarray(3), end -= 3; // BOM
    let s: string;
    try { s = dec.decode(buf.subarray(0, end)); } catch { throw new Error(`${path}:${no}: invalid UTF-8`); }
    if (o.maxChars && s.length > o.maxChars) throw new Error(`${path}:${no}: line longer than ${o.maxChars} characters`);
    return s;
  };
  try {
    for await (const chunk of src as AsyncIterable<Buffer>) {
      let buf: Buffer = carry ? Buffer.concat([carry, chunk]) : chunk;
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
  if (carry && carry.length) yield { line: emit(carry), no, offset: bufAt };
}

// Streaming XML for the corpus readers (TMX, XLIFF, CLDR annotations): a file, plain or gzip (by
// its magic bytes), decoded by its byte-order mark or XML declaration (XML 1.0 §4.3.3, appendix
// F), parsed with saxes into batches of open/close/text events, one batch per chunk read, so that
// memory is bounded by a chunk and whatever the reader keeps of one unit, never by the file.
// Untrusted input: the five predefined entities and character references are decoded; a DOCTYPE
// whose internal subset declares entities (an "entity bomb", an external entity naming a local
// file) is refused, and an external DTD named by a DOCTYPE is never read. Malformed XML, bytes
// invalid in the file's encoding and a truncated file are errors naming the file and line.
// Also: the shared rules of a translation unit's languages (normalised with normalizeLang,
// English variants and single-language units dropped).
import { isUtf8 } from 'node:buffer';
import { TextDecoder } from 'node:util';
import { createReadStream, openSync, readSync, closeSync } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { SaxesParser } from 'saxes';
import { isEnglishVariant, normalizeLang } from './langs.js';
import type { ReadContext } from './types.js';

export interface XmlOpen {
  kind: 'open';
  name: string;
  attrs: Record<string, string>;
  line: number;
}
export interface XmlClose {
  kind: 'close';
  name: string;
  line: number;
}
export interface XmlText {
  kind: 'text';
  text: string;
}
export type XmlEvent = XmlOpen | XmlClose | XmlText;

/** An element's local name (the part after a namespace prefix). */
function localName(qname: string): string {
  const i = qname.indexOf(':');
  return i < 0 ? qname : qname.slice(i + 1);
}

/** The encoding named by a byte-order mark or the XML declaration at the start of a file, and the BOM's length. */
export function sniffEncoding(head: Buffer): { encoding: string; bom: number } {
  if (head.length >= 3 && head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return { encoding: 'utf-8', bom: 3 };
  if (head.length >= 2 && head[0] === 0xff && head[1] === 0xfe) return { encoding: 'utf-16le', bom: 2 };
  if (head.length >= 2 && head[0] === 0xfe && head[1] === 0xff) return { encoding: 'utf-16be', bom: 2 };
  if (head.length >= 4 && head[0] === 0x3c && head[1] === 0 && head[2] === 0x3f && head[3] === 0) return { encoding: 'utf-16le', bom: 0 };
  if (head.length >= 4 && head[0] === 0 && head[1] === 0x3c && head[2] === 0 && head[3] === 0x3f) return { encoding: 'utf-16be', bom: 0 };
  const decl = /^<\?xml[^>]*?\bencoding\s*=\s*["']([A-Za-z][A-Za-z0-9._-]*)["']/.exec(head.subarray(0, 400).toString('latin1'));
  const named = decl ? decl[1]!.toLowerCase() : 'utf-8';
  // a declaration saying UTF-16 over single-byte text (no BOM, '<?' in one byte each) is mislabelled UTF-8
  return { encoding: named.startsWith('utf-16') || named.startsWith('utf16') ? 'utf-8' : named, bom: 0 };
}

/** The root element's local name in a file's first bytes (undefined when it is not reached or not XML). */
export function rootElement(head: Buffer): string | undefined {
  const { encoding, bom } = sniffEncoding(head);
  let s: string;
  try {
    s = new TextDecoder(encoding).decode(head.subarray(bom));
  } catch {
    return undefined;
  }
  let i = 0;
  for (;;) {
    i = s.indexOf('<', i);
    if (i < 0) return undefined;
    if (s.startsWith('<?', i)) {
      i = s.indexOf('?>', i);
      if (i < 0) return undefined;
      continue;
    }
    if (s.startsWith('<!--', i)) {
      i = s.indexOf('-->', i);
      if (i < 0) return undefined;
      continue;
    }
    if (s.startsWith('<!', i)) {
      // DOCTYPE, possibly with an internal subset
      const sub = s.indexOf('[', i),
        gt = s.indexOf('>', i);
      if (gt < 0) return undefined;
      i = sub >= 0 && sub < gt ? s.indexOf(']>', sub) : gt;
      if (i < 0) return undefined;
      continue;
    }
    const m = /^<([A-Za-z_][\w.:-]*)/.exec(s.slice(i, i + 200));
    return m ? localName(m[1]!) : undefined;
  }
}

/** A file's first bytes (for accepts() in tests and callers that have none). */
export function readHead(file: string, n = 4096): Buffer {
  const fd = openSync(file, 'r');
  try {
    const b = Buffer.alloc(n);
    return b.subarray(0, readSync(fd, b, 0, n, 0));
  } finally {
    closeSync(fd);
  }
}

/** The 1-based line (counted from the chunk's start) of the first bytes in buf that are not valid UTF-8. */
function badUtf8Line(buf: Buffer): number {
  let start = 0,
    line = 0;
  // a chunk may start inside a character that began in the previous one
  while (start < 3 && start < buf.length && (buf[start]! & 0xc0) === 0x80) start++;
  for (;;) {
    const nl = buf.indexOf(10, start);
    const end = nl < 0 ? buf.length : nl;
    if (nl < 0 || !isUtf8(buf.subarray(start, end))) return line + 1;
    line++;
    start = nl + 1;
  }
}

function countNewlines(buf: Buffer): number {
  let n = 0;
  for (let i = buf.indexOf(10); i !== -1; i = buf.indexOf(10, i + 1)) n++;
  return n;
}

/**
 * The events of an XML file, a batch per chunk read. Errors (I/O, gzip, encoding, malformed XML,
 * a DOCTYPE declaring entities) are thrown naming the file and, where known, the line.
 */
export async function* xmlEvents(file: string): AsyncGenerator<XmlEvent[]> {
  let batch: XmlEvent[] = [];
  const parser = new SaxesParser({ xmlns: false, position: true, fileName: file });
  parser.on('doctype', (dt) => {
    if (/<!ENTITY/i.test(dt)) {
      throw new Error(`${file}:${parser.line}: the DOCTYPE declares entities; refused (entities are not expanded in untrusted input)`);
    }
  });
  parser.on('opentag', (tag) => {
    const attrs = tag.attributes as Record<string, string>;
    batch.push({ kind: 'open', name: localName(tag.name), attrs, line: parser.line });
    if (tag.isSelfClosing) batch.push({ kind: 'close', name: localName(tag.name), line: parser.line });
  });
  parser.on('closetag', (tag) => {
    if (!tag.isSelfClosing) batch.push({ kind: 'close', name: localName(tag.name), line: parser.line });
  });
  parser.on('text', (text) => {
    batch.push({ kind: 'text', text });
  });
  parser.on('cdata', (text) => {
    batch.push({ kind: 'text', text });
  });
  let decoder: TextDecoder | undefined;
  let encoding = 'utf-8';
  let linesBefore = 0; // newlines in the bytes decoded before the current chunk (for encoding errors)
  let first = true;
  const ioError = (e: unknown): Error => {
    const err = e as NodeJS.ErrnoException;
    const msg = err.message ?? String(e);
    if (err.code === 'ENOENT') return new Error(`${file}: no such file`);
    if (err.code === 'EISDIR') return new Error(`${file}: is a directory, expected a file`);
    if (err.code?.startsWith('Z_') || err.code?.startsWith('ERR_ZLIB')) return new Error(`${file}: corrupt or truncated gzip data (${msg})`);
    return msg.startsWith(file) ? err : new Error(`${file}: ${msg}`);
  };
  try {
    let head: Buffer;
    try {
      head = readHead(file, 2);
    } catch (e) {
      throw ioError(e);
    }
    let raw: NodeJS.ReadableStream = createReadStream(file, { highWaterMark: 1 << 16 });
    if (head.length === 2 && head[0] === 0x1f && head[1] === 0x8b) raw = raw.pipe(createGunzip());
    for await (const chunk of raw as AsyncIterable<Buffer>) yield* feed(chunk);
    if (decoder) {
      let tail: string;
      try {
        tail = decoder.decode();
      } catch {
        throw new Error(`${file}:${parser.line}: the file ends inside a character (bytes invalid in ${encoding})`);
      }
      if (tail) parser.write(tail);
    }
    if (first) throw new Error(`${file}: empty file`);
    parser.close();
    if (batch.length) yield batch;
  } catch (e) {
    throw ioError(e);
  }

  function* feed(chunk: Buffer): Generator<XmlEvent[]> {
    if (first) {
      first = false;
      const sniffed = sniffEncoding(chunk);
      encoding = sniffed.encoding;
      try {
        decoder = new TextDecoder(encoding, { fatal: true });
      } catch {
        throw new Error(`${file}: unsupported encoding ${JSON.stringify(encoding)}`);
      }
      chunk = chunk.subarray(sniffed.bom);
    }
    let text: string;
    try {
      text = decoder!.decode(chunk, { stream: true });
    } catch {
      const line = encoding === 'utf-8' ? linesBefore + badUtf8Line(chunk) : parser.line;
      throw new Error(`${file}:${line}: bytes invalid in ${encoding === 'utf-8' ? 'UTF-8' : encoding}`);
    }
    if (encoding === 'utf-8') linesBefore += countNewlines(chunk);
    parser.write(text);
    if (batch.length) {
      const b = batch;
      batch = [];
      yield b;
    }
  }
}

/**
 * A unit's texts by the corpus's language codes from [raw code, text] pairs: codes normalised,
 * empty texts dropped, the first text of a language kept. English variants (en_gb, …) are
 * spelling adaptations: dropped when plain English is there, else the first one stands for
 * English (some memories, e.g. the EU's, label their English EN-GB). Undefined when fewer than two
 * languages remain. Codes that are not language codes are returned in `bad`.
 */
export function unitTexts(pairs: Iterable<[string, string]>): { texts?: Map<string, string>; bad: string[] } {
  const texts = new Map<string, string>();
  const bad: string[] = [];
  let variant: string | undefined;
  for (const [raw, text] of pairs) {
    const code = normalizeLang(raw);
    if (code === undefined) {
      bad.push(raw);
      continue;
    }
    if (text.trim() === '') continue;
    if (isEnglishVariant(code)) {
      variant ??= text;
      continue;
    }
    if (!texts.has(code)) texts.set(code, text);
  }
  if (!texts.has('en') && variant !== undefined) texts.set('en', variant);
  return { texts: texts.size >= 2 ? texts : undefined, bad };
}

/**
 * Per-entry problems of one file, the first `limit` of each kind reported as they come and the
 * rest counted in one last report (a memory whose every <tu> has the same fault says so once,
 * not a million times).
 */
export class FileProblems {
  private readonly counts = new Map<string, number>();
  constructor(
    private readonly file: string,
    private readonly ctx: ReadContext,
    private readonly limit = 10,
  ) {}

  report(kind: string, line: number, message: string): void {
    const n = (this.counts.get(kind) ?? 0) + 1;
    this.counts.set(kind, n);
    if (n <= this.limit) this.ctx.onProblem({ file: this.file, line, message });
  }

  /** The counts of the problems not reported one by one. */
  finish(): void {
    for (const [kind, n] of this.counts) {
      if (n > this.limit) this.ctx.onProblem({ file: this.file, message: `${n - this.limit} more like the above (${kind}) not reported one by one` });
    }
    this.counts.clear();
  }
}

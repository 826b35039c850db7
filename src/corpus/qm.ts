// Qt Linguist's compiled translation files (.qm) as translation units: each message that keeps
// its source text pairs the English source with the file's translation. A .qm file is a 16-byte
// magic number followed by sections (a tag byte, a 32-bit big-endian length, the data): Hashes
// (0x42), Messages (0x69), Contexts (0x2f), Numerus rules (0x88), Dependencies (0x96), Language
// (0xa7). The Messages section is a sequence of tagged fields ending at each message's End tag
// (1): Translation (3, UTF-16BE, length ~0 for none), Source text (6), Context (7), Comment (8)
// (UTF-8; GNU msgfmt --qt ends them with a NUL), and the obsolete fields 5 (four bytes) and 9
// (none). Files written by lrelease (Qt Linguist) and by GNU msgfmt --qt keep the source texts;
// a file stripped down to hashes cannot be paired and is reported. Messages with several
// translations (Qt's numerus forms) are left out, as their forms do not follow English's. The
// language is the Language section's, else the file name's (`de.qm`, `app_zh_TW.qm`, `app-de.qm`).
// Spec: Qt's translator.cpp (QTranslator::load) and lrelease's qm.cpp; GNU gettext's write-qt.c.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { messageUnit } from './clean.js';
import { isEnglishVariant, normalizeLang } from './langs.js';
import { ReadContext, SourceReader, TranslationUnit } from './types.js';

export const QM_MAGIC = Buffer.from([0x3c, 0xb8, 0x64, 0x18, 0xca, 0xef, 0x9c, 0x95, 0xcd, 0x21, 0x1c, 0xbf, 0x60, 0xa1, 0xbd, 0xdd]);

const SECTION_MESSAGES = 0x69;
const SECTION_LANGUAGE = 0xa7;

export interface QmMessage {
  source?: string;
  context?: string;
  comment?: string;
  /** The translations (one, or one per numerus form); null for a message without one. */
  translations: (string | null)[];
}

export interface QmFile {
  language?: string;
  messages: QmMessage[];
}

function utf8(b: Buffer): string {
  return b.toString('utf8').replace(/\0+$/, '');
}

/** Parses a .qm file, throwing an error that names the file and the byte offset of a fault. */
export function parseQm(file: string, data: Buffer): QmFile {
  if (data.length < 16 || !data.subarray(0, 16).equals(QM_MAGIC)) throw new Error(`${file}: not a Qt .qm file (bad magic number)`);
  const out: QmFile = { messages: [] };
  let p = 16;
  let messages: Buffer | undefined;
  let messagesAt = 0;
  while (p < data.length) {
    if (p + 5 > data.length) throw new Error(`${file}: truncated section header at byte ${p}`);
    const tag = data[p]!,
      len = data.readUInt32BE(p + 1);
    if (p + 5 + len > data.length) throw new Error(`${file}: section 0x${tag.toString(16)} at byte ${p} runs past the end of the file (${len} bytes)`);
    const body = data.subarray(p + 5, p + 5 + len);
    if (tag === SECTION_MESSAGES) {
      messages = body;
      messagesAt = p + 5;
    } else if (tag === SECTION_LANGUAGE) out.language = utf8(body);
    p += 5 + len;
  }
  if (!messages) return out;
  let m: QmMessage = { translations: [] };
  let q = 0;
  const field = (at: number): Buffer => {
    if (q + 4 > messages!.length) throw new Error(`${file}: truncated message field at byte ${messagesAt + at}`);
    const len = messages!.readUInt32BE(q);
    q += 4;
    if (len === 0xffffffff) return Buffer.alloc(0);
    if (q + len > messages!.length) throw new Error(`${file}: message field at byte ${messagesAt + at} runs past its section (${len} bytes)`);
    const b = messages!.subarray(q, q + len);
    q += len;
    return b;
  };
  while (q < messages.length) {
    const at = q;
    const tag = messages[q++]!;
    switch (tag) {
      case 1:
        out.messages.push(m);
        m = { translations: [] };
        break;
      case 3: {
        const none = q + 4 <= messages.length && messages.readUInt32BE(q) === 0xffffffff;
        const b = field(at);
        if (b.length % 2) throw new Error(`${file}: translation of odd length at byte ${messagesAt + at}`);
        m.translations.push(none ? null : Buffer.from(b).swap16().toString('utf16le'));
        break;
      }
      case 6:
        m.source = utf8(field(at));
        break;
      case 7:
        m.context = utf8(field(at));
        break;
      case 8:
        m.comment = utf8(field(at));
        break;
      case 5:
        q += 4;
        break;
      case 9:
        break;
      default:
        throw new Error(`${file}: unknown message field tag ${tag} at byte ${messagesAt + at}`);
    }
  }
  if (m.translations.length || m.source !== undefined) throw new Error(`${file}: the last message has no end tag`);
  return out;
}

/** The language of a .qm file: its Language section, else its name (`de.qm`, `app_zh_TW.qm`, `app-de.qm`). */
export function qmLanguage(file: string, section?: string): string | undefined {
  if (section) {
    const l = normalizeLang(section);
    if (l) return l;
  }
  const stem = basename(file).replace(/\.qm$/i, '');
  // a domain before a lower-case language code (`app_de`, `gcompris_zh_TW`, `app-sr@latin`); not
  // a locale's upper-case region (`pt_BR`, `en_GB`), nor a three-letter domain read as a language
  const tail = /^.+?[_-]([a-z]{2,3}(?:[_-][A-Z][A-Za-z]{1,3}|[_-][0-9]{3})?(?:@[A-Za-z]+)?)$/.exec(stem);
  if (tail) {
    const l = normalizeLang(tail[1]!);
    if (l) return l;
  }
  const whole = normalizeLang(stem);
  if (whole) return whole;
  for (let i = 0; i < stem.length; i++) {
    if (stem[i] !== '_' && stem[i] !== '-') continue;
    const l = normalizeLang(stem.slice(i + 1));
    if (l) return l;
  }
  return undefined;
}

export const qmReader: SourceReader = {
  name: 'qm',
  accepts(file, head) {
    return /\.qm$/i.test(file) && head.length >= 16 && head.subarray(0, 16).equals(QM_MAGIC);
  },
  async *read(file: string, ctx: ReadContext): AsyncIterable<TranslationUnit> {
    const qm = parseQm(file, readFileSync(file));
    const lang = qmLanguage(file, qm.language);
    if (!lang) throw new Error(`${file}: no language (no Language section, none in the file name)`);
    if (lang === 'en' || isEnglishVariant(lang)) return;
    const source = ctx.source ?? file;
    let withSource = 0;
    for (const msg of qm.messages) {
      if (msg.source === undefined || msg.source === '') continue;
      withSource++;
      if (msg.translations.length !== 1) continue;
      // the document: the message's context (a class or a file)
      const u = messageUnit(msg.source, msg.translations[0] ?? '', lang, source, msg.context);
      if (u) yield u;
    }
    if (qm.messages.length > 0 && withSource === 0)
      throw new Error(`${file}: its ${qm.messages.length} messages keep no source text (a stripped .qm): nothing to pair`);
  },
};

// Chromium's locale packs (Debian's chromium-l10n, with the English en-US.pak of chromium-common):
// grit data packs, one per language in a `locales` folder (`locales/sw.pak`, `locales/pt-BR.pak`),
// each a table of resource ids and their strings. Layout (little-endian; grit's data_pack format):
// version 4 = u32 version, u32 resource count, u8 encoding; version 5 = u32 version, u8 encoding,
// 3 bytes of padding, u16 resource count, u16 alias count. Then count + 1 entries of (u16 id, u32
// offset): a resource is the bytes from its offset to the next entry's (the last entry marks the
// end); then version 5's aliases (u16 id, u16 entry index): an id whose text is another entry's.
// Encoding 1 is UTF-8, 2 UTF-16LE, 0 binary. Each translated string is paired with en-US.pak's
// string of the same id. A pack fills what its translators left with English: such strings, ICU
// plural and select messages and `$1` substitutions are left out.
import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { FileCache, readCached } from '../util/file-cache.js';
import { messageUnit } from './clean.js';
import { knownLanguage, normalizeLang } from './langs.js';
import type { ReadContext, SourceReader, TranslationUnit } from './types.js';

const LOCALE_PAK = /^([a-z]{2,3})(-[A-Za-z0-9]{2,4})?\.pak$/;

/** The corpus code of a locale pack (`en` for en-US.pak), undefined when the name is no locale. */
export function pakLanguage(file: string): string | undefined {
  const m = LOCALE_PAK.exec(basename(file));
  if (!m || basename(dirname(file)) !== 'locales') return undefined;
  if (m[0] === 'en-US.pak') return 'en';
  const lang = normalizeLang(`${m[1]}${m[2] ? `_${m[2].slice(1)}` : ''}`);
  return lang && knownLanguage(lang) ? lang : undefined;
}

/** A data pack's text resources: id → text (aliases resolved; resources that are not valid text skipped). */
export function parsePak(buf: Buffer, file: string): Map<number, string> {
  const fail = (why: string): never => {
    throw new Error(`${file}: not a readable grit data pack (${why})`);
  };
  if (buf.length < 12) fail('shorter than its header');
  const version = buf.readUInt32LE(0);
  let count: number, aliases: number, encoding: number, at: number;
  if (version === 4) [count, encoding, aliases, at] = [buf.readUInt32LE(4), buf[8]!, 0, 9];
  else if (version === 5) [encoding, count, aliases, at] = [buf[4]!, buf.readUInt16LE(8), buf.readUInt16LE(10), 12];
  else return fail(`version ${version}; versions 4 and 5 are read`);
  if (encoding !== 1 && encoding !== 2) fail(`text encoding ${encoding}; packs of UTF-8 or UTF-16 text are read`);
  const tableEnd = at + (count + 1) * 6 + aliases * 4;
  if (tableEnd > buf.length) fail(`its table of ${count} resources runs past the end of the file`);
  const ids: number[] = [],
    offsets: number[] = [];
  for (let i = 0; i <= count; i++) {
    ids.push(buf.readUInt16LE(at + i * 6));
    offsets.push(buf.readUInt32LE(at + i * 6 + 2));
    if (offsets[i]! < tableEnd || offsets[i]! > buf.length || (i > 0 && offsets[i]! < offsets[i - 1]!))
      fail(`resource ${i}'s offset ${offsets[i]} is outside the data or out of order`);
  }
  const decoder = new TextDecoder(encoding === 1 ? 'utf-8' : 'utf-16le', { fatal: true });
  const texts: (string | undefined)[] = [];
  const out = new Map<number, string>();
  for (let i = 0; i < count; i++) {
    try {
      texts.push(decoder.decode(buf.subarray(offsets[i]!, offsets[i + 1]!)));
      out.set(ids[i]!, texts[i]!);
    } catch {
      texts.push(undefined); // a binary resource
    }
  }
  const aliasAt = at + (count + 1) * 6;
  for (let i = 0; i < aliases; i++) {
    const id = buf.readUInt16LE(aliasAt + i * 4),
      index = buf.readUInt16LE(aliasAt + i * 4 + 2);
    if (index >= count) fail(`alias ${id} names resource ${index} of ${count}`);
    const t = texts[index];
    if (t !== undefined) out.set(id, t);
  }
  return out;
}

const englishCache: FileCache<Map<number, string>> = new Map();

/** ICU messages (`{COUNT, plural, =1 {…} other {…}}`) and grit's `$1` substitutions. */
const SUBSTITUTION = /\$\d|\{\s*\w+\s*,\s*(plural|select|selectordinal)\b/;

export const chromePakReader: SourceReader = {
  name: 'chrome-pak',
  accepts(file: string, head: Buffer): boolean {
    return pakLanguage(file) !== undefined && head.length >= 4 && [4, 5].includes(head.readUInt32LE(0));
  },
  async *read(file: string, ctx: ReadContext): AsyncIterable<TranslationUnit> {
    const lang = pakLanguage(file);
    if (lang === undefined) throw new Error(`${file}: the file name names no locale`);
    if (lang === 'en') return; // the English side of the folder's other packs
    const enFile = join(dirname(file), 'en-US.pak');
    const english = readCached(englishCache, enFile, 'locale packs are paired with the en-US.pak of their folder', (f) => parsePak(readFileSync(f), f));
    const source = ctx.source ?? file;
    for (const [id, tr] of parsePak(readFileSync(file), file)) {
      const en = english.get(id);
      if (en === undefined || tr.trim() === en.trim() || SUBSTITUTION.test(en) || SUBSTITUTION.test(tr)) continue;
      const u = messageUnit(en, tr, lang, source, undefined);
      if (u) yield u;
    }
  },
};

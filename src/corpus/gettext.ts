// gettext catalogs (.po and .mo) as translation units: each translated entry pairs the English
// msgid with the catalog language's msgstr. Parsing is gettext-parser's (a well-kept parser of
// both formats, charsets included); what gettext's manual leaves to the catalog's users is done
// here: the header entry, fuzzy and obsolete entries and empty translations are skipped; plural
// entries pair msgid with msgstr[0] and msgid_plural with msgstr[1] only for two-form languages
// (elsewhere the forms do not follow English's singular/plural); contexts (msgctxt) only tell
// entries apart. The catalog's language comes from its header's `Language:` field, else from the
// path (`…/locale/LANG/LC_MESSAGES/x.mo`, `LANG.po`, `LANG.domain.po`, `domain-LANG.po`).
// Accelerators, markup and placeholders are handled by cleanMessage (clean.ts, through messageUnit).
// Spec: GNU gettext manual, "The Format of PO Files" and "The Format of GNU MO Files".
import { readFileSync } from 'node:fs';
import { basename, dirname, sep } from 'node:path';
import gettextParser, { GetTextTranslation, GetTextTranslations } from 'gettext-parser';
import { invalidUtf8Lines } from '../io/input.js';
import { hashSeed } from '../util/rng.js';
import { messageUnit } from './clean.js';
import { normalizeLang, isEnglishVariant } from './langs.js';
import { ReadContext, SourceReader, TranslationUnit } from './types.js';

const MO_MAGIC = [0x950412de, 0xde120495];

function isMo(head: Buffer): boolean {
  if (head.length < 4) return false;
  const le = head.readUInt32LE(0);
  return MO_MAGIC.includes(le);
}

/** The catalog's language: the header's Language field, else the path. */
export function catalogLanguage(file: string, headers: Record<string, string>): string | undefined {
  const h = (headers['Language'] ?? headers['language'] ?? '').trim();
  if (h) {
    const l = normalizeLang(h);
    if (l) return l;
  }
  const parts = file.split(sep);
  const lc = parts.lastIndexOf('LC_MESSAGES');
  if (lc > 0) {
    const l = normalizeLang(parts[lc - 1]!);
    if (l) return l;
  }
  const stem = basename(file).replace(/\.(po|mo|gmo)$/i, '');
  const tries = [stem, stem.split('.')[0]!, stem.split('.').at(-1)!, stem.split('-').at(-1)!, stem.split('_').at(-1)!];
  for (const t of tries) {
    if (!t) continue;
    const l = normalizeLang(t);
    if (l) return l;
  }
  return undefined;
}

function pluralCount(headers: Record<string, string>): number | undefined {
  const m = /nplurals\s*=\s*(\d+)/.exec(headers['Plural-Forms'] ?? headers['plural-forms'] ?? '');
  return m ? Number(m[1]) : undefined;
}

/** Parses a catalog file (either format), throwing an error that names the file. */
export function parseCatalog(file: string, data: Buffer): GetTextTranslations {
  try {
    return isMo(data) ? gettextParser.mo.parse(data) : gettextParser.po.parse(data);
  } catch (e) {
    throw new Error(`${file}: not a readable gettext catalog (${(e as Error).message})`);
  }
}

/**
 * Whether a catalog is one of iso-codes' lists of names (`iso_3166-1.mo`: countries; `iso_639-2`:
 * languages; `iso_4217`: currencies; `iso_15924`: scripts; in its sources `iso_3166-1/de.po`): its
 * entries are names, read as phrases (one English word or more), not messages. The long lists of
 * countries' subdivisions (`iso_3166-2`) and of all languages (`iso_639-3`), mostly names of
 * places and small languages spelt in another script, are not.
 */
export function isNameCatalog(file: string): boolean {
  const domain = /\.po$/i.test(file) ? basename(dirname(file)) : basename(file).replace(/\.(mo|gmo)$/i, '');
  return /^iso_[0-9]+(-[0-9]+)?$/.test(domain) && domain !== 'iso_3166-2' && domain !== 'iso_639-3';
}

/** A parsed catalog's entries (the header entry left out). */
function catalogEntries(cat: GetTextTranslations): GetTextTranslation[] {
  return Object.values(cat.translations ?? {})
    .flatMap((byId) => Object.values(byId))
    .filter((e) => e.msgid);
}

/**
 * A parsed catalog's entries, with what does not decode reported and left out: a catalog that
 * declares UTF-8 but holds other bytes decodes them as U+FFFD, which would end up in the corpus.
 * Each bad line of a .po is reported (file:line); an entry holding U+FFFD is skipped.
 */
function decodedEntries(file: string, data: Buffer, cat: GetTextTranslations, mo: boolean, ctx: ReadContext): GetTextTranslation[] {
  const entries = catalogEntries(cat);
  const utf8 = /^utf-?8$/i.test(cat.charset ?? '');
  const badLines = utf8 && !mo ? invalidUtf8Lines(data) : [];
  for (const line of badLines) ctx.onProblem({ file, line, message: 'invalid UTF-8 (the catalog declares UTF-8): its entry is left out' });
  return entries.filter((e) => {
    const text = [e.msgid, e.msgid_plural ?? '', ...(e.msgstr ?? [])].join('\n');
    if (!text.includes('\uFFFD')) return true;
    if (!badLines.length)
      ctx.onProblem({ file, message: `entry '${e.msgid.slice(0, 40)}': text that does not decode as ${cat.charset ?? 'its charset'}; left out` });
    return false;
  });
}

export const gettextReader: SourceReader = {
  name: 'gettext',
  accepts(file, head) {
    if (/\.(mo|gmo)$/i.test(file)) return isMo(head);
    return /\.po$/i.test(file);
  },
  async *read(file: string, ctx: ReadContext): AsyncIterable<TranslationUnit> {
    const data = readFileSync(file);
    if (/\.(mo|gmo)$/i.test(file) && !isMo(data)) throw new Error(`${file}: not a .mo file (bad magic number)`);
    const cat = parseCatalog(file, data);
    if (!catalogEntries(cat).length) throw new Error(`${file}: ${data.toString('latin1').trim() ? 'no entries (an empty catalog)' : 'an empty file'}`);
    const headers = cat.headers ?? {};
    const lang = catalogLanguage(file, headers);
    if (!lang) throw new Error(`${file}: no language (no Language header, none in the path)`);
    if (lang === 'en' || isEnglishVariant(lang)) return;
    const nplurals = pluralCount(headers);
    const names = isNameCatalog(file);
    const source = ctx.source ?? file;
    for (const e of decodedEntries(file, data, cat, isMo(data), ctx)) {
      if (e.obsolete) continue;
      if (/\bfuzzy\b/.test(e.comments?.flag ?? '')) continue;
      const pairs: [string, string][] = [];
      if (e.msgid_plural) {
        if (nplurals === 2 || nplurals === 1) pairs.push([e.msgid, e.msgstr[0] ?? '']);
        if (nplurals === 2) pairs.push([e.msgid_plural, e.msgstr[1] ?? '']);
      } else pairs.push([e.msgid, e.msgstr[0] ?? '']);
      // the document: the program file of the message (else a slice by its msgid, as messageUnit takes it)
      const ref = e.comments?.reference?.split(/\s+/)[0]?.replace(/:\d+$/, '');
      for (const [en, tr] of pairs) {
        const u = messageUnit(en, tr, lang, source, ref || `#${hashSeed(e.msgid) % 1000}`);
        if (u) yield names ? { ...u, kind: 'phrase' } : u;
      }
    }
  },
};

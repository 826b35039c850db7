// MediaWiki's message files (the "banana" JSON format of MediaWiki, its extensions and skins, and
// of other projects translated on translatewiki.net; Debian's mediawiki package): one JSON object
// a language in an `i18n` folder, named by the language's MediaWiki code (`de.json`, `pt-br.json`,
// `kk-cyrl.json`), message key → message; `@metadata` holds the authors; `en.json` is the English
// source, `qqq.json` the messages' documentation and `qqx.json` a pseudo-language. Each message is
// paired with the same key of the folder's `en.json`. Messages are wikitext: parameters (`$1`),
// templates (`{{PLURAL:$1|…}}`), links (`[[…]]`, `[https://… text]`) and lists substitute or lay
// out something, so a message holding one is dropped, as catalogs' placeholders are; bold and
// italic quotes ('' ''') are removed, HTML markup as in catalogs. Nested objects (other tools'
// message files) are read with their keys joined by dots.
import { existsSync } from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';
import { readUtf8File } from '../io/lines.js';
import { FileCache, readCached } from '../util/file-cache.js';
import { hashSeed } from '../util/rng.js';
import { cleanMessage, keyedMessageUnit } from './clean.js';
import { knownLanguage, normalizeLang } from './langs.js';
import type { ReadContext, SourceReader, TranslationUnit } from './types.js';

/** MediaWiki's codes that are not BCP 47 tags: Serbian in Cyrillic and in Latin (ekavian). */
const MEDIAWIKI_CODES = new Map([
  ['sr-ec', 'sr'],
  ['sr-el', 'sr_latn'],
]);

/** Files that are no language's messages: the documentation, the pseudo-language, the English source. */
const NOT_TRANSLATIONS = new Set(['qqq', 'qqx']);

/** A base language's likely script (ICU's likely subtags: kk → Cyrl, ku → Latn), lower case. */
function likelyScript(base: string): string | undefined {
  try {
    return new Intl.Locale(base).maximize().script?.toLowerCase();
  } catch {
    return undefined;
  }
}

/**
 * The corpus code of a message file's language from its MediaWiki code: 'en' for the English
 * source; undefined for the files that are no translation, English variants, the formal and
 * informal registers, a region's variant of its language (`de-at`, `ko-kp`) and a script the
 * language is not usually written in (`kk-latn`, `ms-arab`), whose rows would mix with the
 * language's own.
 */
export function mediawikiLanguage(file: string): string | undefined {
  const m = /^([a-z]{2,3})((?:-[a-z0-9]+)*)\.json$/.exec(basename(file));
  if (!m) return undefined;
  const code = m[1]! + m[2]!;
  const base = m[1]!;
  if (code === 'en') return 'en';
  if (NOT_TRANSLATIONS.has(code) || base === 'en' || /-(formal|informal)$/.test(code)) return undefined;
  const own = MEDIAWIKI_CODES.get(code);
  if (own !== undefined) return own;
  const lang = normalizeLang(code);
  if (lang === undefined || !knownLanguage(lang)) return undefined;
  if (m[2] === '' || lang !== normalizeLang(base)) return lang; // the language itself, or its own written form (pt_br, zh_tw, be_tarask)
  const subtags = m[2]!.slice(1).split('-');
  return subtags.length === 1 && subtags[0] === likelyScript(base) ? lang : undefined;
}

/** A JSON object's string values by key, nested objects' keys joined by dots; `@metadata` and other `@` keys left out. */
export function messageEntries(json: unknown, prefix = '', out = new Map<string, string>()): Map<string, string> {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return out;
  for (const [k, v] of Object.entries(json)) {
    if (k.startsWith('@')) continue;
    if (typeof v === 'string') out.set(prefix + k, v);
    else messageEntries(v, `${prefix}${k}.`, out);
  }
  return out;
}

/** Parses a message file: its entries, or an error naming the file and the JSON fault. */
export function parseMessageFile(file: string): Map<string, string> {
  let json: unknown;
  try {
    json = JSON.parse(readUtf8File(file).replace(/^\uFEFF/, ''));
  } catch (e) {
    throw new Error(`${file}: not a JSON message file (${(e as Error).message})`);
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new Error(`${file}: not a JSON message file (its top level is no object)`);
  return messageEntries(json);
}

const englishCache: FileCache<Map<string, string>> = new Map();

/** A folder's en.json, parsed once while it is unchanged. */
const englishOf = (file: string): Map<string, string> =>
  readCached(englishCache, file, 'message files are paired with the en.json of their folder', parseMessageFile);

/** Wikitext that substitutes or lays out something: parameters, templates, links, list and table lines, magic words. */
const WIKITEXT = /\$\d|\{\{|\}\}|\[\[|\[(?:https?:)?\/\/|^[*#:;|!]|\n[*#:;|!]|__[A-Z]+__|:\/\//;

/** A message as plain text: undefined when it holds wikitext beyond bold and italic, or a placeholder or unknown tag. */
export function cleanWikiMessage(raw: string): string | undefined {
  if (WIKITEXT.test(raw.trim())) return undefined;
  return cleanMessage(raw.replace(/'{2,5}/g, ''), false);
}

/** The message file's folder below `i18n` (the extension or skin it belongs to), for holding out dev rows by document. */
function folderName(file: string): string {
  const parts = dirname(file).split(sep);
  const at = parts.lastIndexOf('i18n');
  return at > 0 ? parts.slice(at - 1).join('/') : parts.slice(-2).join('/');
}

export const mediawikiReader: SourceReader = {
  name: 'mediawiki',
  accepts(file: string, head: Buffer): boolean {
    if (!file.split(sep).includes('i18n') || mediawikiLanguage(file) === undefined) return false;
    if (!/^\s*\{/.test(head.toString('utf8').replace(/^\uFEFF/, ''))) return false;
    return existsSync(join(dirname(file), 'en.json'));
  },
  async *read(file: string, ctx: ReadContext): AsyncIterable<TranslationUnit> {
    const lang = mediawikiLanguage(file);
    if (lang === undefined) throw new Error(`${file}: the file name is no language's MediaWiki code`);
    // the folder's en.json, parsed once for all its files (a fault in it is reported with each)
    const english = englishOf(join(dirname(file), 'en.json'));
    if (lang === 'en') return;
    const source = ctx.source ?? file;
    const folder = folderName(file);
    for (const [key, tr] of parseMessageFile(file)) {
      const en = english.get(key);
      if (en === undefined || !tr.trim()) continue;
      const unit = keyedMessageUnit(cleanWikiMessage(en), cleanWikiMessage(tr), lang, source, `${folder}#${hashSeed(key) % 100}`);
      if (unit) yield unit;
    }
  },
};

// Mozilla language packs (Debian's firefox-esr-l10n-*, thunderbird-l10n-*): an XPI (a zip file,
// `langpack-kab@firefox-esr.mozilla.org.xpi`) holding the application's Fluent files for one
// language under `localization/LOCALE/`; the English ones are in the application's own archives
// (`omni.ja`, also zip files) under `localization/en-US/`, found in the folders above the pack
// and their `browser/` folders (the packs and the application unpacked into one tree). Each
// message, and each attribute of one, is paired with the English message of the same file and id.
// Fluent (projectfluent.org): `id = text`, attributes `.label = text`, placeables `{ … }`. A
// reference to a term with plain text (`{ -brand-short-name }` → Firefox) is replaced by that
// text, a string literal (`{ "" }`) by its value; a message with any other placeable (variables,
// selectors, functions, other messages) is left out, as placeholders are in catalogs, and so are
// access and command keys. Only the Fluent files are read (the older .properties and .dtd files
// hold printf placeholders and plural lists).
import { dirname, join } from 'node:path';
import { existsSync } from 'node:fs';
import AdmZip from 'adm-zip';
import { FluentParser, type Pattern, type Resource } from '@fluent/syntax';
import { FileCache, readCached } from '../util/file-cache.js';
import { messageUnit } from './clean.js';
import { normalizeLang } from './langs.js';
import type { ReadContext, SourceReader, TranslationUnit } from './types.js';

/** Fluent files larger than this are not read (a zip entry's declared size). */
const MAX_FTL_BYTES = 4 << 20;
const ENGLISH = 'en-US';
const KEY_ATTRIBUTES = /^(accesskey|commandkey|key|keycode|modifiers)$/i;

/** The Fluent files of an archive under `localization/LOCALE/`: locale → path below it → text. */
export function archiveFluentFiles(file: string): Map<string, Map<string, string>> {
  let zip: AdmZip;
  try {
    zip = new AdmZip(file);
  } catch (e) {
    throw new Error(`${file}: not a readable zip archive (${(e as Error).message})`);
  }
  const out = new Map<string, Map<string, string>>();
  for (const e of zip.getEntries()) {
    const m = /^localization\/([^/]+)\/(.+\.ftl)$/.exec(e.entryName);
    if (!m || e.isDirectory || e.header.size > MAX_FTL_BYTES) continue;
    const data = e.getData();
    const files = out.get(m[1]!) ?? new Map<string, string>();
    files.set(m[2]!, data.toString('utf8'));
    out.set(m[1]!, files);
  }
  return out;
}

/** A parsed Fluent file: messages and attributes (`id`, `id.attr`) → pattern; terms; entries that did not parse. */
interface FluentFile {
  messages: Map<string, Pattern>;
  terms: Map<string, Pattern>;
  junk: number;
}

export function parseFluent(text: string): FluentFile {
  const res: Resource = new FluentParser({ withSpans: false }).parse(text);
  const f: FluentFile = { messages: new Map(), terms: new Map(), junk: 0 };
  for (const e of res.body) {
    if (e.type === 'Junk') f.junk++;
    else if (e.type === 'Term') f.terms.set(e.id.name, e.value);
    else if (e.type === 'Message') {
      if (e.value) f.messages.set(e.id.name, e.value);
      for (const a of e.attributes) if (!KEY_ATTRIBUTES.test(a.id.name)) f.messages.set(`${e.id.name}.${a.id.name}`, a.value);
    }
  }
  return f;
}

/** A pattern as plain text (terms by their text), or undefined when it holds anything else. */
export function patternText(p: Pattern, terms: Map<string, Pattern>, depth = 0): string | undefined {
  let s = '';
  for (const el of p.elements) {
    if (el.type === 'TextElement') {
      s += el.value;
      continue;
    }
    const x = el.expression;
    if (x.type === 'StringLiteral') s += x.parse().value;
    else if (x.type === 'TermReference' && !x.attribute && !x.arguments && depth < 4) {
      const t = terms.get(x.id.name);
      const v = t && patternText(t, terms, depth + 1);
      if (v === undefined) return undefined;
      s += v;
    } else return undefined;
  }
  return s;
}

/** One side of the pairing: every Fluent file of a locale parsed, and the terms of all of them. */
interface Side {
  files: Map<string, FluentFile>;
  terms: Map<string, Pattern>;
}

function parseFiles(texts: Map<string, string>): Map<string, FluentFile> {
  return new Map([...texts].map(([path, text]) => [path, parseFluent(text)]));
}

function side(files: Map<string, FluentFile>): Side {
  const terms = new Map<string, Pattern>();
  for (const f of files.values()) for (const [id, t] of f.terms) if (!terms.has(id)) terms.set(id, t);
  return { files, terms };
}

/** The application's archives above a pack: `omni.ja` in each folder above it and in their `browser/`. */
export function applicationArchives(pack: string): string[] {
  const found: string[] = [];
  let dir = dirname(pack);
  for (let i = 0; i < 6 && dirname(dir) !== dir; i++, dir = dirname(dir))
    for (const f of [join(dir, 'omni.ja'), join(dir, 'browser', 'omni.ja')]) if (!found.includes(f) && existsSync(f)) found.push(f);
  return found;
}

/** Each application archive's English Fluent files, parsed once for all the packs of the application. */
const englishCache: FileCache<Map<string, FluentFile>> = new Map();

/** The English Fluent files of the application archives (first archive wins a path). */
function englishFiles(archives: string[]): Side {
  const all = new Map<string, FluentFile>();
  for (const a of archives) {
    const files = readCached(englishCache, a, 'language packs are paired with the application they belong to', (f) =>
      parseFiles(archiveFluentFiles(f).get(ENGLISH) ?? new Map()),
    );
    for (const [p, f] of files) if (!all.has(p)) all.set(p, f);
  }
  return side(all);
}

export const mozillaLangpackReader: SourceReader = {
  name: 'mozilla-langpack',
  accepts(file: string, head: Buffer): boolean {
    return /(^|\/)langpack-[^/]*\.xpi$/.test(file) && head.subarray(0, 4).equals(Buffer.from('PK\u0003\u0004', 'latin1'));
  },
  async *read(file: string, ctx: ReadContext): AsyncIterable<TranslationUnit> {
    const archives = applicationArchives(file);
    if (!archives.length)
      throw new Error(`${file}: no omni.ja of its application in the folders above it (unpack the application's package with its language packs)`);
    const english = englishFiles(archives);
    const source = ctx.source ?? file;
    for (const [locale, files] of archiveFluentFiles(file)) {
      const lang = normalizeLang(locale);
      // the pack's own locale folder: a BCP 47 code (son, trs and cak among them, which ICU does not name)
      if (locale === ENGLISH || !lang || !/^[a-z]{2,3}([-_][A-Za-z0-9]{2,8})*$/.test(locale)) continue;
      const tr = side(parseFiles(files));
      for (const [path, f] of tr.files) {
        if (f.junk) ctx.onProblem({ file: `${file}:localization/${locale}/${path}`, message: `${f.junk} entries that are not Fluent skipped` });
        const en = english.files.get(path);
        if (!en) continue;
        for (const [id, p] of f.messages) {
          const ep = en.messages.get(id);
          const a = ep && patternText(ep, english.terms),
            b = patternText(p, tr.terms);
          if (a === undefined || b === undefined || a.trim() === b.trim()) continue;
          const u = messageUnit(a, b, lang, source, path);
          if (u) yield u;
        }
      }
    }
  },
};

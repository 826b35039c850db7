// MegaGlest's language files (Debian's megaglest-data): the game's interface, its loading-screen
// hints, and the texts of its tutorials, scenarios and tech tree, in INI-like `.lng` files, one per
// language, named after the language in English (`data/lang/irish.lng`,
// `tutorials/1_very_basic_tutorial/1_very_basic_tutorial_gaelic.lng`,
// `techs/megapack/lang/megapack_uzbek.lng`). Lines are `key=value`; `;` starts a comment line;
// `\n` in a value is a line break. Each entry pairs the English file of the same folder and prefix
// (`…english.lng`, or `…default.lng` in a tech tree) with the same key's translation. Values that
// substitute something (`%s`, `#HotKeySelectIdleHarvesterUnit#`) are placeholders and dropped, as
// in catalogs.
import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { readUtf8File } from '../io/lines.js';
import { FileCache, readCached } from '../util/file-cache.js';
import { hashSeed } from '../util/rng.js';
import { cleanMessage, keyedMessageUnit } from './clean.js';
import { knownLanguage, langFromName } from './langs.js';
import type { ReadContext, SourceReader, TranslationUnit } from './types.js';

/** `PREFIX_LANGUAGE.lng` or `LANGUAGE.lng`: the prefix (with its `_`) and the language's name. */
function nameParts(file: string): { prefix: string; name: string } | undefined {
  const m = /^(.*_)?([a-z]+(?:-[a-z]+)?)\.lng$/.exec(basename(file));
  return m ? { prefix: m[1] ?? '', name: m[2]! } : undefined;
}

const ENGLISH_NAMES = ['english', 'default'];

/** The corpus code of a file's language, 'en' for the English files, undefined when the name is no language. */
export function megaglestLanguage(file: string): string | undefined {
  const parts = nameParts(file);
  if (!parts) return undefined;
  if (ENGLISH_NAMES.includes(parts.name)) return 'en';
  const lang = langFromName(parts.name);
  return lang && knownLanguage(lang) ? lang : undefined;
}

/** Parses a language file: key → value (`\n` a line break); a line that is neither an entry nor a comment is reported. */
export function parseLng(text: string, onProblem: (line: number, message: string) => void): Map<string, string> {
  const entries = new Map<string, string>();
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === '' || /^\s*[;#]/.test(line)) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) {
      onProblem(i + 1, 'not a key=value line; skipped');
      continue;
    }
    const key = line.slice(0, eq).trim();
    if (!entries.has(key)) entries.set(key, line.slice(eq + 1).replace(/\\n/g, '\n'));
  }
  return entries;
}

interface EnglishFile {
  entries: Map<string, string>;
  problems: [line: number, message: string][];
}

const englishCache: FileCache<EnglishFile> = new Map();

/** The English file beside a language file (same folder and prefix), read once for all of them. */
function englishOf(file: string): EnglishFile {
  const { prefix } = nameParts(file)!;
  const en = ENGLISH_NAMES.map((n) => join(dirname(file), `${prefix}${n}.lng`)).find((f) => existsSync(f));
  if (!en) throw new Error(`${file}: no ${prefix}english.lng beside it (language files are paired with the English one of their folder)`);
  return readEnglish(en);
}

function readEnglish(file: string): EnglishFile {
  return readCached(englishCache, file, 'language files are paired with the English one of their folder', (f) => {
    const problems: EnglishFile['problems'] = [];
    const entries = parseLng(readUtf8File(f), (line, message) => problems.push([line, message]));
    return { entries, problems };
  });
}

/** `#HotKeyName#`: a key binding substituted by the game. */
const HOTKEY = /#[A-Za-z]\w*#/;

export const megaglestReader: SourceReader = {
  name: 'megaglest',
  accepts(file: string, head: Buffer): boolean {
    if (!/\.lng$/.test(file) || megaglestLanguage(file) === undefined) return false;
    // text whose first line is a comment or an entry (other games' compiled .lng files are binary)
    const first = head
      .toString('utf8')
      .replace(/^\uFEFF/, '')
      .split('\n')
      .find((l) => l.trim() !== '');
    return first !== undefined && /^\s*;|^[^=\x00]+=/.test(first);
  },
  async *read(file: string, ctx: ReadContext): AsyncIterable<TranslationUnit> {
    const lang = megaglestLanguage(file);
    if (lang === undefined) throw new Error(`${file}: the file name names no language`);
    if (lang === 'en') {
      // the English side of the folder's other files: here only its faults are reported
      for (const [line, message] of readEnglish(file).problems) ctx.onProblem({ file, line, message });
      return;
    }
    const english = englishOf(file).entries;
    const entries = parseLng(readUtf8File(file), (line, message) => ctx.onProblem({ file, line, message }));
    const source = ctx.source ?? file;
    const folder = basename(dirname(file)) === 'lang' ? basename(dirname(dirname(file))) : basename(dirname(file));
    for (const [key, tr] of entries) {
      const en = english.get(key);
      if (en === undefined || HOTKEY.test(en) || HOTKEY.test(tr)) continue;
      const unit = keyedMessageUnit(cleanMessage(en, false), cleanMessage(tr, false), lang, source, `${folder}#${hashSeed(key) % 100}`);
      if (unit) yield unit;
    }
  },
};

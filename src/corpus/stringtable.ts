// FreeOrion's string tables as translation units: the game's interface, its encyclopedia of
// species, technologies, buildings and ship parts (paragraphs of prose) and its event messages,
// one file per language in a `stringtables` folder (`en.txt`, `de.txt`, `ru.txt`, …), each entry
// keyed by an identifier the same in every language. The format (FreeOrion's StringTable): the
// first line names the language; then entries, an identifier on one line and its text on the next,
// or over several lines between `'''` marks; blank lines between entries; lines starting with `#`
// outside a text are comments (and `#include` directives, which pull in files of parameters, not
// translations). An entry pairs the English of `en.txt` in the same folder with the translation of
// the same identifier; a text of several paragraphs is paired paragraph by paragraph when both
// sides have as many, else whole. Texts that substitute other entries (`[[BLD_SHIPYARD]]`) or
// values (`%1%`, `%planet%`) are placeholders and dropped, as in catalogs; inline tags (`<i>`, `<rgba …>`) are
// removed. The language is the first line's name (`Russian`, `Deutsch`, `Français`), else the file
// name's (`ru.txt`).
import { basename, dirname, join, sep } from 'node:path';
import { readUtf8File } from '../io/input.js';
import { FileCache, readCached } from '../util/file-cache.js';
import { hashSeed } from '../util/rng.js';
import { cleanMessage } from './clean.js';
import { isEnglishVariant, knownLanguage, langFromName, normalizeLang } from './langs.js';
import type { ReadContext, SourceReader, TranslationUnit } from './types.js';

export interface StringTable {
  /** The first line: the language's name. */
  name: string;
  /** Identifier → text (the lines of a multi-line text joined by '\n'). */
  entries: Map<string, string>;
}

/** A value substituted by name (`%planet%`, `%empire%`): a placeholder. */
const NAMED_VALUE = /%[A-Za-z_]\w*%/;

const IDENTIFIER = /^[A-Za-z0-9_][A-Za-z0-9_.:-]*$/;

/** Parses a string table; a fault in one entry is reported and the entry skipped, a fault of the file thrown. */
export function parseStringTable(file: string, text: string, onProblem: (line: number, message: string) => void): StringTable {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const name = (lines[0] ?? '').trim();
  if (!name || name.startsWith('#') || name.includes("'''")) throw new Error(`${file}:1: the first line must name the table's language`);
  const entries = new Map<string, string>();
  let i = 1;
  while (i < lines.length) {
    const line = lines[i]!.replace(/\s#.*$/, '').trim(); // an identifier may carry a comment after it
    if (line === '' || line.startsWith('#')) {
      i++;
      continue;
    }
    const keyLine = i + 1;
    if (!IDENTIFIER.test(line)) {
      onProblem(keyLine, `"${line.slice(0, 40)}" is not an identifier`);
      while (i < lines.length && lines[i]!.trim() !== '') i++; // skip to the next blank line
      continue;
    }
    i++;
    if (i >= lines.length) {
      onProblem(keyLine, `${line} has no text`);
      break;
    }
    let value = lines[i]!;
    if (value.trimStart().startsWith("'''")) {
      let body = value.trimStart().slice(3);
      const parts: string[] = [];
      let closed = false;
      for (;;) {
        const end = body.indexOf("'''");
        if (end >= 0) {
          parts.push(body.slice(0, end));
          closed = true;
          break;
        }
        parts.push(body);
        i++;
        if (i >= lines.length) break;
        body = lines[i]!;
      }
      if (!closed) {
        onProblem(keyLine, `the text of ${line} opens ''' and never closes it`);
        break;
      }
      value = parts.join('\n');
    }
    i++;
    if (entries.has(line)) onProblem(keyLine, `${line} is defined twice (the first is kept)`);
    else entries.set(line, value);
  }
  return { name, entries };
}

function readTable(file: string, onProblem: (line: number, message: string) => void): StringTable {
  const text = readUtf8File(file);
  return parseStringTable(file, text, onProblem);
}

/** An English table: its entries, and its own faults (reported when the walk reaches en.txt itself). */
interface EnglishTable {
  entries: Map<string, string>;
  problems: [line: number, message: string][];
}

/** The English tables read, per file (read again when it changes). */
const englishCache: FileCache<EnglishTable> = new Map();

/** The English table of a folder (its en.txt), read once for every table of the folder and for en.txt's own faults. */
function englishTable(folder: string): EnglishTable {
  return readCached(englishCache, join(folder, 'en.txt'), 'string tables are paired with the English table of their folder', (file) => {
    const problems: EnglishTable['problems'] = [];
    const { entries } = readTable(file, (line, message) => problems.push([line, message]));
    return { entries, problems };
  });
}

/** The language of a table: its first line's name, else its file name's. */
export function stringTableLanguage(file: string, name: string): string | undefined {
  const named = langFromName(name);
  if (named && knownLanguage(named)) return named;
  const code = normalizeLang(basename(file).replace(/\.txt$/i, ''));
  return code && knownLanguage(code) ? code : undefined;
}

/** A text's paragraphs (its non-blank lines). */
const paragraphs = (t: string) =>
  t
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');

export const stringTableReader: SourceReader = {
  name: 'stringtable',
  accepts(file) {
    return /^[a-z]{2,3}([_-][A-Za-z]{2,4})?\.txt$/.test(basename(file)) && file.split(sep).slice(-2, -1)[0] === 'stringtables';
  },
  async *read(file: string, ctx: ReadContext): AsyncIterable<TranslationUnit> {
    if (basename(file) === 'en.txt') {
      // the English side of every other table: here only its faults are reported
      for (const [line, message] of englishTable(dirname(file)).problems) ctx.onProblem({ file, line, message });
      return;
    }
    const table = readTable(file, (line, message) => ctx.onProblem({ file, line, message }));
    const lang = stringTableLanguage(file, table.name);
    if (!lang) throw new Error(`${file}:1: "${table.name}" names no language xling knows, nor does the file name`);
    if (lang === 'en' || isEnglishVariant(lang)) return;
    const english = englishTable(dirname(file)).entries;
    const source = ctx.source ?? file;
    for (const [key, tr] of table.entries) {
      const en = english.get(key);
      if (en === undefined || !tr.trim()) continue;
      const a = paragraphs(en),
        b = paragraphs(tr);
      const pairs: [string, string][] = a.length === b.length ? a.map((p, k) => [p, b[k]!]) : [[a.join(' '), b.join(' ')]];
      for (const [pe, pt] of pairs) {
        if (NAMED_VALUE.test(pe) || NAMED_VALUE.test(pt)) continue;
        const ce = cleanMessage(pe, false),
          ct = cleanMessage(pt, false);
        if (ce === undefined || ct === undefined || !ct) continue;
        yield {
          texts: new Map([
            ['en', ce],
            [lang, ct],
          ]),
          source,
          // held out by identifier (one of 1,000 slices), the same in every language
          doc: `${basename(dirname(dirname(file)))}#${hashSeed(key) % 1000}`,
          kind: 'prose',
        };
      }
    }
  },
};

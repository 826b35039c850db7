// FreeDict bilingual dictionaries (Debian's dict-freedict-XXX-YYY packages): dictd databases
// `freedict-XXX-YYY.index` + `.dict.dz` whose file name gives the headword language XXX and the
// translation language YYY as ISO 639-3 codes. Each entry is plain text that FreeDict's TEI
// stylesheets (or older converters) wrote:
//
//   abandon /əˈbæn.dən/ <v>                  the headword line: orthographies, pronunciation in
//   1. ajaa pois, hylätä                      slashes, grammar in angle brackets; then senses,
//   to cast out, expel, reject                numbered when more than one: the first line of a
//   2. luovuttaa                              sense lists its translations; what follows is a
//         "Šel bo plavat."  - He will go …    definition, an example ("…" - translation), a note,
//      See also: {quit}                        or a cross-reference
//
// A unit pairs the headword with the first translation of a sense (every sense when the headword
// is in the other language: each is a different English word; only the first when the headword is
// English: the corpus keeps one translation per English text), a phrase with its translation (a
// sense line followed by a `- translation` line), and an example sentence with its translation.
// Pronunciations, grammar and usage labels, notes, definitions and cross-references are dropped.
// Dictionaries that say in their header (00-database-info, 00-database-short) that they come
// from the Tatoeba project are refused: evaluation sets are drawn from Tatoeba.
import { basename, dirname } from 'node:path';
import { dictdDataFile, dictdEntries, DictdEntry, readDictdIndex } from './dictd.js';
import { stripDictionaryAnnotations } from './dictionary.js';
import { knownLanguage, normalizeLang } from './langs.js';
import type { ReadContext, SourceReader, TranslationUnit } from './types.js';

/** Entries per document: the dev set holds out whole blocks of a dictionary. */
const ENTRIES_PER_DOC = 2000;

/** The header entries dictfmt writes (00-database-info, or 00databaseinfo in older indexes). */
const HEADER = /^00-?database-?(info|short)$/;

/**
 * The corpus's code for an ISO 639-3 code of a FreeDict file name (`ara` → `ar`, `swh` → `sw`,
 * `nor` → `nb`), by ICU's canonical form of the code. FreeDict's `rom` (ISO 639-3: Romany) is its
 * English–Romanian dictionary, whose header says Romanian.
 */
export function freedictLang(code: string): string | undefined {
  if (code === 'rom') return 'ro';
  let canon: string;
  try {
    canon = Intl.getCanonicalLocales(code)[0]!;
  } catch {
    return undefined;
  }
  const norm = normalizeLang(canon);
  return norm && knownLanguage(norm) ? norm : undefined;
}

/** `freedict-XXX-YYY.index`: the headword and translation languages (corpus codes). */
export function freedictLangs(file: string): [string, string] | undefined {
  const m = /^freedict-([a-z]{3})-([a-z]{3})\.index$/.exec(basename(file));
  if (!m) return undefined;
  const a = freedictLang(m[1]!);
  const b = freedictLang(m[2]!);
  return a && b && a !== b ? [a, b] : undefined;
}

export interface FreedictEntry {
  headword: string;
  /** the first translation of each sense that has one */
  senses: string[];
  /** (phrase in the headword's language, translation) */
  phrases: [string, string][];
  /** (example in the headword's language, translation) */
  examples: [string, string][];
}

/** Grammar in angle brackets, annotations, FreeDict's `~` between the words of a Hindi phrase, trailing sense numbers. */
function cleanText(s: string): string {
  return stripDictionaryAnnotations(s.replace(/<[^<>]*>/g, ' ').replace(/~/g, ' '))
    .replace(/(?:\s+\d+\.)+$/, '')
    .trim();
}

/** The first item of a list of translations (`a, b; c` → `a`), cleaned. */
function firstItem(line: string): string {
  const cleaned = cleanText(line);
  return cleaned.split(/\s*[,;،؛]\s+|\s*;\s*|\.\s+/)[0]!.replace(/^[,;.\s]+|[,;.\s]+$/g, '');
}

/** The headword of an entry's first line: its first orthography, before pronunciation and grammar. */
function headwordOf(line: string): string {
  const cut = line.search(/\s\/|\s<|\s\[/);
  return firstItem(cut < 0 ? line : line.slice(0, cut));
}

const SENSE_MARK = /^(?:(?:[IVX]+|\d+|[a-z])\.(?:\s+|$)|<[^<>]*>\s*)+/;
const XREF = /^(?:[\p{L} ]+:(?:\s|$)|[\p{L} ]+ of \{)|\{/u; // See also:, Synonyms:, Note:, see:, Plural of {…}, any {…}
const EXAMPLE = /^\s+"(.+)"\s+-\s+(.+)$/;

/** The senses, phrases and examples of one entry's text. */
export function parseFreedictEntry(text: string): FreedictEntry {
  const lines = text.split('\n');
  const out: FreedictEntry = { headword: headwordOf(lines[0] ?? ''), senses: [], phrases: [], examples: [] };
  let open = true; // the next content line is a sense's translations
  for (let i = 1; i < lines.length; i++) {
    const raw = lines[i]!;
    let line = raw.trim();
    if (line === '') continue;
    const ex = EXAMPLE.exec(raw);
    if (ex) {
      const [a, b] = [cleanText(ex[1]!), cleanText(ex[2]!)];
      if (a && b) out.examples.push([a, b]);
      continue;
    }
    if (line.startsWith('"') || line.startsWith('- ')) continue; // an example without translation; a phrase's translation (read below)
    const mark = SENSE_MARK.exec(line);
    if (mark) {
      line = line.slice(mark[0].length).trim();
      // a nested sense (indented number) with nothing after its number is a definition without translation
      open = !(line === '' && /^\s/.test(raw) && /\d\.\s*$/.test(mark[0]));
      if (line === '') continue;
    }
    if (XREF.test(line) || !open) continue;
    const joined = mark && /</.test(mark[0]) ? /^(.+?)\s{3,}(\S.*)$/.exec(line) : null;
    if (joined) {
      // `<N Comp>a captive audience   przymusowa publiczność`: a phrase and its translation on one line
      const [a, b] = [cleanText(joined[1]!.replace(/\s\/[^/]+\/(?=\s|$)/g, ' ')), firstItem(joined[2]!)];
      if (a && b) out.phrases.push([a, b]);
      open = false;
      continue;
    }
    const next = lines.slice(i + 1).find((l) => l.trim() !== '');
    if (next?.trim().startsWith('- ')) {
      const [a, b] = [cleanText(line), firstItem(next.trim().slice(2))];
      if (a && b) out.phrases.push([a, b]);
      open = false;
      continue;
    }
    const first = firstItem(line);
    if (first === '') continue; // only grammar or notes: the translations come on the next line
    out.senses.push(first);
    open = false;
  }
  return out;
}

/** The script a language is written in, when it is not Latin (hi → Deva, el → Grek, ja → Han|Hira|Kana). */
function scriptTest(lang: string): RegExp {
  let script: string | undefined;
  try {
    script = new Intl.Locale(lang.split('_')[0]!).maximize().script;
  } catch {
    script = undefined;
  }
  const scripts =
    script === 'Jpan' ? ['Han', 'Hira', 'Kana'] : script === 'Kore' ? ['Hang', 'Han'] : script === 'Hans' || script === 'Hant' ? ['Han'] : [script ?? 'Latn'];
  return new RegExp(scripts.map((s) => `\\p{Script=${s}}`).join('|'), 'u');
}

/** The units of one entry: (headword language, translation language) texts. */
export function freedictPairs(e: FreedictEntry, headwordIsEnglish: boolean): { pair: [string, string]; example: boolean }[] {
  const out: { pair: [string, string]; example: boolean }[] = [];
  const senses = headwordIsEnglish ? e.senses.slice(0, 1) : e.senses;
  if (e.headword) for (const s of senses) out.push({ pair: [e.headword, s], example: false });
  for (const p of e.phrases) out.push({ pair: p, example: false });
  for (const p of e.examples) out.push({ pair: p, example: true });
  // affixes (`-ebl-`, `re-`) and texts left with half a bracket pair by a converter are not translations
  const usable = (t: string): boolean => t !== '' && !/^-|-$|[()[\]{}]/.test(t);
  return out.filter(({ pair: [a, b] }) => usable(a) && usable(b));
}

export const freedictReader: SourceReader = {
  name: 'freedict',
  accepts(file: string): boolean {
    return freedictLangs(file) !== undefined && dictdDataFile(file) !== undefined;
  },
  read(file: string, ctx: ReadContext): AsyncIterable<TranslationUnit> {
    return readFreedict(file, ctx);
  },
};

/** The text of the header entries (00-database-info and -short), read from the start of the data. */
async function headerText(data: string, header: DictdEntry[], index: string): Promise<string> {
  let text = '';
  for await (const { bytes } of dictdEntries(data, header, index)) text += bytes.toString('utf8') + '\n';
  return text;
}

async function* readFreedict(file: string, ctx: ReadContext): AsyncGenerator<TranslationUnit> {
  const langs = freedictLangs(file);
  const data = dictdDataFile(file);
  if (!langs || !data) throw new Error(`${file}: not a FreeDict index (freedict-XXX-YYY.index beside its .dict.dz)`);
  const [left, right] = langs;
  const entries = await readDictdIndex(file, (line, message) => ctx.onProblem({ file, line, message }));
  const header = entries.filter((e) => HEADER.test(e.headword));
  if (/tatoeba/i.test(await headerText(data, header, file)))
    throw new Error(`${file}: the dictionary says it is derived from the Tatoeba project; not read (evaluation sets come from Tatoeba)`);
  const body = entries.filter((e) => !/^00-?database/.test(e.headword));
  if (body.length === 0) throw new Error(`${file}: no dictionary entries`);
  const leftScript = scriptTest(left);
  const rightScript = scriptTest(right);
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const source = ctx.source ?? file;
  const name = `${basename(dirname(file))}/${basename(file).replace(/\.index$/, '')}`;
  let n = 0;
  for await (const { entry, bytes } of dictdEntries(data, body, file)) {
    const doc = `${name}#${Math.floor(n++ / ENTRIES_PER_DOC)}`;
    let text: string;
    try {
      text = decoder.decode(bytes);
    } catch {
      ctx.onProblem({ file, line: entry.line, message: `the entry at byte ${entry.offset} of ${basename(data)} is not UTF-8; skipped` });
      continue;
    }
    for (const { pair, example } of freedictPairs(parseFreedictEntry(text), left === 'en')) {
      // a text not in its language's script (an English example left in a sense of a Hindi dictionary) is no translation
      if (!leftScript.test(pair[0]) || !rightScript.test(pair[1])) continue;
      yield {
        texts: new Map([
          [left, pair[0]],
          [right, pair[1]],
        ]),
        source,
        doc,
        kind: example && pair[left === 'en' ? 0 : 1].split(/\s+/).length > 12 ? 'message' : 'phrase',
      };
    }
  }
}

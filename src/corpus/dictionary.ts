// Bilingual dictionaries as phrase-level translation units: everyday words, idioms and example
// sentences, which software catalogs and manuals barely hold.
//
// Ding (the German–English dictionary of TU Chemnitz; Debian's trans-de-en, /usr/share/trans/de-en):
// UTF-8 lines `German side :: English side`, `#` comments. A side is a list of sub-entries
// separated by ` | ` that correspond one to one across the two sides (the headword, its inflected
// forms, phrases and example sentences with it); a sub-entry lists synonyms separated by `; `.
// Annotations are grammar in braces ({m}, {pl}, {vt}), usage in brackets ([Br.], [ugs.]) and
// explanations in parentheses, none of them part of the translation. A unit pairs the first synonym
// of each side of a sub-entry that is an example sentence or a phrase of three English words or
// more ("to refuse to give evidence", "Is anyone there?"); single words and two-word terms (two
// thirds of the entries, mostly technical vocabulary) and inflected forms (plurals `{pl}`,
// conjugations `er/sie geht`) are left out. The file's name gives the two languages (`de-en`:
// German left, English right).
//
// EDICT (the Japanese–English dictionary of the EDRDG, JMdict's EDICT form; Debian's edict,
// /usr/share/edict/edict): EUC-JP lines `KANJI [KANA] /gloss/gloss/…/` or `KANA /gloss/…/`, the
// first line a header. Glosses carry leading tags in parentheses (part of speech, sense number,
// field, `(uk)`: usually written in kana) and `(P)` as a last field marks the common words. Only
// common words are read (the rest is rare vocabulary); a unit pairs the headword (its kana reading
// when the entry is usually written in kana) with the first gloss of the first sense.
import { basename, dirname } from 'node:path';
import { readLines } from '../io/input.js';
import { normalizeLang } from './langs.js';
import type { ReadContext, SourceReader, TranslationUnit } from './types.js';

/** Lines per document: the dev set holds out whole blocks of a dictionary. */
const LINES_PER_DOC = 2000;

/** The document of a line: its block of the file, named without the folders above it (the same wherever the file lies). */
function docOf(file: string, no: number): string {
  return `${basename(dirname(file))}/${basename(file)}#${Math.floor(no / LINES_PER_DOC)}`;
}

/** Removes {…}, […] and (…) annotations, and the spaces they leave. */
export function stripDictionaryAnnotations(s: string): string {
  let out = s;
  for (let prev = ''; prev !== out; ) {
    prev = out;
    out = out.replace(/\{[^{}]*\}|\[[^[\]]*\]|\([^()]*\)/g, ' ');
  }
  return out
    .replace(/\s+/g, ' ')
    .replace(/\s+([,.;:!?…])/g, '$1')
    .trim();
}

/** The first synonym of a sub-entry (`a; b; c` → `a`), annotations removed; '' when none. */
function firstSynonym(sub: string): string {
  // split on '; ' outside brackets and parentheses
  let depth = 0;
  for (let i = 0; i < sub.length; i++) {
    const c = sub[i];
    if (c === '(' || c === '[' || c === '{') depth++;
    else if ((c === ')' || c === ']' || c === '}') && depth > 0) depth--;
    else if (c === ';' && depth === 0) return stripDictionaryAnnotations(sub.slice(0, i));
  }
  return stripDictionaryAnnotations(sub);
}

/** The (German, English) pairs a Ding entry line yields. */
export function dingPairs(line: string): [string, string][] {
  const sep = line.indexOf(' :: ');
  if (sep < 0) return [];
  const left = line.slice(0, sep).split(' | ');
  const right = line.slice(sep + 4).split(' | ');
  const n = left.length === right.length ? left.length : 1;
  const out: [string, string][] = [];
  for (let i = 0; i < n; i++) {
    const l = left[i]!;
    const r = right[i]!;
    if (i > 0 && (/\{pl\}/.test(l) || /\S\/\S/.test(l) || /\S\/\S/.test(r))) continue; // inflected forms
    const a = firstSynonym(l);
    const b = firstSynonym(r);
    if (a && b && (/[.?!]$/.test(b) || b.split(' ').length >= 3)) out.push([a, b]);
  }
  return out;
}

/** `de-en` style file names: the languages of the left and right sides. */
function dingLangs(file: string): [string, string] | undefined {
  const m = /^([a-z]{2,3})-([a-z]{2,3})$/.exec(basename(file));
  if (!m) return undefined;
  const a = normalizeLang(m[1]!);
  const b = normalizeLang(m[2]!);
  return a && b && a !== b ? [a, b] : undefined;
}

export const dingReader: SourceReader = {
  name: 'ding',
  accepts(file: string, head: Buffer): boolean {
    if (!dingLangs(file)) return false;
    const text = head.toString('utf8');
    return /^# Version :: /.test(text) || text.split('\n', 20).some((line) => /^[^#].* :: ./.test(line));
  },
  read(file: string, ctx: ReadContext): AsyncIterable<TranslationUnit> {
    return readDing(file, ctx);
  },
};

async function* readDing(file: string, ctx: ReadContext): AsyncGenerator<TranslationUnit> {
  const langs = dingLangs(file);
  if (!langs) throw new Error(`${file}: a Ding dictionary is named after its languages (de-en); this name is not`);
  const [left, right] = langs;
  const source = ctx.source ?? file;
  let entries = 0;
  for await (const { line, no } of readLines(file)) {
    if (line === '' || line.startsWith('#')) continue;
    if (!line.includes(' :: ')) {
      ctx.onProblem({ file, line: no, message: 'not a dictionary entry (no " :: " between the two languages); skipped' });
      continue;
    }
    entries++;
    const doc = docOf(file, no);
    for (const [a, b] of dingPairs(line)) {
      yield {
        texts: new Map([
          [left, a],
          [right, b],
        ]),
        source,
        doc,
        kind: 'phrase',
      };
    }
  }
  if (entries === 0) throw new Error(`${file}: no dictionary entries ("German :: English" lines)`);
}

/** The (Japanese, English) pair of an EDICT line, or undefined for an uncommon or unusable entry. */
export function edictPair(line: string): [string, string] | undefined {
  const m = /^(\S+)(?: \[([^\]\s]+)\])? \/(.*)\/$/.exec(line);
  if (!m) return undefined;
  const fields = m[3]!.split('/');
  if (!fields.includes('(P)')) return undefined;
  let gloss = fields[0]!;
  let usuallyKana = false;
  // leading tags: (n), (adj-na,n), (1), (uk), {comp}, …
  for (;;) {
    const t = /^\s*(\([^()]*\)|\{[^{}]*\})\s*/.exec(gloss);
    if (!t) break;
    if (/^\((?:[^()]*,)?uk(?:,[^()]*)?\)$/.test(t[1]!)) usuallyKana = true;
    gloss = gloss.slice(t[0].length);
  }
  const en = stripDictionaryAnnotations(gloss);
  const headword = m[1]!.split(';')[0]!.replace(/\([^()]*\)/g, '');
  const reading = m[2] === undefined ? undefined : m[2].split(';')[0]!.replace(/\([^()]*\)/g, '');
  const ja = usuallyKana && reading ? reading : headword;
  return en && ja ? [ja, en] : undefined;
}

export const edictReader: SourceReader = {
  name: 'edict',
  accepts(file: string, head: Buffer): boolean {
    return /^edict2?$/i.test(basename(file)) && head.subarray(0, 200).includes('/EDICT');
  },
  read(file: string, ctx: ReadContext): AsyncIterable<TranslationUnit> {
    return readEdict(file, ctx);
  },
};

async function* readEdict(file: string, ctx: ReadContext): AsyncGenerator<TranslationUnit> {
  const source = ctx.source ?? file;
  let entries = 0;
  const lines = readLines(file, { encoding: 'euc-jp' });
  for await (const { line, no } of lines) {
    if (no === 1 || line === '') continue; // the header
    if (!/ \/.*\/$/.test(line)) {
      ctx.onProblem({ file, line: no, message: 'not an EDICT entry (WORD [READING] /gloss/…/); skipped' });
      continue;
    }
    entries++;
    const pair = edictPair(line);
    if (!pair) continue;
    yield {
      texts: new Map([
        ['ja', pair[0]],
        ['en', pair[1]],
      ]),
      source,
      doc: docOf(file, no),
      kind: 'phrase',
    };
  }
  if (entries === 0) throw new Error(`${file}: no EDICT entries`);
}

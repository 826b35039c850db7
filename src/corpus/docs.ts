// Translated document sets as translation units: the same documents in several languages (Mallard
// help pages, DocBook XML, HTML manuals), paired by structure, then by sentence.
//
// Layouts (a "document set" is a folder):
// - one subfolder per language holding the same relative paths: `C/` or `en/` (`en_US`, `en-US`)
//   is English; GNOME help (`help/<lang>/gnome-help/*.page`), the Debian Administrator's Handbook
//   (`html/<lang>-<REGION>/*.html`), LibreOffice help (`help/<lang>/text/**/*.html`), a user's
//   DocBook or HTML tree;
// - one folder of files named `NAME.<lang>.html` (`NAME.<lang>.xml`, `.page`), as the Debian
//   Reference installs (`ch01.en.html`, `ch01.de.html`, `ch01.zh-cn.html`).
// A folder that is not a set itself is searched for sets below it (a package's extracted tree).
//
// Pairing: the same file in English and another language; in it the blocks (doc-blocks.ts) of
// both, by position, when the two sequences have the same length and the same element paths. When
// they differ, the blocks are paired by id scope (the nearest enclosing element id: a section, a
// LibreOffice paragraph): by position where a scope holds the same blocks in both languages, else
// around one run of blocks added or removed in it, where the structure says unambiguously which
// blocks those are (singleGapPairs); the others are skipped, counted and reported as information.
// A block pair then becomes sentence pairs: sentences by Intl.Segmenter in
// each language; the same number on both sides pairs them one to one; different numbers are
// aligned with alignSentences (vecalign, src/align) when an embedder is given, keeping 1:1, 1:2
// and 2:1 groups of cost below a threshold (two sentences joined with a space, or nothing in
// Chinese and Japanese), else the whole paragraph is one unit when each side has at most three
// sentences. A translation identical to the English (an untranslated string left in place) is
// dropped; code-only blocks are not paired. Units go through English: one unit per English
// sentence (or sentence run) holding every language that pairs with it.

import { readdirSync, statSync, type Dirent } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { alignSentences, type AlignedGroup, type SentenceEmbedder } from '../align/align.js';
import { sentences } from './clean.js';
import { DocBlock, DocParseError, GENERATED_TEXT, decodeDocument, docFormatOf, htmlBlocks, xmlBlocks } from './doc-blocks.js';
import { isEnglishVariant, normalizeLang } from './langs.js';
import { ReadContext, TranslationUnit } from './types.js';

/** Counts of one read, by what happened to each block of a translation (English blocks × languages). */
export interface DocumentSetStats {
  sets: number;
  files: number;
  languages: Set<string>;
  units: number;
  /** translated blocks paired with their English block */
  blocksPaired: number;
  /** blocks left out: structure differs from English, code-only, same text as English, sentences not pairable */
  skippedStructure: number;
  skippedCode: number;
  skippedUntranslated: number;
  skippedSentences: number;
  /** sentence pairs dropped: a side holds a generated cross-reference, or the translation is mostly the English words */
  sentencesDropped: number;
  /** files of a language unreadable (reported) */
  badFiles: number;
  /** sentence pairs made by alignSentences, and groups dropped for their cost or shape */
  aligned: number;
  alignDropped: number;
}

export function emptyDocumentSetStats(): DocumentSetStats {
  return {
    sets: 0,
    files: 0,
    languages: new Set(),
    units: 0,
    blocksPaired: 0,
    skippedStructure: 0,
    skippedCode: 0,
    skippedUntranslated: 0,
    skippedSentences: 0,
    sentencesDropped: 0,
    badFiles: 0,
    aligned: 0,
    alignDropped: 0,
  };
}

export type DocSetContext = ReadContext & {
  /** sentence alignment of paragraphs whose sentence counts differ */
  align?: SentenceEmbedder;
  source?: string;
  /** alignSentences groups cost at most this (default DEFAULT_ALIGN_MAX_COST) */
  alignMaxCost?: number;
  /** filled with the read's counts */
  stats?: DocumentSetStats;
};

/**
 * The highest cost of a kept group. vecalign's costs are 1 − cos normalised by the other
 * sentences of the two documents; within one short paragraph that normalisation has little to go
 * on and costs run high: on the Debian Administrator's Handbook with the default model, groups up
 * to 0.8 were translations in a manual check (20 of 20), above 0.9 some were partial.
 */
export const DEFAULT_ALIGN_MAX_COST = 0.8;
/** Paragraphs with different sentence counts are one unit when neither side has more sentences. */
const WHOLE_PARAGRAPH_SENTENCES = 3;
/** Files larger than this are reported and skipped. */
const MAX_FILE_BYTES = 16 << 20;
/** How deep below a given folder document sets are searched. */
const MAX_SEARCH_DEPTH = 8;

const ENGLISH_FOLDERS = new Set(['C', 'c', 'en', 'en_US', 'en-US', 'en_us', 'en-us']);
const SUFFIXED = /^(.+)\.([A-Za-z]{2,3}(?:[-_@][A-Za-z0-9]{2,8})*)\.(page|xml|docbook|dbk|html?|xhtml)$/i;

/** One document set: English and each other language's files, by a shared relative name. */
interface SetLayout {
  root: string;
  /** language → (document name → file path) */
  files: Map<string, Map<string, string>>;
}

function listDir(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

/** Document files under a folder, by relative path (symbolic links are not followed). */
function documentFiles(dir: string, depth = 0, out = new Map<string, string>(), base = dir): Map<string, string> {
  if (depth > MAX_SEARCH_DEPTH) return out;
  for (const e of listDir(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory()) documentFiles(p, depth + 1, out, base);
    else if (e.isFile() && docFormatOf(e.name)) out.set(relative(base, p).split(sep).join('/'), p);
  }
  return out;
}

/** The language of a per-language folder name ('C' and en_US are English), or undefined. */
function folderLang(name: string): string | undefined {
  if (ENGLISH_FOLDERS.has(name)) return 'en';
  const l = normalizeLang(name);
  return l === undefined || isEnglishVariant(l) ? undefined : l;
}

function folderLayout(root: string): SetLayout | undefined {
  const dirs = listDir(root).filter((e) => e.isDirectory());
  const englishDir = dirs.find((d) => ENGLISH_FOLDERS.has(d.name));
  if (!englishDir) return undefined;
  const en = documentFiles(join(root, englishDir.name));
  if (en.size === 0) return undefined;
  const files = new Map<string, Map<string, string>>([['en', en]]);
  for (const d of dirs) {
    if (d === englishDir) continue;
    const lang = folderLang(d.name);
    if (lang === undefined || lang === 'en' || files.has(lang)) continue;
    const own = documentFiles(join(root, d.name));
    let shared = 0;
    for (const k of own.keys()) if (en.has(k)) shared++;
    if (shared > 0) files.set(lang, own);
  }
  return files.size > 1 ? { root, files } : undefined;
}

function suffixLayout(root: string): SetLayout | undefined {
  const files = new Map<string, Map<string, string>>();
  for (const e of listDir(root)) {
    if (!e.isFile()) continue;
    const m = SUFFIXED.exec(e.name);
    if (!m) continue;
    const lang = m[2] === 'C' ? 'en' : normalizeLang(m[2]!);
    if (lang === undefined || (lang !== 'en' && isEnglishVariant(lang))) continue;
    const name = `${m[1]}.${m[3]}`;
    let f = files.get(lang);
    if (!f) files.set(lang, (f = new Map()));
    f.set(name, join(root, e.name));
  }
  const en = files.get('en');
  if (!en) return undefined;
  for (const [lang, f] of files) {
    if (lang !== 'en' && ![...f.keys()].some((k) => en.has(k))) files.delete(lang);
  }
  return files.size > 1 ? { root, files } : undefined;
}

function layoutOf(root: string): SetLayout | undefined {
  return folderLayout(root) ?? suffixLayout(root);
}

/**
 * Whether a folder is a document set: per-language subfolders (`C` or `en` for English) with
 * documents at the same relative paths, or `NAME.<lang>.html` files with an English one.
 */
export function isDocumentSet(root: string): boolean {
  try {
    if (!statSync(root).isDirectory()) return false;
  } catch {
    return false;
  }
  return layoutOf(root) !== undefined;
}

/** The document sets at or below a folder (a set's own subfolders are not searched further). */
export function findDocumentSets(root: string, depth = 0): string[] {
  if (isDocumentSet(root)) return [root];
  if (depth >= MAX_SEARCH_DEPTH) return [];
  const out: string[] = [];
  for (const e of listDir(root)) if (e.isDirectory()) out.push(...findDocumentSets(join(root, e.name), depth + 1));
  return out;
}

// ---------------------------------------------------------------------------------------------
// sentences

/** Sentences of a text by Intl.Segmenter with the language's rules (the corpus's one splitter). */
export { sentences as splitSentences } from './clean.js';

/** Languages written without spaces between sentences. */
function joinerOf(lang: string): string {
  return /^(zh|ja)(_|$)/.test(lang) ? '' : ' ';
}

/** A sentence span of the English block and a language's text for it. */
interface SpanText {
  start: number;
  end: number;
  text: string;
}

/**
 * The sentence pairs of an English paragraph and its translation: spans of English sentences
 * with the translation's text. Equal counts: one to one; otherwise the groups an aligner keeps
 * (when one is given and it splits the paragraph), else the whole paragraph when both sides have
 * at most three sentences, else nothing.
 */
export async function pairSentences(en: string[], other: string[], lang: string, align: ParagraphAligner | undefined): Promise<SpanText[] | undefined> {
  if (en.length === other.length) return en.map((_, i) => ({ start: i, end: i + 1, text: other[i]! }));
  if (align) {
    // a paragraph aligned as one group, or none of whose groups is kept, falls back to the whole
    // paragraph rule: vecalign normalises a group's cost by the other sentences of the two
    // documents, which a short paragraph hardly has (2:1 translations cost ~1 there)
    const spans = await align(en, other, lang);
    if (spans !== undefined && spans.length > 0 && !(spans.length === 1 && spans[0]!.start === 0 && spans[0]!.end === en.length)) return spans;
  }
  if (en.length <= WHOLE_PARAGRAPH_SENTENCES && other.length <= WHOLE_PARAGRAPH_SENTENCES) {
    return [{ start: 0, end: en.length, text: other.join(joinerOf(lang)) }];
  }
  return undefined;
}

/** Aligns an English paragraph's sentences with a translation's: the kept spans (or undefined: not alignable). */
export type ParagraphAligner = (en: string[], other: string[], lang: string) => Promise<SpanText[] | undefined>;

/**
 * The aligner over alignSentences: groups of 1:1, 1:2 or 2:1 sentences with cost ≤ maxCost are
 * kept, others (deletions, larger groups, costly ones) dropped. Texts are embedded with their
 * language's code; a code the embedder does not know (an error) is left to it to identify.
 */
export function sentenceAligner(embedder: SentenceEmbedder, maxCost: number, counts?: { aligned: number; alignDropped: number }): ParagraphAligner {
  const unknown = new Set<string>();
  const run = async (en: string[], other: string[], lang: string): Promise<AlignedGroup[]> => {
    const code = (l: string) => (unknown.has(l) ? undefined : l);
    try {
      return await alignSentences(en, other, embedder, { srcLang: code('en'), trgLang: code(lang) });
    } catch (e) {
      for (const l of [lang, 'en'])
        if (!unknown.has(l)) {
          unknown.add(l);
          return run(en, other, lang);
        }
      throw e;
    }
  };
  return async (en, other, lang) => {
    const groups = await run(en, other, lang);
    const out: SpanText[] = [];
    for (const g of groups) {
      const ok = g.src.length >= 1 && g.trg.length >= 1 && g.src.length + g.trg.length <= 3 && g.cost <= maxCost;
      if (!ok) {
        if (counts && g.src.length) counts.alignDropped++;
        continue;
      }
      if (counts) counts.aligned++;
      out.push({ start: g.src[0]!, end: g.src[g.src.length - 1]! + 1, text: g.trg.map((j) => other[j]!).join(joinerOf(lang)) });
    }
    return out;
  };
}

/**
 * A translation that is mostly the English left in place (a partly translated paragraph, a
 * cross-reference its only translated part): of its four or more words, 70% or more are words
 * of the English sentence.
 */
export function looksUntranslated(english: string, text: string): boolean {
  const words = text.toLowerCase().match(/\p{L}+/gu) ?? [];
  if (words.length < 4) return false;
  const en = new Set(english.toLowerCase().match(/\p{L}+/gu) ?? []);
  return words.filter((w) => en.has(w)).length >= 0.7 * words.length;
}

// ---------------------------------------------------------------------------------------------
// blocks

/** Blocks of one file, or a problem reported and undefined. */
async function fileBlocks(path: string, ctx: DocSetContext): Promise<DocBlock[] | undefined> {
  const kind = docFormatOf(path)!;
  try {
    const st = statSync(path);
    if (st.size > MAX_FILE_BYTES) throw new DocParseError(`larger than ${MAX_FILE_BYTES >> 20} MiB`);
    const text = decodeDocument(await readFile(path), kind);
    return kind === 'html' ? htmlBlocks(text) : xmlBlocks(text).blocks;
  } catch (e) {
    const line = e instanceof DocParseError ? e.line : undefined;
    ctx.onProblem({ file: path, ...(line !== undefined ? { line } : {}), message: `skipped: ${(e as Error).message}` });
    return undefined;
  }
}

const sameShape = (a: DocBlock[], b: DocBlock[]) => a.length === b.length && a.every((x, i) => x.path === b[i]!.path);

/**
 * Pairs of two block sequences that differ by one run of blocks added or removed in one place:
 * the blocks before the longest common prefix of paths and after the longest common suffix that
 * both explanations agree on. Where the run's position is ambiguous (the blocks around it have
 * the same path) those blocks are left out; when no single run explains the difference, nothing
 * pairs. [index in a, index in b] pairs.
 */
export function singleGapPairs(a: readonly string[], b: readonly string[]): [number, number][] {
  const n = a.length,
    m = b.length;
  let p = 0;
  while (p < n && p < m && a[p] === b[p]) p++;
  if (p === n && n === m) return a.map((_, i) => [i, i]);
  let s = 0;
  while (s < n && s < m && a[n - 1 - s] === b[m - 1 - s]) s++;
  const short = Math.min(n, m);
  if (p + s < short) return []; // more than one place differs
  const out: [number, number][] = [];
  // before the gap for certain: indices below short − s (the gap starts at or after it)
  for (let i = 0; i < Math.min(p, short - s); i++) out.push([i, i]);
  // after the gap for certain: the last indices from p on (the gap ends at or before them)
  for (let k = Math.min(s, short - p); k > 0; k--) out.push([n - k, m - k]);
  return out;
}

/**
 * English block index → the translation's block, by structure: position when both sequences have
 * the same paths; else within each id scope, by position when the scope holds the same paths in
 * both, or around one run of blocks added or removed (singleGapPairs).
 */
export function pairBlocks(en: DocBlock[], other: DocBlock[]): Map<number, DocBlock> {
  const out = new Map<number, DocBlock>();
  if (sameShape(en, other)) {
    en.forEach((_, i) => out.set(i, other[i]!));
    return out;
  }
  const byScope = (bs: DocBlock[]) => {
    const m = new Map<string, number[]>();
    bs.forEach((b, i) => {
      let l = m.get(b.scope);
      if (!l) m.set(b.scope, (l = []));
      l.push(i);
    });
    return m;
  };
  const es = byScope(en),
    os = byScope(other);
  for (const [scope, ei] of es) {
    const oi = os.get(scope);
    if (oi === undefined) continue;
    for (const [x, y] of singleGapPairs(
      ei.map((i) => en[i]!.path),
      oi.map((i) => other[i]!.path),
    ))
      out.set(ei[x]!, other[oi[y]!]!);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// reading

function layoutOrThrow(root: string): { sets: SetLayout[] } {
  let st;
  try {
    st = statSync(root);
  } catch (e) {
    throw new Error(`${root}: cannot read the document set: ${(e as Error).message}`);
  }
  if (!st.isDirectory()) throw new Error(`${root}: not a folder (a document set is a folder with one subfolder per language)`);
  const direct = layoutOf(root);
  if (direct) return { sets: [direct] };
  const sets = findDocumentSets(root)
    .map((r) => layoutOf(r)!)
    .filter(Boolean);
  if (!sets.length) {
    throw new Error(
      `${root}: no document set found (expected subfolders C/ or en/ and other languages with the same .page/.xml/.html files, or NAME.en.html beside NAME.<lang>.html)`,
    );
  }
  return { sets };
}

/**
 * The translation units of a document set (or of each set below a folder): one per English
 * sentence (or sentence run) with every language paired with it. Bad files are reported through
 * ctx.onProblem and skipped, as are files whose blocks do not pair; a folder holding no document
 * set is an Error naming it.
 */
export async function* readDocumentSet(root: string, ctx: DocSetContext): AsyncIterable<TranslationUnit> {
  const { sets } = layoutOrThrow(root);
  // this read's counts, added to ctx.stats when it ends (its report gives this read's alone)
  const stats = emptyDocumentSetStats();
  try {
    yield* readSets(root, sets, ctx, stats);
  } finally {
    if (ctx.stats) addStats(ctx.stats, stats);
  }
  const skipped = stats.skippedStructure + stats.skippedCode + stats.skippedUntranslated + stats.skippedSentences;
  if (skipped > 0) {
    ctx.onProblem({
      file: root,
      message: `document set: ${stats.units} units from ${stats.files} files in ${stats.languages.size} languages; translated blocks paired ${stats.blocksPaired}, skipped ${skipped} (structure differs ${stats.skippedStructure}, code only ${stats.skippedCode}, same as English ${stats.skippedUntranslated}, sentences not pairable ${stats.skippedSentences}); sentence pairs dropped ${stats.sentencesDropped} (a generated cross-reference, or mostly English words)`,
    });
  }
}

/** Adds one read's counts to a total. */
export function addStats(total: DocumentSetStats, s: DocumentSetStats): void {
  for (const k of Object.keys(s) as (keyof DocumentSetStats)[]) {
    if (k === 'languages') for (const l of s.languages) total.languages.add(l);
    else total[k] += s[k];
  }
}

/** A document's English sentence spans "start:end" of each block → language → text. */
type SpanTexts = Map<number, Map<string, Map<string, string>>>;

/** A paired block's sentence pairs (aligned, or the paragraph whole when the aligner fails); undefined: not pairable. */
async function blockSentencePairs(es: string[], b: DocBlock, lang: string, path: string, aligner: ParagraphAligner | undefined, ctx: DocSetContext) {
  const bs = sentences(b.text, lang);
  try {
    return await pairSentences(es, bs, lang, aligner);
  } catch (err) {
    ctx.onProblem({
      file: path,
      line: b.line,
      message: `sentence alignment failed (the paragraph is paired whole or skipped): ${(err as Error).message}`,
    });
    return await pairSentences(es, bs, lang, undefined);
  }
}

/** One language's file of a document against the English one: its blocks paired, their sentences paired into `spans`. */
async function pairLanguage(
  doc: { enPath: string; enBlocks: DocBlock[]; enSentences: Map<number, string[]>; spans: SpanTexts },
  lang: string,
  path: string,
  aligner: ParagraphAligner | undefined,
  ctx: DocSetContext,
  stats: DocumentSetStats,
): Promise<void> {
  const { enBlocks, enSentences, spans } = doc;
  const blocks = await fileBlocks(path, ctx);
  if (!blocks) {
    stats.badFiles++;
    return;
  }
  const paired = pairBlocks(enBlocks, blocks);
  const unpaired = enBlocks.length - paired.size;
  if (unpaired > 0) {
    stats.skippedStructure += unpaired;
    ctx.onProblem({
      file: path,
      message: `${unpaired} of ${enBlocks.length} blocks not paired: the structure differs from the English ${doc.enPath} (${blocks.length} blocks against ${enBlocks.length})`,
    });
  }
  for (const [i, b] of [...paired].sort((x, y) => x[0] - y[0])) {
    const e = enBlocks[i]!;
    if (e.code || b.code || !/\p{L}/u.test(e.text)) {
      stats.skippedCode++;
      continue;
    }
    if (b.text === e.text) {
      stats.skippedUntranslated++;
      continue;
    }
    let es = enSentences.get(i);
    if (!es) enSentences.set(i, (es = sentences(e.text, 'en')));
    const pairs = await blockSentencePairs(es, b, lang, path, aligner, ctx);
    if (!pairs?.length) {
      stats.skippedSentences++;
      continue;
    }
    stats.blocksPaired++;
    stats.languages.add(lang);
    let bySpan = spans.get(i);
    if (!bySpan) spans.set(i, (bySpan = new Map()));
    for (const p of pairs) {
      const key = `${p.start}:${p.end}`;
      let texts = bySpan.get(key);
      if (!texts) bySpan.set(key, (texts = new Map()));
      texts.set(lang, p.text);
    }
  }
}

/** A document's units: each English sentence span with the languages' texts that pass (not generated, not English left untranslated). */
function* spanUnits(spans: SpanTexts, enSentences: Map<number, string[]>, stats: DocumentSetStats): Generator<Map<string, string>> {
  for (const i of [...spans.keys()].sort((a, b) => a - b)) {
    const es = enSentences.get(i)!;
    const keys = [...spans.get(i)!.keys()].map((k) => k.split(':').map(Number) as [number, number]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    for (const [s, e] of keys) {
      const english = es.slice(s, e).join(' ');
      const texts = new Map<string, string>([['en', english]]);
      const others = spans.get(i)!.get(`${s}:${e}`)!;
      if (english.includes(GENERATED_TEXT) || !/\p{L}/u.test(english)) {
        stats.sentencesDropped += others.size;
        continue;
      }
      for (const [lang, t] of others) {
        if (t !== english && !t.includes(GENERATED_TEXT) && /\p{L}/u.test(t) && !looksUntranslated(english, t)) texts.set(lang, t);
        else stats.sentencesDropped++;
      }
      if (texts.size < 2) continue;
      stats.units++;
      yield texts;
    }
  }
}

async function* readSets(root: string, sets: SetLayout[], ctx: DocSetContext, stats: DocumentSetStats): AsyncIterable<TranslationUnit> {
  const source = ctx.source ?? root;
  const aligner = ctx.align ? sentenceAligner(ctx.align, ctx.alignMaxCost ?? DEFAULT_ALIGN_MAX_COST, stats) : undefined;
  let files = 0;
  for (const set of sets) {
    stats.sets++;
    const prefix = set.root === root ? '' : relative(root, set.root).split(sep).join('/') + '/';
    const en = set.files.get('en')!;
    const langs = [...set.files.keys()].filter((l) => l !== 'en').sort();
    for (const [name, enPath] of [...en].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
      const present = langs.filter((l) => set.files.get(l)!.has(name));
      if (!present.length) continue;
      const enBlocks = await fileBlocks(enPath, ctx);
      files++;
      stats.files++;
      if (!enBlocks) {
        stats.badFiles++;
        continue;
      }
      const doc = { enPath, enBlocks, enSentences: new Map<number, string[]>(), spans: new Map() as SpanTexts };
      for (const lang of present) await pairLanguage(doc, lang, set.files.get(lang)!.get(name)!, aligner, ctx, stats);
      for (const texts of spanUnits(doc.spans, doc.enSentences, stats)) yield { texts, source, doc: prefix + name, kind: 'prose' };
      ctx.onProgress?.(files, stats.units);
    }
  }
}

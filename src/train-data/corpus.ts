// Streaming corpus readers. Every error names the file and line. Lines are strict UTF-8.
import { readLines } from '../io/input.js';

export interface ReadOptions {
  /** Lines longer than this are cut to it (default MAX_LINE_CHARS, src/io/lines.ts). */
  maxChars?: number;
  /** Over-long or empty lines: 'error' (default) or 'skip' (counted in `skipped`). */
  onBad?: 'error' | 'skip';
}

/** A language code of a corpus header: `de`, `pt_br`, `zh_tw`, `sr_latn`, `kok_roman`, `sr_ijekavianlatin`. */
export const LANG_CODE = /^[a-z]{2,3}(_[a-z0-9]{2,16})?$/i;

/** The metadata column naming where a row comes from: comma-separated source names (`xling corpus` writes it). */
export const SOURCE_COLUMN = '#source';

/** The source names of a `#source` cell. */
export function sourceNames(cell: string | undefined): string[] {
  return cell ? cell.split(',').filter(Boolean) : [];
}

/** Metadata columns of an N-way TSV (`#source`: where a row comes from) are not languages. */
export function isMetaColumn(header: string): boolean {
  return header.startsWith('#');
}

/**
 * N-way parallel TSV (optionally .gz): a header row of language codes, then one row per
 * sentence; an empty cell = no translation. Yields each row as language → text.
 */
export async function* readNWayTsv(
  path: string,
  o: ReadOptions = {},
): AsyncGenerator<{ row: number; cells: Map<string, string>; source?: string }, { langs: string[] }> {
  let langs: string[] | null = null;
  let header: string[] = [];
  let sourceAt = -1;
  let row = 0;
  for await (const { line, no } of readLines(path, { maxChars: o.maxChars })) {
    const cols = line.split('\t');
    if (!langs) {
      header = cols;
      langs = cols.filter((c) => !isMetaColumn(c));
      if (!langs.length || langs.some((l) => !LANG_CODE.test(l)))
        throw new Error(`${path}:1: not an N-way TSV (its first line '${line.slice(0, 40)}${line.length > 40 ? '…' : ''}' is not a header of language codes)`);
      if (new Set(langs).size !== langs.length) throw new Error(`${path}:1: duplicate language in header`);
      sourceAt = header.indexOf(SOURCE_COLUMN);
      continue;
    }
    if (cols.length !== header.length) throw new Error(`${path}:${no}: ${cols.length} columns, header has ${header.length}`);
    const cells = new Map<string, string>();
    cols.forEach((c, i) => {
      if (c && !isMetaColumn(header[i]!)) cells.set(header[i]!, c);
    });
    yield sourceAt >= 0 ? { row: row++, cells, source: cols[sourceAt]! } : { row: row++, cells };
  }
  if (!langs) throw new Error(`${path}: empty file (no header)`);
  return { langs };
}

/** Loads a whole N-way TSV (for corpora that fit in memory). */
export async function loadNWayTsv(path: string, o: ReadOptions = {}): Promise<{ langs: string[]; rows: Map<string, string>[] }> {
  const rows: Map<string, string>[] = [];
  const it = readNWayTsv(path, o);
  let r = await it.next();
  while (!r.done) {
    rows.push(r.value.cells);
    r = await it.next();
  }
  return { langs: r.value.langs, rows };
}

export interface BuccSentence {
  id: string;
  sentence: string;
  line: number;
}

/** BUCC 2018 monolingual file: `id<TAB>sentence` per line; ids unique. */
export async function readBucc(path: string, o: ReadOptions = {}): Promise<BuccSentence[]> {
  const out: BuccSentence[] = [];
  const seen = new Set<string>();
  let skipped = 0;
  for await (const { line, no } of readLines(path, { maxChars: o.maxChars })) {
    const tab = line.indexOf('\t');
    if (tab <= 0) throw new Error(`${path}:${no}: expected id<TAB>sentence`);
    const id = line.slice(0, tab),
      sentence = line.slice(tab + 1);
    if (seen.has(id)) throw new Error(`${path}:${no}: duplicate id '${id}'`);
    if (!sentence.trim()) {
      if (o.onBad === 'skip') {
        skipped++;
        continue;
      }
      throw new Error(`${path}:${no}: empty sentence`);
    }
    seen.add(id);
    out.push({ id, sentence, line: no });
  }
  if (!out.length) throw new Error(`${path}: empty file`);
  void skipped;
  return out;
}

/** BUCC gold: `src_id<TAB>trg_id` per line. */
export async function readGold(path: string): Promise<[string, string][]> {
  const out: [string, string][] = [];
  for await (const { line, no } of readLines(path)) {
    if (!line) continue;
    const p = line.split('\t');
    if (p.length !== 2 || !p[0] || !p[1]) throw new Error(`${path}:${no}: expected src_id<TAB>trg_id`);
    out.push([p[0], p[1]]);
  }
  return out;
}

/**
 * Plain text lines, or BUCC `id<TAB>sentence` lines when every line has a tab: returns
 * sentences and their ids (line numbers as ids for plain files).
 */
export async function readSentences(path: string, o: ReadOptions = {}): Promise<{ ids: string[]; sentences: string[]; bucc: boolean }> {
  const lines: string[] = [];
  for await (const { line } of readLines(path, { maxChars: o.maxChars })) lines.push(line);
  if (!lines.length) throw new Error(`${path}: empty file`);
  const bucc = lines.every((l) => l.indexOf('\t') > 0);
  if (!bucc) return { ids: lines.map((_, i) => String(i + 1)), sentences: lines, bucc };
  const ids = lines.map((l) => l.slice(0, l.indexOf('\t')));
  if (new Set(ids).size !== ids.length) throw new Error(`${path}: duplicate ids`);
  return { ids, sentences: lines.map((l) => l.slice(l.indexOf('\t') + 1)), bucc };
}

/** Moses-style aligned files name.src / name.trg (line i ↔ line i). */
export async function readMoses(prefix: string, src: string, trg: string): Promise<{ src: string[]; trg: string[] }> {
  const a: string[] = [],
    b: string[] = [];
  for await (const { line } of readLines(`${prefix}.${src}`)) a.push(line);
  for await (const { line } of readLines(`${prefix}.${trg}`)) b.push(line);
  if (a.length !== b.length) throw new Error(`${prefix}.${src} has ${a.length} lines but ${prefix}.${trg} has ${b.length}`);
  return { src: a, trg: b };
}

// Moses two-file parallel corpora (the "Moses" format of OPUS and of the Moses SMT toolkit's
// corpus tools): line-aligned UTF-8 plain text, line i of each file the same sentence.
// Named NAME.L1-L2.L1 and NAME.L1-L2.L2 (OPUS), or plainly NAME.L1 and NAME.L2 (and more:
// NAME.L3 … for multi-way sets) when each extension is an ISO 639-1 language code, alone or with
// a region or script (pt_BR, zh-TW, sr_Latn). A set is read once, from the file whose language
// sorts first, which pairs it with its siblings: only that file is accepted. Each file may be
// gzip (by its magic bytes; a `.gz` after the name is allowed). The line counts are compared,
// and every line checked for UTF-8, before any unit is given, so a mismatch (an error naming the
// files and their counts) or a bad byte never leaves part of a pair behind. A line empty in one
// language is an untranslated sentence: the unit keeps the others, or is skipped.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { readLines } from '../io/input.js';
import type { ReadContext, SourceReader, TranslationUnit } from './types.js';
import { normalizeLang } from './langs.js';
import { unitTexts } from './xml.js';

/** ISO 639-1 two-letter codes (with the withdrawn sh): extensions taken as languages in NAME.L1/NAME.L2 sets. */
const ISO_639_1 = new Set(
  (
    'aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv dz ee el ' +
    'en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii ik io is it iu ja ' +
    'jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ' +
    'ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg sh si sk sl sm sn so sq sr ' +
    'ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu'
  ).split(' '),
);

/** One file of a set: its path and raw language code. */
interface Member {
  path: string;
  lang: string;
}

function stripGz(name: string): string {
  return name.endsWith('.gz') ? name.slice(0, -3) : name;
}

function existing(path: string): string | undefined {
  if (existsSync(path)) return path;
  if (existsSync(`${path}.gz`)) return `${path}.gz`;
  return undefined;
}

/** A folder's sorted file names, kept while its mtime stays (accepts() is asked of every file of a folder). */
const listings = new Map<string, { mtimeMs: number; names: string[] }>();
function listing(dir: string): string[] | undefined {
  let mtimeMs: number;
  try {
    mtimeMs = statSync(dir).mtimeMs;
  } catch {
    return undefined;
  }
  const hit = listings.get(dir);
  if (hit && hit.mtimeMs === mtimeMs) return hit.names;
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return undefined;
  }
  if (listings.size > 64) listings.clear();
  listings.set(dir, { mtimeMs, names });
  return names;
}

/** A two-letter ISO 639-1 code, alone or with a region/script, that normalizeLang takes. */
function plainLangExt(ext: string): boolean {
  const primary = ext.split(/[-_]/)[0]!.toLowerCase();
  return primary.length === 2 && ISO_639_1.has(primary) && normalizeLang(ext) !== undefined;
}

/**
 * The set a file belongs to, sorted by language (the first is the file that reads it), or
 * undefined when the file's name is not a Moses corpus name or its siblings are missing.
 */
export function mosesSet(file: string): Member[] | undefined {
  const dir = dirname(file);
  const name = stripGz(basename(file));
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return undefined;
  const ext = name.slice(dot + 1);
  const stem = name.slice(0, dot);
  // NAME.L1-L2.Lx
  const dot2 = stem.lastIndexOf('.');
  if (dot2 > 0) {
    const pair = stem.slice(dot2 + 1);
    let other: string | undefined;
    if (pair.startsWith(`${ext}-`)) other = pair.slice(ext.length + 1);
    else if (pair.endsWith(`-${ext}`)) other = pair.slice(0, -ext.length - 1);
    if (other !== undefined && other !== ext && normalizeLang(ext) !== undefined && normalizeLang(other) !== undefined) {
      const sibling = existing(join(dir, `${stem}.${other}`));
      if (sibling === undefined) return undefined;
      const members = [
        { path: file, lang: ext },
        { path: sibling, lang: other },
      ];
      return members.sort((a, b) => (a.lang < b.lang ? -1 : a.lang > b.lang ? 1 : 0));
    }
  }
  // NAME.L1, NAME.L2, …
  if (!plainLangExt(ext)) return undefined;
  const names = listing(dir);
  if (names === undefined) return undefined;
  const members = new Map<string, Member>();
  for (const n of names) {
    const base = stripGz(n);
    if (!base.startsWith(`${stem}.`)) continue;
    const e = base.slice(stem.length + 1);
    if (e.includes('.') || !plainLangExt(e) || members.has(e)) continue;
    members.set(e, { path: n === basename(file) ? file : join(dir, n), lang: e });
  }
  if (members.size < 2) return undefined;
  return [...members.values()].sort((a, b) => (a.lang < b.lang ? -1 : a.lang > b.lang ? 1 : 0));
}

export const mosesReader: SourceReader = {
  name: 'moses',
  accepts(file: string): boolean {
    const set = mosesSet(file);
    return set !== undefined && set[0]!.path === file;
  },
  read(file: string, ctx: ReadContext): AsyncIterable<TranslationUnit> {
    return readMoses(file, ctx);
  },
};

async function countLines(path: string): Promise<number> {
  let n = 0;
  for await (const _ of readLines(path)) n++; // also checks every line is UTF-8
  return n;
}

async function* readMoses(file: string, ctx: ReadContext): AsyncGenerator<TranslationUnit> {
  const set = mosesSet(file);
  if (set === undefined) throw new Error(`${file}: not a Moses corpus file (NAME.L1-L2.L1 beside NAME.L1-L2.L2, or NAME.L1 beside NAME.L2)`);
  if (set[0]!.path !== file) return; // read with its sibling
  const counts = await Promise.all(set.map((m) => countLines(m.path)));
  if (counts.some((c) => c !== counts[0])) {
    throw new Error(`line counts differ: ${set.map((m, i) => `${m.path} has ${counts[i]} lines`).join(', ')}`);
  }
  const source = ctx.source ?? file;
  const doc = join(dirname(file), basename(stripGz(basename(file))).replace(/\.[^.]+$/, ''));
  const iters = set.map((m) => readLines(m.path)[Symbol.asyncIterator]());
  const BATCH = 256;
  try {
    for (;;) {
      const out: TranslationUnit[] = [];
      for (let k = 0; k < BATCH; k++) {
        const lines = await Promise.all(iters.map((it) => it.next()));
        if (lines.some((r) => r.done)) {
          if (!lines.every((r) => r.done)) throw new Error(`${file}: a file of the set changed while it was read`);
          yield* out;
          return;
        }
        const { texts } = unitTexts(lines.map((r, i) => [set[i]!.lang, r.value!.line] as [string, string]));
        if (texts) out.push({ texts, source, doc, kind: 'prose' });
      }
      yield* out;
    }
  } finally {
    await Promise.all(iters.map((it) => it.return?.(undefined)));
  }
}

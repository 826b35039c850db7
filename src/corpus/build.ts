// `xling corpus`: translation sources → an N-way parallel TSV through English (the shared
// corpus's format: a header of language codes, `en` first; one row per English text, an empty
// cell where a language has no translation) or a pairwise TSV, with a provenance column.
//
// Memory stays bounded by one shard, whatever the sources' size: the first pass cleans each unit
// and appends it to one of 64 temporary shard files by a hash of its English text; the second
// groups each shard (the most frequent translation of a text per language, as the shared corpus
// took it) and writes its rows. A share of documents (by a hash of the document id) goes to a dev
// set instead; training rows sharing a text with a dev row in the same language are then dropped,
// so that no dev string occurs in training.
import { closeSync, existsSync, lstatSync, statSync, mkdtempSync, openSync, readSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createGzip } from 'node:zlib';
import { readLines } from '../io/input.js';
import { SOURCE_COLUMN } from '../train-data/corpus.js';
import { atomicOutput } from '../util/atomic.js';
import { Progress } from '../util/progress.js';
import { hashSeed } from '../util/rng.js';
import { hasLetters, lengthRules, normalizeSpace, sentences, wordCount } from './clean.js';
import { debianPackageTree, isDebFile, packageGroups } from './debian.js';
import { isEnglishVariant } from './langs.js';
import { SentenceEmbedder } from '../align/align.js';
import { DocumentSetStats, emptyDocumentSetStats } from './docs.js';
import { corpusReaders, documentSetReader } from './readers.js';
import { ReadContext, SourceProblem, TranslationUnit } from './types.js';

export interface CorpusOptions {
  /** Files or folders (whole trees are walked), .deb files, or Debian package names with debian: true. */
  sources: string[];
  /** Output TSV (.gz when the name ends in .gz). */
  out: string;
  /** 'nway' (default): one row per English text; 'pairs': lang1, lang2, text1, text2, source. */
  format?: 'nway' | 'pairs';
  /** Debian package names to download with apt-get download (into cacheDir) and read; PKG:FOLDER reads one folder of it. */
  debian?: string[];
  cacheDir?: string;
  /** Dev set: the share of documents (0–1) held out, written to devOut. */
  devFraction?: number;
  devOut?: string;
  /** English word limits (default by kind: messages 3–60, prose 3–80, phrases 1–12). */
  minWords?: number;
  maxWords?: number;
  /** Languages with fewer cells are left out of the N-way TSV (default 50). */
  minLangRows?: number;
  /** The encoder for aligning document paragraphs whose sentence counts differ (loaded when first needed). */
  align?: () => Promise<SentenceEmbedder>;
  onProblem?: (p: SourceProblem) => void;
  quiet?: boolean;
  log?: (s: string) => void;
}

export interface CorpusSummary {
  files: number;
  units: number;
  rows: number;
  devRows: number;
  langs: string[];
  /** source → language → cells written (training output) */
  bySource: Record<string, Record<string, number>>;
  /** why units or cells were left out → count */
  dropped: Record<string, number>;
  problems: number;
  /** counts of the document sets read */
  documents: DocumentSetStats;
}

const SHARDS = 64;

/** The grouping key of an English text: case and final punctuation do not make another row. */
export function textKey(s: string): string {
  return s.toLowerCase().replace(/[\s.!?:;…。！？]+$/u, '');
}

interface ShardRecord {
  k: string;
  t: [string, string][];
  s: string;
  d: boolean;
}

class ShardWriter {
  private readonly fds: number[] = [];
  private readonly bufs: string[] = [];
  constructor(readonly dir: string) {
    for (let i = 0; i < SHARDS; i++) {
      this.fds.push(openSync(join(dir, `shard-${i}.jsonl`), 'w'));
      this.bufs.push('');
    }
  }
  add(r: ShardRecord): void {
    const i = hashSeed(r.k) % SHARDS;
    this.bufs[i] += JSON.stringify(r) + '\n';
    if (this.bufs[i]!.length > 1 << 16) {
      writeSync(this.fds[i]!, this.bufs[i]!);
      this.bufs[i] = '';
    }
  }
  close(): void {
    for (let i = 0; i < SHARDS; i++) {
      if (this.bufs[i]) writeSync(this.fds[i]!, this.bufs[i]!);
      closeSync(this.fds[i]!);
    }
  }
}

function* walk(path: string): Generator<string> {
  const st = lstatSync(path);
  if (st.isSymbolicLink()) return;
  if (st.isFile()) {
    yield path;
    return;
  }
  if (!st.isDirectory()) return;
  for (const name of readdirSync(path).sort()) yield* walk(join(path, name));
}

function head(file: string): Buffer {
  const fd = openSync(file, 'r');
  try {
    const b = Buffer.alloc(1024);
    const n = readSync(fd, b, 0, 1024, 0);
    return b.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

/** Cleaned (English, language → text) units of one raw unit: split into sentences when both sides agree. */
function* cleanUnit(u: TranslationUnit, o: CorpusOptions, drop: (why: string) => void): Generator<Map<string, string>> {
  const texts = new Map<string, string>();
  for (const [l, t] of u.texts) {
    if (isEnglishVariant(l)) continue;
    const c = normalizeSpace(t);
    if (c && hasLetters(c)) texts.set(l, c);
  }
  const en = texts.get('en');
  if (en !== undefined)
    for (const [l, t] of texts)
      if (l !== 'en' && t === en) {
        texts.delete(l);
        drop('identical to the English');
      }
  if (texts.size < 2) {
    drop('fewer than two languages');
    return;
  }
  const rules = lengthRules(u.kind, o);
  // a multi-sentence English text: sentence pairs where every language has as many sentences
  if (en !== undefined && u.kind !== 'phrase' && u.kind !== 'row') {
    const enSents = sentences(en, 'en');
    if (enSents.length > 1) {
      const split = new Map<string, string[]>();
      for (const [l, t] of texts) {
        const s = l === 'en' ? enSents : sentences(t, l);
        if (s.length === enSents.length) split.set(l, s);
      }
      if (split.size >= 2) {
        for (let i = 0; i < enSents.length; i++) {
          const m = new Map<string, string>();
          for (const [l, s] of split) m.set(l, s[i]!);
          const w = wordCount(enSents[i]!);
          if (w < rules.minWords || w > rules.maxWords) {
            drop('English length');
            continue;
          }
          yield m;
        }
        return;
      }
    }
  }
  if (en !== undefined) {
    const w = wordCount(en);
    if (w < rules.minWords || w > rules.maxWords) {
      drop('English length');
      return;
    }
  }
  yield texts;
}

/** Reads every source into the shards; returns counts. */
async function firstPass(o: CorpusOptions, shards: ShardWriter, work: string, summary: CorpusSummary, drop: (why: string) => void): Promise<void> {
  const progress = new Progress({ label: 'corpus', unit: 'units', silent: o.quiet });
  const problem = (p: SourceProblem): void => {
    summary.problems++;
    (o.onProblem ?? (() => {}))(p);
  };
  const devShare = o.devFraction ?? 0;
  const roots: { path: string; source: string }[] = [];
  for (const s of o.sources) roots.push(isDebFile(s) ? { path: debianPackageTree(s, join(work, 'debs'), o.cacheDir), source: s } : { path: s, source: s });
  // PKG or PKG:FOLDER (only that folder of the package, e.g. unicode-cldr-core:usr/share/unicode/cldr/common/annotations)
  const specs = (o.debian ?? []).map((spec) => spec.split(':', 2) as [string, string | undefined]);
  const groups = packageGroups(specs.map(([p]) => p));
  const seen = new Set<string>();
  for (const [pkg, sub] of specs) {
    const group = groups.get(pkg)!;
    const tree = debianPackageTree(pkg, join(work, 'debs'), o.cacheDir, true, group);
    const path = sub ? join(tree, sub.replace(/^\/+/, '')) : tree;
    if (!path.startsWith(tree) || !existsSync(path)) throw new Error(`--debian ${pkg}:${sub}: the package has no ${sub}`);
    if (!seen.has(path)) roots.push({ path, source: group });
    seen.add(path);
  }
  for (const root of roots) {
    const source =
      root.source
        .replace(/\/+$/, '')
        .replace(/^.*\//, '')
        .replace(/_.*\.deb$/, '') || root.source;
    const ctx: ReadContext = { source, onProblem: problem };
    const emit = (u: TranslationUnit): void => {
      summary.units++;
      progress.tick();
      const dev = devShare > 0 && u.doc !== undefined && (hashSeed(`${u.source}\u0000${u.doc}`) % 10000) / 10000 < devShare;
      for (const texts of cleanUnit(u, o, drop)) {
        const en = texts.get('en');
        const key =
          en !== undefined
            ? textKey(en)
            : `\u0000${[...texts]
                .map(([l, t]) => `${l}=${textKey(t)}`)
                .sort()
                .join('\u0001')}`;
        shards.add({ k: key, t: [...texts], s: u.source, d: dev });
      }
    };
    const docSets = documentSetReader();
    const inDocSet: string[] = [];
    for (const d of statSync(root.path).isDirectory() ? docSets.find(root.path) : []) {
      if (inDocSet.some((x) => d.startsWith(x + '/'))) continue;
      inDocSet.push(d);
      try {
        for await (const u of docSets.read(d, { ...ctx, align: o.align ? await o.align() : undefined, stats: summary.documents })) emit({ ...u, source });
      } catch (e) {
        problem({ file: d, message: (e as Error).message });
      }
    }
    const files = [...walk(root.path)].filter((f) => !inDocSet.some((x) => f.startsWith(x + '/')));
    for (const f of files) {
      let h: Buffer;
      try {
        h = head(f);
      } catch (e) {
        problem({ file: f, message: (e as Error).message });
        continue;
      }
      const reader = corpusReaders().find((r) => r.accepts(f, h));
      if (!reader) continue;
      summary.files++;
      try {
        for await (const u of reader.read(f, ctx)) emit({ ...u, source, doc: u.doc ?? undefined });
      } catch (e) {
        problem({ file: relative(process.cwd(), f) || f, message: (e as Error).message.replace(`${f}: `, '') });
      }
    }
  }
  progress.done();
}

interface Row {
  cells: Map<string, string>;
  sources: string[];
}

function majority(counts: Map<string, number>): string {
  let best = '',
    n = -1;
  for (const [t, c] of counts)
    if (c > n || (c === n && t < best)) {
      best = t;
      n = c;
    }
  return best;
}

async function* groupShard(file: string): AsyncGenerator<Row & { dev: boolean }> {
  const groups = new Map<string, { langs: Map<string, Map<string, number>>; sources: Set<string>; dev: boolean }>();
  for await (const { line } of readLines(file)) {
    if (!line) continue;
    const r = JSON.parse(line) as ShardRecord;
    let g = groups.get(r.k);
    if (!g) groups.set(r.k, (g = { langs: new Map(), sources: new Set(), dev: r.d }));
    g.sources.add(r.s);
    g.dev &&= r.d; // a text that also occurs outside the held-out documents stays in training
    for (const [l, t] of r.t) {
      let m = g.langs.get(l);
      if (!m) g.langs.set(l, (m = new Map()));
      m.set(t, (m.get(t) ?? 0) + 1);
    }
  }
  for (const k of [...groups.keys()].sort()) {
    const g = groups.get(k)!;
    const cells = new Map<string, string>();
    for (const [l, m] of g.langs) cells.set(l, majority(m));
    yield { cells, sources: [...g.sources].sort(), dev: g.dev };
  }
}

async function writeTsv(path: string, lines: AsyncIterable<string>): Promise<void> {
  await atomicOutput(path, async (tmp) => {
    const fd = openSync(tmp, 'w');
    try {
      if (/\.gz$/.test(path)) {
        const gz = createGzip({ level: 6 });
        const done = new Promise<void>((resolve, reject) => {
          gz.on('end', resolve);
          gz.on('error', reject);
        });
        gz.on('data', (c: Buffer) => writeSync(fd, c));
        for await (const l of lines) if (!gz.write(l)) await new Promise((r) => gz.once('drain', r));
        gz.end();
        await done;
      } else {
        let buf = '';
        for await (const l of lines) {
          buf += l;
          if (buf.length > 1 << 20) {
            writeSync(fd, buf);
            buf = '';
          }
        }
        if (buf) writeSync(fd, buf);
      }
    } finally {
      closeSync(fd);
    }
  });
}

const tsvCell = (s: string): string => s.replace(/[\t\n\r]/g, ' ');

/** Second pass: groups each shard's rows; the dev rows (a small share) kept in memory, training rows written to `trainFile`. */
async function groupShards(work: string, trainFile: string): Promise<{ devRows: Row[]; devCells: Set<string> }> {
  const devRows: Row[] = [];
  const devCells = new Set<string>();
  const fd = openSync(trainFile, 'w');
  try {
    for (let i = 0; i < SHARDS; i++) {
      let buf = '';
      for await (const r of groupShard(join(work, `shard-${i}.jsonl`))) {
        if (r.dev) {
          devRows.push(r);
          for (const [l, t] of r.cells) devCells.add(`${l}\u0000${t.toLowerCase()}`);
          continue;
        }
        buf += JSON.stringify({ c: [...r.cells], s: r.sources }) + '\n';
        if (buf.length > 1 << 16) {
          writeSync(fd, buf);
          buf = '';
        }
      }
      if (buf) writeSync(fd, buf);
      rmSync(join(work, `shard-${i}.jsonl`));
    }
  } finally {
    closeSync(fd);
  }
  return { devRows, devCells };
}

/** The training rows that share no text with the dev set (the others dropped). */
async function* trainingRows(trainFile: string, devCells: Set<string>, drop: (why: string) => void): AsyncGenerator<Row> {
  for await (const { line } of readLines(trainFile)) {
    if (!line) continue;
    const r = JSON.parse(line) as { c: [string, string][]; s: string[] };
    if (r.c.some(([l, t]) => devCells.has(`${l}\u0000${t.toLowerCase()}`))) {
      drop('shares a text with the dev set');
      continue;
    }
    yield { cells: new Map(r.c), sources: r.s };
  }
}

/** The corpus's languages: English first, then those with `minRows` cells or more in the training rows (the others recorded as dropped). */
function corpusLanguages(langCount: Map<string, number>, minRows: number, summary: CorpusSummary): string[] {
  const langs = [...langCount]
    .filter(([l, n]) => l === 'en' || n >= minRows)
    .map(([l]) => l)
    .sort((a, b) => (a === 'en' ? -1 : b === 'en' ? 1 : a < b ? -1 : 1));
  for (const [l, n] of langCount) if (!langs.includes(l)) summary.dropped[`language ${l} (${n} rows < --min-lang-rows ${minRows})`] = n;
  if (!langs.some((l) => l !== 'en')) {
    const most = [...langCount].filter(([l]) => l !== 'en').sort((x, y) => y[1] - x[1])[0];
    throw new Error(
      `every language has fewer rows than --min-lang-rows ${minRows}${most ? ` (the most: ${most[0]} ${most[1]})` : ''}: nothing to write; give a lower --min-lang-rows to keep them`,
    );
  }
  return langs;
}

/** A row's TSV lines: one N-way line, or one line per language pair (through English when it is there). */
function* rowLines(r: Row, langs: string[], present: string[], nway: boolean): Generator<string> {
  const sources = tsvCell(r.sources.join(','));
  if (nway) {
    yield langs.map((l) => tsvCell(r.cells.get(l) ?? '')).join('\t') + '\t' + sources + '\n';
    return;
  }
  for (let a = 0; a < present.length; a++)
    for (let b = a + 1; b < present.length; b++) {
      if (r.cells.has('en') && present[a] !== 'en' && present[b] !== 'en') continue; // through English when it is there
      yield [present[a]!, present[b]!, tsvCell(r.cells.get(present[a]!)!), tsvCell(r.cells.get(present[b]!)!), sources].join('\t') + '\n';
    }
}

/** The TSV of `rows`: its header, then each row's lines; `count` gets the number of lines; `bySource` (when given) counts cells by source and language. */
async function* tsvLines(
  rows: AsyncIterable<Row> | Iterable<Row>,
  langs: string[],
  nway: boolean,
  count: (n: number) => void,
  bySource?: CorpusSummary['bySource'],
): AsyncGenerator<string> {
  yield (nway ? [...langs, SOURCE_COLUMN] : ['lang1', 'lang2', 'text1', 'text2', SOURCE_COLUMN]).join('\t') + '\n';
  let n = 0;
  for await (const r of rows) {
    const present = langs.filter((l) => r.cells.has(l));
    if (nway && (!r.cells.has('en') || present.length < 2)) continue; // an N-way row has English and another language
    for (const line of rowLines(r, langs, present, nway)) {
      yield line;
      n++;
    }
    if (bySource)
      for (const l of present)
        for (const s of r.sources) {
          const m = (bySource[s] ??= {});
          m[l] = (m[l] ?? 0) + 1;
        }
  }
  count(n);
}

/** Builds the corpus; returns the summary (also for the dev set's rows). */
export async function buildCorpus(o: CorpusOptions): Promise<CorpusSummary> {
  const work = mkdtempSync(join(tmpdir(), 'xling-corpus-'));
  const summary: CorpusSummary = {
    files: 0,
    units: 0,
    rows: 0,
    devRows: 0,
    langs: [],
    bySource: {},
    dropped: {},
    problems: 0,
    documents: emptyDocumentSetStats(),
  };
  const drop = (why: string): void => {
    summary.dropped[why] = (summary.dropped[why] ?? 0) + 1;
  };
  try {
    const shards = new ShardWriter(work);
    try {
      await firstPass(o, shards, work, summary, drop);
    } finally {
      shards.close();
    }
    const trainFile = join(work, 'train.jsonl');
    const { devRows, devCells } = await groupShards(work, trainFile);
    // languages: counted on the training rows that survive the dev filter
    const langCount = new Map<string, number>();
    let keptRows = 0;
    for await (const r of trainingRows(trainFile, devCells, drop)) {
      keptRows++;
      for (const l of r.cells.keys()) langCount.set(l, (langCount.get(l) ?? 0) + 1);
    }
    if (keptRows === 0 && devRows.length === 0) {
      const named = [...o.sources, ...(o.debian ?? [])].join(', ');
      throw new Error(`no parallel rows in ${named} (${summary.files} translation files read, ${summary.problems} reported above)`);
    }
    const langs = (summary.langs = corpusLanguages(langCount, o.minLangRows ?? 50, summary));
    const nway = o.format !== 'pairs';
    const rows = trainingRows(trainFile, devCells, () => {}); // the dropped rows counted above
    await writeTsv(
      o.out,
      tsvLines(rows, langs, nway, (n) => (summary.rows = n), summary.bySource),
    );
    if (o.devOut !== undefined) {
      devRows.sort((a, b) => (a.cells.get('en') ?? '').localeCompare(b.cells.get('en') ?? ''));
      await writeTsv(
        o.devOut,
        tsvLines(devRows, langs, nway, (n) => (summary.devRows = n)),
      );
    }
    return summary;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

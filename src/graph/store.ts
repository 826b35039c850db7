// The sentence store of a graph directory: every sentence of a multilingual collection once, with
// its language, read by row without loading the collection (the research's 566M sentences would
// not fit in memory). Files: sentences.txt (one sentence per line; line i = node i),
// sentences.offsets.npy (int64 byte offsets, N+1), sentences.langs.npy (uint8 language index),
// store.json (languages and what the filters dropped).
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { readSources, SentenceSource } from '../train-data/sources.js';
import { readNpy, writeNpy } from '../io/npy.js';
import { readJson, writeJson } from '../nn/serialize.js';
import { SentenceStore } from '../io/sentence-store.js';
import { normalize } from '../text/normalize.js';
import { atomicOutputSync } from '../util/atomic.js';
import { Progress } from '../util/progress.js';

export interface StoreFilter {
  /** Sentences with fewer or more words are left out (the research kept 4–60); 0 = no bound. */
  minWords: number;
  maxWords: number;
  /** Leave out exact duplicates after normalisation (NFKC, punctuation, case). */
  dedup: boolean;
}

export interface StoreInfo {
  sentences: number;
  langs: string[];
  perLang: Record<string, number>;
  dropped: { length: number; duplicates: number };
}

/** Words of a sentence: whitespace tokens, each CJK character counting as one (no spaces there). */
export function wordCount(s: string): number {
  let n = 0;
  for (const w of s.split(/\s+/)) {
    if (!w) continue;
    const cjk = w.match(/[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]/gu)?.length ?? 0;
    n += cjk ? cjk + (w.replace(/[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]/gu, '').length ? 1 : 0) : 1;
  }
  return n;
}

/** Reads the sources, filters and writes the store files into dir (each atomically). */
export async function buildStore(dir: string, sources: SentenceSource[], f: StoreFilter, quiet = false): Promise<StoreInfo> {
  const langs: string[] = [],
    langIds: number[] = [],
    offsets: number[] = [0];
  const perLang: Record<string, number> = {};
  const seen = new Set<string>();
  const dropped = { length: 0, duplicates: 0 };
  const chunks: Buffer[] = [];
  let bytes = 0;
  const prog = new Progress({ label: 'graph store', unit: 'sentences', silent: quiet });
  const add = (lang: string, text: string) => {
    const w = wordCount(text);
    if ((f.minWords && w < f.minWords) || (f.maxWords && w > f.maxWords)) {
      dropped.length++;
      return;
    }
    if (f.dedup) {
      const key = `${lang}\t${normalize(text, { lowercase: true })}`;
      if (seen.has(key)) {
        dropped.duplicates++;
        return;
      }
      seen.add(key);
    }
    let li = langs.indexOf(lang);
    if (li < 0) {
      if (langs.length >= 255) throw new Error('graph store: more than 255 languages');
      li = langs.push(lang) - 1;
    }
    const b = Buffer.from(text + '\n', 'utf8');
    chunks.push(b);
    bytes += b.length;
    offsets.push(bytes);
    langIds.push(li);
    perLang[lang] = (perLang[lang] ?? 0) + 1;
    prog.tick();
  };
  for await (const { lang, text } of readSources(sources)) add(lang, text);
  prog.done();
  if (!langIds.length) throw new Error('graph store: no sentence passed the filters');
  atomicOutputSync(join(dir, 'sentences.txt'), (tmp) => {
    const fd = openSync(tmp, 'w');
    try {
      for (const c of chunks) for (let done = 0; done < c.length; ) done += writeSync(fd, c, done, c.length - done);
    } finally {
      closeSync(fd);
    }
  });
  writeNpy(join(dir, 'sentences.offsets.npy'), BigInt64Array.from(offsets, BigInt), [offsets.length]);
  writeNpy(join(dir, 'sentences.langs.npy'), Uint8Array.from(langIds), [langIds.length]);
  const info: StoreInfo = { sentences: langIds.length, langs, perLang, dropped };
  writeJson(join(dir, 'store.json'), info);
  return info;
}

/** The store of a graph directory: text by pread at its offsets, languages in memory (one byte each). */
export class GraphStore implements SentenceStore {
  readonly size: number;
  readonly langs: string[];
  private readonly offsets: BigInt64Array;
  private readonly langIds: Uint8Array;
  private fd: number;
  constructor(readonly dir: string) {
    const info = readJson<StoreInfo>(join(dir, 'store.json'));
    this.langs = info.langs;
    this.offsets = readNpy(join(dir, 'sentences.offsets.npy')).data as BigInt64Array;
    this.langIds = readNpy(join(dir, 'sentences.langs.npy')).data as Uint8Array;
    this.size = this.langIds.length;
    if (this.offsets.length !== this.size + 1) throw new Error(`${dir}: sentences.offsets.npy has ${this.offsets.length} entries for ${this.size} sentences`);
    this.fd = openSync(join(dir, 'sentences.txt'), 'r');
  }
  text(i: number): string {
    if (!(i >= 0 && i < this.size)) throw new Error(`sentence ${i} out of range [0, ${this.size})`);
    const a = Number(this.offsets[i]),
      b = Number(this.offsets[i + 1]) - 1;
    const buf = Buffer.allocUnsafe(b - a);
    readSync(this.fd, buf, 0, b - a, a);
    return buf.toString('utf8');
  }
  lang(i: number): string {
    return this.langs[this.langIds[i]!]!;
  }
  langIndex(i: number): number {
    return this.langIds[i]!;
  }
  /** Sentences [start, end) with their languages. */
  range(start: number, end: number): { text: string[]; lang: string[] } {
    const a = Number(this.offsets[start]),
      b = Number(this.offsets[end]);
    const buf = Buffer.allocUnsafe(b - a);
    readSync(this.fd, buf, 0, b - a, a);
    const text = buf.toString('utf8').split('\n');
    text.pop();
    return { text, lang: Array.from({ length: end - start }, (_, k) => this.lang(start + k)) };
  }
  close(): void {
    closeSync(this.fd);
  }
}

// From files to training inputs: the N-way TSV corpus, its joint tokenizer, token ids, dev sets.
import { TextTokenizer } from '../text/text-tokenizer.js';
import { EncodedCorpus } from '../train-data/examples.js';
import { DevSet } from './validate.js';
import { readNWayTsv } from '../train-data/corpus.js';
import { pause } from '../util/pause.js';

export interface NWayTable {
  langs: string[];
  rows: Map<string, string>[];
  /** Each row's `#source` cell, when the file has that column. */
  sources?: string[];
}

/** Stopped by an abort signal (SIGINT) during preparation. */
export class PreparationAborted extends Error {
  constructor(what: string) {
    super(`interrupted during ${what}`);
    this.name = 'PreparationAborted';
  }
}

/** The N-way TSV; an aborted `signal` stops the reading (PreparationAborted). */
export async function loadTable(path: string, o: { signal?: AbortSignal } = {}): Promise<NWayTable> {
  const rows: Map<string, string>[] = [];
  const sources: string[] = [];
  const it = readNWayTsv(path);
  let r = await it.next();
  while (!r.done) {
    rows.push(r.value.cells);
    if (r.value.source !== undefined) sources.push(r.value.source);
    if ((rows.length & 1023) === 0 && o.signal?.aborted) {
      await it.return?.({ langs: [] });
      throw new PreparationAborted(`reading ${path}`);
    }
    r = await it.next();
  }
  return { langs: r.value.langs, rows, ...(sources.length === rows.length && rows.length ? { sources } : {}) };
}

/** Token ids of every cell of the languages the paths use. */
export function encodeTable(t: NWayTable, tok: TextTokenizer, langs: string[] = t.langs): EncodedCorpus {
  const ids = new Map<string, (Int32Array | undefined)[]>();
  for (const l of langs)
    ids.set(
      l,
      pooled(
        t.rows.map((r) => {
          const s = r.get(l);
          return s ? tok.encode(s) : undefined;
        }),
      ),
    );
  return { langs, rows: t.rows.length, ids, ...(t.sources ? { sources: t.sources } : {}) };
}

/**
 * A column's token ids moved into one buffer, each cell a view of it: one ArrayBuffer a language
 * instead of one a sentence (about 90 bytes of heap less a sentence: half a gigabyte for the
 * 6M translations of a large harvest). Only the cells a language has are assigned, in row order,
 * so that the column of a language with few rows is stored sparse (V8 keeps an array with large
 * gaps as a dictionary) instead of as a slot for every row of the corpus (8 bytes each: a
 * gigabyte for 270 languages over 558k rows). The same ids at the same rows.
 */
function pooled(col: (Int32Array | undefined)[]): (Int32Array | undefined)[] {
  let total = 0;
  for (const a of col) if (a) total += a.length;
  const pool = new Int32Array(total);
  const out: (Int32Array | undefined)[] = [];
  let at = 0;
  for (let i = 0; i < col.length; i++) {
    const a = col[i];
    if (!a) continue;
    pool.set(a, at);
    out[i] = pool.subarray(at, at + a.length);
    at += a.length;
  }
  return out;
}

/**
 * encodeTable in slices of rows, letting the event loop run every ~100 ms so that a SIGINT handler
 * can abort it (PreparationAborted). The same ids as encodeTable.
 */
export async function encodeTableAsync(t: NWayTable, tok: TextTokenizer, o: { langs?: string[]; signal?: AbortSignal } = {}): Promise<EncodedCorpus> {
  const langs = o.langs ?? t.langs;
  const ids = new Map<string, (Int32Array | undefined)[]>();
  let last = performance.now();
  for (const l of langs) {
    const col: (Int32Array | undefined)[] = new Array(t.rows.length);
    const batch = (tok as { encodeBatch?(s: string[]): Int32Array[] }).encodeBatch;
    if (batch) {
      // tokenizers that run elsewhere (HFTokenizer's worker thread): one round trip per slice, not per sentence
      for (let i = 0; i < t.rows.length; i += 2048) {
        const at: number[] = [],
          texts: string[] = [];
        for (let j = i; j < Math.min(t.rows.length, i + 2048); j++) {
          const s = t.rows[j]!.get(l);
          if (s) {
            at.push(j);
            texts.push(s);
          }
        }
        const got = texts.length ? batch.call(tok, texts) : [];
        at.forEach((j, k) => {
          col[j] = got[k];
        });
        await pause();
        if (o.signal?.aborted) throw new PreparationAborted('the text features');
      }
      ids.set(l, pooled(col));
      continue;
    }
    for (let i = 0; i < t.rows.length; i++) {
      const s = t.rows[i]!.get(l);
      col[i] = s ? tok.encode(s) : undefined;
      if ((i & 255) === 255 && performance.now() - last > 100) {
        await pause();
        last = performance.now();
        if (o.signal?.aborted) throw new PreparationAborted('the text features');
      }
    }
    ids.set(l, pooled(col));
  }
  return { langs, rows: t.rows.length, ids, ...(t.sources ? { sources: t.sources } : {}) };
}

/** Dev pairs (l, en) for each language with at least minRows aligned rows (as the reference scores). */
export function devSetOf(t: NWayTable, langs: string[] | null, minRows = 200, maxRows = Infinity): DevSet {
  const pairs: DevSet['pairs'] = new Map();
  for (const l of langs ?? t.langs) {
    if (l === 'en') continue;
    const rows = t.rows.filter((r) => r.get(l) && r.get('en')).slice(0, maxRows);
    if (rows.length < minRows) continue;
    pairs.set(l, { src: rows.map((r) => r.get(l)!), en: rows.map((r) => r.get('en')!) });
  }
  return { pairs };
}

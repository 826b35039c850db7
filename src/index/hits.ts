// The hits of a search as text: TSV rows (query_row, rank, id, score, and the sentence when a
// sentence store is given) or JSON lines, one object a query: {"query", "hits": [{"id", "score",
// "text"}]} (ids from 0: the index's rows, the store's lines). D and I are faiss's [queries, k]
// arrays, -1 ids where fewer than k were found.
import { float32Text } from '../util/float-text.js';
import type { SentenceStore } from '../io/sentence-store.js';

export interface SearchHits {
  /** Scores (inner products or squared L2 distances), [n, k]. */
  D: Float32Array;
  /** Row ids, [n, k]; -1: none. */
  I: BigInt64Array;
  n: number;
  k: number;
}

/** The sentence of a hit (the store's line), an error when the store is shorter than the index. */
function textOf(store: SentenceStore, storePath: string, id: number): string {
  if (id >= store.size) throw new Error(`${storePath} has ${store.size} lines, but the search found row ${id}: not the store of this index`);
  return store.text(id);
}

/** query_row<TAB>rank<TAB>id<TAB>score[<TAB>sentence] lines (tabs in a sentence become spaces). */
export function hitsTsv(h: SearchHits, store?: { store: SentenceStore; path: string }): string {
  const lines: string[] = [];
  for (let i = 0; i < h.n; i++)
    for (let j = 0; j < h.k; j++) {
      const l = h.I[i * h.k + j]!;
      if (l < 0n) continue;
      const row = `${i}\t${j}\t${l}\t${h.D[i * h.k + j]!.toFixed(6)}`;
      lines.push(store ? `${row}\t${textOf(store.store, store.path, Number(l)).replace(/\t/g, ' ')}` : row);
    }
  return lines.length ? lines.join('\n') + '\n' : '';
}

/** One JSON object a query: its text (or row number, for vector queries) and its hits, best first. */
export function hitsJsonLines(h: SearchHits, queries: readonly (string | number)[], store?: { store: SentenceStore; path: string }): string {
  let out = '';
  for (let i = 0; i < h.n; i++) {
    const hits = [];
    for (let j = 0; j < h.k; j++) {
      const id = Number(h.I[i * h.k + j]!);
      if (id < 0) continue;
      const score = Number(float32Text(h.D[i * h.k + j]!));
      hits.push(store ? { id, score, text: textOf(store.store, store.path, id) } : { id, score });
    }
    out += `${JSON.stringify({ query: queries[i], hits })}\n`;
  }
  return out;
}

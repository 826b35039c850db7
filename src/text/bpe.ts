// A BPE learner (SentencePiece-style word boundaries: a space becomes '▁' at the start of each
// word). Counts words once, then merges the most frequent adjacent symbol pair with incremental
// pair-count updates and a lazy max-heap, so a 16k vocabulary over ~400k sentences takes seconds.

export const WORD_START = '\u2581';

export interface BpeModel {
  /** Symbol strings; index = id offset after the special tokens. */
  symbols: string[];
  /** Merges in rank order, as pairs of symbol strings. */
  merges: [string, string][];
}

export interface LearnOptions {
  vocabSize: number;
  specials: number;
  characterCoverage?: number;
}

/** Splits normalised text into words, each starting with '▁' (Metaspace, prepend always). */
export function preTokenize(s: string): string[] {
  if (!s) return [];
  return s
    .split(' ')
    .filter(Boolean)
    .map((w) => WORD_START + w);
}

class MaxHeap {
  private readonly counts: number[] = [];
  private readonly keys: number[] = [];
  get size(): number {
    return this.keys.length;
  }
  private better(i: number, j: number): boolean {
    return this.counts[i]! > this.counts[j]! || (this.counts[i] === this.counts[j] && this.keys[i]! < this.keys[j]!);
  }
  private swap(i: number, j: number): void {
    [this.counts[i], this.counts[j]] = [this.counts[j]!, this.counts[i]!];
    [this.keys[i], this.keys[j]] = [this.keys[j]!, this.keys[i]!];
  }
  push(count: number, key: number): void {
    this.counts.push(count);
    this.keys.push(key);
    let i = this.keys.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.better(i, p)) break;
      this.swap(i, p);
      i = p;
    }
  }
  pop(): [number, number] | undefined {
    if (!this.keys.length) return undefined;
    const top: [number, number] = [this.counts[0]!, this.keys[0]!];
    const lc = this.counts.pop()!,
      lk = this.keys.pop()!;
    if (this.keys.length) {
      this.counts[0] = lc;
      this.keys[0] = lk;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1,
          r = l + 1;
        let m = i;
        if (l < this.keys.length && this.better(l, m)) m = l;
        if (r < this.keys.length && this.better(r, m)) m = r;
        if (m === i) break;
        this.swap(i, m);
        i = m;
      }
    }
    return top;
  }
}

const SHIFT = 2 ** 21; // symbol ids < 2M; pair key = a * SHIFT + b (exact in a double)

/** The alphabet: the most frequent characters covering `coverage` of all character occurrences, and the word-start mark. */
function bpeAlphabet(wordCounts: Map<string, number>, coverage: number): string[] {
  const chars = new Map<string, number>();
  let totalChars = 0;
  for (const [w, c] of wordCounts)
    for (const ch of w) {
      chars.set(ch, (chars.get(ch) ?? 0) + c);
      totalChars += c;
    }
  const byFreq = [...chars].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const symbols: string[] = [];
  let covered = 0;
  for (const [ch, c] of byFreq) {
    if (symbols.length && covered / totalChars >= coverage) break;
    symbols.push(ch);
    covered += c;
  }
  if (!symbols.includes(WORD_START)) symbols.push(WORD_START);
  return symbols;
}

/** The words as symbol-id arrays (unknown characters, -1, block merges) and the counts of their adjacent pairs, with the words each pair is in. */
class PairCounts {
  readonly words: Int32Array[] = [];
  readonly freq: number[] = [];
  readonly count = new Map<number, number>();
  readonly where = new Map<number, Set<number>>();

  constructor(wordCounts: Map<string, number>, idOf: Map<string, number>) {
    for (const [w, c] of wordCounts) {
      const ids = Array.from(w, (ch) => idOf.get(ch) ?? -1);
      if (ids.length < 2) continue;
      this.words.push(Int32Array.from(ids));
      this.freq.push(c);
    }
    for (let wi = 0; wi < this.words.length; wi++) this.addPairs(wi);
  }

  private addPairs(wi: number): void {
    const s = this.words[wi]!,
      f = this.freq[wi]!;
    for (let i = 0; i + 1 < s.length; i++) {
      const a = s[i]!,
        b = s[i + 1]!;
      if (a < 0 || b < 0) continue;
      const k = a * SHIFT + b;
      this.count.set(k, (this.count.get(k) ?? 0) + f);
      let set = this.where.get(k);
      if (!set) this.where.set(k, (set = new Set()));
      set.add(wi);
    }
  }

  /** Merges pair k = (a, b) into symbol `id` in every word that has it; returns the pairs whose counts changed. */
  merge(k: number, a: number, b: number, id: number): Set<number> {
    const touched = new Set<number>();
    for (const wi of this.where.get(k) ?? []) {
      const s = this.words[wi]!;
      // old pairs out
      const f = this.freq[wi]!;
      for (let i = 0; i + 1 < s.length; i++) {
        if (s[i]! < 0 || s[i + 1]! < 0) continue;
        const pk = s[i]! * SHIFT + s[i + 1]!;
        this.count.set(pk, this.count.get(pk)! - f);
        touched.add(pk);
      }
      const out: number[] = [];
      for (let i = 0; i < s.length; i++) {
        if (i + 1 < s.length && s[i] === a && s[i + 1] === b) {
          out.push(id);
          i++;
        } else out.push(s[i]!);
      }
      this.words[wi] = Int32Array.from(out);
      this.addPairs(wi);
      const ns = this.words[wi]!;
      for (let i = 0; i + 1 < ns.length; i++) if (ns[i]! >= 0 && ns[i + 1]! >= 0) touched.add(ns[i]! * SHIFT + ns[i + 1]!);
    }
    this.where.delete(k);
    this.count.delete(k);
    return touched;
  }
}

/** Learns BPE symbols and merges from word counts. */
export function learnBpe(wordCounts: Map<string, number>, o: LearnOptions): BpeModel {
  const budget = o.vocabSize - o.specials;
  const symbols = bpeAlphabet(wordCounts, o.characterCoverage ?? 0.9995);
  if (symbols.length > budget) throw new Error(`BPE: vocabulary size ${o.vocabSize} is smaller than the alphabet (${symbols.length} characters)`);
  const idOf = new Map(symbols.map((s, i) => [s, i]));
  const pairs = new PairCounts(wordCounts, idOf);
  const heap = new MaxHeap();
  for (const [k, c] of pairs.count) heap.push(c, k);

  const merges: [string, string][] = [];
  while (symbols.length < budget && heap.size) {
    const [c, k] = heap.pop()!;
    const cur = pairs.count.get(k) ?? 0;
    if (cur !== c) {
      if (cur > 0) heap.push(cur, k);
      continue;
    } // stale entry
    if (c < 2) break;
    const a = Math.floor(k / SHIFT),
      b = k - a * SHIFT;
    const str = symbols[a]! + symbols[b]!;
    let id = idOf.get(str);
    if (id === undefined) {
      id = symbols.length;
      symbols.push(str);
      idOf.set(str, id);
    }
    merges.push([symbols[a]!, symbols[b]!]);
    for (const pk of pairs.merge(k, a, b, id)) {
      const pc = pairs.count.get(pk) ?? 0;
      if (pc > 0) heap.push(pc, pk);
      else {
        pairs.count.delete(pk);
        pairs.where.delete(pk);
      }
    }
  }
  return { symbols, merges };
}

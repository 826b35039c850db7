// Using a graph directory: a node's neighbours (rows read on demand), the neighbours of any text
// (embedded, searched through the index, re-ranked with the exact vectors), the minimax trajectory
// between two sentences, and the graph's statistics (the research's distance histograms and
// same-language shares).
import { join } from 'node:path';
import { SentenceEncoderModel } from '../embed/model.js';
import { FaissIndex, readIndex } from '../index/faiss.js';
import { float16ToFloat32 } from '../io/half.js';
import { NpyRowReader } from '../io/npy.js';
import { Rng } from '../util/rng.js';
import { EXACT, GraphMeta, readGraphMeta } from './build.js';
import { GraphStore } from './store.js';

export interface Neighbour {
  id: number;
  distance: number;
  text: string;
  lang: string;
}

/** The graph files of a directory, read row by row (never loaded whole). */
export class GraphReader {
  readonly meta: GraphMeta;
  readonly store: GraphStore;
  private readonly ids: NpyRowReader;
  private readonly dist: NpyRowReader;
  constructor(readonly dir: string) {
    this.meta = readGraphMeta(dir);
    this.store = new GraphStore(dir);
    this.ids = NpyRowReader.open(join(dir, 'neighbours.npy'));
    this.dist = NpyRowReader.open(join(dir, 'distances.npy'));
    if (this.ids.rows !== this.store.size) throw new Error(`${dir}: neighbours.npy has ${this.ids.rows} rows for ${this.store.size} sentences`);
  }
  get size(): number {
    return this.store.size;
  }
  /** Out-neighbours of node i (ascending distance; -1 entries dropped). */
  row(i: number): { ids: Int32Array; dist: Float32Array } {
    if (!(Number.isInteger(i) && i >= 0 && i < this.size)) throw new Error(`sentence ${i} out of range [0, ${this.size})`);
    const ids = this.ids.readRowsRaw(i, i + 1) as Int32Array;
    const dist = float16ToFloat32(this.dist.readRowsRaw(i, i + 1) as Uint16Array);
    let n = ids.length;
    while (n > 0 && ids[n - 1]! < 0) n--;
    return { ids: ids.subarray(0, n), dist: dist.subarray(0, n) };
  }
  neighboursOf(i: number, threshold = Infinity): Neighbour[] {
    const r = this.row(i);
    const out: Neighbour[] = [];
    r.ids.forEach((id, j) => {
      if (r.dist[j]! <= threshold) out.push({ id, distance: r.dist[j]!, text: this.store.text(id), lang: this.store.lang(id) });
    });
    return out;
  }
  /**
   * Neighbours of node i with the edge direction ignored: its own row and the nodes that have i in
   * theirs (a k-nn graph is far from symmetric: in an N-way parallel collection each sentence's
   * k nearest are mostly its own translations, and the directed graph falls apart into islands).
   * The reversed edges are built on first use: 8 bytes an edge in memory.
   */
  undirectedRow(i: number): { ids: Int32Array; dist: Float32Array } {
    const r = this.row(i),
      rev = (this.reversed ??= this.reverseEdges());
    const a = rev.offsets[i]!,
      b = rev.offsets[i + 1]!;
    const ids = new Int32Array(r.ids.length + b - a),
      dist = new Float32Array(ids.length);
    ids.set(r.ids);
    ids.set(rev.src.subarray(a, b), r.ids.length);
    dist.set(r.dist);
    dist.set(rev.dist.subarray(a, b), r.ids.length);
    return { ids, dist };
  }
  private reversed?: { offsets: Int32Array; src: Int32Array; dist: Float32Array };
  private reverseEdges(): { offsets: Int32Array; src: Int32Array; dist: Float32Array } {
    const n = this.size,
      chunk = 65536;
    const offsets = new Int32Array(n + 1);
    for (let lo = 0; lo < n; lo += chunk) {
      const ids = this.ids.readRowsRaw(lo, Math.min(n, lo + chunk)) as Int32Array;
      for (const v of ids) if (v >= 0) offsets[v + 1]++;
    }
    for (let i = 0; i < n; i++) offsets[i + 1] += offsets[i]!;
    const fill = offsets.slice(0, n),
      src = new Int32Array(offsets[n]!),
      dist = new Float32Array(offsets[n]!);
    for (let lo = 0; lo < n; lo += chunk) {
      const hi = Math.min(n, lo + chunk);
      const ids = this.ids.readRowsRaw(lo, hi) as Int32Array,
        ds = float16ToFloat32(this.dist.readRowsRaw(lo, hi) as Uint16Array);
      const k = ids.length / (hi - lo);
      for (let t = 0; t < ids.length; t++) {
        const v = ids[t]!;
        if (v < 0) continue;
        const at = fill[v]!++;
        src[at] = lo + Math.floor(t / k);
        dist[at] = ds[t]!;
      }
    }
    return { offsets, src, dist };
  }
  close(): void {
    this.ids.close();
    this.dist.close();
    this.store.close();
  }
}

/**
 * Nearest sentences of a text: embedded (centred with `lang`, or identified), the index's
 * candidates re-ranked by the exact inner product with their stored vectors.
 */
export function neighboursOfText(
  graph: GraphReader,
  model: SentenceEncoderModel,
  index: FaissIndex,
  text: string,
  o: { k?: number; lang?: string; threshold?: number } = {},
): { lang: string | null; neighbours: Neighbour[] } {
  const k = o.k ?? graph.meta.k;
  // the one centring rule: the given language, or the identified one when confident (else none)
  const lang = (o.lang ? model.chooseCenter(o.lang, true) : model.sentenceCenter(text)).lang;
  const q = model.embed([text], { lang: lang ?? undefined, center: lang !== null });
  if (graph.meta.nprobe) index.setNprobe(graph.meta.nprobe);
  const r = index.search(q, Math.min(graph.meta.candidates, index.ntotal));
  return { lang, neighbours: rankCandidates(graph, q, r.labels, k, o.threshold) };
}

/** Index candidates of a query vector re-ranked by the exact inner product with their stored vectors (cosine distance, ascending). */
export function rankCandidates(graph: GraphReader, q: Float32Array, labels: BigInt64Array, k: number, threshold = Infinity): Neighbour[] {
  const vec = NpyRowReader.open(join(graph.dir, 'vectors.npy'));
  try {
    const d = vec.cols;
    const scored: [number, number][] = [];
    for (const l of labels) {
      if (l < 0n) continue;
      const v = vec.readRows(Number(l), Number(l) + 1);
      let s = 0;
      for (let j = 0; j < d; j++) s += v[j]! * q[j]!;
      scored.push([Number(l), 1 - s]);
    }
    scored.sort((a, b) => a[1] - b[1]);
    return scored
      .filter(([, dist]) => dist <= threshold)
      .slice(0, k)
      .map(([id, distance]) => ({ id, distance, text: graph.store.text(id), lang: graph.store.lang(id) }));
  } finally {
    vec.close();
  }
}

/** The sentence nearest to a text (for paths between texts). */
export function snap(graph: GraphReader, model: SentenceEncoderModel, index: FaissIndex, text: string): number {
  const n = neighboursOfText(graph, model, index, text, { k: 1 }).neighbours[0];
  if (!n) throw new Error(`no sentence of the graph near '${text}'`);
  return n.id;
}

/** A min-heap of (key, node) pairs. */
class MinHeap {
  private keys: number[] = [];
  private nodes: number[] = [];
  get size(): number {
    return this.nodes.length;
  }
  push(key: number, node: number): void {
    this.keys.push(key);
    this.nodes.push(node);
    let i = this.nodes.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (this.keys[p]! <= this.keys[i]!) break;
      [this.keys[p], this.keys[i]] = [this.keys[i]!, this.keys[p]!];
      [this.nodes[p], this.nodes[i]] = [this.nodes[i]!, this.nodes[p]!];
      i = p;
    }
  }
  pop(): [number, number] {
    const top: [number, number] = [this.keys[0]!, this.nodes[0]!];
    const k = this.keys.pop()!,
      n = this.nodes.pop()!;
    if (this.nodes.length) {
      this.keys[0] = k;
      this.nodes[0] = n;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1,
          r = l + 1;
        let m = i;
        if (l < this.nodes.length && this.keys[l]! < this.keys[m]!) m = l;
        if (r < this.nodes.length && this.keys[r]! < this.keys[m]!) m = r;
        if (m === i) break;
        [this.keys[m], this.keys[i]] = [this.keys[i]!, this.keys[m]!];
        [this.nodes[m], this.nodes[i]] = [this.nodes[i]!, this.nodes[m]!];
        i = m;
      }
    }
    return top;
  }
}

/** visited: distinct sentences the search settled (at most the graph's size). */
export interface MinimaxPath {
  steps: { id: number; distance: number }[];
  maxStep: number;
  visited: number;
}

type Rows = (i: number) => { ids: ArrayLike<number>; dist: ArrayLike<number> };

/**
 * The minimax trajectory from a to b: of all paths along the graph's neighbour edges, the one
 * whose largest step distance is smallest (min over paths of max Dist(p_i, p_i+1)); of those, the
 * one with the smallest sum of steps. Two Dijkstra passes, the first with the largest step as the
 * path cost (giving B), the second over the edges no longer than B with the sum as the cost:
 * without it, every step below B is free and the path wanders. Memory: a few numbers per node
 * plus the heap; rows are read on demand. null: b cannot be reached.
 */
export function minimaxPath(row: Rows, n: number, a: number, b: number): MinimaxPath | null {
  if (a === b) return { steps: [{ id: a, distance: 0 }], maxStep: 0, visited: 1 };
  const bottleneck = dijkstra(row, n, a, b, (cost, d) => Math.max(cost, d), Infinity);
  if (!bottleneck) return null;
  const B = bottleneck.cost[b]!;
  const shortest = dijkstra(row, n, a, b, (cost, d) => cost + d, B)!;
  const path: number[] = [];
  for (let v = b; v !== -1; v = shortest.prev[v]!) path.push(v);
  path.reverse();
  const steps = path.map((id, i) => {
    if (!i) return { id, distance: 0 };
    const r = row(path[i - 1]!);
    const j = Array.prototype.indexOf.call(r.ids, id);
    return { id, distance: r.dist[j]! };
  });
  // distinct sentences settled by either pass (the second pass revisits many of the first's)
  let visited = 0;
  for (let i = 0; i < n; i++) if (bottleneck.done[i] || shortest.done[i]) visited++;
  return { steps, maxStep: B, visited };
}

/** A minimax path and the edges it walked: `directed` (the neighbour edges as built) or `undirected` (both ways); fallback: walked both ways because no directed path exists. */
export interface GraphPath extends MinimaxPath {
  edges: 'directed' | 'undirected';
  fallback: boolean;
}

/**
 * The minimax path from a to b along the graph's neighbour edges; where there is none (a k-nn graph
 * is far from symmetric: a sentence that is nobody's neighbour cannot be reached), walking them both
 * ways (undirectedRow), saying so. With undirected, both ways from the start. null: not even then.
 */
export function graphPath(g: { size: number; row: Rows; undirectedRow: Rows }, a: number, b: number, o: { undirected?: boolean } = {}): GraphPath | null {
  if (!o.undirected) {
    const p = minimaxPath((i) => g.row(i), g.size, a, b);
    if (p) return { ...p, edges: 'directed', fallback: false };
  }
  const p = minimaxPath((i) => g.undirectedRow(i), g.size, a, b);
  return p && { ...p, edges: 'undirected', fallback: !o.undirected };
}

/** Dijkstra from a until b is settled, path cost combined by `step`, edges longer than maxEdge skipped; ties by fewer hops. */
function dijkstra(
  row: Rows,
  n: number,
  a: number,
  b: number,
  step: (cost: number, d: number) => number,
  maxEdge: number,
): { cost: Float64Array; prev: Int32Array; done: Uint8Array } | null {
  const cost = new Float64Array(n).fill(Infinity),
    hops = new Int32Array(n).fill(0x7fffffff),
    prev = new Int32Array(n).fill(-1);
  const done = new Uint8Array(n);
  const heap = new MinHeap();
  cost[a] = 0;
  hops[a] = 0;
  heap.push(0, a);
  while (heap.size) {
    const [key, u] = heap.pop();
    if (done[u] || key > cost[u]!) continue;
    done[u] = 1;
    if (u === b) break;
    const r = row(u);
    for (let j = 0; j < r.ids.length; j++) {
      const v = r.ids[j]!,
        d = r.dist[j]!;
      if (v < 0 || done[v] || d > maxEdge) continue;
      const c = step(key, d);
      if (c < cost[v]! || (c === cost[v] && hops[u]! + 1 < hops[v]!)) {
        cost[v] = c;
        hops[v] = hops[u]! + 1;
        prev[v] = u;
        heap.push(c, v);
      }
    }
  }
  return done[b] ? { cost, prev, done } : null;
}

export interface GraphStatistics {
  sentences: number;
  sample: number;
  /** Distances to the nearest and the k-th neighbour (zero distances left out and counted). */
  nearest: number[];
  kth: number[];
  zeroDistances: { nearest: number; kth: number };
  /** Per language: share of its sentences' neighbours in the same language. */
  sameLanguage: Record<string, { sentences: number; share: number }>;
  sameLanguageOverall: number;
}

/** Distance distributions and language mixing over a sample of the graph's nodes. */
export function graphStatistics(g: GraphReader, sampleSize: number, seed = 1): GraphStatistics {
  const N = g.size;
  const sample = new Rng(seed).sample(N, Math.min(sampleSize, N)).sort((a, b) => a - b);
  const nearest: number[] = [],
    kth: number[] = [];
  const zero = { nearest: 0, kth: 0 };
  const per = new Map<string, { n: number; same: number; all: number }>();
  for (const i of sample) {
    const r = g.row(i);
    if (!r.ids.length) continue;
    const d0 = r.dist[0]!,
      dk = r.dist[r.dist.length - 1]!;
    if (d0 <= 1e-6) zero.nearest++;
    else nearest.push(d0);
    if (dk <= 1e-6) zero.kth++;
    else kth.push(dk);
    const l = g.store.lang(i);
    const e = per.get(l) ?? { n: 0, same: 0, all: 0 };
    e.n++;
    for (const id of r.ids) {
      e.all++;
      if (g.store.lang(id) === l) e.same++;
    }
    per.set(l, e);
  }
  const sameLanguage: GraphStatistics['sameLanguage'] = {};
  let same = 0,
    all = 0;
  for (const [l, e] of [...per].sort(([a], [b]) => (a < b ? -1 : 1))) {
    sameLanguage[l] = { sentences: e.n, share: e.same / e.all };
    same += e.same;
    all += e.all;
  }
  return { sentences: N, sample: sample.length, nearest, kth, zeroDistances: zero, sameLanguage, sameLanguageOverall: same / all };
}

/**
 * The index that finds a text's candidates: the graph's index.faiss, or for a graph searched
 * exactly (factory 'exact', no index file) a float16 flat index of its vectors, made in memory.
 */
export function openGraphIndex(g: string): FaissIndex {
  const meta = readGraphMeta(g);
  if (meta.factory !== EXACT) return readIndex(join(g, 'index.faiss'), { mmap: true });
  const r = NpyRowReader.open(join(g, 'vectors.npy'));
  const index = FaissIndex.create(r.cols, 'SQfp16', 'ip');
  try {
    for (let a = 0; a < r.rows; a += 65536) index.add(r.readRows(a, Math.min(r.rows, a + 65536)));
  } catch (e) {
    index.dispose();
    throw e;
  } finally {
    r.close();
  }
  return index;
}

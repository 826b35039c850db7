// faiss indexes from TypeScript: index_factory strings, training, adding, k-NN search, faiss's
// own file format (Python faiss reads what we write), IVF shard merging, k-means, exact k-NN.
import { renameSync, rmSync } from 'node:fs';
import { native } from '../native.js';
import { releaseTemp, tempPathFor } from '../util/atomic.js';

const F = native.faiss;

export type Metric = 'ip' | 'l2';

/** Row-major k-NN results: distances[i*k + j] and labels[i*k + j] for query i (label -1 = none). */
export interface SearchResult {
  distances: Float32Array;
  labels: BigInt64Array;
  n: number;
  k: number;
}

/** Search parameters of one call (faiss SearchParameters): nprobe applies to IVF indexes only. */
export interface SearchParams {
  nprobe?: number;
}

/** What an index is, as far as ids, merging and parameters go (see native info()). */
export interface IndexInfo {
  d: number;
  ntotal: number;
  isTrained: boolean;
  metric: Metric;
  busy: boolean;
  /** An IVF index (also under OPQ/PCA or an ID map): it stores the ids given to add. */
  ivf: boolean;
  /** The IVF index's number of lists (0 for other indexes). */
  nlist: number;
  /** Wrapped in an ID map (IDMap/IDMap2): it stores the ids given to add. */
  idMap: boolean;
  /** An HNSW graph (faiss cannot merge these). */
  hnsw: boolean;
}

/** faiss's exception text without its "Error in <function> at <file>:<line>: " prefix. */
export function faissMessage(e: unknown): string {
  const m = e instanceof Error ? e.message : String(e);
  return m.replace(/^Error in .*? at \S+:\d+: /s, '').trim();
}

export class FaissIndex {
  private constructor(private readonly handle: unknown) {}

  /**
   * Builds an index from a faiss index_factory description: "Flat", "IVF4096,Flat",
   * "IVF4096,PQ32", "OPQ32,IVF4096,PQ32", "HNSW32", "SQ8", "SQfp16", …
   */
  static create(d: number, description: string, metric: Metric = 'ip'): FaissIndex {
    return new FaissIndex(F.indexFactory(d, description, metric));
  }

  /** Reads a faiss index file; mmap maps IVF lists instead of loading them. */
  static read(path: string, o: { mmap?: boolean } = {}): FaissIndex {
    return new FaissIndex(F.readIndex(path, !!o.mmap));
  }

  get info(): IndexInfo {
    return F.info(this.handle) as IndexInfo;
  }
  /** Whether add() can take explicit ids (IVF lists and ID maps store them; other indexes number rows 0..ntotal-1). */
  get takesIds(): boolean {
    const i = this.info;
    return i.ivf || i.idMap;
  }
  get d(): number {
    return this.info.d;
  }
  get ntotal(): number {
    return this.info.ntotal;
  }
  get isTrained(): boolean {
    return this.info.isTrained;
  }
  get metric(): Metric {
    return this.info.metric;
  }

  train(x: Float32Array): void {
    F.train(this.handle, x);
  }
  add(x: Float32Array): void {
    F.add(this.handle, x);
  }
  /** Adds vectors under explicit ids (IVF indexes, or an IDMap). */
  addWithIds(x: Float32Array, ids: BigInt64Array): void {
    F.add(this.handle, x, ids);
  }
  /** params: per-call faiss SearchParameters (nprobe of an IVF index, also under OPQ/PCA or an ID map); the index's own settings are left alone. */
  search(queries: Float32Array, k: number, params?: SearchParams): SearchResult {
    return F.search(this.handle, queries, k, params) as SearchResult;
  }

  /** Off the JS thread (the index refuses other calls until done). */
  /**
   * With onLine, faiss trains verbosely and its lines (k-means and OPQ iterations, its warnings)
   * are passed to onLine instead of being printed (see TrainingLog); resolves after the last one.
   */
  async trainAsync(x: Float32Array, onLine?: (line: string) => void): Promise<void> {
    if (!onLine) return F.trainAsync(this.handle, x) as Promise<void>;
    let finished!: () => void;
    const last = new Promise<void>((r) => {
      finished = r;
    });
    await (F.trainAsync(this.handle, x, (l: string) => {
      if (l === '\0done') finished();
      else onLine(l);
    }) as Promise<void>);
    await last;
  }
  addAsync(x: Float32Array, ids?: BigInt64Array): Promise<void> {
    return F.addAsync(this.handle, x, ids ?? null) as Promise<void>;
  }
  searchAsync(queries: Float32Array, k: number, params?: SearchParams): Promise<SearchResult> {
    return F.searchAsync(this.handle, queries, k, params) as Promise<SearchResult>;
  }

  /** faiss ParameterSpace settings, e.g. "nprobe=64" or "efSearch=128". */
  setParams(params: string): void {
    F.setParams(this.handle, params);
  }
  setNprobe(n: number): void {
    this.setParams(`nprobe=${n}`);
  }

  /**
   * Training knobs a factory string cannot express (call before train): polysemous training of
   * PQ codes (only Hamming-distance filtering needs it; faiss's factory turns it on and it costs
   * minutes), and the number of OPQ optimisation iterations (faiss's default is 50; <= 0 keeps it).
   * Returns the settings the index actually has.
   */
  setTrainingParams(o: { polysemous?: boolean; opqIters?: number }): { polysemous?: boolean; opqIters?: number } {
    return F.setTrainingParams(this.handle, !!o.polysemous, o.opqIters ?? 0) as { polysemous?: boolean; opqIters?: number };
  }

  /** Writes faiss's own index format (atomically: temp file, then rename). */
  write(path: string): void {
    const tmp = tempPathFor(path);
    try {
      F.writeIndex(this.handle, tmp);
      renameSync(tmp, path);
    } catch (e) {
      rmSync(tmp, { force: true });
      throw e;
    } finally {
      releaseTemp(tmp);
    }
  }

  /** Moves other's vectors into this index (shards built from the same trained empty index). */
  mergeFrom(other: FaissIndex): void {
    F.mergeFrom(this.handle, other.handle);
  }

  /** Stored vectors [start, start+n) (decoded, so approximate for PQ/SQ). */
  reconstruct(start: number, n = 1): Float32Array {
    return F.reconstruct(this.handle, start, n) as Float32Array;
  }
  reset(): void {
    F.reset(this.handle);
  }
  /** The ids the index stores (ID map or IVF lists), or null when its vectors are numbered 0..ntotal-1. */
  storedIds(): BigInt64Array | null {
    return F.ids(this.handle) as BigInt64Array | null;
  }
  removeIds(ids: BigInt64Array): number {
    return F.removeIds(this.handle, ids) as number;
  }
  clone(): FaissIndex {
    return new FaissIndex(F.clone(this.handle));
  }
  /**
   * A new index: this IVF-PQ with 4-bit codes (IVF…,PQ…x4, also under OPQ/PCA, any coarse
   * quantizer) in faiss's fast-scan layout (IndexIVFPQFastScan, as built by "…,PQ…x4fs"): the
   * same lists, ids and codes, scanned with SIMD look-up tables. This index is left as it is.
   * Fast-scan indexes cannot be merged (faiss 1.7.3), so shards merge the IVF-PQ, then convert.
   * Their search takes no per-call parameters: set nprobe with setNprobe.
   */
  toFastScan(): FaissIndex {
    return new FaissIndex(F.toFastScan(this.handle));
  }
  /** Frees the index now. Later calls throw "index was disposed". */
  dispose(): void {
    F.dispose(this.handle);
  }
}

export function indexFactory(d: number, description: string, metric: Metric = 'ip'): FaissIndex {
  return FaissIndex.create(d, description, metric);
}

export function readIndex(path: string, o: { mmap?: boolean } = {}): FaissIndex {
  return FaissIndex.read(path, o);
}

/**
 * A faiss index file opened for search, named "FLAG PATH" in errors (one that is not a faiss index:
 * "FLAG PATH: cannot read it as a faiss index: why"); `nprobe` sets how many IVF lists a search
 * visits (an IVF index only; `nprobeName` names where it was given, by default --nprobe).
 */
export function openIndex(flag: string, path: string, nprobe?: number, o: { nprobeName?: string; mmap?: boolean } = {}): FaissIndex {
  let index: FaissIndex;
  try {
    index = readIndex(path, { mmap: o.mmap });
  } catch (e) {
    throw new Error(`${flag} ${path}: cannot read it as a faiss index: ${faissMessage(e)}`);
  }
  if (nprobe !== undefined) {
    if (!index.info.ivf) {
      index.dispose();
      throw new Error(`${o.nprobeName ?? '--nprobe'}: ${flag} ${path} is not an IVF index (nprobe is how many IVF lists a search visits)`);
    }
    index.setNprobe(nprobe);
  }
  return index;
}

/** Exact k nearest neighbours of each query row among base rows (blocked BLAS, no index). */
export function knn(queries: Float32Array, base: Float32Array, d: number, k: number, metric: Metric = 'ip'): SearchResult {
  return F.knn(queries, base, d, k, metric, false) as SearchResult;
}
export function knnAsync(queries: Float32Array, base: Float32Array, d: number, k: number, metric: Metric = 'ip'): Promise<SearchResult> {
  return F.knn(queries, base, d, k, metric, true) as Promise<SearchResult>;
}

/** k-means with faiss's Clustering: centroids [k, d] and the final objective. */
export function kmeans(
  x: Float32Array,
  d: number,
  k: number,
  o: { niter?: number; seed?: number; spherical?: boolean; maxPointsPerCentroid?: number } = {},
): { centroids: Float32Array; objective: number } {
  return F.kmeans(x, d, k, o.niter ?? 25, o.seed ?? 1234, !!o.spherical, o.maxPointsPerCentroid ?? 0) as { centroids: Float32Array; objective: number };
}

/** Threads faiss (OpenMP) uses, also in async calls. */
export function setFaissThreads(n: number): void {
  F.setThreads(n);
}
export function getFaissThreads(): number {
  return F.getThreads() as number;
}

/**
 * C ← alpha·op(A)·op(B) + beta·C, column-major (Fortran BLAS sgemm, C updated in place): the
 * product faiss's exact searches, assignments and trainings call inside the addon, through the
 * same route (oneDNN's sgemm where libtorch loaded it, else the linked BLAS; native/sgemm.cc).
 */
export function blasSgemm(
  transA: 'N' | 'T',
  transB: 'N' | 'T',
  m: number,
  n: number,
  k: number,
  alpha: number,
  a: Float32Array,
  lda: number,
  b: Float32Array,
  ldb: number,
  beta: number,
  c: Float32Array,
  ldc: number,
): void {
  F.sgemm!(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

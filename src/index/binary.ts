// Binary (Hamming) search over packed sign bits, as faiss's IndexBinaryFlat: one bit per dimension
// (x > 0), 8 to a byte, most significant bit first (numpy.packbits; `xling embed --dtype ubinary`).
// Exact search by the addon's popcount kernel (native/hamming.cc: 64-bit popcounts, blocked over
// the base, threads over queries, an async variant on a libuv worker for the server); the index file
// is faiss's own IndexBinaryFlat serialisation ("IBxF": d, code_size, ntotal, is_trained,
// metric_type, then the codes as a size-prefixed byte vector), so faiss.read_index_binary opens it
// in Python. hammingKnnJs is the same search in TypeScript, the reference the tests hold the native
// kernel to (identical distances and ids, ties included).
// Rescoring (sentence-transformers' binary retrieval): the k·rescore nearest by Hamming distance,
// re-ranked by the float query's inner product with each candidate's ±1 vector (divided by √d:
// the cosine between the unit query and the sign vector).
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { native } from '../native.js';
import { atomicOutputSync } from '../util/atomic.js';
import { getFaissThreads } from './faiss.js';

export const BINARY_FLAT_FOURCC = 'IBxF';

/** Packs the signs of rows (n × dim): bit j of a row is x_j > 0, most significant bit first. */
export function packSigns(rows: Float32Array, dim: number): Uint8Array {
  const n = Math.floor(rows.length / dim),
    bytes = Math.ceil(dim / 8);
  const out = new Uint8Array(n * bytes);
  for (let i = 0; i < n; i++) for (let j = 0; j < dim; j++) if (rows[i * dim + j]! > 0) out[i * bytes + (j >> 3)]! |= 0x80 >> (j & 7);
  return out;
}

const POP8 = Uint8Array.from({ length: 256 }, (_, i) => {
  let c = 0;
  for (let x = i; x; x &= x - 1) c++;
  return c;
});

function popcount32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

/** Hamming distances of one query code to every base code. */
function distancesTo(q: Uint8Array, qi: number, base: Uint8Array, bytes: number, n: number, out: Uint16Array): void {
  const words = bytes >> 2;
  if (words && (base.byteOffset & 3) === 0 && (q.byteOffset & 3) === 0 && bytes % 4 === 0) {
    const b32 = new Uint32Array(base.buffer, base.byteOffset, (n * bytes) >> 2);
    const q32 = new Uint32Array(q.buffer, q.byteOffset + qi * bytes, words);
    for (let i = 0; i < n; i++) {
      let d = 0;
      const o = i * words;
      for (let w = 0; w < words; w++) d += popcount32((b32[o + w]! ^ q32[w]!) >>> 0);
      out[i] = d;
    }
    return;
  }
  for (let i = 0; i < n; i++) {
    let d = 0;
    for (let b = 0; b < bytes; b++) d += POP8[base[i * bytes + b]! ^ q[qi * bytes + b]!]!;
    out[i] = d;
  }
}

export interface HammingResult {
  n: number;
  k: number;
  distances: Int32Array;
  labels: BigInt64Array;
}

/**
 * The k nearest base codes of each query code by Hamming distance (ascending; ties by id), exact,
 * in TypeScript on one thread: the reference for the native kernel (hammingKnn). Codes are `bytes`
 * long; -1 labels where the base has fewer than k rows.
 */
export function hammingKnnJs(queries: Uint8Array, base: Uint8Array, bytes: number, k: number): HammingResult {
  const nq = queries.length / bytes,
    n = base.length / bytes;
  if (!Number.isInteger(nq) || !Number.isInteger(n)) throw new Error(`binary search: codes are not whole rows of ${bytes} bytes`);
  // aligned copies for the 32-bit kernel
  const b = bytes % 4 === 0 && base.byteOffset % 4 !== 0 ? base.slice() : base;
  const q = bytes % 4 === 0 && queries.byteOffset % 4 !== 0 ? queries.slice() : queries;
  const distances = new Int32Array(nq * k).fill(-1),
    labels = new BigInt64Array(nq * k).fill(-1n);
  const dist = new Uint16Array(n),
    counts = new Int32Array(bytes * 8 + 2);
  for (let qi = 0; qi < nq; qi++) {
    distancesTo(q, qi, b, bytes, n, dist);
    // counting selection: the distance threshold below which fewer than k rows lie
    counts.fill(0);
    for (let i = 0; i < n; i++) counts[dist[i]!]!++;
    const want = Math.min(k, n);
    let t = 0,
      below = 0;
    while (t < counts.length && below + counts[t]! < want) below += counts[t++]!;
    const picked: number[] = [];
    let atT = want - below;
    for (let i = 0; i < n && picked.length < want; i++) {
      const d = dist[i]!;
      if (d < t) picked.push(i);
      else if (d === t && atT > 0) {
        picked.push(i);
        atT--;
      }
    }
    picked.sort((x, y) => dist[x]! - dist[y]! || x - y);
    picked.forEach((id, j) => {
      distances[qi * k + j] = dist[id]!;
      labels[qi * k + j] = BigInt(id);
    });
  }
  return { n: nq, k, distances, labels };
}

const H = native.hamming;

function knnArgs(queries: Uint8Array, base: Uint8Array, bytes: number, k: number): { nq: number; n: number } {
  if (!Number.isInteger(bytes) || bytes < 1) throw new Error(`binary search: the code length must be a positive number of bytes, got ${bytes}`);
  if (!Number.isInteger(k) || k < 1) throw new Error(`binary search: k must be a positive integer, got ${k}`);
  const nq = queries.length / bytes,
    n = base.length / bytes;
  if (!Number.isInteger(nq) || !Number.isInteger(n)) throw new Error(`binary search: codes are not whole rows of ${bytes} bytes`);
  return { nq, n };
}

/** The native result for min(k, n) neighbours, widened to k columns of -1 where the base is smaller. */
function padded(r: { distances: Int32Array; labels: BigInt64Array } | null, nq: number, kk: number, k: number): HammingResult {
  if (r && kk === k) return { n: nq, k, distances: r.distances, labels: r.labels };
  const distances = new Int32Array(nq * k).fill(-1),
    labels = new BigInt64Array(nq * k).fill(-1n);
  if (r)
    for (let i = 0; i < nq; i++) {
      distances.set(r.distances.subarray(i * kk, (i + 1) * kk), i * k);
      labels.set(r.labels.subarray(i * kk, (i + 1) * kk), i * k);
    }
  return { n: nq, k, distances, labels };
}

/**
 * The k nearest base codes of each query code by Hamming distance (ascending; ties by the smaller
 * id), exact, by the addon's popcount kernel on `threads` threads (default: faiss's setting). Codes
 * are `bytes` long (any length); -1 labels where the base has fewer than k rows.
 */
export function hammingKnn(queries: Uint8Array, base: Uint8Array, bytes: number, k: number, threads = getFaissThreads()): HammingResult {
  const { nq, n } = knnArgs(queries, base, bytes, k);
  const kk = Math.min(k, n);
  return padded(nq && kk ? H.knn!(queries, base, bytes, kk, threads) : null, nq, kk, k);
}

/** hammingKnn on a libuv worker thread (the event loop stays free); the arrays must not change until it settles. */
export async function hammingKnnAsync(queries: Uint8Array, base: Uint8Array, bytes: number, k: number, threads = getFaissThreads()): Promise<HammingResult> {
  const { nq, n } = knnArgs(queries, base, bytes, k);
  const kk = Math.min(k, n);
  return padded(nq && kk ? await H.knn!(queries, base, bytes, kk, threads, true) : null, nq, kk, k);
}

/** Search result in the float indexes' shape (src/index/faiss.ts): distances are Hamming distances, or rescored cosines. */
export interface BinarySearchResult {
  n: number;
  k: number;
  distances: Float32Array;
  labels: BigInt64Array;
}

/** An exact binary index (faiss IndexBinaryFlat): codes of d bits, searched by Hamming distance. */
export class BinaryFlatIndex {
  readonly metric = 'hamming' as const;
  /** For code paths that ask a float index: a flat binary index has no inverted lists and no graph. */
  readonly info = { ivf: false, hnsw: false };
  private codes: Uint8Array;
  constructor(
    readonly d: number,
    codes: Uint8Array = new Uint8Array(0),
  ) {
    if (!Number.isInteger(d) || d <= 0 || d % 8) throw new Error(`a binary index needs a positive multiple of 8 bits, got ${d}`);
    if (codes.length % (d / 8)) throw new Error(`binary codes of ${codes.length} bytes are not whole rows of ${d / 8} bytes`);
    this.codes = codes;
  }
  get codeSize(): number {
    return this.d / 8;
  }
  get ntotal(): number {
    return this.codes.length / this.codeSize;
  }
  get data(): Uint8Array {
    return this.codes;
  }

  add(codes: Uint8Array): void {
    if (codes.length % this.codeSize) throw new Error(`binary codes of ${codes.length} bytes are not whole rows of ${this.codeSize} bytes`);
    const all = new Uint8Array(this.codes.length + codes.length);
    all.set(this.codes);
    all.set(codes, this.codes.length);
    this.codes = all;
  }

  /** Hamming search of query codes. */
  searchCodes(queries: Uint8Array, k: number): HammingResult {
    return hammingKnn(queries, this.codes, this.codeSize, k);
  }

  /** The same on a libuv worker thread. */
  searchCodesAsync(queries: Uint8Array, k: number): Promise<HammingResult> {
    return hammingKnnAsync(queries, this.codes, this.codeSize, k);
  }

  /**
   * Search with float queries (n × d): their sign bits by Hamming distance; with rescore ≥ 1 the
   * k·rescore nearest re-ranked by the cosine between the query and the candidate's ±1 vector
   * (distances then are those cosines, descending), otherwise distances are Hamming distances.
   */
  search(queries: Float32Array, k: number, rescore = 0): BinarySearchResult {
    const { codes, cand } = this.prepare(queries, k, rescore);
    return this.finish(queries, k, rescore, this.searchCodes(codes, cand));
  }

  /** The same with the Hamming search off the event loop (a libuv worker); rescoring stays on the caller's thread. */
  async searchAsync(queries: Float32Array, k: number, o?: { rescore?: number }): Promise<BinarySearchResult> {
    const rescore = o?.rescore ?? 0;
    const { codes, cand } = this.prepare(queries, k, rescore);
    const codesNow = this.codes; // add() replaces the array: rescore against the codes searched
    return this.finish(queries, k, rescore, await this.searchCodesAsync(codes, cand), codesNow);
  }

  private prepare(queries: Float32Array, k: number, rescore: number): { codes: Uint8Array; cand: number } {
    if (!Number.isInteger(k) || k < 1) throw new Error(`binary search: k must be a positive integer, got ${k}`);
    if (!Number.isInteger(rescore) || rescore < 0) throw new Error(`binary search: rescore must be a whole number >= 0 (0: Hamming distances), got ${rescore}`);
    if (queries.length % this.d) throw new Error(`binary search: ${queries.length} query values are not whole rows of ${this.d} dimensions`);
    const cand = rescore >= 1 ? Math.min(this.ntotal, k * rescore) : k;
    return { codes: packSigns(queries, this.d), cand: Math.max(cand, 1) };
  }

  private finish(queries: Float32Array, k: number, rescore: number, h: HammingResult, codes = this.codes): BinarySearchResult {
    const d = this.d,
      nq = queries.length / d;
    const distances = new Float32Array(nq * k).fill(rescore >= 1 ? -Infinity : -1),
      labels = new BigInt64Array(nq * k).fill(-1n);
    const bytes = this.codeSize,
      scale = 1 / Math.sqrt(d);
    for (let i = 0; i < nq; i++) {
      if (rescore < 1) {
        for (let j = 0; j < k && j < h.k; j++) {
          distances[i * k + j] = h.distances[i * h.k + j]!;
          labels[i * k + j] = h.labels[i * h.k + j]!;
        }
        continue;
      }
      const scored: [number, number][] = [];
      for (let j = 0; j < h.k; j++) {
        const id = Number(h.labels[i * h.k + j]);
        if (id < 0) continue;
        let s = 0;
        for (let t = 0; t < d; t++) s += (codes[id * bytes + (t >> 3)]! & (0x80 >> (t & 7)) ? 1 : -1) * queries[i * d + t]!;
        scored.push([id, s * scale]);
      }
      scored.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
      scored.slice(0, k).forEach(([id, s], j) => {
        distances[i * k + j] = s;
        labels[i * k + j] = BigInt(id);
      });
    }
    return { n: nq, k, distances, labels };
  }

  /** faiss's IndexBinaryFlat file (write_index_binary), atomically. */
  write(file: string): void {
    const head = Buffer.alloc(4 + 4 + 4 + 8 + 1 + 4 + 8);
    let o = head.write(BINARY_FLAT_FOURCC, 0, 'latin1');
    o = head.writeInt32LE(this.d, o);
    o = head.writeInt32LE(this.codeSize, o);
    o = head.writeBigInt64LE(BigInt(this.ntotal), o);
    o = head.writeUInt8(1, o); // is_trained
    o = head.writeInt32LE(1, o); // metric_type: METRIC_L2 (faiss's default; binary indexes search by Hamming distance)
    head.writeBigUInt64LE(BigInt(this.codes.length), o); // the codes vector's size
    atomicOutputSync(file, (tmp) => {
      const fd = openSync(tmp, 'w');
      try {
        writeSync(fd, head);
        writeSync(fd, this.codes);
      } finally {
        closeSync(fd);
      }
    });
  }

  /** Reads an IndexBinaryFlat file (faiss.write_index_binary, or write()). */
  static read(file: string): BinaryFlatIndex {
    const fd = openSync(file, 'r');
    try {
      const head = Buffer.alloc(33);
      if (readSync(fd, head, 0, 33, 0) !== 33 || head.toString('latin1', 0, 4) !== BINARY_FLAT_FOURCC)
        throw new Error(`${file}: not a faiss binary flat index (IBxF)`);
      const d = head.readInt32LE(4),
        codeSize = head.readInt32LE(8),
        ntotal = head.readBigInt64LE(12),
        size = head.readBigUInt64LE(25);
      if (d <= 0 || d % 8 || codeSize !== d / 8 || ntotal < 0n || size !== ntotal * BigInt(codeSize))
        throw new Error(`${file}: inconsistent binary index header (d ${d}, code size ${codeSize}, ${ntotal} codes, ${size} bytes)`);
      const codes = new Uint8Array(Number(size));
      let got = 0;
      while (got < codes.length) {
        const r = readSync(fd, codes, got, codes.length - got, 33 + got);
        if (r <= 0) break;
        got += r;
      }
      if (got !== codes.length) throw new Error(`${file}: truncated binary index (${got} of ${codes.length} code bytes)`);
      return new BinaryFlatIndex(d, codes);
    } finally {
      closeSync(fd);
    }
  }

  dispose(): void {
    this.codes = new Uint8Array(0);
  }
}

/** Whether a file starts as a faiss binary flat index. */
export function isBinaryIndexFile(file: string): boolean {
  let fd: number | null = null;
  try {
    fd = openSync(file, 'r');
    const b = Buffer.alloc(4);
    return readSync(fd, b, 0, 4, 0) === 4 && b.toString('latin1') === BINARY_FLAT_FOURCC;
  } catch {
    return false;
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

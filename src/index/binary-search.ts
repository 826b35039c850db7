// Binary vectors in xling index build and xling search: packed sign bits (`xling embed --dtype
// ubinary`: uint8 [n, d/8]; `--dtype binary`: the same bytes − 128 as int8) in a faiss
// IndexBinaryFlat (binary.ts), searched exactly by Hamming distance, optionally rescored
// with float queries.
import { float16ToFloat32 } from '../io/half.js';
import { readNpy, readNpyHeader, writeNpy } from '../io/npy.js';
import { UsageError } from '../util/args.js';
import { normalizeRows } from '../util/vectors.js';
import { BinaryFlatIndex } from './binary.js';
import { writeTextOutput } from '../util/atomic.js';

/** Whether a .npy holds packed binary codes (uint8 or int8, 2-D). */
export function isBinaryVectors(path: string): boolean {
  try {
    const h = readNpyHeader(path);
    return (h.dtype === 'uint8' || h.dtype === 'int8') && h.shape.length === 2;
  } catch {
    return false;
  }
}

/** Packed codes of a .npy (int8 'binary' rows shifted back to numpy.packbits bytes). */
export function readBinaryCodes(path: string, flag: string): { codes: Uint8Array; n: number; bits: number } {
  const a = readNpy(path);
  if ((a.dtype !== 'uint8' && a.dtype !== 'int8') || a.shape.length !== 2)
    throw new Error(
      `${flag} ${path}: expected packed binary codes (uint8 or int8 [n, d/8], xling embed --dtype ubinary|binary), got ${a.dtype} [${a.shape.join(', ')}]`,
    );
  const [n, bytes] = a.shape as [number, number];
  if (!bytes) throw new Error(`${flag} ${path}: rows of 0 bytes`);
  const codes = a.dtype === 'uint8' ? (a.data as Uint8Array) : Uint8Array.from(a.data as Int8Array, (b) => b + 128);
  return { codes, n, bits: bytes * 8 };
}

/** xling index build over binary codes: a faiss IndexBinaryFlat file. */
export function buildBinaryIndex(path: string, out: string, a: { factory: string; trained?: string; shard?: string; trainOnly: boolean }): void {
  if (a.factory !== 'Flat' && a.factory !== 'BFlat')
    throw new UsageError(`--factory ${a.factory}: ${path} holds binary codes, indexed by a binary flat index (--factory BFlat, exact Hamming search)`);
  if (a.trained || a.shard || a.trainOnly)
    throw new UsageError(`--trained/--shard/--train-only: not for binary codes (${path}); a binary flat index is built in one piece`);
  const c = readBinaryCodes(path, '<vectors>');
  const idx = new BinaryFlatIndex(c.bits, c.codes);
  idx.write(out);
  process.stderr.write(`[index] binary flat index: ${c.n} codes of ${c.bits} bits → ${out}\n`);
}

export interface BinarySearchArgs {
  index?: string;
  base?: string;
  queries: string;
  k: number;
  rescore?: number;
  output?: string;
  distances?: string;
  ids?: string;
}

/**
 * xling search against binary codes (--index of a binary flat index, or --base of codes): queries
 * are codes, or float vectors (their sign bits; with --rescore R the k·R nearest by Hamming
 * distance re-ranked by the float query against the candidates' ±1 vectors).
 */
export function binarySearch(a: BinarySearchArgs): void {
  const idx = a.index
    ? BinaryFlatIndex.read(a.index)
    : (() => {
        const c = readBinaryCodes(a.base!, '--base');
        return new BinaryFlatIndex(c.bits, c.codes);
      })();
  const where = a.index ? `--index ${a.index}` : `--base ${a.base}`;
  const qh = readNpyHeader(a.queries);
  const K = a.k;
  let D: Float32Array | Int32Array, I: BigInt64Array, n: number, hamming: boolean;
  if (qh.dtype === 'uint8' || qh.dtype === 'int8') {
    if (a.rescore !== undefined)
      throw new UsageError(
        `--rescore needs float queries (the rescoring is their inner product with the candidates' ±1 vectors); --queries ${a.queries} holds binary codes`,
      );
    const q = readBinaryCodes(a.queries, '--queries');
    if (q.bits !== idx.d) throw new Error(`dimension mismatch: ${where} holds ${idx.d}-bit codes, --queries ${a.queries} ${q.bits}-bit ones`);
    const r = idx.searchCodes(q.codes, K);
    ({ distances: D, labels: I, n } = r);
    hamming = true;
  } else {
    const q = readNpy(a.queries);
    if (q.shape.length !== 2 || !(q.data instanceof Float32Array || q.data instanceof Float64Array || q.dtype === 'float16'))
      throw new Error(`--queries ${a.queries}: expected float vectors [n, ${idx.d}] or binary codes, got ${q.dtype} [${q.shape.join(', ')}]`);
    const [rows, d] = q.shape as [number, number];
    if (d !== idx.d) throw new Error(`dimension mismatch: ${where} holds ${idx.d}-bit codes, --queries ${a.queries} has ${d} dimensions`);
    const f = q.data instanceof Float32Array ? q.data : q.data instanceof Float64Array ? Float32Array.from(q.data) : float16ToFloat32(q.data as Uint16Array);
    normalizeRows(f, d, `--queries ${a.queries}`);
    const r = idx.search(f, K, a.rescore ?? 0);
    n = rows;
    I = r.labels;
    hamming = a.rescore === undefined;
    D = hamming ? Int32Array.from(r.distances) : r.distances;
  }
  process.stderr.write(
    `[search] binary: ${n} queries against ${idx.ntotal} codes of ${idx.d} bits, exact Hamming${a.rescore ? `, the ${a.rescore}·k nearest rescored with the float queries` : ''}\n`,
  );
  if (a.distances) writeNpy(a.distances, D, [n, K]);
  if (a.ids) writeNpy(a.ids, I, [n, K]);
  if (a.output) {
    const lines: string[] = [];
    for (let i = 0; i < n; i++)
      for (let j = 0; j < K; j++) {
        const l = I[i * K + j]!;
        if (l >= 0n) lines.push(`${i}\t${j}\t${l}\t${hamming ? String(D[i * K + j]) : D[i * K + j]!.toFixed(6)}`);
      }
    writeTextOutput(a.output, lines.length ? lines.join('\n') + '\n' : '');
  }
}

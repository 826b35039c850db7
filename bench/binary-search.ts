// Binary (Hamming) search: xling's native popcount kernel (native/hamming.cc, 1 thread and the
// bench's threads) against Python faiss's IndexBinaryFlat (same codes, same k; 1 thread and the
// bench's threads), against xling's former TypeScript kernel (hammingKnnJs, one thread, timed on the
// first tenth of the queries and scaled: it is ~100× slower), and against xling's float Flat
// inner-product search of the vectors the codes were packed from.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hammingKnn, hammingKnnJs, packSigns } from '../src/index/binary.js';
import { indexFactory, setFaissThreads } from '../src/index/faiss.js';
import { writeNpy } from '../src/io/npy.js';
import { jsonMode, runPython, threadsArg } from './common.js';
import { randomUnit } from './faiss-flat.js';

/** The best of `reps` timings (seconds) of f, and its last result. */
function best<T>(reps: number, f: () => T): { seconds: number; result: T } {
  let seconds = Infinity,
    result!: T;
  for (let i = 0; i < reps; i++) {
    const t = performance.now();
    result = f();
    seconds = Math.min(seconds, (performance.now() - t) / 1000);
  }
  return { seconds, result };
}

export async function run(nq = 1000, nb = 50000, d = 512, k = 10) {
  const threads = threadsArg();
  setFaissThreads(threads);
  const q = randomUnit(nq, d, 3),
    b = randomUnit(nb, d, 4);
  const qc = packSigns(q, d),
    bc = packSigns(b, d),
    bytes = d / 8;
  const dir = mkdtempSync(join(tmpdir(), 'xling-bench-bin-'));
  try {
    writeNpy(join(dir, 'q.npy'), qc, [nq, bytes], 'uint8');
    writeNpy(join(dir, 'b.npy'), bc, [nb, bytes], 'uint8');
    const n1 = best(3, () => hammingKnn(qc, bc, bytes, k, 1));
    const nN = best(3, () => hammingKnn(qc, bc, bytes, k, threads));
    const sameThreads = nN.result.labels.every((x, i) => x === n1.result.labels[i]);
    const tenth = Math.max(1, Math.floor(nq / 10));
    const ts = best(1, () => hammingKnnJs(qc.subarray(0, tenth * bytes), bc, bytes, k));
    const tsSeconds = (ts.seconds * nq) / tenth;
    const sameAsTs = ts.result.labels.every((x, i) => x === n1.result.labels[i]) && ts.result.distances.every((x, i) => x === n1.result.distances[i]);
    let top1 = 0,
      all = 0;
    for (let i = 0; i < nq * k; i++) {
      all += n1.result.distances[i]!;
      if (i % k === 0) top1 += n1.result.distances[i]!;
    }
    const idx = indexFactory(d, 'Flat', 'ip');
    idx.add(b);
    const fl = best(1, () => idx.search(q, k));
    idx.dispose();
    const py1 = runPython('faiss_binary.py', [join(dir, 'q.npy'), join(dir, 'b.npy'), String(k), '1']);
    const pyN = runPython('faiss_binary.py', [join(dir, 'q.npy'), join(dir, 'b.npy'), String(k), String(threads)]);
    return {
      name: 'binary_search',
      shape: `${nq} x ${nb} x ${d} bits, k=${k}`,
      threads,
      xling_native_1thread_seconds: n1.seconds,
      xling_native_seconds: nN.seconds,
      python_faiss_1thread_seconds: py1.seconds!,
      python_faiss_seconds: pyN.seconds!,
      xling_typescript_1thread_seconds: tsSeconds,
      xling_float_flat_seconds: fl.seconds,
      ratio_vs_faiss_1thread: py1.seconds! / n1.seconds,
      ratio_vs_faiss: pyN.seconds! / nN.seconds,
      ratio_vs_typescript_1thread: tsSeconds / n1.seconds,
      ratio_vs_float_flat: fl.seconds / nN.seconds,
      code_bytes_ratio: (d * 4) / bytes,
      same_results: top1 === py1.checksum && top1 === pyN.checksum && all === py1.checksum_all && all === pyN.checksum_all && sameThreads && sameAsTs,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith('binary-search.js')) {
  const r = await run();
  console.log(jsonMode() ? JSON.stringify(r) : JSON.stringify(r, null, 1));
}

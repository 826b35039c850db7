// Binary (Hamming) search: xling's exact popcount kernel (TypeScript, one thread) against Python
// faiss's IndexBinaryFlat (same codes, same k; 1 thread and the bench's threads), and against
// xling's float Flat inner-product search of the vectors the codes were packed from.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hammingKnn, packSigns } from '../src/index/binary.js';
import { indexFactory, setFaissThreads } from '../src/index/faiss.js';
import { writeNpy } from '../src/io/npy.js';
import { jsonMode, runPython, threadsArg } from './common.js';
import { randomUnit } from './faiss-flat.js';

export async function run(nq = 1000, nb = 50000, d = 512, k = 10) {
  const threads = threadsArg();
  setFaissThreads(threads);
  const q = randomUnit(nq, d, 3), b = randomUnit(nb, d, 4);
  const qc = packSigns(q, d), bc = packSigns(b, d), bytes = d / 8;
  const dir = mkdtempSync(join(tmpdir(), 'xling-bench-bin-'));
  try {
    writeNpy(join(dir, 'q.npy'), qc, [nq, bytes], 'uint8');
    writeNpy(join(dir, 'b.npy'), bc, [nb, bytes], 'uint8');
    const t0 = performance.now();
    const r = hammingKnn(qc, bc, bytes, k);
    const xs = (performance.now() - t0) / 1000;
    let checksum = 0;
    for (let i = 0; i < nq; i++) checksum += r.distances[i * k]!;
    const idx = indexFactory(d, 'Flat', 'ip');
    idx.add(b);
    const t1 = performance.now();
    idx.search(q, k);
    const fs = (performance.now() - t1) / 1000;
    idx.dispose();
    const py1 = runPython('faiss_binary.py', [join(dir, 'q.npy'), join(dir, 'b.npy'), String(k), '1']);
    const pyN = runPython('faiss_binary.py', [join(dir, 'q.npy'), join(dir, 'b.npy'), String(k), String(threads)]);
    return {
      name: 'binary_search', shape: `${nq} x ${nb} x ${d} bits, k=${k}`, threads,
      xling_seconds: xs, python_faiss_1thread_seconds: py1.seconds!, python_faiss_seconds: pyN.seconds!, xling_float_flat_seconds: fs,
      ratio_vs_faiss_1thread: py1.seconds! / xs, ratio_vs_faiss: pyN.seconds! / xs, ratio_vs_float_flat: fs / xs,
      code_bytes_ratio: (d * 4) / bytes, same_results: checksum === py1.checksum && checksum === pyN.checksum,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith('binary-search.js')) {
  const r = await run();
  console.log(jsonMode() ? JSON.stringify(r) : JSON.stringify(r, null, 1));
}

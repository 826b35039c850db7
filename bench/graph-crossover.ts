// The crossover of `xling graph build`'s default: exact blocked search over the float16 vectors
// (cost ~ N²·d) against training, filling and querying OPQ16,IVF√N,PQ16 at the default recall
// target (recall@10 0.95 against exact search; 64 candidates re-ranked). Clustered synthetic unit
// vectors (300 Gaussian clusters), N rows each side by side in one process; prints seconds per
// step and the ratio compressed/exact (> 1: exact is cheaper).
//   node dist/bench/graph-crossover.js [--d 128] [--sizes 4000,8000,16000] [--threads 2] [--json]
//     [--vectors GRAPH/vectors.npy]   (real sentence vectors instead: a seeded sample of N rows for each size)
import { exactGraphRows, queryRowsAsync } from '../src/graph/build.js';
import { FaissIndex } from '../src/index/faiss.js';
import { fromArray, keep, setNumThreads } from '../src/tensor/index.js';
import { float32ToFloat16 } from '../src/io/half.js';
import { NpyRowReader } from '../src/io/npy.js';
import { Rng } from '../src/util/rng.js';
import { jsonMode, threadsArg } from './common.js';

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1]! : def;
};

function clustered(n: number, d: number, seed: number): Float32Array {
  const rng = new Rng(seed),
    C = 300;
  const centres = Float32Array.from({ length: C * d }, () => rng.normal());
  const x = new Float32Array(n * d);
  for (let i = 0; i < n; i++) {
    const c = Math.floor(rng.next() * C);
    let s = 0;
    for (let j = 0; j < d; j++) {
      const v = centres[c * d + j]! + 0.6 * rng.normal();
      x[i * d + j] = v;
      s += v * v;
    }
    s = 1 / Math.sqrt(s);
    for (let j = 0; j < d; j++) x[i * d + j]! *= s;
  }
  return x;
}

export async function run(): Promise<Record<string, unknown>> {
  const real = arg('--vectors', '');
  const reader = real ? NpyRowReader.open(real) : null;
  const d = reader ? reader.cols : Number(arg('--d', '128')),
    sizes = arg('--sizes', '4000,8000,16000').split(',').map(Number),
    k = 20,
    cand = 64;
  setNumThreads(threadsArg());
  const out: Record<string, unknown> = {
    d,
    k,
    candidates: cand,
    threads: threadsArg(),
    data: real ? 'real vectors (a seeded sample of rows)' : 'synthetic (300 clusters)',
  };
  for (const n of sizes) {
    let x: Float32Array;
    if (reader) {
      const rows = new Rng(n).sample(reader.rows, n).sort((a, b) => a - b);
      x = new Float32Array(n * d);
      rows.forEach((r, i) => x.set(reader.readRows(r, r + 1), i * d));
    } else x = clustered(n, d, n);
    const x16 = float32ToFloat16(x);
    const vectors = keep(fromArray(x16, [n, d], 'float16'));
    let t = performance.now();
    const exact: Int32Array[] = [];
    for (let a = 0; a < n; a += 1024) {
      const r = await exactGraphRows(vectors, a, Math.min(n, a + 1024), k);
      exact.push(r.ids);
    }
    const tExact = (performance.now() - t) / 1000;
    const truth = new Int32Array(n * k);
    exact.reduce((at, r) => {
      truth.set(r, at);
      return at + r.length;
    }, 0);
    const nlist = 2 ** Math.round(Math.log2(Math.sqrt(n)));
    const factory = `OPQ16,IVF${nlist},PQ16`;
    const x32 = Float32Array.from(x16.length ? x : x);
    t = performance.now();
    const index = FaissIndex.create(d, factory, 'ip');
    index.setTrainingParams({ polysemous: false, opqIters: 20 });
    await index.trainAsync(x32, () => {});
    const tTrain = (performance.now() - t) / 1000;
    t = performance.now();
    await index.addAsync(
      x32,
      BigInt64Array.from({ length: n }, (_, i) => BigInt(i)),
    );
    const tAdd = (performance.now() - t) / 1000;
    // the nprobe reaching recall@10 0.95 on 500 sampled rows (what graph build tunes), then every row
    const sample = new Rng(7).sample(n, Math.min(500, n));
    const recallAt = async (rows: number[]) => {
      let hit = 0;
      for (const r of rows) {
        const q = await queryRowsAsync(index, vectors, r, r + 1, 10, cand);
        const tr = new Set(truth.subarray(r * k, r * k + 10));
        for (const id of q.ids) if (tr.has(id)) hit++;
      }
      return hit / (rows.length * 10);
    };
    t = performance.now();
    let nprobe = 1,
      recall = 0;
    for (let p = 4; p <= nlist; p *= 2) {
      index.setNprobe(p);
      nprobe = p;
      recall = await recallAt(sample);
      if (recall >= 0.95) break;
    }
    const tTune = (performance.now() - t) / 1000;
    t = performance.now();
    for (let a = 0; a < n; a += 512) await queryRowsAsync(index, vectors, a, Math.min(n, a + 512), k, cand);
    const tQuery = (performance.now() - t) / 1000;
    index.dispose();
    vectors.dispose();
    const tComp = tTrain + tAdd + tTune + tQuery;
    out[`n${n}`] = {
      exact_s: +tExact.toFixed(2),
      factory,
      train_s: +tTrain.toFixed(2),
      add_s: +tAdd.toFixed(2),
      tune_s: +tTune.toFixed(2),
      query_s: +tQuery.toFixed(2),
      nprobe,
      recall_at_10: +recall.toFixed(3),
      compressed_s: +tComp.toFixed(2),
      compressed_over_exact_ratio: +(tComp / tExact).toFixed(3),
    };
    if (!jsonMode())
      console.log(
        `N ${n} d ${d}${real ? ' (real)' : ''}: exact ${tExact.toFixed(1)}s; ${factory} train ${tTrain.toFixed(1)}s add ${tAdd.toFixed(1)}s tune ${tTune.toFixed(1)}s (nprobe ${nprobe}, recall ${recall.toFixed(3)}) query ${tQuery.toFixed(1)}s = ${tComp.toFixed(1)}s; ratio ${(tComp / tExact).toFixed(2)}`,
      );
  }
  reader?.close();
  return out;
}

if (process.argv[1]?.endsWith('graph-crossover.js')) {
  const r = await run();
  if (jsonMode()) console.log(JSON.stringify(r, null, 1));
}

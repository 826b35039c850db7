// The graph's query step at scale: PQ fast-scan converted from a mergeable 4-bit
// IVF-PQ (the same search whether the index was filled in one process or merged from shards), an
// HNSW coarse quantizer (built the same with any number of threads), their recall against exact
// search after re-ranking, the refusals that keep faiss from ending the process, and a graph built
// with both in one go equal to one built in shards.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildGraph, GraphBuildOptions, isFastScanFactory, mergeGraphShards, readGraphMeta, storedFactory } from '../../src/graph/build.js';
import { FaissIndex, getFaissThreads, indexFactory, knn, readIndex, SearchResult, setFaissThreads } from '../../src/index/faiss.js';
import { readNpy } from '../../src/io/npy.js';
import { Rng } from '../../src/util/rng.js';
import { tinyDualModel } from '../fixtures/cli.js';

/** n unit vectors around 40 centres in a 8-d latent space, projected to d (seeded). */
function clustered(n: number, d: number, seed: number): Float32Array {
  const rng = new Rng(seed),
    L = 8,
    C = 40;
  const centres = Float32Array.from({ length: C * L }, () => rng.normal());
  const proj = Float32Array.from({ length: L * d }, () => rng.normal());
  const x = new Float32Array(n * d);
  for (let i = 0; i < n; i++) {
    const c = Math.floor(rng.next() * C);
    const z = Array.from({ length: L }, (_, j) => centres[c * L + j]! + 0.5 * rng.normal());
    let s = 0;
    for (let j = 0; j < d; j++) {
      let v = 0.05 * rng.normal();
      for (let l = 0; l < L; l++) v += z[l]! * proj[l * d + j]!;
      x[i * d + j] = v;
      s += v * v;
    }
    for (let j = 0; j < d; j++) x[i * d + j]! /= Math.sqrt(s);
  }
  return x;
}

/** Recall@10 of the index's candidates re-ranked by the exact inner product (as the graph's query step does). */
function rerankedRecall(x: Float32Array, d: number, q: Float32Array, r: SearchResult, truth: SearchResult): number {
  let hit = 0;
  for (let i = 0; i < r.n; i++) {
    const list: [bigint, number][] = [];
    for (let j = 0; j < r.k; j++) {
      const l = r.labels[i * r.k + j]!;
      if (l < 0n) continue;
      let s = 0;
      for (let t = 0; t < d; t++) s += x[Number(l) * d + t]! * q[i * d + t]!;
      list.push([l, s]);
    }
    list.sort((a, b) => b[1] - a[1]);
    const t = new Set(Array.from(truth.labels.subarray(i * 10, i * 10 + 10)));
    for (const [l] of list.slice(0, 10)) if (t.has(l)) hit++;
  }
  return hit / (r.n * 10);
}

describe('fast-scan and HNSW coarse quantizers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'xling-graph-scale-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const d = 32,
    n = 6000;
  const x = clustered(n, d, 3),
    q = x.slice(0, 200 * d);
  const truth = knn(q, x, d, 10, 'ip');

  it('fast-scan from a 4-bit IVF-PQ: the same search after a sharded add and merge; recall against exact after re-ranking', () => {
    const trained = indexFactory(d, 'OPQ8,IVF64_HNSW32,PQ16x4', 'ip');
    trained.setTrainingParams({ polysemous: false, opqIters: 5 });
    trained.train(x);
    trained.write(join(dir, 'trained.faiss'));
    const ids = (a: number, b: number) => BigInt64Array.from({ length: b - a }, (_, i) => BigInt(a + i));
    const one = readIndex(join(dir, 'trained.faiss'));
    one.addWithIds(x, ids(0, n));
    const shards = [0, 1, 2].map((s) => {
      const ix = readIndex(join(dir, 'trained.faiss'));
      const [a, b] = [Math.floor((s * n) / 3), Math.floor(((s + 1) * n) / 3)];
      ix.addWithIds(x.slice(a * d, b * d), ids(a, b));
      return ix;
    });
    shards[0]!.mergeFrom(shards[1]!);
    shards[0]!.mergeFrom(shards[2]!);
    const fsOne = one.toFastScan(),
      fsMerged = shards[0]!.toFastScan();
    assert.equal(fsOne.ntotal, n);
    assert.equal(one.ntotal, n, 'the IVF-PQ is left as it was');
    for (const ix of [fsOne, fsMerged]) ix.setNprobe(8);
    const a = fsOne.search(q, 40),
      b = fsMerged.search(q, 40);
    assert.deepEqual(Array.from(b.labels), Array.from(a.labels), 'the same candidates from shards');
    assert.deepEqual(Array.from(b.distances), Array.from(a.distances));
    const recall = rerankedRecall(x, d, q, a, truth);
    assert.ok(recall >= 0.9, `fast-scan recall@10 after re-ranking ${recall}`);
    // the fast-scan layout finds what the 4-bit IVF-PQ finds (its look-up tables are 8-bit)
    one.setNprobe(8);
    const plain = rerankedRecall(x, d, q, one.search(q, 40), truth);
    assert.ok(Math.abs(plain - recall) < 0.03, `IVF-PQ ${plain} vs fast-scan ${recall}`);
    // it is faiss's own fast-scan index: written and read back, it searches the same
    fsOne.write(join(dir, 'fs.faiss'));
    const back = readIndex(join(dir, 'fs.faiss'));
    back.setNprobe(8);
    assert.deepEqual(Array.from(back.search(q, 40).labels), Array.from(a.labels));
    // refusals instead of faiss ending the process
    assert.throws(() => fsOne.mergeFrom(back), /fast-scan indexes \(PQ…x4fs\) cannot be merged/);
    const flat = indexFactory(d, 'IVF16,Flat', 'ip');
    assert.throws(() => flat.toFastScan(), /toFastScan: expected a trained IVF-PQ index with 4-bit codes/);
    for (const ix of [trained, one, ...shards, fsOne, fsMerged, back, flat]) ix.dispose();
  });

  it('an HNSW coarse quantizer finds the lists an exact one finds: recall against exact search with 8 of 512 lists probed', () => {
    const recallAt = (f: string, nprobe: number) => {
      const ix = FaissIndex.create(d, f, 'ip');
      ix.setTrainingParams({ polysemous: false });
      ix.train(x);
      ix.add(x);
      ix.setNprobe(nprobe);
      try {
        return rerankedRecall(x, d, q, ix.search(q, 40), truth);
      } finally {
        ix.dispose();
      }
    };
    const hnsw = recallAt('IVF512_HNSW32,PQ16', 8),
      flat = recallAt('IVF512,PQ16', 8);
    assert.ok(hnsw >= 0.9, `HNSW quantizer, 8 of 512 lists: recall ${hnsw}`);
    assert.ok(hnsw >= flat - 0.02, `HNSW quantizer ${hnsw} vs exact quantizer ${flat}`);
  });

  it('an HNSW coarse quantizer is built the same with any number of threads: the trained and the filled index, byte for byte', () => {
    // faiss links the centroids into its HNSW graph on every OpenMP thread, in an order that
    // depends on their timing; the binding links them on one (native/faiss_binding.cc)
    const threads = getFaissThreads();
    const build = (t: number, file: string) => {
      setFaissThreads(t);
      const ix = FaissIndex.create(d, 'IVF512_HNSW32,PQ16x4', 'ip');
      try {
        ix.setTrainingParams({ polysemous: false });
        ix.train(x);
        ix.write(`${file}.trained`);
        ix.add(x);
        ix.write(file);
      } finally {
        ix.dispose();
        setFaissThreads(threads);
      }
      return [readFileSync(`${file}.trained`), readFileSync(file)];
    };
    const [t1, f1] = build(1, join(dir, 'hnsw-1.faiss')),
      [t4, f4] = build(4, join(dir, 'hnsw-4.faiss'));
    assert.ok(t1!.equals(t4!), 'the same trained index with 1 and 4 threads');
    assert.ok(f1!.equals(f4!), 'the same lists filled with 1 and 4 threads');
  });

  it('factories: fast-scan is stored as the 4-bit IVF-PQ', () => {
    assert.equal(storedFactory('OPQ16,IVF4096_HNSW32,PQ32x4fs'), 'OPQ16,IVF4096_HNSW32,PQ32x4');
    assert.equal(storedFactory('OPQ16,IVF4096,PQ16'), 'OPQ16,IVF4096,PQ16');
    assert.ok(isFastScanFactory('IVF64,PQ16x4fs') && !isFastScanFactory('IVF64,PQ16x4') && !isFastScanFactory('IVF64,PQ16'));
  });
});

describe('a graph with an HNSW coarse quantizer and fast-scan', () => {
  const dir = mkdtempSync(join(tmpdir(), 'xling-graph-fs-'));
  const model = join(dir, 'model');
  const base = (out: string): GraphBuildOptions => ({
    model,
    out,
    sources: [{ tsv: 'data/sample/gettext.dev.tsv.gz' }],
    k: 10,
    factory: 'IVF64_HNSW32,PQ16x4fs',
    candidates: 32,
    trainSample: 5000,
    recallTarget: 0.95,
    filter: { minWords: 4, maxWords: 60, dedup: true },
    quiet: true,
    log: () => {},
  });
  before(() => {
    tinyDualModel(dir, model);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('the same graph in one go and in shards; recall against exact search ≥ 0.9', async () => {
    const one = await buildGraph(base(join(dir, 'one')));
    assert.ok(one.recall_at_10! >= 0.9, `recall ${one.recall_at_10}`);
    assert.equal(readIndex(join(dir, 'one', 'index.faiss')).info.nlist, 64);
    // tuned from nprobe 1 with an HNSW quantizer (a power of two, at most the lists)
    assert.ok([1, 2, 4, 8, 16, 32, 64].includes(one.nprobe!), `nprobe ${one.nprobe}`);
    // the shards are given the same options as the one-go build: nprobe is tuned again (by the
    // first query shard, on the merged index, and recorded for the others), and where the tuning
    // raised the candidates re-ranked (recall stalling), they are raised alike; given the tuned
    // nprobe alone, the shards would re-rank the number of candidates given instead
    const two = join(dir, 'two');
    const o = base(two);
    for (const i of [0, 1]) await buildGraph({ ...o, shard: [i, 2], steps: ['store', 'embed'] });
    mergeGraphShards(two, () => {});
    await buildGraph({ ...o, steps: ['train'] });
    for (const i of [0, 1]) await buildGraph({ ...o, shard: [i, 2], steps: ['add'] });
    mergeGraphShards(two, () => {});
    for (const i of [0, 1]) await buildGraph({ ...o, shard: [i, 2], steps: ['query'] });
    mergeGraphShards(two, () => {});
    const m = readGraphMeta(two);
    assert.equal(m.factory, 'IVF64_HNSW32,PQ16x4fs');
    assert.deepEqual([m.nprobe, m.candidates], [one.nprobe, one.candidates], 'the same nprobe and candidates tuned');
    const a = readNpy(join(dir, 'one', 'neighbours.npy')),
      b = readNpy(join(two, 'neighbours.npy'));
    assert.deepEqual(Array.from(b.data as Int32Array), Array.from(a.data as Int32Array), 'the same neighbours');
  });
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { FaissIndex, indexFactory, kmeans, knn, knnAsync, readIndex, setFaissThreads } from '../../src/index/index.js';
import { Rng } from '../../src/util/rng.js';

/** n points around `clusters` random centres (unit-normalised for inner product); the centres depend on centreSeed only. */
function clustered(n: number, d: number, clusters: number, seed: number, spread = 1.0, centreSeed = 42): Float32Array {
  const cr = new Rng(centreSeed);
  const centres = Array.from({ length: clusters }, () => Float32Array.from({ length: d }, () => cr.normal()));
  const rng = new Rng(seed);
  const x = new Float32Array(n * d);
  for (let i = 0; i < n; i++) {
    const c = centres[rng.int(clusters)]!;
    let norm = 0;
    for (let j = 0; j < d; j++) {
      const v = c[j]! + spread * rng.normal();
      x[i * d + j] = v;
      norm += v * v;
    }
    norm = Math.sqrt(norm);
    for (let j = 0; j < d; j++) x[i * d + j]! /= norm;
  }
  return x;
}

function recallAt(exact: BigInt64Array, approx: BigInt64Array, n: number, k: number): number {
  let hit = 0;
  for (let i = 0; i < n; i++) {
    const truth = new Set(Array.from(exact.subarray(i * k, (i + 1) * k)));
    for (const l of approx.subarray(i * k, (i + 1) * k)) if (truth.has(l)) hit++;
  }
  return hit / (n * k);
}

describe('faiss indexes', () => {
  setFaissThreads(2);
  const d = 32,
    nb = 20000,
    nq = 200,
    k = 10;
  const xb = clustered(nb, d, 100, 1);
  const xq = clustered(nq, d, 100, 2);
  const flat = indexFactory(d, 'Flat', 'ip');
  flat.add(xb);
  const exact = flat.search(xq, k);
  // one trained OPQ + IVF-PQ index for the tests that search it (parallel modes) or fill shards of it
  // (merge); polysemous training (faiss's default for IVF-PQ, off in xling index build) only reorders
  // the PQ codes for Hamming filtering, which these searches do not use, and is the slow part
  let opqIvfPq: FaissIndex | undefined;
  const trainedOpqIvfPq = (): FaissIndex => {
    if (!opqIvfPq) {
      opqIvfPq = indexFactory(d, 'OPQ8,IVF64,PQ8', 'ip');
      opqIvfPq.setTrainingParams({ polysemous: false });
      opqIvfPq.train(xb.subarray(0, 10000 * d)); // as many as PQ8's 256 centroids need (faiss: 39 each)
    }
    return opqIvfPq;
  };

  it('Flat search equals brute force, and knn() equals Flat', async () => {
    // brute force for query 0
    const scores = Array.from({ length: nb }, (_, j) => {
      let s = 0;
      for (let t = 0; t < d; t++) s += xq[t]! * xb[j * d + t]!;
      return s;
    });
    const best = scores
      .map((s, j) => [s, j] as const)
      .sort((a, b) => b[0] - a[0])
      .slice(0, k)
      .map(([, j]) => BigInt(j));
    assert.deepEqual(Array.from(exact.labels.subarray(0, k)), best);
    const r = knn(xq, xb, d, k, 'ip');
    assert.deepEqual(Array.from(r.labels), Array.from(exact.labels));
    const ra = await knnAsync(xq, xb, d, k, 'ip');
    assert.deepEqual(Array.from(ra.labels), Array.from(exact.labels));
    assert.equal(flat.ntotal, nb);
  });

  it('IVF-Flat and IVF-PQ reach high recall@10 at a stated nprobe; HNSW too', () => {
    const ivf = indexFactory(d, 'IVF64,Flat', 'ip');
    assert.equal(ivf.isTrained, false);
    assert.throws(() => ivf.add(xb), /not trained/);
    ivf.train(xb);
    ivf.add(xb);
    ivf.setNprobe(16);
    const rIvf = recallAt(exact.labels, ivf.search(xq, k).labels, nq, k);
    assert.ok(rIvf >= 0.95, `IVF64,Flat recall@10 at nprobe 16: ${rIvf}`);
    const pq = indexFactory(d, 'IVF64,PQ16', 'ip');
    pq.setTrainingParams({ polysemous: false }); // see trainedOpqIvfPq
    pq.train(xb);
    pq.add(xb);
    pq.setParams('nprobe=16');
    const pqRes = pq.search(xq, k);
    const rPq = recallAt(exact.labels, pqRes.labels, nq, k);
    assert.ok(rPq >= 0.6, `IVF64,PQ16 10-recall@10 at nprobe 16: ${rPq}`);
    // faiss's R@10: the true nearest neighbour is among the 10 returned
    let first = 0;
    for (let i = 0; i < nq; i++) if (Array.from(pqRes.labels.subarray(i * k, (i + 1) * k)).includes(exact.labels[i * k]!)) first++;
    assert.ok(first / nq >= 0.9, `IVF64,PQ16 1-recall@10 at nprobe 16: ${first / nq}`);
    // HNSW graphs are built for L2; on unit vectors L2 ranks exactly like inner product
    const hnsw = indexFactory(d, 'HNSW32', 'l2');
    hnsw.add(xb);
    hnsw.setParams('efSearch=256');
    const rH = recallAt(exact.labels, hnsw.search(xq, k).labels, nq, k);
    assert.ok(rH >= 0.9, `HNSW32 recall@10: ${rH}`);
    for (const i of [ivf, pq, hnsw]) i.dispose();
  });

  it("IVF search assigns all queries at once (parallel_mode 3): the results of faiss's default split (0), sync and async", async () => {
    const idx = trainedOpqIvfPq().clone();
    idx.add(xb);
    idx.setNprobe(8);
    const ours = idx.search(xq, k),
      oursAsync = await idx.searchAsync(xq, k);
    idx.setParams('parallel_mode=0');
    const faiss0 = idx.search(xq, k);
    assert.deepEqual(Array.from(ours.labels), Array.from(faiss0.labels));
    assert.deepEqual(Array.from(ours.distances), Array.from(faiss0.distances));
    assert.deepEqual(Array.from(oursAsync.labels), Array.from(faiss0.labels));
    assert.ok(recallAt(exact.labels, ours.labels, nq, k) > 0.5);
    assert.throws(() => idx.setParams('parallel_mode=7'), /parallel_mode must be 0, 1, 2 or 3/);
    assert.throws(() => flat.setParams('parallel_mode=3'), /IVF indexes only/);
    idx.dispose();
  });

  it('training knobs: polysemous off, OPQ iterations; a cheap OPQ+IVF-PQ build still finds neighbours', () => {
    const idx = indexFactory(d, 'OPQ8,IVF32,PQ8', 'ip');
    assert.deepEqual(idx.setTrainingParams({ polysemous: false, opqIters: 5 }), { opqIters: 5, polysemous: false });
    assert.deepEqual(idx.setTrainingParams({}), { opqIters: 5, polysemous: false }, 'opqIters <= 0 keeps the setting');
    idx.train(xb);
    idx.add(xb);
    idx.setNprobe(16);
    const res = idx.search(xq, k);
    let first = 0;
    for (let i = 0; i < nq; i++) if (Array.from(res.labels.subarray(i * k, (i + 1) * k)).includes(exact.labels[i * k]!)) first++;
    assert.ok(first / nq >= 0.8, `OPQ8,IVF32,PQ8 1-recall@10: ${first / nq}`);
    const flatOnly = indexFactory(d, 'Flat', 'ip');
    assert.deepEqual(flatOnly.setTrainingParams({ opqIters: 3 }), {}, 'nothing to set on Flat');
    idx.dispose();
    flatOnly.dispose();
  });

  it('write → read round trip (also mmap) gives identical results', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'xling-faiss-'));
    try {
      const idx = indexFactory(d, 'IVF32,SQ8', 'ip');
      idx.train(xb);
      idx.add(xb);
      idx.setNprobe(8);
      const before = idx.search(xq, k);
      idx.write(join(dir, 'a.faiss'));
      assert.ok(existsSync(join(dir, 'a.faiss')));
      for (const mmap of [false, true]) {
        const back = readIndex(join(dir, 'a.faiss'), { mmap });
        back.setNprobe(8);
        const after = back.search(xq, k);
        assert.deepEqual(Array.from(after.labels), Array.from(before.labels));
        assert.deepEqual(Array.from(after.distances), Array.from(before.distances));
        back.dispose();
      }
      const asyncRes = await idx.searchAsync(xq, k);
      assert.deepEqual(Array.from(asyncRes.labels), Array.from(before.labels));
      idx.dispose();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('sharded build + merge equals a single build (OPQ + IVF-PQ)', () => {
    const trained = trainedOpqIvfPq();
    const single = trained.clone();
    single.addWithIds(
      xb,
      BigInt64Array.from({ length: nb }, (_, i) => BigInt(i)),
    );
    const shards = [0, 1, 2].map((s) => {
      const sh = trained.clone();
      const lo = Math.floor((s * nb) / 3),
        hi = Math.floor(((s + 1) * nb) / 3);
      sh.addWithIds(
        xb.subarray(lo * d, hi * d),
        BigInt64Array.from({ length: hi - lo }, (_, i) => BigInt(lo + i)),
      );
      return sh;
    });
    const merged = shards[0]!;
    merged.mergeFrom(shards[1]!);
    merged.mergeFrom(shards[2]!);
    assert.equal(merged.ntotal, nb);
    for (const ix of [single, merged]) ix.setNprobe(8);
    const a = single.search(xq, k),
      b = merged.search(xq, k);
    assert.deepEqual(Array.from(b.labels), Array.from(a.labels));
    assert.deepEqual(Array.from(b.distances), Array.from(a.distances));
    for (const ix of [single, ...shards]) ix.dispose();
  });

  it('k-means recovers well-separated clusters', () => {
    const rng = new Rng(3);
    const centres = [
      [10, 0],
      [0, 10],
      [-10, -10],
    ];
    const x = new Float32Array(3000 * 2);
    for (let i = 0; i < 3000; i++) {
      const c = centres[i % 3]!;
      x[2 * i] = c[0]! + rng.normal();
      x[2 * i + 1] = c[1]! + rng.normal();
    }
    const { centroids, objective } = kmeans(x, 2, 3, { niter: 20 });
    for (const c of centres) {
      const dmin = Math.min(...[0, 1, 2].map((j) => Math.hypot(centroids[2 * j]! - c[0]!, centroids[2 * j + 1]! - c[1]!)));
      assert.ok(dmin < 0.3, `centre ${c} found within ${dmin}`);
    }
    assert.ok(objective > 0 && objective < 3000 * 3, `objective ${objective}`);
  });

  it('bad input: each a clear Error, never a crash', async () => {
    assert.throws(() => flat.search(xq, 0), /k must be >= 1/);
    assert.throws(() => flat.search(new Float32Array(33), 1), /not a multiple of the dimension 32/);
    assert.throws(() => flat.add(new Float64Array(32) as unknown as Float32Array), /Float32Array/);
    assert.throws(() => readIndex('/nonexistent/x.faiss'), /Error|could not open|No such file/i);
    assert.throws(() => indexFactory(d, 'NoSuchIndex12', 'ip'), /could not parse|NoSuchIndex|index/i);
    assert.throws(() => indexFactory(d, 'Flat', 'cosine' as 'ip'), /metric must be/);
    assert.throws(() => flat.setParams('nprobe=abc'), /Error|parameter|nprobe/i);
    assert.throws(() => kmeans(new Float32Array(4), 2, 5), /exceeds the number of points/);
    const gone = indexFactory(4, 'Flat');
    gone.dispose();
    assert.throws(() => gone.search(new Float32Array(4), 1), /disposed/);
    const ivf = indexFactory(d, 'IVF16,Flat');
    assert.throws(() => ivf.addWithIds(new Float32Array(d), new BigInt64Array(1)), /not trained/);
    ivf.train(xb.subarray(0, 2000 * d));
    assert.throws(() => ivf.addWithIds(new Float32Array(2 * d), new BigInt64Array(1)), /1 ids for 2 vectors/);
    const busy = ivf.addAsync(xb);
    assert.throws(() => ivf.dispose(), /busy/);
    await busy;
    ivf.dispose();
    // a few hundred random bad calls through the raw binding
    const { native } = await import('../../src/native.js');
    const F = native.faiss;
    const vals: unknown[] = [undefined, null, 0, -1, 1.5, 'Flat', 'ip', {}, [], new Float32Array(3), new BigInt64Array(2), new Int32Array(4), true, flat];
    const names = Object.keys(F).filter((n) => n !== 'writeIndex'); // no stray files
    const rng = new Rng(7);
    let errors = 0;
    for (let i = 0; i < 300; i++) {
      const fn = F[names[rng.int(names.length)]!]!;
      const args = Array.from({ length: rng.int(6) }, () => vals[rng.int(vals.length)]);
      try {
        const r = fn(...args);
        if (r instanceof Promise)
          await r.catch(() => {
            errors++;
          });
      } catch (e) {
        assert.ok(e instanceof Error);
        errors++;
      }
    }
    assert.ok(errors > 150, `most random calls fail cleanly (${errors})`);
  });

  it('cleanup', () => {
    flat.dispose();
    opqIvfPq?.dispose();
    assert.ok(FaissIndex);
  });
});

/**
 * The training of the progress test, in a child process: trainAsync with a line callback redirects
 * the process's file descriptors 1 and 2 to read faiss's lines, and in a test file's process fd 1
 * also carries the test runner's messages (one sent meanwhile went into the pipe and was lost).
 * Prints the TrainingLog's text, faiss's lines, the training settings and the search after.
 */
const progressChild = `
import { FaissIndex } from ${JSON.stringify(new URL('../../src/index/index.js', import.meta.url).href)};
import { TrainingLog } from ${JSON.stringify(new URL('../../src/index/train-log.js', import.meta.url).href)};
import { Rng } from ${JSON.stringify(new URL('../../src/util/rng.js', import.meta.url).href)};
const d = 32, n = 2000, rng = new Rng(5);
const x = Float32Array.from({ length: n * d }, () => rng.normal());
const index = FaissIndex.create(d, 'OPQ4,IVF8,PQ4', 'ip');
const set = index.setTrainingParams({ polysemous: false, opqIters: 3 });
const out = [], faissLines = [];
const tl = new TrainingLog({ label: 't', opqIters: set.opqIters, stream: { write: (s) => out.push(s) }, intervalMs: 0 });
await index.trainAsync(x, (l) => { faissLines.push(l); tl.line(l); });
tl.done();
const trained = index.isTrained;
const labels = index.search(x.subarray(0, d), 1).labels.length;
index.dispose();
process.stdout.write('\\n<result>' + JSON.stringify({ set, text: out.join(''), faissLines, trained, labels }) + '</result>\\n');
`;

describe('progress of index training (faiss verbose lines → TrainingLog)', () => {
  it('OPQ iterations, k-means iterations and PQ slices become progress lines while it trains; repeated warnings one line', () => {
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', progressChild], { encoding: 'utf8', maxBuffer: 1 << 26 });
    assert.equal(child.status, 0, child.stderr);
    // between markers: faiss may print lines of its own to standard output too
    const { set, text, faissLines, trained, labels } = JSON.parse(/<result>(.*)<\/result>/s.exec(child.stdout)![1]!) as {
      set: { opqIters?: number };
      text: string;
      faissLines: string[];
      trained: boolean;
      labels: number;
    };
    assert.equal(set.opqIters, 3);
    assert.ok(trained);
    // a line per iteration as it happens (intervalMs 0), then the phase's final line
    assert.match(text, /t: OPQ4 rotation on 2000 vectors in 32D: 1\/3 iterations \(33\.3%\).*ETA/);
    assert.match(text, /t: OPQ4 rotation on 2000 vectors in 32D: 3\/3 iterations \(100\.0%\) .* in /);
    assert.match(text, /t: k-means, 8 centroids from 2000 vectors in 32D: 10\/10 iterations \(100\.0%\)/);
    assert.match(text, /t: product quantizer 4×256 on 2000 vectors: 4\/4 slices \(100\.0%\)/);
    assert.ok(
      text.indexOf('OPQ4 rotation') < text.indexOf('k-means, 8 centroids') && text.indexOf('k-means, 8 centroids') < text.indexOf('product quantizer'),
      'in training order',
    );
    // 2000 points for 256 centroids: faiss warns at every PQ training (each OPQ iteration's and the index's own)
    const warned = faissLines.filter((l) => l.startsWith('WARNING clustering')).length;
    assert.ok(warned >= 4 * 4, `${warned} warnings from faiss`);
    const folded = text.split('\n').filter((l) => /faiss warned/.test(l));
    assert.deepEqual(folded, [
      `t: faiss warned ${warned}× about a small training set: k-means of 2000 points into 256 centroids (faiss asks for at least 9984 training points)`,
    ]);
    // the index still trains and searches as without progress
    assert.equal(labels, 1);
  });
});

// Binary (Hamming) search: the native popcount kernel against the TypeScript one and a naive count
// (widths of 8 to 1024 bits, ties, threads, the async variant, bad arguments), recall of the sign bits
// against float search on clustered vectors (and better with rescoring), faiss's IndexBinaryFlat
// file (read back here, and by Python's faiss when it is installed), and the CLI (index build of
// ubinary codes, search by codes and by float queries).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { quantizeEmbeddings } from '../../src/embed/quantize.js';
import { BinaryFlatIndex, hammingKnn, hammingKnnAsync, hammingKnnJs, packSigns } from '../../src/index/binary.js';
import { native } from '../../src/native.js';
import { readNpy, writeNpy } from '../../src/io/npy.js';
import { Rng } from '../../src/util/rng.js';
import { loadSentenceEncoder } from '../../src/embed/model-dir.js';
import { indexFactory } from '../../src/index/faiss.js';
import { loadStore } from '../../src/io/sentence-store.js';
import { buildServer, closeGracefully } from '../../src/serve/server.js';
import { cli, devColumn, tinyDualModel } from '../fixtures/cli.js';
import { writeFileSync } from 'node:fs';

const dir = mkdtempSync(join(tmpdir(), 'xling-binary-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** n unit vectors around `centers` cluster centres (spread s), and queries: noisy copies of the first q of them. */
function clustered(n: number, d: number, centers: number, q: number, seed: number) {
  const rng = new Rng(seed);
  const c = Float32Array.from({ length: centers * d }, () => rng.normal());
  const unit = (v: Float32Array) => {
    for (let i = 0; i < v.length / d; i++) {
      let s = 0;
      for (let j = 0; j < d; j++) s += v[i * d + j]! ** 2;
      s = Math.sqrt(s);
      for (let j = 0; j < d; j++) v[i * d + j]! /= s;
    }
    return v;
  };
  const base = unit(Float32Array.from({ length: n * d }, (_, i) => c[(Math.floor(i / d) % centers) * d + (i % d)]! + rng.normal(0, 0.8)));
  const queries = unit(Float32Array.from({ length: q * d }, (_, i) => base[i]! + rng.normal(0, 0.03)));
  return { base, queries };
}

function floatTopK(q: Float32Array, b: Float32Array, d: number, k: number): number[][] {
  const nq = q.length / d,
    n = b.length / d,
    out: number[][] = [];
  for (let i = 0; i < nq; i++) {
    const s = Array.from({ length: n }, (_, r) => {
      let x = 0;
      for (let j = 0; j < d; j++) x += q[i * d + j]! * b[r * d + j]!;
      return [x, r] as const;
    });
    s.sort((a, c) => c[0] - a[0] || a[1] - c[1]);
    out.push(s.slice(0, k).map((x) => x[1]));
  }
  return out;
}

function recall(truth: number[][], labels: BigInt64Array, k: number): number {
  let hit = 0;
  truth.forEach((t, i) => {
    const got = new Set(Array.from(labels.subarray(i * k, (i + 1) * k), Number));
    for (const x of t) if (got.has(x)) hit++;
  });
  return hit / (truth.length * truth[0]!.length);
}

describe('binary (Hamming) search', () => {
  it('the popcount kernel counts as a naive bit count does (any code length), ties by id', () => {
    const rng = new Rng(3);
    for (const bytes of [1, 3, 8, 9, 64, 128]) {
      const base = Uint8Array.from({ length: 300 * bytes }, () => rng.int(256)),
        q = Uint8Array.from({ length: 7 * bytes }, () => rng.int(256));
      const r = hammingKnn(q, base, bytes, 20);
      for (let i = 0; i < 7; i++) {
        const naive = Array.from({ length: 300 }, (_, id) => {
          let dd = 0;
          for (let b = 0; b < bytes; b++) for (let x = q[i * bytes + b]! ^ base[id * bytes + b]!; x; x >>= 1) dd += x & 1;
          return [dd, id] as const;
        })
          .sort((a, c) => a[0] - c[0] || a[1] - c[1])
          .slice(0, 20);
        assert.deepEqual(
          Array.from(r.labels.subarray(i * 20, i * 20 + 20), Number),
          naive.map((x) => x[1]),
          `bytes ${bytes}, query ${i}`,
        );
        assert.deepEqual(
          Array.from(r.distances.subarray(i * 20, i * 20 + 20)),
          naive.map((x) => x[0]),
        );
      }
    }
    // fewer rows than k: -1 labels
    const r = hammingKnn(new Uint8Array(2), new Uint8Array(6), 2, 5);
    assert.deepEqual(Array.from(r.labels, Number), [0, 1, 2, -1, -1]);
  });

  /** Brute force: every base row sorted by (distance, id), the first k; bits counted one at a time. */
  function naiveKnn(q: Uint8Array, base: Uint8Array, bytes: number, k: number): { d: number[]; id: number[] } {
    const nq = q.length / bytes,
      nb = base.length / bytes,
      d: number[] = [],
      id: number[] = [];
    for (let i = 0; i < nq; i++) {
      const all = Array.from({ length: nb }, (_, r) => {
        let x = 0;
        for (let b = 0; b < bytes; b++) for (let v = q[i * bytes + b]! ^ base[r * bytes + b]!; v; v >>= 1) x += v & 1;
        return [x, r] as const;
      });
      all.sort((a, c) => a[0] - c[0] || a[1] - c[1]);
      for (let j = 0; j < k; j++) {
        d.push(j < nb ? all[j]![0] : -1);
        id.push(j < nb ? all[j]![1] : -1);
      }
    }
    return { d, id };
  }

  it("the native kernel returns exactly the TypeScript kernel's and a brute force's distances and ids (8 to 1024 bits, ties by id, 1–3 threads)", () => {
    const rng = new Rng(21);
    for (const bits of [8, 64, 72, 512, 1024]) {
      const bytes = bits / 8;
      // random codes, and codes drawn from 6 distinct rows: most distances tie, so the ids decide
      const nb = 2600,
        distinct = Uint8Array.from({ length: 6 * bytes }, () => rng.int(256));
      const bases = {
        random: Uint8Array.from({ length: nb * bytes }, () => rng.int(256)),
        ties: Uint8Array.from({ length: nb * bytes }, (_, i) => distinct[((Math.floor(i / bytes) * 7919) % 6) * bytes + (i % bytes)]!),
      };
      for (const [kind, base] of Object.entries(bases)) {
        for (const nq of [1, 37]) {
          const q = Uint8Array.from({ length: nq * bytes }, () => rng.int(256));
          for (const k of [1, 10, 100]) {
            const js = hammingKnnJs(q, base, bytes, k);
            for (const threads of [1, 2, 3]) {
              const nat = hammingKnn(q, base, bytes, k, threads);
              const at = `${bits} bits, ${kind}, ${nq} queries, k ${k}, ${threads} threads`;
              assert.deepEqual(nat.distances, js.distances, at);
              assert.deepEqual(nat.labels, js.labels, at);
            }
            if (k === 10 && nq === 37) {
              const ref = naiveKnn(q, base, bytes, k);
              assert.deepEqual(Array.from(js.distances), ref.d, `brute force, ${bits} bits, ${kind}`);
              assert.deepEqual(Array.from(js.labels, Number), ref.id, `brute force, ${bits} bits, ${kind}`);
            }
          }
        }
        if (kind === 'ties') {
          // equal distances all the way down: the smallest ids, in order, whichever slice of the base they lie in
          const q = distinct.subarray(0, bytes),
            r = hammingKnn(q, base, bytes, 50, 3);
          const own = Array.from({ length: nb }, (_, i) => i)
            .filter((i) => (i * 7919) % 6 === 0)
            .slice(0, 50);
          assert.deepEqual(Array.from(r.labels, Number), own, `${bits} bits: exact copies by id`);
          assert.ok(r.distances.every((x) => x === 0));
        }
      }
    }
    // k = the whole base, and k beyond it (-1 past the last row), against the brute force
    const bytes = 9,
      base = Uint8Array.from({ length: 40 * bytes }, () => rng.int(4)),
      q = Uint8Array.from({ length: 3 * bytes }, () => rng.int(4));
    for (const k of [40, 45]) {
      const r = hammingKnn(q, base, bytes, k, 2),
        ref = naiveKnn(q, base, bytes, k);
      assert.deepEqual(Array.from(r.distances), ref.d);
      assert.deepEqual(Array.from(r.labels, Number), ref.id);
    }
    // no queries, an empty base
    assert.equal(hammingKnn(new Uint8Array(0), base, bytes, 3).labels.length, 0);
    assert.deepEqual(Array.from(hammingKnn(q, new Uint8Array(0), bytes, 2).labels, Number), [-1, -1, -1, -1, -1, -1]);
  });

  it("both popcount paths (AVX-512 VPOPCNTDQ where the CPU has it, XLING_NO_AVX512=1: 64-bit POPCNT) give the TypeScript kernel's results", () => {
    // the path is picked when the addon loads: a child process computes with it turned off
    const script = `import { hammingKnn } from ${JSON.stringify(new URL('../../src/index/binary.js', import.meta.url).href)};
import { native } from ${JSON.stringify(new URL('../../src/native.js', import.meta.url).href)};
import { Rng } from ${JSON.stringify(new URL('../../src/util/rng.js', import.meta.url).href)};
const rng = new Rng(24), out = [native.hamming.simd];
for (const bytes of [64, 128, 192]) {
  const b = Uint8Array.from({ length: 1500 * bytes }, () => rng.int(256)), q = Uint8Array.from({ length: 9 * bytes }, () => rng.int(256));
  const r = hammingKnn(q, b, bytes, 15, 2);
  out.push([Array.from(r.distances), Array.from(r.labels, Number)]);
}
console.log(JSON.stringify(out));`;
    const results: Record<string, unknown[]> = {};
    for (const off of [false, true]) {
      const env = { ...process.env };
      if (off) env.XLING_NO_AVX512 = '1';
      else delete env.XLING_NO_AVX512;
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env });
      assert.equal(r.status, 0, r.stderr);
      const [simd, ...rest] = JSON.parse(r.stdout) as [string, ...unknown[]];
      if (off) assert.equal(simd, 'popcnt64');
      results[off ? 'off' : 'on'] = rest;
    }
    const rng = new Rng(24);
    const want = [64, 128, 192].map((bytes) => {
      const b = Uint8Array.from({ length: 1500 * bytes }, () => rng.int(256)),
        q = Uint8Array.from({ length: 9 * bytes }, () => rng.int(256));
      const r = hammingKnnJs(q, b, bytes, 15);
      return [Array.from(r.distances), Array.from(r.labels, Number)];
    });
    assert.deepEqual(results.on, want);
    assert.deepEqual(results.off, want);
  });

  it('the async kernel gives the same results off the event loop', async () => {
    const rng = new Rng(22),
      bytes = 64,
      nb = 60000,
      nq = 64;
    const base = Uint8Array.from({ length: nb * bytes }, () => rng.int(256)),
      q = Uint8Array.from({ length: nq * bytes }, () => rng.int(256));
    const sync = hammingKnn(q, base, bytes, 10, 2);
    let settled = false;
    const p = hammingKnnAsync(q, base, bytes, 10, 2).then((r) => {
      settled = true;
      return r;
    });
    await new Promise((r) => setImmediate(r));
    assert.equal(settled, false, 'the search runs on a worker thread, not before the promise returns');
    const r = await p;
    assert.deepEqual(r.distances, sync.distances);
    assert.deepEqual(r.labels, sync.labels);
    // a BinaryFlatIndex searched asynchronously (with and without rescoring) equals the sync search
    const d = 128,
      { base: fb, queries } = clustered(2000, d, 20, 30, 23);
    const idx = new BinaryFlatIndex(d, packSigns(fb, d));
    for (const rescore of [0, 4]) {
      const a = await idx.searchAsync(queries, 5, { rescore }),
        s = idx.search(queries, 5, rescore);
      assert.deepEqual(a.labels, s.labels);
      assert.deepEqual(a.distances, s.distances);
    }
    await assert.rejects(hammingKnnAsync(q, base, bytes, 0), /k must be a positive integer/);
    assert.throws(() => native.hamming.knn!(q, base, bytes, nb + 1, 1, true), /k \(60001\) exceeds the base's 60000 codes/);
  });

  it('the native kernel refuses bad arguments with errors naming them', () => {
    const H = native.hamming,
      q = new Uint8Array(16),
      b = new Uint8Array(64);
    const bad: [unknown[], RegExp][] = [
      [[q, b, 8], /expected 5 arguments/],
      [[new Float32Array(4), b, 8, 1, 1], /queries must be a Uint8Array/],
      [[q, new Int8Array(64), 8, 1, 1], /base must be a Uint8Array/],
      [[q, b, 0, 1, 1], /bytes \(the code length\) must be in/],
      [[q, b, 1.5, 1, 1], /bytes: expected an integer/],
      [[q, b, 'x', 1, 1], /bytes: expected an integer/],
      [[q, b, 5, 1, 1], /queries of 16 bytes are not whole codes of 5 bytes/],
      [[q, new Uint8Array(20), 8, 1, 1], /base of 20 bytes is not whole codes of 8 bytes/],
      [[q, b, 8, 0, 1], /k must be >= 1, got 0/],
      [[q, b, 8, -3, 1], /k must be >= 1/],
      [[q, b, 8, 9, 1], /k \(9\) exceeds the base's 8 codes/],
      [[q, new Uint8Array(0), 8, 1, 1], /exceeds the base's 0 codes/],
      [[q, b, 8, 2, -1], /threads must be in/],
    ];
    for (const [args, re] of bad) assert.throws(() => H.knn!(...args), re, String(args.slice(2)));
    // the wrapper's own checks
    assert.throws(() => hammingKnn(q, b, 8, 0), /k must be a positive integer, got 0/);
    assert.throws(() => hammingKnn(q, b, 3, 1), /not whole rows of 3 bytes/);
    assert.throws(() => hammingKnn(q, b, 0, 1), /code length must be a positive number of bytes/);
    assert.throws(() => new BinaryFlatIndex(64, b).search(new Float32Array(10), 1), /not whole rows of 64 dimensions/);
    assert.throws(() => new BinaryFlatIndex(64, b).search(new Float32Array(64), 1, 1.5), /rescore must be a whole number/);
    // and still works afterwards
    assert.deepEqual(Array.from(H.knn!(q, b, 8, 2, 1).labels, Number), [0, 1, 0, 1]);
  });

  it("packs signs as quantize_embeddings' ubinary (numpy.packbits of x > 0)", () => {
    const rng = new Rng(4),
      v = Float32Array.from({ length: 5 * 20 }, () => rng.normal());
    assert.deepEqual(packSigns(v, 20), quantizeEmbeddings(v, 20, 'ubinary'));
  });

  it('recall against float search: high for the sign bits, higher with rescoring', () => {
    const d = 256,
      k = 10;
    const { base, queries } = clustered(3000, d, 30, 100, 7);
    const truth = floatTopK(queries, base, d, k);
    const idx = new BinaryFlatIndex(d, packSigns(base, d));
    const plain = recall(truth, idx.search(queries, k).labels, k);
    const rescored = recall(truth, idx.search(queries, k, 4).labels, k);
    // every query's own source row comes first either way
    const r1 = idx.search(queries, 1);
    assert.ok(
      Array.from(r1.labels, Number).every((l, i) => l === i),
      'the noisy copy finds its original',
    );
    // chance: k/n = 0.003; the clusters make the float ranking within a cluster fine-grained (0.38 and 0.43 measured)
    assert.ok(plain > 0.3, `recall@10 of Hamming search ${plain}`);
    assert.ok(rescored > plain + 0.03, `rescored recall@10 ${rescored} (plain ${plain})`);
    // rescored scores are cosines between the query and the ±1 vectors, descending
    const r = idx.search(queries.subarray(0, d), k, 4);
    for (let j = 1; j < k; j++) assert.ok(r.distances[j - 1]! >= r.distances[j]!);
    assert.ok(r.distances[0]! > 0.5 && r.distances[0]! <= 1);
  });

  it("writes and reads faiss's IndexBinaryFlat file (and Python's faiss reads it, when installed)", () => {
    const rng = new Rng(9),
      codes = Uint8Array.from({ length: 50 * 8 }, () => rng.int(256));
    const file = join(dir, 'b.faiss');
    new BinaryFlatIndex(64, codes).write(file);
    const back = BinaryFlatIndex.read(file);
    assert.equal(back.d, 64);
    assert.equal(back.ntotal, 50);
    assert.deepEqual(back.data, codes);
    const py = process.env.XLING_PYTHON ?? '/usr/bin/python3';
    const script = `import faiss, numpy as np, sys
idx = faiss.read_index_binary(sys.argv[1])
x = faiss.rev_swig_ptr(idx.xb.data(), idx.ntotal * idx.code_size).copy().reshape(idx.ntotal, idx.code_size)
D, I = idx.search(x[:3], 4)
print(idx.d, idx.ntotal, ' '.join(map(str, D.ravel())), ' '.join(map(str, I.ravel())))
faiss.write_index_binary(idx, sys.argv[2])`;
    const r = spawnSync(py, ['-c', script, file, join(dir, 'py.faiss')], { encoding: 'utf8' });
    if (r.error || /No module named/.test(r.stderr)) return; // no Python faiss here: the round trip above stands
    assert.equal(r.status, 0, r.stderr);
    const parts = r.stdout.trim().split(' ');
    assert.equal(parts[0], '64');
    assert.equal(parts[1], '50');
    const ours = hammingKnn(codes.subarray(0, 24), codes, 8, 4);
    assert.deepEqual(parts.slice(2, 14).map(Number), Array.from(ours.distances));
    // Python's own file is what we write
    assert.deepEqual(readFileSync(join(dir, 'py.faiss')), readFileSync(file));
  });

  it('xling index build of ubinary codes and xling search by codes and by float queries', () => {
    const d = 64,
      { base, queries } = clustered(500, d, 10, 20, 11);
    writeNpy(join(dir, 'base.npy'), packSigns(base, d), [500, d / 8], 'uint8');
    writeNpy(join(dir, 'q.npy'), queries, [20, d]);
    writeNpy(
      join(dir, 'qb.npy'),
      Int8Array.from(packSigns(queries, d), (b) => b - 128),
      [20, d / 8],
      'int8',
    );
    let r = cli(['index', 'build', join(dir, 'base.npy'), '-o', join(dir, 'base.faiss')]);
    assert.equal(r.status, 0, r.stderr);
    r = cli([
      'search',
      '--index',
      join(dir, 'base.faiss'),
      '--queries',
      join(dir, 'qb.npy'),
      '-k',
      '3',
      '--ids',
      join(dir, 'I.npy'),
      '--distances',
      join(dir, 'D.npy'),
    ]);
    assert.equal(r.status, 0, r.stderr);
    const I = readNpy(join(dir, 'I.npy')),
      D = readNpy(join(dir, 'D.npy'));
    assert.deepEqual(I.shape, [20, 3]);
    assert.equal(D.dtype, 'int32');
    for (let i = 0; i < 20; i++) assert.equal(Number((I.data as BigInt64Array)[i * 3]), i);
    r = cli(['search', '--base', join(dir, 'base.npy'), '--queries', join(dir, 'q.npy'), '-k', '2', '--rescore', '4', '-o', '-']);
    assert.equal(r.status, 0, r.stderr);
    const rows = r.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('\t'));
    assert.equal(rows.length, 40);
    for (const [qi, rank, id, score] of rows)
      if (rank === '0') {
        assert.equal(id, qi);
        assert.ok(Number(score) > 0.5);
      }
    r = cli(['search', '--index', join(dir, 'base.faiss'), '--queries', join(dir, 'qb.npy'), '--rescore', '2', '-o', '-']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--rescore/);
  });

  it('xling serve: POST /search over a binary index (rescored by default, Hamming distances with rescore 0) finds what the float index finds', async () => {
    const modelDir = join(dir, 'model');
    tinyDualModel(dir, modelDir);
    const model = loadSentenceEncoder(modelDir);
    const texts = devColumn('en').slice(0, 100);
    writeFileSync(join(dir, 'store.tsv'), texts.map((t) => `en\t${t}`).join('\n') + '\n');
    const v = model.embed(texts, { lang: 'en' });
    const store = await loadStore(join(dir, 'store.tsv'));
    const bin = await buildServer({ model, modelDir, index: new BinaryFlatIndex(model.dim, packSigns(v, model.dim)), store });
    const flat = indexFactory(model.dim, 'Flat');
    flat.add(v);
    const fl = await buildServer({ model, modelDir, index: flat, store });
    try {
      const ask = async (app: typeof bin, body: Record<string, unknown>) => {
        const r = await app.inject({ method: 'POST', url: '/search', payload: body });
        return { status: r.statusCode, body: r.json() as { results: { id: number; score: number; text: string }[] } };
      };
      let same = 0;
      for (let i = 0; i < 20; i++) {
        const b = await ask(bin, { text: texts[i], k: 5, lang: 'en' });
        assert.equal(b.status, 200);
        assert.equal(b.body.results.length, 5);
        assert.equal(b.body.results[0]!.id, i, 'the sentence itself comes first');
        const f = await ask(fl, { text: texts[i], k: 5, lang: 'en' });
        same += b.body.results.filter((x) => f.body.results.some((y) => y.id === x.id)).length;
      }
      assert.ok(same / 100 > 0.5, `binary (rescored) top-5 shares ${same}% with the float top-5`);
      const h = await ask(bin, { text: texts[3], k: 3, rescore: 0, lang: 'en' });
      assert.equal(h.body.results[0]!.score, 0);
      assert.ok(h.body.results.every((x) => Number.isInteger(x.score)));
      assert.equal((await ask(fl, { text: texts[3], rescore: 2 })).status, 422);
    } finally {
      await closeGracefully(bin, 200);
      await closeGracefully(fl, 200);
      flat.dispose();
    }
  });
});

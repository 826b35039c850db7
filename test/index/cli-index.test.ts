// xling index build / merge / search and eval retrieval --index through the CLI on tiny synthetic
// vectors: every factory the help lists builds, searches, saves and loads; sharded builds keep
// global row ids (ID maps for non-IVF indexes); duplicate ids are refused; an index must hold the
// vectors it is evaluated on; faiss's errors say which option or file they are about (dimension
// mismatches of every command: cli-bad-input.test.ts).
import assert from 'node:assert/strict';
import { existsSync, linkSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { readIndex } from '../../src/index/faiss.js';
import { float32ToFloat16 } from '../../src/io/half.js';
import { readNpy, writeNpy } from '../../src/io/npy.js';
import { Rng } from '../../src/util/rng.js';
import { cli, cliInProcess } from '../fixtures/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'xling-cli-index-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const p = (f: string) => join(dir, f);

const n = 300,
  d = 16;
const rng = new Rng(12);
const base = Float32Array.from({ length: n * d }, () => rng.normal());
writeNpy(p('base.npy'), base, [n, d]);
writeNpy(p('q.npy'), base.slice(0, 20 * d), [20, d]);

/** Rank-1 ids per query row of a search TSV (query_row, rank, id, score). */
function top1(tsv: string): Map<number, number> {
  const m = new Map<number, number>();
  for (const l of tsv.trim().split('\n')) {
    const [q, r, id] = l.split('\t').map(Number);
    if (r === 0) m.set(q!, id!);
  }
  return m;
}
const selfHits = (t: Map<number, number>) => [...t].filter(([q, id]) => q === id).length;

// Commands run in this process (cliInProcess: runCli, as main.js runs it; a process start per
// command took most of this file's time), except those that train a faiss index: training
// redirects the process's file descriptors 1 and 2 to read faiss's lines (native OutputCapture),
// and in this process fd 1 also carries the test runner's messages. Those run as processes (okProcess).
async function ok(args: string[]) {
  const r = await cliInProcess(args, { cwd: dir });
  assert.equal(r.status, 0, `xling ${args.join(' ')}: ${r.stderr}`);
  return r;
}
function okProcess(args: string[]) {
  const r = cli(args, { cwd: dir });
  assert.equal(r.status, 0, `xling ${args.join(' ')}: ${r.stderr}`);
  return r;
}
/** Factories whose index build trains (the rest: Flat, HNSW, SQfp16 need no training). */
const trains = (factory: string) => !/^(Flat|HNSW\d+|SQfp16)$/.test(factory);

describe('CLI: every index factory builds, searches, saves and loads', () => {
  // the factories `xling index build --help` lists (n, m chosen for 300 rows of 16-d)
  const factories = ['Flat', 'IVF4,Flat', 'IVF4,PQ8', 'OPQ4,IVF4,PQ4', 'HNSW16', 'SQ8', 'SQfp16', 'PQ8'];
  for (const f of factories) {
    it(f, async () => {
      const out = `${f.replace(/,/g, '_')}.faiss`;
      const build = ['index', 'build', '--factory', f, 'base.npy', '-o', out];
      if (trains(f)) okProcess(build);
      else await ok(build);
      const idx = readIndex(p(out));
      assert.equal(idx.ntotal, n);
      assert.equal(idx.d, d);
      idx.dispose();
      const r = await ok(['search', '--index', out, '--queries', 'q.npy', '-k', '3', '-o', '-', ...(f.includes('IVF') ? ['--nprobe', '4'] : [])]);
      const hits = selfHits(top1(r.stdout));
      assert.ok(hits >= 16, `${f}: ${hits}/20 queries find their own row first`);
      if (f === 'Flat') {
        // --threads: the same answer on one thread
        const one = await ok(['search', '--index', out, '--queries', 'q.npy', '-k', '3', '-o', '-', '--threads', '1']);
        assert.equal(one.stdout, r.stdout);
      }
    });
  }

  it('float16 and float64 vectors are read like float32 (one reader for every command)', async () => {
    writeNpy(p('base16.npy'), float32ToFloat16(base), [n, d], 'float16');
    writeNpy(p('q64.npy'), Float64Array.from(base.subarray(0, 20 * d)), [20, d]);
    await ok(['index', 'build', 'base16.npy', '-o', 'f16.faiss']);
    const r = await ok(['search', '--index', 'f16.faiss', '--queries', 'q64.npy', '-k', '1', '-o', '-']);
    assert.equal(selfHits(top1(r.stdout)), 20);
  });

  it('sharded builds keep global row ids (IVF lists, or an ID map) and merge; HNSW shards are refused', async () => {
    for (const f of ['IVF4,Flat', 'Flat']) {
      const tag = f.replace(/,/g, '_');
      const trainOnly = ['index', 'build', '--factory', f, '--train-only', 'base.npy', '-o', `${tag}-empty.faiss`];
      if (trains(f)) okProcess(trainOnly);
      else await ok(trainOnly);
      for (const s of [0, 1]) await ok(['index', 'build', '--trained', `${tag}-empty.faiss`, '--shard', `${s}/2`, 'base.npy', '-o', `${tag}-sh${s}.faiss`]);
      // queries from the second shard: found under their global row numbers
      writeNpy(p('q2.npy'), base.slice(200 * d, 220 * d), [20, d]);
      await ok(['index', 'merge', `${tag}-sh0.faiss`, `${tag}-sh1.faiss`, '-o', `${tag}-all.faiss`]);
      const r = await ok([
        'search',
        '--index',
        `${tag}-all.faiss`,
        '--queries',
        'q2.npy',
        '-k',
        '1',
        '-o',
        '-',
        ...(f.includes('IVF') ? ['--nprobe', '4'] : []),
      ]);
      const hits = [...top1(r.stdout)].filter(([q, id]) => id === q + 200).length;
      assert.ok(hits >= 18, `${f}: ${hits}/20 rows of shard 1 found under their global ids`);
    }
    const h = await cliInProcess(['index', 'build', '--factory', 'HNSW16', '--shard', '1/2', 'base.npy', '-o', 'h1.faiss'], { cwd: dir });
    assert.equal(h.status, 2, h.stderr);
    assert.match(h.stderr, /--shard 1\/2: faiss cannot merge HNSW/);
    assert.ok(!existsSync(p('h1.faiss')));
  });

  it('duplicate ids are refused: the same shard twice (also through links), overlapping shards, a filled --trained index', async () => {
    symlinkSync(p('IVF4_Flat-sh0.faiss'), p('link.faiss'));
    linkSync(p('IVF4_Flat-sh0.faiss'), p('hard.faiss'));
    for (const twin of ['IVF4_Flat-sh0.faiss', 'link.faiss', 'hard.faiss']) {
      const r = await cliInProcess(['index', 'merge', 'IVF4_Flat-sh0.faiss', twin, '-o', 'dup.faiss'], { cwd: dir });
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, /is the same file as IVF4_Flat-sh0\.faiss.*--allow-duplicate-ids/);
      assert.ok(!existsSync(p('dup.faiss')));
    }
    await ok(['index', 'merge', 'IVF4_Flat-sh0.faiss', 'IVF4_Flat-sh0.faiss', '--allow-duplicate-ids', '-o', 'dup.faiss']);
    // shard 0 built twice into two files: the same ids
    for (const f of ['IVF4_Flat', 'Flat']) {
      await ok(['index', 'build', '--trained', `${f}-empty.faiss`, '--shard', '0/2', 'base.npy', '-o', `${f}-sh0b.faiss`]);
      const r = await cliInProcess(['index', 'merge', `${f}-sh0.faiss`, `${f}-sh0b.faiss`, '-o', 'over.faiss'], { cwd: dir });
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, /the shards share ids/);
      assert.ok(!existsSync(p('over.faiss')));
    }
    // --trained on a filled index: the same rows again are refused; the other shard's rows are fine
    for (const f of ['IVF4_Flat', 'Flat']) {
      let r = await cliInProcess(['index', 'build', '--trained', `${f}-all.faiss`, 'base.npy', '-o', `${f}-again.faiss`], { cwd: dir });
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, /already holds 300 vectors.*--allow-duplicate-ids/);
      assert.ok(!existsSync(p(`${f}-again.faiss`)));
      await ok(['index', 'build', '--trained', `${f}-sh0.faiss`, '--shard', '1/2', 'base.npy', '-o', `${f}-grown.faiss`]);
      const idx = readIndex(p(`${f}-grown.faiss`));
      assert.equal(idx.ntotal, n);
      idx.dispose();
      r = await cliInProcess(['index', 'build', '--trained', `${f}-all.faiss`, '--allow-duplicate-ids', 'base.npy', '-o', `${f}-again.faiss`], { cwd: dir });
      assert.equal(r.status, 0, r.stderr);
    }
    // a plain Flat index numbers rows itself: it cannot take the ids of shard 1
    const r = await cliInProcess(['index', 'build', '--trained', 'Flat.faiss', '--allow-duplicate-ids', '--shard', '0/3', 'base.npy', '-o', 'x.faiss'], {
      cwd: dir,
    });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /numbers its vectors itself/);
  });

  it('eval retrieval --index: the index must hold the target vectors (dimension and count; other mismatches: cli-bad-input)', async () => {
    const r = await cliInProcess(['eval', 'retrieval', '--src-vectors', 'q.npy', '--trg-vectors', 'q.npy', '--index', 'Flat.faiss', '--json', 'r.json'], {
      cwd: dir,
    });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /--index Flat\.faiss holds 300 vectors, but --trg-vectors q\.npy has 20/);
    assert.ok(!existsSync(p('r.json')));
    const ok1 = await ok([
      'eval',
      'retrieval',
      '--src-vectors',
      'base.npy',
      '--trg-vectors',
      'base.npy',
      '--index',
      'IVF4_Flat.faiss',
      '--nprobe',
      '4',
      '--json',
      '-',
    ]);
    assert.equal(JSON.parse(ok1.stdout).forward_index.recall_vs_exact, 1, 'standard output holds only the JSON');
  });

  it('faiss errors name the option or file; -o - is standard output for text, refused for indexes', async () => {
    const cases: [string[], number, RegExp][] = [
      [['index', 'build', '--factory', 'NoSuchIndex', 'base.npy', '-o', 'e.faiss'], 1, /--factory 'NoSuchIndex': /],
      [
        ['index', 'build', '--factory', 'IVF64,Flat', '--train-sample', '30', 'base.npy', '-o', 'e.faiss'],
        1,
        /training IVF64,Flat on 30 rows of base\.npy \(--train-sample\): /,
      ],
      [['search', '--index', 'base.npy', '--queries', 'q.npy', '-o', 'e.faiss'], 1, /--index base\.npy: cannot read it as a faiss index: /],
      [['search', '--index', 'Flat.faiss', '--nprobe', '4', '--queries', 'q.npy', '-o', 'e.faiss'], 1, /--nprobe: --index Flat\.faiss is not an IVF index/],
      [['index', 'merge', 'Flat.faiss', 'HNSW16.faiss', '-o', 'e.faiss'], 1, /HNSW16\.faiss: faiss cannot merge HNSW/],
      [['index', 'merge', 'IVF4_Flat.faiss', 'Flat.faiss', '-o', 'e.faiss'], 1, /merging Flat\.faiss into IVF4_Flat\.faiss: /],
      [['index', 'build', 'base.npy', '-o', '-'], 2, /--output -: only text outputs can go to standard output/],
      [['index', 'merge', 'Flat.faiss', 'SQ8.faiss', '-o', '-'], 2, /--output -: only text outputs/],
    ];
    for (const [args, code, re] of cases) {
      // --train-sample: the refusal comes from training (a process: see okProcess)
      const r = args.includes('--train-sample') ? cli(args, { cwd: dir }) : await cliInProcess(args, { cwd: dir });
      assert.equal(r.status, code, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, re);
      assert.doesNotMatch(r.stderr, /Error in .* at \S+:\d+/, 'no raw faiss C++ location');
      assert.ok(!existsSync(p('e.faiss')) && !existsSync(p('-')), `${args.join(' ')} left an output`);
    }
  });
});

describe('CLI: xling search outputs, metrics and search parameters', () => {
  it("writes faiss's D and I as .npy (0-based ids and ranks, the same as the TSV); -o FILE.npy is refused with a hint", async () => {
    await ok(['index', 'build', '--factory', 'Flat', 'base.npy', '-o', 's-flat.faiss']);
    const r = await ok(['search', '--index', 's-flat.faiss', '--queries', 'q.npy', '-k', '4', '-o', '-', '--distances', 'D.npy', '--ids', 'I.npy']);
    const D = readNpy(p('D.npy')),
      I = readNpy(p('I.npy'));
    assert.deepEqual(D.shape, [20, 4]);
    assert.deepEqual(I.shape, [20, 4]);
    assert.equal(D.dtype, 'float32');
    assert.equal(I.dtype, 'int64');
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('\t'));
    assert.equal(lines.length, 80);
    for (const [q, rank, id, score] of lines) {
      const at = Number(q) * 4 + Number(rank);
      assert.equal(BigInt(id!), (I.data as BigInt64Array)[at]);
      assert.ok(Math.abs(Number(score) - (D.data as Float32Array)[at]!) < 1e-5);
    }
    assert.deepEqual(
      lines.filter((l) => l[0] === '3').map((l) => l[1]),
      ['0', '1', '2', '3'],
      'ranks from 0',
    );
    assert.equal((I.data as BigInt64Array)[3 * 4], 3n, 'query 3 (row 3 of the base) finds row 3 first: ids from 0');
    const bad = await cliInProcess(['search', '--index', 's-flat.faiss', '--queries', 'q.npy', '-o', 'out.npy'], { cwd: dir });
    assert.equal(bad.status, 2, bad.stderr);
    assert.match(bad.stderr, /-o out\.npy: -o writes TSV; .*--distances FILE\.npy and --ids FILE\.npy/);
    assert.ok(!existsSync(p('out.npy')));
  });

  it('--metric cosine normalises (queries and base) and takes inner products; l2 gives squared distances', async () => {
    // scaled queries: cosine ignores the scale, inner product does not
    const qs = Float32Array.from(base.subarray(0, 20 * d), (v, i) => v * (1 + (Math.floor(i / d) % 5)));
    writeNpy(p('qs.npy'), qs, [20, d]);
    await ok(['search', '--base', 'base.npy', '--queries', 'qs.npy', '-k', '3', '--metric', 'cosine', '--distances', 'Dc.npy', '--ids', 'Ic.npy']);
    const Dc = readNpy(p('Dc.npy')).data as Float32Array,
      Ic = readNpy(p('Ic.npy')).data as BigInt64Array;
    const norm = (v: Float32Array) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
    for (let i = 0; i < 20; i++) {
      assert.equal(Ic[i * 3], BigInt(i), `query ${i} finds its own row`);
      const a = qs.subarray(i * d, (i + 1) * d),
        b = base.subarray(Number(Ic[i * 3 + 1]) * d, (Number(Ic[i * 3 + 1]) + 1) * d);
      const cos = a.reduce((s, x, j) => s + x * b[j]!, 0) / (norm(a) * norm(b));
      assert.ok(Math.abs(Dc[i * 3 + 1]! - cos) < 1e-4, `cosine of the second hit: ${Dc[i * 3 + 1]} vs ${cos}`);
      assert.ok(Math.abs(Dc[i * 3]! - 1) < 1e-4);
    }
    await ok(['search', '--base', 'base.npy', '--queries', 'q.npy', '-k', '2', '--metric', 'l2', '--distances', 'Dl.npy', '--ids', 'Il.npy']);
    const Dl = readNpy(p('Dl.npy')).data as Float32Array;
    for (let i = 0; i < 20; i++) assert.ok(Dl[i * 2]! < 1e-4 && Dl[i * 2 + 1]! > Dl[i * 2]!, 'ascending squared distances, 0 to itself');
    // an index for inner products takes cosine (queries normalised), not l2
    await ok(['search', '--index', 's-flat.faiss', '--queries', 'qs.npy', '-k', '1', '--metric', 'cosine', '--distances', 'Di.npy']);
    assert.ok(
      Array.from(readNpy(p('Di.npy')).data as Float32Array).every((v) => Math.abs(v - 1) < 1e-4),
      'normalised queries against normalised rows: cosine 1',
    );
    const r = await cliInProcess(['search', '--index', 's-flat.faiss', '--queries', 'q.npy', '--metric', 'l2', '-o', '-'], { cwd: dir });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /--metric l2: --index s-flat\.faiss is built for inner products/);
  });

  it('HNSW efSearch is settable (refused for other indexes); IVF nprobe defaults to the recall target on a sample', async () => {
    await ok(['index', 'build', '--factory', 'HNSW8', 'base.npy', '-o', 's-hnsw.faiss']);
    await ok(['search', '--index', 's-hnsw.faiss', '--queries', 'q.npy', '-k', '5', '--ef-search', '64', '--ids', 'Ih.npy']);
    const Ih = readNpy(p('Ih.npy')).data as BigInt64Array;
    for (let i = 0; i < 20; i++) assert.equal(Ih[i * 5], BigInt(i));
    let r = await cliInProcess(['search', '--index', 's-flat.faiss', '--queries', 'q.npy', '--ef-search', '64', '-o', '-'], { cwd: dir });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /--ef-search: --index s-flat\.faiss is not an HNSW index/);
    const b = okProcess(['index', 'build', '--factory', 'IVF16,Flat', 'base.npy', '-o', 's-ivf.faiss']);
    // faiss's small-training-set warning folded into one line; its k-means iterations as progress
    assert.doesNotMatch(b.stderr, /WARNING clustering/);
    assert.match(b.stderr, /index train: faiss warned 1× about a small training set: k-means of 300 points into 16 centroids/);
    assert.match(b.stderr, /index train: k-means, 16 centroids from 300 vectors in 16D: 10\/10 iterations/);
    r = await ok(['search', '--index', 's-ivf.faiss', '--queries', 'q.npy', '-k', '5', '--recall-target', '1', '--ids', 'Iv.npy']);
    const m = /nprobe (\d+) of 16 lists: recall@5 ([\d.]+) against searching every list, on 20 sampled queries/.exec(r.stderr);
    assert.ok(m, r.stderr);
    assert.equal(Number(m[2]), 1);
    // the exact answer (every list) is what recall target 1 gives
    await ok(['search', '--index', 's-ivf.faiss', '--queries', 'q.npy', '-k', '5', '--nprobe', '16', '--ids', 'Iall.npy']);
    assert.deepEqual(readNpy(p('Iv.npy')).data, readNpy(p('Iall.npy')).data);
  });
});

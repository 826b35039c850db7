import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { marginScore, mine, mineTables, mineTablesAsync, unify, Candidate } from '../../src/mine/mine.js';
import { evaluateAtThreshold, evaluateBucc, goldSet } from '../../src/util/precision-recall.js';
import { precisionAtK, alignByIds } from '../../src/eval/retrieval.js';
import { knn } from '../../src/index/faiss.js';
import type { KnnFn } from '../../src/index/exact.js';
import { writeNpy } from '../../src/io/npy.js';
import { Rng } from '../../src/util/rng.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const cli = (args: string[]) => spawnSync(process.execPath, [join(root, 'dist/src/cli/main.js'), ...args], { encoding: 'utf8' });

function unit(v: number[]): number[] {
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

/**
 * n parallel pairs (y_i = x_i + noise) plus "hub" targets that sit near the centre of many
 * sources: raw cosine prefers the hubs, a margin discounts them.
 */
function hubWorld(n: number, d: number, hubs: number, seed: number) {
  const rng = new Rng(seed);
  const centre = Array.from({ length: d }, () => rng.normal());
  const src: number[][] = [],
    trg: number[][] = [];
  for (let i = 0; i < n; i++) {
    const base = centre.map((c) => 1.5 * c + rng.normal());
    src.push(unit(base));
    trg.push(unit(base.map((v) => v + 1.1 * rng.normal())));
  }
  for (let h = 0; h < hubs; h++) trg.push(unit(centre.map((c) => c + 0.05 * rng.normal())));
  return { src: Float32Array.from(src.flat()), trg: Float32Array.from(trg.flat()), n, nt: n + hubs };
}

const accuracy = (c: Candidate[]) => c.filter((p) => p.src === p.trg).length;

describe('margin scoring and retrieval', () => {
  it('margin functions follow their definitions', () => {
    assert.equal(marginScore('absolute', 0.8, 0.5, 0.3), 0.8);
    assert.ok(Math.abs(marginScore('ratio', 0.8, 0.5, 0.3) - 0.8 / 0.4) < 1e-12);
    assert.ok(Math.abs(marginScore('distance', 0.8, 0.5, 0.3) - 0.4) < 1e-12);
    assert.ok(Math.abs(marginScore('eq9', 0.8, 0.5, 0.3) - (0.8 / 0.4 + 0.8)) < 1e-12);
    assert.ok(Math.abs(marginScore('eq10', 0.8, 0.5, 0.3) - (0.8 / 0.5 + 0.8)) < 1e-12);
  });

  it('with hub vectors, ratio margin beats raw cosine', () => {
    const d = 32,
      w = hubWorld(300, d, 10, 1);
    const abs = mine(w.src, w.trg, d, { margin: 'absolute', retrieval: 'fwd' });
    const ratio = mine(w.src, w.trg, d, { margin: 'ratio', retrieval: 'fwd' });
    const eq9 = mine(w.src, w.trg, d, { margin: 'eq9', retrieval: 'fwd' });
    const hubHits = abs.filter((c) => c.trg >= w.n).length;
    assert.ok(hubHits > 30, `raw cosine picks hubs for many sources (${hubHits})`);
    assert.ok(accuracy(ratio) >= accuracy(abs) + 15, `ratio ${accuracy(ratio)} vs cosine ${accuracy(abs)} correct of 300`);
    assert.ok(accuracy(eq9) >= accuracy(abs) + 15, `eq9 ${accuracy(eq9)} vs cosine ${accuracy(abs)}`);
    assert.ok(ratio.filter((c) => c.trg >= w.n).length < hubHits - 10, 'fewer hub picks with the margin');
    // chunked search reports progress over both directions and gives the same pairs
    const seen: number[] = [];
    // BLAS may block the raw search differently for 64 queries than for 300, so raw scores can
    // differ in their last bits between calls (whether they do depends on the CPU's kernels): a
    // search that shifts every raw score by a few ulp, differently per call size, stands for that
    let calls = 0;
    const jittered: KnnFn = (q, b, dd, kk) => {
      const r = knn(q, b, dd, kk, 'ip');
      calls++;
      const e = (((q.length / dd) % 7) + 1) * 2 ** -22;
      r.distances.forEach((v, i) => {
        r.distances[i] = v * (1 + (i % 2 ? e : -e));
      });
      return r;
    };
    const chunked = mine(w.src, w.trg, d, {
      margin: 'ratio',
      retrieval: 'fwd',
      chunk: 64,
      knn: jittered,
      onProgress: (done, total) => {
        seen.push(done);
        assert.equal(total, 300 + w.trg.length / d);
      },
    });
    assert.ok(calls >= 2);
    // the same pairs with the same scores to the bit (the scores are recomputed in a fixed order)
    assert.deepEqual(chunked, ratio);
    assert.equal(seen.length, Math.ceil(300 / 64) + Math.ceil(w.trg.length / d / 64));
    assert.equal(seen.at(-1), 300 + w.trg.length / d);
  });

  it('retrieval modes: fwd, bwd, intersect (mutual), max (each sentence once)', () => {
    // 2-D toy: s0≈t0, s1≈t0 (both prefer t0), t1 is far from both.
    const s = Float32Array.from([...unit([1, 0]), ...unit([1, 0.1])]);
    const t = Float32Array.from([...unit([1, 0.05]), ...unit([0, 1])]);
    const fwd = mine(s, t, 2, { k: 1, margin: 'absolute', retrieval: 'fwd' });
    assert.deepEqual(fwd.map((c) => [c.src, c.trg]).sort(), [
      [0, 0],
      [1, 0],
    ]);
    const bwd = mine(s, t, 2, { k: 1, margin: 'absolute', retrieval: 'bwd' });
    assert.equal(bwd.length, 2); // each target gets its best source
    assert.ok(bwd.every((c) => c.src === 1 || c.src === 0));
    const inter = mine(s, t, 2, { k: 1, margin: 'absolute', retrieval: 'intersect' });
    assert.deepEqual(
      inter.map((c) => [c.src, c.trg]),
      [[bwd.find((c) => c.trg === 0)!.src, 0]],
    );
    const mx = mine(s, t, 2, { k: 1, margin: 'absolute', retrieval: 'max' });
    const usedS = new Set(mx.map((c) => c.src)),
      usedT = new Set(mx.map((c) => c.trg));
    assert.equal(usedS.size, mx.length);
    assert.equal(usedT.size, mx.length);
    assert.ok(mx.length >= 1 && mx[0]!.trg === 0);
    for (let i = 1; i < mx.length; i++) assert.ok(mx[i - 1]!.score >= mx[i]!.score, 'sorted by score');
    assert.equal(mine(s, t, 2, { k: 1, margin: 'absolute', retrieval: 'fwd', threshold: 2 }).length, 0);
  });

  it('unify maps duplicates to one entry', () => {
    const u = unify(['a', 'b', 'a', 'c', 'b']);
    assert.deepEqual(u.unique, ['a', 'b', 'c']);
    assert.deepEqual(Array.from(u.of), [0, 1, 0, 2, 1]);
    assert.deepEqual(Array.from(u.first), [0, 1, 3]);
  });

  it('the search off the main thread gives the same tables, and yields to the event loop between chunks (Ctrl-C stops xling mine there)', async () => {
    const rng = new Rng(7),
      d = 16,
      n = 300;
    const vec = (m: number) => {
      const v = Float32Array.from({ length: m * d }, () => rng.normal());
      for (let i = 0; i < m; i++) {
        let z = 0;
        for (let j = 0; j < d; j++) z += v[i * d + j]! ** 2;
        for (let j = 0; j < d; j++) v[i * d + j]! /= Math.sqrt(z);
      }
      return v;
    };
    const s = vec(n),
      t = vec(n + 20);
    const sync = mineTables(s, t, d, { k: 4, chunk: 64 });
    // a task queued before the search runs before it ends: the search awaits between its chunks
    let ran = false;
    setImmediate(() => {
      ran = true;
    });
    let seen = 0;
    const async = await mineTablesAsync(s, t, d, {
      k: 4,
      chunk: 64,
      onProgress: (done, total) => {
        seen = done;
        assert.equal(total, 2 * n + 20);
      },
    });
    assert.ok(ran, 'the event loop ran during the search');
    assert.equal(seen, 2 * n + 20);
    for (const dir of ['fwd', 'bwd'] as const) {
      assert.deepEqual(Array.from(async[dir].labels), Array.from(sync[dir].labels), dir);
      assert.deepEqual(Array.from(async[dir].distances), Array.from(sync[dir].distances), dir);
    }
  });

  it('bad input: dimension mismatch, empty input, NaN', () => {
    assert.throws(() => mine(new Float32Array(6), new Float32Array(4), 4), /not a multiple of the dimension 4/);
    assert.throws(() => mine(new Float32Array(0), new Float32Array(4), 4), /no vectors/);
    assert.throws(() => mine(Float32Array.from([NaN, 0]), Float32Array.from([1, 0]), 2), /row 0 has a NaN/);
  });
});

describe('BUCC evaluation', () => {
  it('F1-optimal threshold on a hand-checked toy case', () => {
    // scores 0.9 (gold) 0.8 (gold) 0.7 (wrong) 0.6 (gold) 0.5 (wrong); 4 gold pairs in all
    const c = [
      ['a', 'A', 0.9],
      ['b', 'B', 0.8],
      ['c', 'X', 0.7],
      ['d', 'D', 0.6],
      ['e', 'Y', 0.5],
    ].map(([s, t, v]) => ({ src: s as string, trg: t as string, score: v as number }));
    const gold = new Set(['a\tA', 'b\tB', 'd\tD', 'f\tF']);
    const r = evaluateBucc(c, gold);
    // top-2: P 1, R .5, F1 .667; top-4: P .75, R .75, F1 .75 (best); top-5: P .6 R .75
    assert.equal(r.tp, 3);
    assert.equal(r.predicted, 4);
    assert.ok(Math.abs(r.f1 - 0.75) < 1e-12);
    assert.ok(Math.abs(r.threshold - 0.55) < 1e-12, `threshold midpoint ${r.threshold}`);
    assert.ok(Math.abs(r.averagePrecision - (1 + 1 + 0.75) / 4) < 1e-12);
    const at = evaluateAtThreshold(c, gold, 0.75);
    assert.equal(at.tp, 2);
    assert.equal(at.predicted, 2);
    assert.equal(at.precision, 1);
    assert.throws(() => goldSet([['a', 'Z']], new Set(['a']), new Set(['A'])), /target id 'Z' is not in the target file/);
  });
});

describe('retrieval evaluation', () => {
  it('P@k forward on known data and id alignment', () => {
    const d = 8,
      rng = new Rng(4);
    const x = Float32Array.from({ length: 50 * d }, () => rng.normal());
    const r = knn(x, x, d, 10, 'l2');
    const p = precisionAtK(r, alignByIds(null, null, 50, 50).fwd);
    assert.equal(p.p1, 1);
    const shuffled = alignByIds(['a', 'b'], ['b', 'a'], 2, 2);
    assert.deepEqual(Array.from(shuffled.fwd), [1, 0]);
    assert.throws(() => alignByIds(null, null, 2, 3), /equal row counts/);
  });
});

describe('CLI: mine, eval bucc, index, search (on synthetic vectors)', () => {
  it('runs end to end and rejects bad input without output', () => {
    const dir = mkdtempSync(join(tmpdir(), 'xling-mine-'));
    try {
      const d = 16,
        n = 120,
        rng = new Rng(9);
      const xs: number[][] = [],
        ys: number[][] = [];
      for (let i = 0; i < n; i++) {
        const b = Array.from({ length: d }, () => rng.normal());
        xs.push(unit(b));
        ys.push(unit(b.map((v) => v + 0.3 * rng.normal())));
      }
      // targets in reverse order; 20 extra unrelated targets
      const tOrder = [...Array(n).keys()].reverse();
      const extra = Array.from({ length: 20 }, () => unit(Array.from({ length: d }, () => rng.normal())));
      writeNpy(join(dir, 's.npy'), Float32Array.from(xs.flat()), [n, d]);
      writeNpy(join(dir, 't.npy'), Float32Array.from([...tOrder.map((i) => ys[i]!), ...extra].flat()), [n + 20, d]);
      writeFileSync(join(dir, 's.txt'), xs.map((_, i) => `s-${i}\tsrc sentence ${i}`).join('\n') + '\n');
      writeFileSync(join(dir, 't.txt'), [...tOrder.map((i) => `t-${i}\ttrg sentence ${i}`), ...extra.map((_, j) => `u-${j}\tnoise ${j}`)].join('\n') + '\n');
      writeFileSync(join(dir, 'gold'), xs.map((_, i) => `s-${i}\tt-${i}`).join('\n') + '\n');
      let r = cli([
        'mine',
        '--src',
        join(dir, 's.txt'),
        '--trg',
        join(dir, 't.txt'),
        '--src-vectors',
        join(dir, 's.npy'),
        '--trg-vectors',
        join(dir, 't.npy'),
        '-o',
        join(dir, 'out.tsv'),
      ]);
      assert.equal(r.status, 0, r.stderr);
      const rows = readFileSync(join(dir, 'out.tsv'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split('\t'));
      const right = rows.filter(([, s, t]) => s!.slice(2) === t!.slice(2)).length;
      assert.ok(right >= 110, `mined pairs match gold: ${right}/${rows.length}`);
      r = cli([
        'eval',
        'bucc',
        '--src',
        join(dir, 's.txt'),
        '--trg',
        join(dir, 't.txt'),
        '--gold',
        join(dir, 'gold'),
        '--src-vectors',
        join(dir, 's.npy'),
        '--trg-vectors',
        join(dir, 't.npy'),
        '--json',
        join(dir, 'b.json'),
        '--svg',
        join(dir, 'pr.svg'),
      ]);
      assert.equal(r.status, 0, r.stderr);
      const b = JSON.parse(readFileSync(join(dir, 'b.json'), 'utf8')) as { f1: number; precision: number; recall: number; threshold: number };
      assert.ok(b.f1 > 0.9, `F1 ${b.f1}`);
      assert.ok(existsSync(join(dir, 'pr.svg')));
      // index build (sharded) + merge + search
      r = cli(['index', 'build', '--factory', 'IVF4,Flat', '--train-only', join(dir, 't.npy'), '-o', join(dir, 'empty.faiss')]);
      assert.equal(r.status, 0, r.stderr);
      for (const s of [0, 1])
        assert.equal(
          cli(['index', 'build', '--trained', join(dir, 'empty.faiss'), '--shard', `${s}/2`, join(dir, 't.npy'), '-o', join(dir, `sh${s}.faiss`)]).status,
          0,
        );
      r = cli(['index', 'merge', join(dir, 'sh0.faiss'), join(dir, 'sh1.faiss'), '-o', join(dir, 'all.faiss')]);
      assert.equal(r.status, 0, r.stderr);
      r = cli(['search', '--index', join(dir, 'all.faiss'), '--nprobe', '4', '--queries', join(dir, 's.npy'), '-k', '3', '-o', join(dir, 'res.tsv')]);
      assert.equal(r.status, 0, r.stderr);
      const top = readFileSync(join(dir, 'res.tsv'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split('\t'))
        .filter((f) => f[1] === '0'); // ranks from 0
      assert.ok(top.filter(([q, , id]) => Number(id) === n - 1 - Number(q)).length >= 110, 'search finds the aligned rows (global ids)');
      // exact search from .npy, the base read in blocks: same neighbours as one block
      r = cli(['search', '--base', join(dir, 't.npy'), '--queries', join(dir, 's.npy'), '-k', '3', '-o', join(dir, 'ex1.tsv')]);
      assert.equal(r.status, 0, r.stderr);
      r = cli(['search', '--base', join(dir, 't.npy'), '--base-block', '7', '--queries', join(dir, 's.npy'), '-k', '3', '-o', join(dir, 'ex7.tsv')]);
      assert.equal(r.status, 0, r.stderr);
      const ids = (f: string) =>
        readFileSync(join(dir, f), 'utf8')
          .trim()
          .split('\n')
          .map((l) => l.split('\t').slice(0, 3).join(' '));
      assert.deepEqual(ids('ex7.tsv'), ids('ex1.tsv'));
      assert.equal(ids('ex1.tsv').length, 3 * n, 'k rows per query');
      assert.ok(
        ids('ex1.tsv').filter((l) => l.split(' ')[1] === '0' && Number(l.split(' ')[2]) === n - 1 - Number(l.split(' ')[0])).length >= 110,
        'exact search finds the aligned rows',
      );
      // bad input: clear errors, exit codes, no output files
      writeNpy(join(dir, 'bad.npy'), new Float32Array(n * 8), [n, 8]);
      r = cli([
        'mine',
        '--src',
        join(dir, 's.txt'),
        '--trg',
        join(dir, 't.txt'),
        '--src-vectors',
        join(dir, 'bad.npy'),
        '--trg-vectors',
        join(dir, 't.npy'),
        '-o',
        join(dir, 'x.tsv'),
      ]);
      assert.equal(r.status, 1);
      assert.match(r.stderr, /dimension mismatch/);
      assert.ok(!existsSync(join(dir, 'x.tsv')));
      writeFileSync(join(dir, 'empty.txt'), '');
      r = cli([
        'mine',
        '--src',
        join(dir, 'empty.txt'),
        '--trg',
        join(dir, 't.txt'),
        '--src-vectors',
        join(dir, 's.npy'),
        '--trg-vectors',
        join(dir, 't.npy'),
        '-o',
        join(dir, 'x.tsv'),
      ]);
      assert.equal(r.status, 1);
      assert.match(r.stderr, /empty file/);
      assert.ok(!existsSync(join(dir, 'x.tsv')));
      const nanV = new Float32Array(n * d).fill(0.1);
      nanV[5] = NaN;
      writeNpy(join(dir, 'nan.npy'), nanV, [n, d]);
      r = cli([
        'mine',
        '--src',
        join(dir, 's.txt'),
        '--trg',
        join(dir, 't.txt'),
        '--src-vectors',
        join(dir, 'nan.npy'),
        '--trg-vectors',
        join(dir, 't.npy'),
        '-o',
        join(dir, 'x.tsv'),
      ]);
      assert.equal(r.status, 1);
      assert.match(r.stderr, /row 0 has a NaN/);
      writeFileSync(join(dir, 'gold2'), 's-0\tt-999\n');
      r = cli([
        'eval',
        'bucc',
        '--src',
        join(dir, 's.txt'),
        '--trg',
        join(dir, 't.txt'),
        '--gold',
        join(dir, 'gold2'),
        '--src-vectors',
        join(dir, 's.npy'),
        '--trg-vectors',
        join(dir, 't.npy'),
      ]);
      assert.equal(r.status, 1);
      assert.match(r.stderr, /target id 't-999' is not in the target file/);
      r = cli(['mine', '--src', join(dir, 's.txt')]);
      assert.equal(r.status, 2);
      assert.match(r.stderr, /missing required option --trg/);
      r = cli(['search', '--queries', join(dir, 's.npy'), '--base', join(dir, 't.npy'), '-k', '0', '-o', join(dir, 'y.tsv')]);
      assert.equal(r.status, 2);
      assert.ok(!existsSync(join(dir, 'y.tsv')));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// faiss's BLAS products inside the addon (native/sgemm.cc): every sgemm faiss calls goes to
// oneDNN's sgemm (AVX-512 kernels) where libtorch loaded it, else to the linked BLAS. The route
// must compute the Fortran sgemm exactly as specified for every transpose and layout, and faiss's
// exact search through it must find what it finds through OpenBLAS (XLING_NO_DNNL_SGEMM=1).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { blasSgemm, knn } from '../../src/index/faiss.js';
import { root } from '../fixtures/cli.js';

/** xorshift32 floats in [-0.5, 0.5): fixed data, no ties worth speaking of. */
function rand(n: number, seed: number): Float32Array {
  let s = seed >>> 0 || 1;
  return Float32Array.from({ length: n }, () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296 - 0.5;
  });
}

/** The reference: column-major C = alpha·op(A)·op(B) + beta·C in float64. */
function reference(
  ta: 'N' | 'T',
  tb: 'N' | 'T',
  m: number,
  n: number,
  k: number,
  alpha: number,
  a: Float32Array,
  lda: number,
  b: Float32Array,
  ldb: number,
  beta: number,
  c: Float32Array,
  ldc: number,
): Float64Array {
  const out = Float64Array.from(c);
  for (let j = 0; j < n; j++)
    for (let i = 0; i < m; i++) {
      let s = 0;
      for (let l = 0; l < k; l++) s += (ta === 'N' ? a[i + l * lda]! : a[l + i * lda]!) * (tb === 'N' ? b[l + j * ldb]! : b[j + l * ldb]!);
      out[i + j * ldc] = alpha * s + (beta === 0 ? 0 : beta * c[i + j * ldc]!);
    }
  return out;
}

describe("faiss's BLAS route (oneDNN sgemm)", () => {
  it('computes the Fortran sgemm for every transpose, odd sizes, padded leading dimensions, alpha and beta', () => {
    let seed = 7;
    for (const [m, n, k] of [
      [1, 1, 1],
      [3, 5, 7],
      [37, 29, 65],
      [128, 3, 300],
      [1, 200, 16],
    ] as const) {
      for (const ta of ['N', 'T'] as const)
        for (const tb of ['N', 'T'] as const)
          for (const [alpha, beta] of [
            [1, 0],
            [0.5, 1],
            [-2, 0.25],
          ] as const) {
            const lda = (ta === 'N' ? m : k) + 2,
              ldb = (tb === 'N' ? k : n) + 1,
              ldc = m + 3;
            const a = rand(lda * (ta === 'N' ? k : m), seed++),
              b = rand(ldb * (tb === 'N' ? n : k), seed++),
              c = rand(ldc * n, seed++);
            const want = reference(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
            const got = c.slice();
            blasSgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, got, ldc);
            for (let j = 0; j < n; j++)
              for (let i = 0; i < ldc; i++) {
                const at = i + j * ldc;
                if (i >= m) {
                  assert.equal(got[at], c[at], `padding row ${i} of column ${j} was written`);
                  continue;
                }
                assert.ok(
                  Math.abs(got[at]! - want[at]!) <= 1e-5 * (1 + Math.abs(want[at]!)) * Math.sqrt(k),
                  `${ta}${tb} ${m}×${n}×${k} α ${alpha} β ${beta}: C[${i}, ${j}] = ${got[at]}, want ${want[at]}`,
                );
              }
          }
    }
  });

  it('refuses bad arguments with an error naming them (no crash)', () => {
    const a = new Float32Array(12),
      b = new Float32Array(12),
      c = new Float32Array(9);
    assert.throws(() => blasSgemm('X' as 'N', 'N', 3, 3, 4, 1, a, 3, b, 4, 0, c, 3), /transA/);
    assert.throws(() => blasSgemm('N', 'N', 3, 3, 4, 1, a, 2, b, 4, 0, c, 3), /sgemm\(A\): leading dimension 2 < 3/);
    assert.throws(() => blasSgemm('N', 'N', 3, 3, 5, 1, a, 3, b, 5, 0, c, 3), /sgemm\(A\): 12 values, the layout needs 15/);
    assert.throws(() => blasSgemm('N', 'N', 3, 4, 4, 1, a, 3, b, 4, 0, c, 3), /sgemm\(B\)|sgemm\(C\)/);
    assert.throws(() => blasSgemm('N', 'N', -1, 3, 4, 1, a, 3, b, 4, 0, c, 3), /m, n and k/);
    assert.throws(() => blasSgemm('N', 'N', 3, 3, 4, 1, a, 3, b, 4, 0, new Float64Array(9) as unknown as Float32Array, 3), /Float32Array/);
    // empty products are fine and write nothing
    const c0 = Float32Array.from([1, 2, 3]);
    blasSgemm('N', 'N', 3, 1, 0, 1, a, 3, b, 1, 0.5, c0, 3);
    assert.deepEqual(Array.from(c0), [0.5, 1, 1.5]); // k = 0: C = beta·C
    blasSgemm('N', 'N', 0, 0, 4, 1, a, 1, b, 4, 0, c0, 1);
    assert.deepEqual(Array.from(c0), [0.5, 1, 1.5]);
  });

  it('exact search finds the same neighbours through oneDNN as through the linked BLAS (XLING_NO_DNNL_SGEMM=1)', () => {
    const script = `import { knn, setFaissThreads } from ${JSON.stringify(`${root}/dist/src/index/faiss.js`)};
      setFaissThreads(2);
      let s = 42; const r = () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s / 4294967296 - 0.5; };
      const d = 300, x = Float32Array.from({ length: 700 * d }, r), y = Float32Array.from({ length: 2000 * d }, r);
      const o = knn(x, y, d, 5, 'ip');
      process.stdout.write(JSON.stringify({ l: Array.from(o.labels, Number), d: Array.from(o.distances) }));`;
    const run = (env: NodeJS.ProcessEnv) => {
      const p = spawnSync(process.execPath, ['--input-type=module', '-e', script], { env, encoding: 'utf8' });
      assert.equal(p.status, 0, p.stderr);
      return JSON.parse(p.stdout) as { l: number[]; d: number[] };
    };
    const { XLING_NO_DNNL_SGEMM: _, ...env } = process.env;
    const dnnl = run(env),
      blas = run({ ...env, XLING_NO_DNNL_SGEMM: '1' });
    assert.deepEqual(dnnl.l, blas.l);
    const worst = dnnl.d.reduce((w, v, i) => Math.max(w, Math.abs(v - blas.d[i]!)), 0);
    assert.ok(worst < 1e-5, `distances differ by ${worst}`);
    // and the in-process search agrees with both
    let s = 42;
    const r = () => {
      s ^= s << 13;
      s >>>= 0;
      s ^= s >>> 17;
      s ^= s << 5;
      s >>>= 0;
      return s / 4294967296 - 0.5;
    };
    const d = 300,
      x = Float32Array.from({ length: 700 * d }, r),
      y = Float32Array.from({ length: 2000 * d }, r);
    assert.deepEqual(Array.from(knn(x, y, d, 5, 'ip').labels, Number), dnnl.l);
  });

  it('signals handled during the search do not corrupt memory (they wait while oneDNN computes)', async () => {
    // a process handling SIGUSR2 searches while the test sends it one every 2 ms; before the signals were
    // held back around oneDNN's sgemm, every run ended in glibc's "corrupted size vs. prev_size" abort
    const script = `import { knn, setFaissThreads } from ${JSON.stringify(`${root}/dist/src/index/faiss.js`)};
      let got = 0; process.on('SIGUSR2', () => { got++; });
      setFaissThreads(2);
      let s = 9; const r = () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s / 4294967296 - 0.5; };
      const d = 256, x = Float32Array.from({ length: 5000 * d }, r), y = Float32Array.from({ length: 5000 * d }, r);
      process.stdout.write('ready\\n');
      await new Promise((res) => setTimeout(res, 50));
      const runs = [];
      for (let i = 0; i < 4; i++) runs.push(JSON.stringify(Array.from(knn(x, y, d, 4, 'ip').labels, Number)));
      process.stdout.write(\`done \${got} \${new Set(runs).size}\\n\`);
      // (exits when the test has stopped signalling: no signal comes after the handler is gone)
      process.stdin.resume(); process.stdin.on('end', () => process.exit(0));`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '',
      err = '',
      timer: NodeJS.Timeout | undefined;
    child.stderr.on('data', (b: Buffer) => {
      err += b.toString();
    });
    const code = await new Promise<number | null>((resolve) => {
      child.stdout.on('data', (b: Buffer) => {
        out += b.toString();
        if (!timer && out.includes('ready')) timer = setInterval(() => child.kill('SIGUSR2'), 2);
        if (out.includes('done')) {
          clearInterval(timer);
          child.stdin.end();
        }
      });
      child.on('exit', (c) => {
        clearInterval(timer);
        resolve(c);
      });
    });
    assert.equal(code, 0, `exit ${code}: ${err}`);
    const m = /done (\d+) (\d+)/.exec(out);
    assert.ok(m, out);
    assert.ok(Number(m[1]) > 0, 'the signals reached the process');
    assert.equal(m[2], '1', 'every search found the same neighbours');
  });
});

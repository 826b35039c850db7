// Product quantisation of an embedding table (xling export --dtype pq): the rows are projected on
// their first K principal components (PCA of the rows about their mean), the K coordinates are
// cut into M consecutive subspaces, and each subspace's coordinates become one byte — the nearest
// of 256 centroids learned by k-means on that subspace (Jégou et al. 2011, as fastText.zip
// compresses its n-gram table). A row costs M bytes; it is read back as
//   row ≈ mean + basis · z,   z = the concatenated centroids its M bytes name.
// The trained n-gram tables of the dual encoder are effectively of rank ~128 (the first 128
// components of the 60-minute model's 2²⁰ × 256 table reproduce its dev error exactly), and
// subspaces of 2 coordinates lose little, so 56 bytes a row (K = 112) keep its quality in
// a quarter of the int8 export's size.
//
// The layout in model.safetensors: src/io/pq-layout.ts. Subspaces follow the components' order
// and the narrow ones come first: the leading components carry the most variance and get the most
// bits per coordinate.
import { kmeans } from '../index/faiss.js';
import { checkPqEntries, checkPqShapes, PQ_CENTROIDS, PQ_KEYS, pqOffsets, pqWidths } from '../io/pq-layout.js';
import { RawTensor, rawFromArray, readSafetensorsHeader, SafetensorsHeader } from '../io/safetensors.js';
import { loadTensors } from '../nn/serialize.js';
import { empty, eye, zeros } from '../tensor/ops.js';
import { callOp, fromArray, noGrad, opId, Tensor, tidy } from '../tensor/tensor.js';
import { Progress, ProgressStream } from '../util/progress.js';

export interface PqTable {
  rows: number;
  /** Width of the rows the codes stand for. */
  dim: number;
  /** K: coordinates kept (principal components). */
  dims: number;
  /** M bytes a row: codes [rows, M]. */
  codes: Uint8Array;
  widths: Int32Array;
  /** [256, K]. */
  codebooks: Float32Array;
  /** [dim, K]. */
  basis: Float32Array;
  mean: Float32Array;
}

/** The K coordinates (z) of rows r0 … r0 + n − 1, n × K, from their codes. */
export function pqCoordinates(p: PqTable, r0: number, n: number): Float32Array {
  const M = p.widths.length,
    K = p.dims,
    off = pqOffsets(p.widths),
    z = new Float32Array(n * K);
  for (let i = 0; i < n; i++) {
    const c0 = (r0 + i) * M,
      zo = i * K;
    for (let j = 0; j < M; j++) {
      const o = off[j]!,
        cb = p.codes[c0 + j]! * K + o;
      for (let t = 0; t < p.widths[j]!; t++) z[zo + o + t] = p.codebooks[cb + t]!;
    }
  }
  return z;
}

/** Rows r0 … r0 + n − 1 read back (mean + basis · z) as a float32 [n, dim] tensor. */
export function pqRows(p: PqTable, r0: number, n: number): Tensor {
  return noGrad(() =>
    tidy(() =>
      fromArray(pqCoordinates(p, r0, n), [n, p.dims])
        .matmul(fromArray(p.basis, [p.dim, p.dims]).t())
        .add(fromArray(p.mean, [1, p.dim])),
    ),
  );
}

export interface PqTrainOptions {
  /** M: bytes (subspaces) a row. */
  bytes: number;
  /** K: principal components kept (default min(dim, 2M)). */
  dims?: number;
  /** Rows k-means learns each subspace's centroids from (default 262,144; all rows when fewer). */
  sample?: number;
  iterations?: number;
  seed?: number;
  /**
   * Token ids of sentences (rows of the table) to refit the codebooks on: each subspace's 256
   * centroids are solved by least squares so that every sentence's mean row (as the bag encoder
   * pools it, each row weighted 1/n) read back from the codes matches the mean of its original rows
   * (ridge towards the k-means centroids). Rows are then right where sentences need them: frequent
   * n-grams weigh in as often as they occur.
   */
  sentences?: Int32Array[];
  /** Ridge weight of the refit, relative to the mean diagonal of the normal equations (default 0.01). */
  refitLambda?: number;
  log?: (line: string) => void;
}

const CHUNK = 1 << 15;

/**
 * Product-quantises a float table [rows, dim]: every row, the special tokens' rows (never read by
 * the bag encoder's features) included, so that row numbers stay the tokenizer's ids.
 */
export function trainPq(table: Tensor, o: PqTrainOptions): PqTable {
  const [rows, dim] = table.shape as [number, number];
  const bytes = o.bytes,
    K = o.dims ?? Math.min(dim, 2 * bytes),
    log = o.log ?? (() => {});
  if (K > dim) throw new Error(`--pq-dims: ${K} exceeds the table's width ${dim}`);
  const widths = pqWidths(K, bytes),
    off = pqOffsets(widths);
  const t0 = Date.now();
  // mean and covariance of the rows (float64 sums of float32 chunk products)
  const { mean, basis, kept } = noGrad(() => {
    const sum = new Float64Array(dim);
    for (let r0 = 0; r0 < rows; r0 += CHUNK) {
      const s = tidy(() =>
        table
          .narrow(0, r0, Math.min(CHUNK, rows - r0))
          .float()
          .sum(0)
          .toFloat32Array(),
      );
      for (let j = 0; j < dim; j++) sum[j] += s[j]!;
    }
    const mean = Float32Array.from(sum, (x) => x / rows);
    const cov = new Float64Array(dim * dim);
    const mu = fromArray(mean, [1, dim]);
    for (let r0 = 0; r0 < rows; r0 += CHUNK) {
      const c = tidy(() => {
        const x = table
          .narrow(0, r0, Math.min(CHUNK, rows - r0))
          .float()
          .sub(mu);
        return x.t().matmul(x).toFloat32Array();
      });
      for (let i = 0; i < c.length; i++) cov[i] += c[i]!;
    }
    mu.dispose();
    for (let i = 0; i < cov.length; i++) cov[i] /= rows;
    // eigenvectors of the covariance, largest eigenvalues first
    const [vals, vecs] = tidy(() => {
      const [w, v] = callOp(opId('linalg_eigh'), [fromArray(cov, [dim, dim], 'float64'), 'L']) as [Tensor, Tensor];
      return [w.data() as Float64Array, v.float().toFloat32Array()];
    }) as [Float64Array, Float32Array];
    const basis = new Float32Array(dim * K);
    for (let i = 0; i < dim; i++) for (let k = 0; k < K; k++) basis[i * K + k] = vecs[i * dim + (dim - 1 - k)]!;
    let total = 0,
      top = 0;
    for (let k = 0; k < dim; k++) {
      total += Math.max(0, vals[k]!);
      if (k >= dim - K) top += Math.max(0, vals[k]!);
    }
    return { mean, basis, kept: total > 0 ? top / total : 1 };
  });
  log(`[export] principal components: ${K} of ${dim} keep ${(100 * kept).toFixed(1)}% of the rows' variance (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  // the K coordinates of every row
  const M = bytes,
    codes = new Uint8Array(rows * M),
    codebooks = new Float32Array(PQ_CENTROIDS * K);
  const Z = empty([rows, K], 'float32');
  try {
    noGrad(() => {
      const B = fromArray(basis, [dim, K]),
        mu = fromArray(mean, [1, dim]);
      for (let r0 = 0; r0 < rows; r0 += CHUNK) {
        const n = Math.min(CHUNK, rows - r0);
        tidy(() => {
          Z.narrow(0, r0, n).copy_(table.narrow(0, r0, n).float().sub(mu).matmul(B));
        });
      }
      B.dispose();
      mu.dispose();
    });
    // one k-means per subspace on a sample of rows, then every row's nearest centroid
    const sampleRows = Math.min(rows, o.sample ?? 262144);
    const sample = noGrad(() => tidy(() => Z.indexSelect(0, fromArray(evenSample(rows, sampleRows)).long())));
    const prog = new Progress({ label: '[export] product quantisation', unit: 'subspaces', total: M, stream: lineStream(log) });
    try {
      for (let j = 0; j < M; j++) {
        const w = widths[j]!,
          oj = off[j]!;
        const sub = noGrad(() => tidy(() => sample.narrow(1, oj, w).contiguous().toFloat32Array()));
        const k = Math.min(PQ_CENTROIDS, sampleRows);
        const { centroids } = kmeans(sub, w, k, { niter: o.iterations ?? 25, seed: (o.seed ?? 1) + j, maxPointsPerCentroid: Math.ceil(sampleRows / k) });
        for (let c = 0; c < k; c++) for (let t = 0; t < w; t++) codebooks[c * K + oj + t] = centroids[c * w + t]!;
        // a table of fewer rows than centroids repeats its first centroid in the unused codes
        for (let c = k; c < PQ_CENTROIDS; c++) for (let t = 0; t < w; t++) codebooks[c * K + oj + t] = centroids[t]!;
        assignCodes(Z, oj, w, centroids, k, codes, M, j);
        prog.tick();
      }
      prog.done();
    } finally {
      sample.dispose();
    }
    const p: PqTable = { rows, dim, dims: K, codes, widths, codebooks, basis, mean };
    if (o.sentences?.length) refitCodebooks(p, Z, o.sentences, o.refitLambda ?? 0.01, log);
    return p;
  } finally {
    Z.dispose();
  }
}

/** A Progress stream that hands each line to log (the export's lines go through its log). */
function lineStream(log: (line: string) => void): ProgressStream {
  return {
    write: (s: string) => {
      const line = s.replace(/^\r|\n$/g, '');
      if (line) log(line);
    },
  };
}

/** The mean error of sentences' pooled coordinates read back from codes, relative to the exact ones T [S, K] (A(j): the sentences' centroid weights of subspace j). */
function pooledError(p: PqTable, T: Tensor, A: (j: number) => Tensor): number {
  const S = T.shape[0]!,
    off = pqOffsets(p.widths);
  return noGrad(() => {
    const P = zeros([S, p.dims], 'float64'),
      cb = fromArray(p.codebooks, [PQ_CENTROIDS, p.dims]);
    try {
      // one subspace at a time: each A(j) is S × 256
      for (let j = 0; j < p.widths.length; j++)
        tidy(() => {
          P.narrow(1, off[j]!, p.widths[j]!).copy_(A(j).matmul(cb.narrow(1, off[j]!, p.widths[j]!).to('float64')));
        });
      return tidy(() => P.sub(T).norm(2, 1).div(T.norm(2, 1).clampMin(1e-12)).sum().item() / Math.max(1, S));
    } finally {
      P.dispose();
      cb.dispose();
    }
  });
}

/** Refits each subspace's centroids (see PqTrainOptions.sentences); Z: the rows' exact coordinates [rows, K]. */
function refitCodebooks(p: PqTable, Z: Tensor, sentences: Int32Array[], lambda: number, log: (line: string) => void): void {
  const t0 = Date.now(),
    M = p.widths.length,
    K = p.dims,
    off = pqOffsets(p.widths),
    S = sentences.length;
  let total = 0;
  for (const s of sentences) total += s.length;
  const ids = new Int32Array(total),
    sid = new Int32Array(total),
    w = new Float64Array(total);
  for (let i = 0, k = 0; i < S; i++) {
    const s = sentences[i]!,
      wi = Math.fround(1 / Math.max(1, s.length));
    for (const id of s) {
      if (!(id >= 0 && id < p.rows)) throw new Error(`product quantisation: token id ${id} outside the table's ${p.rows} rows`);
      ids[k] = id;
      sid[k] = i;
      w[k++] = wi;
    }
  }
  noGrad(() => {
    const wT = fromArray(w),
      sidT = fromArray(sid).long();
    // T: each sentence's pooled exact coordinates
    const T = zeros([S, K], 'float64');
    for (let a = 0; a < total; a += CHUNK * 16) {
      const n = Math.min(CHUNK * 16, total - a);
      tidy(() => {
        T.indexAdd_(
          0,
          sidT.narrow(0, a, n),
          Z.indexSelect(0, fromArray(ids.subarray(a, a + n)).long())
            .to('float64')
            .mul(wT.narrow(0, a, n).unsqueeze(1)),
        );
      });
    }
    // A_j: each sentence's weights of the 256 centroids of subspace j
    const flat = new Int32Array(total);
    const A = (j: number) => {
      for (let k = 0; k < total; k++) flat[k] = sid[k]! * PQ_CENTROIDS + p.codes[ids[k]! * M + j]!;
      return zeros([S * PQ_CENTROIDS], 'float64')
        .indexAdd_(0, fromArray(flat).long(), wT)
        .view([S, PQ_CENTROIDS]);
    };
    try {
      const before = pooledError(p, T, A);
      const prog = new Progress({ label: '[export] codebook refit', unit: 'subspaces', total: M, stream: lineStream(log) });
      for (let j = 0; j < M; j++) {
        tidy(() => {
          const Aj = A(j),
            wj = p.widths[j]!,
            oj = off[j]!;
          const G = Aj.t().matmul(Aj),
            rhs = Aj.t().matmul(T.narrow(1, oj, wj));
          const g = G.data() as Float64Array;
          let tr = 0;
          for (let c = 0; c < PQ_CENTROIDS; c++) tr += g[c * PQ_CENTROIDS + c]!;
          const reg = (lambda * tr) / PQ_CENTROIDS || 1e-12;
          const c0 = fromArray(p.codebooks, [PQ_CENTROIDS, K]).narrow(1, oj, wj).to('float64');
          const sol = callOp(opId('linalg_solve'), [G.add(eye(PQ_CENTROIDS, undefined, 'float64').mul(reg)), rhs.add(c0.mul(reg)), true]) as Tensor;
          const x = sol.data() as Float64Array;
          for (let c = 0; c < PQ_CENTROIDS; c++) for (let t = 0; t < wj; t++) p.codebooks[c * K + oj + t] = x[c * wj + t]!;
        });
        prog.tick();
      }
      prog.done();
      const after = pooledError(p, T, A);
      log(
        `[export] codebooks refit on ${S} sentences (${total} features): their pooled coordinates' mean relative error ${before.toFixed(4)} → ${after.toFixed(4)} (${((Date.now() - t0) / 1000).toFixed(1)} s)`,
      );
    } finally {
      T.dispose();
      wT.dispose();
      sidT.dispose();
    }
  });
}

/** n of rows row numbers spread evenly (deterministic). */
function evenSample(rows: number, n: number): Int32Array {
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.floor((i * rows) / n);
  return out;
}

/** codes[r · M + j] = the nearest of k centroids (width w) to row r's coordinates [oj, oj + w) of Z [rows, K] (ties: the lower code). */
function assignCodes(Z: Tensor, oj: number, w: number, centroids: Float32Array, k: number, codes: Uint8Array, M: number, j: number): void {
  const rows = Z.shape[0]!;
  noGrad(() => {
    const C = fromArray(centroids.subarray(0, k * w), [k, w]);
    const cn = tidy(() => C.mul(C).sum(1).unsqueeze(0));
    try {
      for (let r0 = 0; r0 < rows; r0 += CHUNK) {
        const n = Math.min(CHUNK, rows - r0);
        // |x − c|² − |x|² = |c|² − 2 x·c
        const best = tidy(() => Z.narrow(0, r0, n).narrow(1, oj, w).matmul(C.t()).mul(-2).add(cn).argmin(1).to('int32').data() as Int32Array);
        for (let i = 0; i < n; i++) codes[(r0 + i) * M + j] = best[i]!;
      }
    } finally {
      C.dispose();
      cn.dispose();
    }
  });
}

/** The product-quantised table of a model file (null when it has none), its shapes checked; h: the file's header when the caller has read it. */
export function readPqTable(file: string, h: SafetensorsHeader = readSafetensorsHeader(file)): PqTable | null {
  if (!h.entries['pq.codes']) return null;
  const wrong = checkPqEntries((k) => h.entries[k]);
  if (wrong) throw new Error(`${file}: ${wrong}`);
  const { tensors } = loadTensors(file, (k) => (PQ_KEYS as readonly string[]).includes(k));
  try {
    const get = (k: string) => tensors.get(k)!.data();
    const codes = get('pq.codes') as Uint8Array,
      widths = get('pq.widths') as Int32Array;
    const [rows] = h.entries['pq.codes']!.shape as [number],
      [dim, dims] = h.entries['pq.basis']!.shape as [number, number];
    const p: PqTable = {
      rows,
      dim,
      dims,
      codes,
      widths,
      codebooks: get('pq.codebooks') as Float32Array,
      basis: get('pq.basis') as Float32Array,
      mean: get('pq.mean') as Float32Array,
    };
    const bad = checkPqShapes({ rows, dim, dims, codes: codes.length, widths, codebooks: p.codebooks.length, basis: p.basis.length, mean: p.mean.length });
    if (bad) throw new Error(`${file}: ${bad}`);
    return p;
  } finally {
    for (const t of tensors.values()) t.dispose();
  }
}

/** Writes the table's rows read back (mean + basis · z) into t [rows, dim] (float). */
export function dequantizePqInto(p: PqTable, t: Tensor): void {
  if (t.shape.length !== 2 || t.shape[0] !== p.rows || t.shape[1] !== p.dim)
    throw new Error(`the product-quantised table is [${p.rows}, ${p.dim}], the model's is [${t.shape.join(', ')}]`);
  noGrad(() => {
    for (let r0 = 0; r0 < p.rows; r0 += CHUNK) {
      const n = Math.min(CHUNK, p.rows - r0);
      tidy(() => {
        t.narrow(0, r0, n).copy_(pqRows(p, r0, n));
      });
    }
  });
}

/** The tensors that store a product-quantised table (see the layout above). */
export function pqRawTensors(p: PqTable): Record<string, RawTensor> {
  // the bytes last: the 4-byte tensors before them stay aligned whatever rows × M is (xling/lite's
  // WebAssembly kernel reads them in place)
  return {
    'pq.codebooks': rawFromArray(p.codebooks, [PQ_CENTROIDS, p.dims]),
    'pq.widths': rawFromArray(p.widths, [p.widths.length]),
    'pq.basis': rawFromArray(p.basis, [p.dim, p.dims]),
    'pq.mean': rawFromArray(p.mean, [p.dim]),
    'pq.codes': rawFromArray(p.codes, [p.rows, p.widths.length]),
  };
}

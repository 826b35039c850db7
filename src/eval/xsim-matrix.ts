// The research's similarity-search error between every ordered pair of languages of an N-way
// parallel set: for (p, q), the share of sentences whose cosine 1-NN among all q sentences of
// the rows both languages have is not their own row. Text mode counts a retrieved sentence
// whose text is identical to the gold one as correct.
import { nativePays } from '../tensor/backend.js';
import { fromArray, noGrad, tidy } from '../tensor/index.js';

export interface LangVectors {
  lang: string;
  rows: number[];
  vecs: Float32Array;
  texts: string[];
}

export interface XsimMatrix {
  langs: string[];
  /** errors[i][j]: % error of retrieving lang j's sentence for lang i's (NaN on the diagonal or < minRows). */
  errors: number[][];
  /** counts[i][j]: the rows both languages have (errors are measured when at least minRows). */
  counts: number[][];
  rowAvg: number[];
  colAvg: number[];
  overall: number;
  mode: 'index' | 'text';
}

/**
 * The 1-NN by cosine (dot products of normalised rows) between row-aligned X and Y (both [m, d]):
 * for each row of X the nearest row of Y (fwd), and for each row of Y the nearest row of X (bwd).
 * Every similarity-search error (the dev metric of training, the xsim matrix) counts from these.
 * native: on the native backend (default: where it is loaded, or the products pay for loading it).
 */
export function nearestRows(
  X: Float32Array,
  Y: Float32Array,
  m: number,
  d: number,
  both = true,
  native = nativePays(2 * m * m * d),
): { fwd: number[]; bwd: number[] | null } {
  if (!native) return nearestRowsPortable(X, Y, m, d, both);
  return noGrad(() =>
    tidy(() => {
      const s = fromArray(X, [m, d]).matmul(fromArray(Y, [m, d]).t());
      return { fwd: s.argmax(1).toArray(), bwd: both ? s.argmax(0).toArray() : null };
    }),
  );
}

/**
 * nearestRows in plain TypeScript (without the native backend, or for a search too small to pay
 * for loading it): the same products, O(m²·d), the first maximum on ties as torch's argmax.
 */
function nearestRowsPortable(X: Float32Array, Y: Float32Array, m: number, d: number, both: boolean): { fwd: number[]; bwd: number[] | null } {
  const fwd = new Array<number>(m).fill(0),
    bwd = both ? new Array<number>(m).fill(0) : null;
  const bestF = new Float64Array(m).fill(-Infinity),
    bestB = new Float64Array(m).fill(-Infinity);
  for (let i = 0; i < m; i++) {
    const xo = i * d;
    for (let j = 0; j < m; j++) {
      const yo = j * d;
      let s = 0;
      for (let k = 0; k < d; k++) s += X[xo + k]! * Y[yo + k]!;
      if (s > bestF[i]!) {
        bestF[i] = s;
        fwd[i] = j;
      }
      if (bwd && s > bestB[j]!) {
        bestB[j] = s;
        bwd[j] = i;
      }
    }
  }
  return { fwd, bwd };
}

/** Error rates (%) of 1-NN retrieval between row-aligned embeddings X and Y (both [n, d], normalised): X→Y and Y→X. */
export function xsimError(X: Float32Array, Y: Float32Array, n: number, d: number): { xy: number; yx: number } {
  const { fwd, bwd } = nearestRows(X, Y, n, d);
  let xy = 0,
    yx = 0;
  for (let i = 0; i < n; i++) {
    if (fwd[i] !== i) xy++;
    if (bwd![i] !== i) yx++;
  }
  return { xy: (100 * xy) / n, yx: (100 * yx) / n };
}

export function xsimMatrix(langs: LangVectors[], dim: number, mode: 'index' | 'text' = 'index', minRows = 1): XsimMatrix {
  const n = langs.length;
  const errors = langs.map(() => new Array<number>(n).fill(NaN));
  const counts = langs.map(() => new Array<number>(n).fill(0));
  const pos = langs.map((l) => new Map(l.rows.map((r, i) => [r, i])));
  // every pair's products (at most), to decide once whether the native backend pays for the matrix
  let flops = 0;
  for (let a = 0; a < n; a++) for (let b = 0; b < n; b++) if (a !== b) flops += 2 * Math.min(langs[a]!.rows.length, langs[b]!.rows.length) ** 2 * dim;
  const native = nativePays(flops);
  for (let a = 0; a < n; a++) {
    for (let b = 0; b < n; b++) {
      if (a === b) continue;
      const common: [number, number][] = [];
      for (const [r, i] of pos[a]!) {
        const j = pos[b]!.get(r);
        if (j !== undefined) common.push([i, j]);
      }
      counts[a]![b] = common.length;
      if (common.length < minRows) continue;
      const m = common.length;
      const pick = (src: Float32Array, idx: number[]) => {
        const out = new Float32Array(idx.length * dim);
        idx.forEach((k, t) => out.set(src.subarray(k * dim, (k + 1) * dim), t * dim));
        return out;
      };
      const X = pick(
        langs[a]!.vecs,
        common.map((c) => c[0]),
      );
      const Y = pick(
        langs[b]!.vecs,
        common.map((c) => c[1]),
      );
      const nn = nearestRows(X, Y, m, dim, false, native).fwd;
      let wrong = 0;
      const tb = langs[b]!.texts;
      for (let i = 0; i < m; i++) {
        const j = nn[i]!;
        if (j === i) continue;
        if (mode === 'text' && tb[common[j]![1]] === tb[common[i]![1]]) continue;
        wrong++;
      }
      errors[a]![b] = (100 * wrong) / m;
    }
  }
  const mean = (xs: number[]) => {
    const v = xs.filter((x) => !Number.isNaN(x));
    return v.length ? v.reduce((s, x) => s + x, 0) / v.length : NaN;
  };
  const rowAvg = errors.map((r) => mean(r));
  const colAvg = langs.map((_, j) => mean(errors.map((r) => r[j]!)));
  return { langs: langs.map((l) => l.lang), errors, counts, rowAvg, colAvg, overall: mean(errors.flat()), mode };
}

export function formatXsimMatrix(m: XsimMatrix): string {
  const w = Math.max(6, ...m.langs.map((l) => l.length + 1));
  const f = (x: number) => (Number.isNaN(x) ? '-' : x.toFixed(1)).padStart(w);
  const lines = [''.padStart(w) + m.langs.map((l) => l.padStart(w)).join('') + 'avg'.padStart(w)];
  m.langs.forEach((l, i) => lines.push(l.padStart(w) + m.errors[i]!.map(f).join('') + f(m.rowAvg[i]!)));
  lines.push('avg'.padStart(w) + m.colAvg.map(f).join('') + f(m.overall));
  return lines.join('\n');
}

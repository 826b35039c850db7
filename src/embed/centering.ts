// Per-language centring. A multilingual encoder keeps a language-specific offset in its sentence
// vectors (the less trained, the larger); subtracting each language's mean vector before comparing
// across languages removes it (Libovický et al., 2020, "On the language neutrality of pre-trained
// multilingual representations"). The means are fitted on training text at the end of training
// and stored in the model (model.safetensors: center.<lang>); `xling embed --lang xx` applies them.
import { callOpAsync, fromArray, keep, noGrad, opId, Tensor, tidy } from '../tensor/tensor.js';
import { Rng } from '../util/rng.js';
import type { SentenceEncoderModel } from './model.js';

/**
 * Mean of the L2-normalised sentence vectors of up to `perLang` sentences of each language;
 * onProgress gets the sentences embedded since its last call.
 */
export function fitLanguageMeans(model: SentenceEncoderModel, byLang: Map<string, string[]>, perLang: number, seed = 0, onProgress?: (sentences: number) => void): Map<string, Float32Array> {
  const out = new Map<string, Float32Array>();
  const d = model.dim;
  for (const [lang, all] of byLang) {
    if (!all.length) continue;
    const rng = new Rng(`${seed}:${lang}`);
    const pick = all.length > perLang ? rng.sample(all.length, perLang).map((i) => all[i]!) : all;
    let done = 0;
    const v = model.embed(pick, { normalize: true, center: false, onBatch: (n) => { onProgress?.(n - done); done = n; } });
    const mu = new Float64Array(d);
    for (let i = 0; i < pick.length; i++) for (let j = 0; j < d; j++) mu[j] += v[i * d + j]!;
    out.set(lang, Float32Array.from(mu, (x) => x / pick.length));
  }
  return out;
}

/**
 * A deterministic sample spread over a whole stream of lines, for identifying its language: every
 * step-th non-blank line, the step doubling whenever more than `cap` are kept. It depends only on
 * the lines, never on how they are read (chunks), and blank lines never vote.
 */
export class SpreadSample {
  readonly lines: string[] = [];
  private step = 1;
  private seen = 0;
  constructor(readonly cap = 2000) {}
  add(line: string): void {
    if (!line.trim() || this.seen++ % this.step !== 0) return;
    this.lines.push(line);
    if (this.lines.length > this.cap) {
      // keep the lines at multiples of the doubled step: every other kept line
      let j = 0;
      for (let i = 0; i < this.lines.length; i += 2) this.lines[j++] = this.lines[i]!;
      this.lines.length = j;
      this.step *= 2;
    }
  }
}

export function spreadSample(lines: Iterable<string>, cap = 2000): string[] {
  const s = new SpreadSample(cap);
  for (const l of lines) s.add(l);
  return s.lines;
}

/** In place: rows ← rows − mu, then (optionally) L2-normalised. rows are L2-normalised on entry. */
export function centerRows(rows: Float32Array, dim: number, mu: Float32Array, normalize: boolean): void {
  for (let r = 0; r < rows.length / dim; r++) {
    const v = rows.subarray(r * dim, (r + 1) * dim);
    let n = 0;
    for (let j = 0; j < dim; j++) { const x = v[j]! - mu[j]!; v[j] = x; n += x * x; }
    if (normalize && n > 0) { const inv = 1 / Math.sqrt(n); for (let j = 0; j < dim; j++) v[j]! *= inv; }
  }
}

/**
 * The language whose mean vector is nearest to most rows (argmin_l |v − μ_l|², i.e. argmax
 * v·μ_l − |μ_l|²/2), with the share of rows that voted for it. Per sentence this is a weak
 * language identifier; over a file of one language the vote is reliable (dev: every file of a
 * 12-language test identified correctly while single sentences were right ~50% of the time).
 */
export function nearestCenterVote(rows: Float32Array, dim: number, centers: Map<string, Float32Array>): { lang: string; share: number } | null {
  return rows.length && centers.size ? tallyVotes(nearestCenters(rows, dim, centers)) : null;
}

/** A row's vote: the index of its nearest mean vector in `langs` (the centres' order). */
export interface RowVotes { langs: string[]; nearest: Int32Array }

/** Each row's nearest mean vector (rows L2-normalised). */
export function nearestCenters(rows: Float32Array, dim: number, centers: Map<string, Float32Array>): RowVotes {
  const n = rows.length / dim, t = centerTable(centers, dim);
  if (!n || !t.langs.length) return { langs: t.langs, nearest: new Int32Array(n) };
  // one matrix product in double precision (a server votes on every request: a JavaScript loop
  // over rows × languages × dim cost more than the request's embedding)
  const scores = noGrad(() => tidy(() => fromArray(Float64Array.from(rows), [n, dim]).matmul(fromArray(t.mu, [t.langs.length, dim]).t()).data() as Float64Array));
  return { langs: t.langs, nearest: argmaxRows(scores, n, t) };
}

/** nearestCenters with the product on the addon's worker threads (a server's event loop stays free). */
export async function nearestCentersAsync(rows: Float32Array, dim: number, centers: Map<string, Float32Array>): Promise<RowVotes> {
  const n = rows.length / dim, t = centerTable(centers, dim);
  const L = t.langs.length;
  if (!n || !L) return { langs: t.langs, nearest: new Int32Array(n) };
  if (n * L * dim <= 1 << 17) {
    // a few rows (a one-sentence request): a loop here costs less than a round trip to a worker thread
    const scores = new Float64Array(n * L);
    for (let i = 0; i < n; i++) for (let l = 0; l < L; l++) {
      let acc = 0;
      for (let j = 0; j < dim; j++) acc += rows[i * dim + j]! * t.mu[l * dim + j]!;
      scores[i * L + l] = acc;
    }
    return { langs: t.langs, nearest: argmaxRows(scores, n, t) };
  }
  const [x, muT] = noGrad(() => [keep(fromArray(Float64Array.from(rows), [n, dim])), keep(fromArray(t.mu, [L, dim]).t())]);
  try {
    const s = (await callOpAsync(opId('mm'), [x, muT])) as Tensor;
    try { return { langs: t.langs, nearest: argmaxRows(s.data() as Float64Array, n, t) }; } finally { s.dispose(); }
  } finally { x.dispose(); muT.dispose(); }
}

/** argmax_l v·μ_l − |μ_l|²/2 of each row, from the [rows, languages] products. */
function argmaxRows(scores: Float64Array, n: number, t: { langs: string[]; half: Float64Array }): Int32Array {
  const L = t.langs.length, out = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    let best = 0, bestScore = -Infinity;
    for (let l = 0; l < L; l++) { const v = scores[i * L + l]! - t.half[l]!; if (v > bestScore) { bestScore = v; best = l; } }
    out[i] = best;
  }
  return out;
}

/** The majority of the rows' votes (ties: the alphabetically first language), with its share. */
export function tallyVotes(v: RowVotes): { lang: string; share: number } | null {
  const n = v.nearest.length;
  if (!n) return null;
  const counts = new Int32Array(v.langs.length);
  for (const l of v.nearest) counts[l]++;
  let best = -1;
  counts.forEach((c, l) => { if (best < 0 || c > counts[best]! || (c === counts[best] && v.langs[l]! < v.langs[best]!)) best = l; });
  return { lang: v.langs[best]!, share: counts[best]! / n };
}

/** The mean vectors as one [languages, dim] table with |μ|²/2 per language, made once per map. */
const centerTables = new WeakMap<Map<string, Float32Array>, { size: number; langs: string[]; mu: Float64Array; half: Float64Array }>();
function centerTable(centers: Map<string, Float32Array>, dim: number): { langs: string[]; mu: Float64Array; half: Float64Array } {
  const have = centerTables.get(centers);
  if (have && have.size === centers.size) return have;
  const langs = [...centers.keys()], mu = new Float64Array(langs.length * dim), half = new Float64Array(langs.length);
  langs.forEach((l, i) => { const m = centers.get(l)!; mu.set(m, i * dim); half[i] = m.reduce((a, x) => a + x * x, 0) / 2; });
  const t = { size: centers.size, langs, mu, half };
  centerTables.set(centers, t);
  return t;
}

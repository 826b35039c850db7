// Compact exports of a model directory (xling export --dtype/--dims/--prune-unused): the encoder
// alone, its feature/embedding tables stored as int8 rows with one float32 scale per row
// (symmetric: x ≈ q · scale, scale = max|row| / 127) or as float16, the sentence vectors cut to
// their first N dimensions (Matryoshka), and hashed n-gram buckets that training never touched
// dropped (their rows are still the initial draw; unseen n-grams then share `fallback` rows by
// bucket mod fallback, see prunedBucketMap). Layout of model.safetensors:
// - a quantised table keeps its name with dtype I8, its scales are `scale.<name>` (F32 [rows]);
// - a pruned model has `prune.buckets` (I32 [kept], ascending) and config.json `model.prune`;
// - the file's __metadata__ `xling.config` repeats config.json, so the file alone is a model
//   (xling/lite loads either).
// loadSentenceEncoder keeps an int8 n-gram table (an EmbeddingBag's) as int8, read by the int8
// embedding-bag kernel, and dequantises other int8 tables at load; xling/lite reads the int8 rows directly.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { RawTensor, rawFromArray, writeSafetensors } from '../io/safetensors.js';
import { float32ToFloat16 } from '../io/half.js';
import { DualConfig } from '../models/dual/model.js';
import { SavedModelConfig } from '../models/family.js';
import { EmbeddingBag } from '../nn/layers.js';
import { loadTensors, writeJson } from '../nn/serialize.js';
import { manualSeed, noGrad, Tensor, tidy } from '../tensor/tensor.js';
import { openXlingTokenizer } from '../text/spec.js';
import { pqRawTensors, trainPq } from './table-pq.js';
import { checkReplaceable, copyModelSideFiles, readModelConfig, writeModelDirAtomically } from './model-dir.js';

export type ExportDtype = 'fp32' | 'fp16' | 'int8' | 'pq';

export interface CompactExportOptions {
  dtype: ExportDtype;
  /** Keep the first N dimensions of the sentence vectors (dual encoder). */
  dims?: number;
  /** Drop the hashed n-gram buckets training never touched (dual encoder). */
  prune?: boolean;
  /** Shared rows for the buckets dropped (default 1024). */
  fallback?: number;
  /**
   * Keep at most this many buckets (implies prune): the touched ones whose rows moved farthest
   * from their initial draw (L2), i.e. the n-grams training updated most; the rest share the
   * fallback rows. For sizes below what the touched buckets need (a long run touches nearly all).
   */
  pruneKeep?: number;
  /** dtype 'pq' (dual encoder): bytes a row of the n-gram table (default 56). */
  pqBytes?: number;
  /** dtype 'pq': principal components kept (default min(width, 2 × pqBytes)). */
  pqDims?: number;
  /** dtype 'pq': sentences the codebooks are refit on (PqTrainOptions.sentences), tokenised with the model's tokenizer. */
  pqSentences?: string[];
  log?: (line: string) => void;
}

export interface CompactExportReport {
  bytes: number;
  dtype: ExportDtype;
  dims: number;
  /** dtype 'pq': bytes a row and principal components kept. */
  pq?: { bytes: number; dims: number };
  /** Pruning: buckets, how many were touched in training (kept), and that share. */
  prune?: { buckets: number; kept: number; share: number; fallback: number; touched: number };
}

/** The names of the tables quantised by --dtype: token / feature embedding tables. */
export function isTableName(name: string): boolean {
  return /(^|\.)embed\.weight$/.test(name);
}

/** The key of a quantised table's per-row scales. */
export function scaleKey(name: string): string {
  return `scale.${name}`;
}

/** Symmetric int8 rows: q = round(x / s), s = max|row| / 127 (0 for an all-zero row). */
export function quantizeRowsInt8(x: Float32Array, rows: number, dim: number): { q: Int8Array; scale: Float32Array } {
  const q = new Int8Array(rows * dim),
    scale = new Float32Array(rows);
  for (let r = 0; r < rows; r++) {
    const o = r * dim;
    let m = 0;
    for (let j = 0; j < dim; j++) {
      const a = Math.abs(x[o + j]!);
      if (a > m) m = a;
    }
    const s = Math.fround(m / 127);
    scale[r] = s;
    if (s === 0) continue;
    for (let j = 0; j < dim; j++) q[o + j] = Math.max(-127, Math.min(127, Math.round(x[o + j]! / s)));
  }
  return { q, scale };
}

/**
 * How far each bucket row of a dual encoder's feature table moved from its initial draw (squared
 * L2; the trainer seeds the generator with `seed` and draws this table first): a row still equal
 * to its draw (0) got no update, i.e. no training sentence had a feature in that bucket.
 */
function bucketMoves(table: Tensor, base: number, buckets: number, seed: number, std: number): Float64Array {
  const rows = table.shape[0]!,
    dim = table.shape[1]!;
  manualSeed(seed);
  const init = new EmbeddingBag(rows, dim, std);
  try {
    const moved = new Float64Array(buckets);
    const chunk = 1 << 15;
    for (let r0 = base; r0 < base + buckets; r0 += chunk) {
      const n = Math.min(chunk, base + buckets - r0);
      const [a, b] = noGrad(() => tidy(() => [table.narrow(0, r0, n).toFloat32Array(), init.weight.narrow(0, r0, n).toFloat32Array()]));
      for (let i = 0; i < n; i++) {
        const o = i * dim;
        let d2 = 0,
          differs = false;
        for (let j = 0; j < dim; j++) {
          const d = a[o + j]! - b[o + j]!;
          if (a[o + j] !== b[o + j]) differs = true;
          d2 += d * d;
        }
        // a changed row whose change underflows still counts as moved
        moved[r0 - base + i] = differs ? Math.max(d2, Number.MIN_VALUE) : 0;
      }
    }
    return moved;
  } finally {
    init.weight.dispose();
  }
}

/**
 * The checks of exportCompact's options against the model (what it refuses, before any work): the
 * model's config and the options as exportCompact reads them. A caller about to read --pq-data runs
 * it first (pqSentences: [] stands for sentences to come).
 */
export function checkCompactExport(
  modelDir: string,
  o: CompactExportOptions,
): { cfg: SavedModelConfig; mc: DualConfig | null; o: CompactExportOptions; pq: { bytes: number; dims: number } | null } {
  const cfg = readModelConfig(modelDir);
  if (o.pruneKeep !== undefined && !(Number.isInteger(o.pruneKeep) && o.pruneKeep >= 1))
    throw new Error(`--prune-keep: must be a positive integer, got ${o.pruneKeep}`);
  if (o.pruneKeep !== undefined) o = { ...o, prune: true };
  if ((o.dims !== undefined || o.prune) && cfg.kind !== 'dual')
    throw new Error(`--model ${modelDir}: --dims and --prune-unused apply to dual-encoder models (this is a ${cfg.kind} model)`);
  const mc = cfg.kind === 'dual' ? { ...(cfg.model as DualConfig) } : null;
  if (mc?.prune && o.prune) throw new Error(`--model ${modelDir}: the table is already pruned`);
  let pq: { bytes: number; dims: number } | null = null;
  if (o.dtype === 'pq') {
    if (!mc) throw new Error(`--dtype pq: product quantisation applies to dual-encoder models' n-gram tables (this is a ${cfg.kind} model)`);
    if (o.prune) throw new Error('--dtype pq: give either product quantisation or --prune-unused / --prune-keep, not both');
    const bytes = o.pqBytes ?? 56;
    if (!(Number.isInteger(bytes) && bytes >= 1 && bytes <= mc.dim))
      throw new Error(
        `--pq-bytes: must be an integer in [1, ${mc.dim}] (the table's width: at least one coordinate a byte), got ${bytes}${o.pqBytes === undefined ? ' (the default)' : ''}`,
      );
    const K = o.pqDims ?? Math.min(mc.dim, 2 * bytes);
    if (!(Number.isInteger(K) && K >= bytes && K <= mc.dim))
      throw new Error(`--pq-dims: must be an integer in [${bytes} (--pq-bytes), ${mc.dim} (the table's width)], got ${K}`);
    if (o.pqSentences !== undefined && cfg.tokenizerSpec?.type !== 'hashed-ngrams')
      throw new Error(`--pq-data: ${modelDir} has no hashed n-gram tokenizer spec to read the sentences with`);
    pq = { bytes, dims: K };
  } else if (o.pqBytes !== undefined || o.pqDims !== undefined || o.pqSentences !== undefined)
    throw new Error('--pq-bytes, --pq-dims and --pq-data go with --dtype pq');
  if (mc?.pq) throw new Error(`--model ${modelDir}: the n-gram table is already product-quantised; export from the model it was made from`);
  if (o.dims !== undefined && mc && !(Number.isInteger(o.dims) && o.dims >= 1 && o.dims <= mc.outDim))
    throw new Error(`--dims: must be an integer in [1, ${mc.outDim}] (the model's width), got ${o.dims}`);
  return { cfg, mc, o, pq };
}

const f32 = (t: Tensor): Float32Array => noGrad(() => tidy(() => t.float().toFloat32Array()));

/** Adds a tensor to the export: a table quantised as `dtype` says (int8 rows with their scales, or float16), anything else float32. */
function putTensor(out: Record<string, RawTensor>, dtype: ExportDtype, name: string, data: Float32Array, shape: number[]): void {
  if (isTableName(name) && dtype === 'int8' && shape.length === 2) {
    const { q, scale } = quantizeRowsInt8(data, shape[0]!, shape[1]!);
    out[name] = rawFromArray(q, shape);
    out[scaleKey(name)] = rawFromArray(scale, [shape[0]!]);
  } else if (isTableName(name) && dtype === 'fp16') {
    out[name] = rawFromArray(float32ToFloat16(data), shape, 'F16');
  } else {
    out[name] = rawFromArray(data, shape);
  }
}

/** The model's tensors into the export, cut to `dims` where they give the sentence vectors; the n-gram table left for pruning or quantisation. */
function copyTensors(tensors: Map<string, Tensor>, out: Record<string, RawTensor>, o: CompactExportOptions, mc: DualConfig | null): void {
  const { dims } = o;
  for (const [name, t] of tensors) {
    if (name === 'prune.buckets') out[name] = rawFromArray(Int32Array.from(t.data() as Int32Array), [...t.shape]);
    else if (mc && name === 'encoder.embed.weight' && (o.prune || o.dtype === 'pq'))
      continue; // pruned or quantised apart
    else if (dims !== undefined && name === 'encoder.proj.weight') putTensor(out, o.dtype, name, f32(t).slice(0, dims * t.shape[1]!), [dims, t.shape[1]!]);
    else if (dims !== undefined && (name === 'encoder.proj.bias' || name.startsWith('center.'))) putTensor(out, o.dtype, name, f32(t).slice(0, dims), [dims]);
    else putTensor(out, o.dtype, name, f32(t), [...t.shape]);
  }
}

/** The buckets kept (1): those training touched, or the `pruneKeep` that moved most (ties by bucket number, so the choice is deterministic). */
function keptBuckets(moved: Float64Array, touchedCount: number, pruneKeep: number | undefined): Uint8Array {
  const kept = new Uint8Array(moved.length);
  if (pruneKeep !== undefined && pruneKeep < touchedCount) {
    const order = Array.from({ length: moved.length }, (_, b) => b).sort((x, y) => moved[y]! - moved[x]! || x - y);
    for (let i = 0; i < pruneKeep; i++) kept[order[i]!] = 1;
  } else moved.forEach((m, b) => void (m > 0 && (kept[b] = 1)));
  return kept;
}

/** The pruned table: the base rows, the kept buckets' rows, then `fallback` rows each the mean of the dropped rows that share it. */
function pruneRows(table: Tensor, base: number, buckets: number, kept: Uint8Array, K: number, fallback: number): Float32Array {
  const dim = table.shape[1]!;
  const rows = new Float32Array((base + K + fallback) * dim);
  const counts = new Float64Array(fallback);
  const sums = new Float64Array(fallback * dim);
  const chunk = 1 << 15;
  let k = 0;
  for (let r0 = 0; r0 < base + buckets; r0 += chunk) {
    const n = Math.min(chunk, base + buckets - r0);
    const a = f32(table.narrow(0, r0, n));
    for (let i = 0; i < n; i++) {
      const r = r0 + i,
        b = r - base,
        src = a.subarray(i * dim, (i + 1) * dim);
      if (b < 0) rows.set(src, r * dim);
      else if (kept[b]) rows.set(src, (base + k++) * dim);
      else {
        const c = b % fallback;
        counts[c]++;
        for (let j = 0; j < dim; j++) sums[c * dim + j] += src[j]!;
      }
    }
  }
  for (let c = 0; c < fallback; c++) if (counts[c]) for (let j = 0; j < dim; j++) rows[(base + K + c) * dim + j] = sums[c * dim + j]! / counts[c]!;
  return rows;
}

/** --prune-unused / --prune-keep: the n-gram table without the buckets training left alone; returns the report's part. */
function prunedTable(
  modelDir: string,
  cfg: SavedModelConfig,
  mc: DualConfig,
  table: Tensor,
  out: Record<string, RawTensor>,
  o: CompactExportOptions,
): NonNullable<CompactExportReport['prune']> {
  const log = o.log ?? (() => {});
  const fallback = o.fallback ?? 1024;
  const base = mc.unit === 'sentence' ? 4 : mc.vocabSize,
    dim = table.shape[1]!;
  const train = cfg.train as { seed?: number; features?: { initStd?: number } } | undefined;
  if (train?.seed === undefined || train.features?.initStd === undefined)
    throw new Error(
      `--prune-unused: ${modelDir}/config.json lacks the training seed or features.initStd (needed to tell trained rows from their initial draw)`,
    );
  log(`[export] finding the buckets training touched (rows that differ from their initial draw)`);
  const moved = bucketMoves(table, base, mc.buckets, train.seed, train.features.initStd);
  let nTouched = 0;
  for (const m of moved) if (m > 0) nTouched++;
  const kept = keptBuckets(moved, nTouched, o.pruneKeep);
  const keptList: number[] = [];
  kept.forEach((t, b) => void (t && keptList.push(b)));
  const K = keptList.length;
  putTensor(out, o.dtype, 'encoder.embed.weight', pruneRows(table, base, mc.buckets, kept, K, fallback), [base + K + fallback, dim]);
  out['prune.buckets'] = rawFromArray(Int32Array.from(keptList), [K]);
  mc.prune = { kept: K, fallback };
  log(
    `[export] ${nTouched} of ${mc.buckets} buckets touched in training (${((100 * nTouched) / mc.buckets).toFixed(1)}%)${K < nTouched ? `; kept the ${K} that moved most` : ''}; the others share ${fallback} fallback rows`,
  );
  return { buckets: mc.buckets, kept: K, share: K / mc.buckets, fallback, touched: nTouched };
}

/** --dtype pq: the n-gram table product-quantised (codebooks refit on --pq-data's sentences when given). */
function pqTable(
  modelDir: string,
  cfg: SavedModelConfig,
  table: Tensor,
  out: Record<string, RawTensor>,
  o: CompactExportOptions,
  pq: { bytes: number; dims: number },
): void {
  const log = o.log ?? (() => {});
  log(`[export] product quantisation of the n-gram table: ${pq.bytes} bytes a row over its first ${pq.dims} principal components`);
  let sentences: Int32Array[] | undefined;
  if (o.pqSentences?.length) {
    const tok = openXlingTokenizer(modelDir, cfg.tokenizerSpec!);
    sentences = o.pqSentences.map((t) => tok.encode(t));
  }
  Object.assign(out, pqRawTensors(trainPq(table, { bytes: pq.bytes, dims: pq.dims, sentences, log })));
}

/** Writes a compact export of modelDir's encoder to outDir (atomically). */
export function exportCompact(modelDir: string, outDir: string, opts: CompactExportOptions): CompactExportReport {
  const { cfg, mc, o, pq } = checkCompactExport(modelDir, opts);
  checkReplaceable(outDir, '--out');
  const { tensors } = loadTensors(join(modelDir, 'model.safetensors'), (k) => k.startsWith('encoder.') || k.startsWith('center.') || k === 'prune.buckets');
  const out: Record<string, RawTensor> = {};
  const { dims } = o;
  const report: CompactExportReport = { bytes: 0, dtype: o.dtype, dims: mc ? (dims ?? mc.outDim) : 0 };
  try {
    copyTensors(tensors, out, o, mc);
    if (mc && o.prune) report.prune = prunedTable(modelDir, cfg, mc, tensors.get('encoder.embed.weight')!, out, o);
    if (mc && pq) {
      pqTable(modelDir, cfg, tensors.get('encoder.embed.weight')!, out, o, pq);
      mc.pq = report.pq = pq;
    }
    if (mc && dims !== undefined) mc.outDim = dims;
    const config = {
      ...cfg,
      encoderOnly: true,
      ...(mc ? { model: mc } : {}),
      export: {
        dtype: o.dtype,
        ...(dims !== undefined ? { dims } : {}),
        ...(report.prune ? { prune: report.prune } : {}),
        ...(report.pq ? { pq: report.pq } : {}),
      },
    };
    writeModelDirAtomically(outDir, (tmp) => {
      writeJson(join(tmp, 'config.json'), config);
      writeSafetensors(join(tmp, 'model.safetensors'), out, { 'xling.config': JSON.stringify(config) });
      // the tokenizer and the language identifier travel with the export
      copyModelSideFiles(modelDir, tmp, cfg);
      report.bytes = statSync(join(tmp, 'model.safetensors')).size;
    });
  } finally {
    for (const t of tensors.values()) t.dispose();
  }
  return report;
}

// The bag-of-n-grams dual encoder in plain TypeScript (no native code, no Node API): the same text
// normalisation and n-gram hashing as the native path (src/text/ngrams.ts, shared), the mean of the
// feature rows (fp32, fp16 or int8 rows with per-row scales, or product-quantised codes, read
// directly), tanh and the projection, on WebAssembly SIMD kernels (./wasm.ts) or in TypeScript.
// It is a SentenceEncoder (src/models/encoder.ts: token ids in, float32 rows out), so the native
// embed path runs over it where the addon is missing (src/embed/portable.ts), and a CenterPolicy
// (src/util/embed-policy.ts): language identification, the centring rule and the normalise-centre-
// normalise order are the native path's own code, not a copy.
import { CenterMode, CenterPlan, CenterPolicy, AUTO, finishRows, langList, matchLangCode, PER_SENTENCE } from '../util/embed-policy.js';
import type { EncodeOptions, SentenceEncoder } from '../models/encoder.js';
import { HashedNgramTokenizer, hashesOf, NGRAM_ID_OFFSET, prunedBucketMap } from '../text/ngrams.js';
import type { LanguageIdentifier } from '../text/lid-core.js';
import { normalizeRows } from '../util/vectors.js';
import { LiteSafetensors, typedView } from './safetensors.js';
import { PqOffsets, PqTable, readFeatureTable, readProjection, TensorOf, tensorGetter, WeightOffsets, weightOffsets } from './tables.js';
import { IDS_CAP, PQ_DIMS_CAP, WasmKernel } from './wasm.js';

export interface LiteEmbedOptions {
  /**
   * Language of the sentences: its mean vector is subtracted (per-language centring), as `xling
   * embed --lang` and the native embed path decide it: a language code; 'auto' (the default): the
   * language of the whole input, identified by the model's language identifier (lid.json) over a
   * spread sample, used at a confidence of at least LID_CONFIDENCE; 'auto-per-sentence': each
   * sentence identified on its own; null or 'none': no centring. Codes are matched as BCP-47
   * spellings (`pt-BR` = `pt_br`, `de-AT` → `de`); a code that names no language of the model is
   * an error. Means too small to matter are not applied (meansNegligible) unless center is
   * 'force'. The rule is src/util/embed-policy.ts's, shared with the native path.
   */
  lang?: string | null;
  /** false: no centring; 'force': centre even when the means are negligible. */
  center?: CenterMode;
}

export type { CenterPlan };

/** The parts of config.json the runtime reads. */
interface LiteConfig {
  format?: string;
  version?: number;
  kind?: string;
  model?: {
    unit?: string;
    body?: string;
    pooling?: string[];
    activation?: string;
    buckets?: number;
    dim?: number;
    outDim?: number;
    prune?: { kept: number; fallback: number };
    pq?: { bytes: number; dims: number };
  };
  /** What tokenises (src/text/spec.ts); directories written before it have only the training settings below. */
  tokenizerSpec?: {
    type?: string;
    ngrams?: [number, number];
    buckets?: number;
    words?: boolean;
    maxFeatures?: number;
    hashes?: number;
    lowercase?: boolean;
    romanize?: boolean;
  };
  train?: {
    features?: { ngrams?: [number, number]; buckets?: number; words?: boolean; maxFeatures?: number; hashes?: number };
    vocab?: { lowercase?: boolean; romanize?: boolean };
  };
}

/** The model and n-gram settings of a config xling/lite can embed with; an error naming `where` otherwise. */
function liteSettings(config: LiteConfig, where: string) {
  const m = config.model,
    spec = config.tokenizerSpec;
  if (spec && spec.type !== 'hashed-ngrams')
    throw new Error(`${where}: xling/lite tokenises with hashed n-grams; this model's tokenizerSpec.type is ${JSON.stringify(spec.type)}`);
  // The spec when the directory has one; the training settings of directories written before it.
  const f = spec ?? config.train?.features,
    v = spec ?? config.train?.vocab;
  if (config.format !== 'xling' || config.version !== 2)
    throw new Error(`${where}: not an xling model config (format ${String(config.format)}, version ${String(config.version)})`);
  if (config.kind !== 'dual' || !m || m.unit !== 'sentence' || m.body !== 'none' || (m.pooling ?? []).join() !== 'mean')
    throw new Error(
      `${where}: xling/lite embeds with bag-of-n-grams dual encoders (kind 'dual', unit 'sentence'); this is a ${String(config.kind)} model${m?.unit ? ` (unit '${m.unit}')` : ''}`,
    );
  if (!f?.ngrams || !f.buckets || f.maxFeatures === undefined || f.words === undefined)
    throw new Error(`${where}: 'tokenizerSpec' (or, in older directories, 'train.features') is missing: the n-gram settings of this model`);
  const tokenizer = new HashedNgramTokenizer(
    { ngrams: f.ngrams, buckets: f.buckets, words: f.words, maxFeatures: f.maxFeatures, ...hashesOf(f.hashes) },
    { lowercase: v?.lowercase ?? true, romanize: v?.romanize ?? false },
  );
  return { m, buckets: f.buckets, tokenizer };
}

/** A pruned table's bucket → row map (null: the table is not pruned). */
function bucketMapOf(prune: { kept: number; fallback: number } | undefined, get: TensorOf, buckets: number, where: string): Int32Array | null {
  if (!prune) return null;
  const kept = get('prune.buckets');
  if (kept.dtype !== 'I32' || kept.shape[0] !== prune.kept) throw new Error(`${where}: 'prune.buckets' must be I32 [${prune.kept}]`);
  return prunedBucketMap(typedView(kept, where) as Int32Array, buckets, prune.fallback);
}

/** The mean vectors of a file (`center.LANG`, F32 [dim] each) by language. */
function centersOf(file: LiteSafetensors, dim: number, where: string): [string, Float32Array][] {
  const out: [string, Float32Array][] = [];
  for (const [k, t] of file.tensors) {
    if (!k.startsWith('center.')) continue;
    if (t.dtype !== 'F32' || t.shape.join() !== String(dim)) throw new Error(`${where}: '${k}' must be F32 [${dim}]`);
    out.push([k.slice('center.'.length), typedView(t, where) as Float32Array]);
  }
  return out;
}

export class LiteModel extends CenterPolicy<LanguageIdentifier> implements SentenceEncoder {
  /** Width of the sentence vectors. */
  readonly dim: number;
  /** Width of the feature rows. */
  readonly featureDim: number;
  /** Storage of the feature table: 'fp32', 'fp16', 'int8' or 'pq' (product-quantised codes). */
  readonly dtype: 'fp32' | 'fp16' | 'int8' | 'pq';
  readonly tokenizer: HashedNgramTokenizer;
  /** One bag per sentence, nothing padded: the native embed path batches in input order (as for the native dual encoder). */
  readonly batchLimits = { maxTokens: 1 << 24, maxSentences: 16384, unpadded: true };
  private readonly f32: Float32Array | null;
  private readonly f16: Uint16Array | null;
  private readonly i8: Int8Array | null;
  private readonly scales: Float32Array | null;
  private readonly lut: Float32Array | null;
  /** A product-quantised table, its subspaces' offsets, and scratch of its K coordinates. */
  private readonly pq: PqTable | null;
  /** Where the product-quantised table's parts lie in the file's buffer (for the WebAssembly kernel; null: not all in the table's buffer). */
  private readonly pqAt: PqOffsets | null;
  private readonly W: Float32Array;
  private readonly b: Float32Array;
  private readonly tanh: boolean;
  private readonly bucketMap: Int32Array | null;
  /** Byte offsets of the weights in their buffer (the WebAssembly kernels read them there). */
  private readonly at: WeightOffsets;
  private wasm: WasmKernel | null = null;
  private wasmBatch = 0;

  constructor(
    readonly config: LiteConfig,
    file: LiteSafetensors,
    where: string,
  ) {
    // the mean vectors are read below, the language identifier (lid.json) is set by the loader
    super();
    const { m, buckets, tokenizer } = liteSettings(config, where);
    this.tokenizer = tokenizer;
    const get = tensorGetter(file, where);
    const t = readFeatureTable(file, where, NGRAM_ID_OFFSET + (m.prune ? m.prune.kept + m.prune.fallback : buckets));
    this.featureDim = t.featureDim;
    this.dtype = t.dtype;
    this.f32 = t.f32 ?? null;
    this.f16 = t.f16 ?? null;
    this.lut = t.lut ?? null;
    this.i8 = t.i8 ?? null;
    this.scales = t.scales ?? null;
    this.pq = t.pq ?? null;
    this.pqAt = t.pqAt ?? null;
    const { W, b } = readProjection(get, where, t.featureDim);
    this.at = weightOffsets(t, W, b);
    this.W = typedView(W, where) as Float32Array;
    this.b = typedView(b, where) as Float32Array;
    this.dim = W.shape[0]!;
    this.tanh = (m.activation ?? 'tanh') === 'tanh';
    this.bucketMap = bucketMapOf(m.prune, get, buckets, where);
    for (const [lang, mean] of centersOf(file, this.dim, where)) this.centers.set(lang, mean);
  }

  /**
   * Embeds with a WebAssembly SIMD kernel whose memory holds this model's file (src/lite/wasm.ts);
   * false (and the pure-TypeScript path stays) when the kernel cannot: the file's bytes elsewhere,
   * shapes the kernels do not take, or a maxFeatures above a batch's room.
   */
  useWasm(k: WasmKernel): boolean {
    const batch = k.batch(this.featureDim, this.dim);
    if (this.pq && (!this.pqAt || this.pq.K % 4 !== 0 || this.pq.K > PQ_DIMS_CAP || this.featureDim % 4 !== 0)) return false;
    if (
      this.at.buffer !== k.memory.buffer ||
      batch === 0 ||
      (!this.pq && this.featureDim % 32 !== 0) ||
      this.dim % 2 !== 0 ||
      this.tokenizer.opts.maxFeatures > IDS_CAP
    )
      return false;
    this.wasm = k;
    this.wasmBatch = batch;
    return true;
  }

  /** What embeds: 'wasm-simd' (the WebAssembly kernels) or 'js' (pure TypeScript). */
  get kernel(): 'wasm-simd' | 'js' {
    return this.wasm ? 'wasm-simd' : 'js';
  }

  /** The feature ids of a sentence, as the native tokenizer gives them (NGRAM_ID_OFFSET + bucket). */
  tokenize(s: string): Int32Array {
    return this.tokenizer.encode(s);
  }

  /**
   * The centring of each sentence for these options: CenterPolicy's rule with xling/lite's reading
   * of the options (lang 'auto' by default; a code must name a language of the model).
   */
  override centerPlan(sentences: readonly string[], o: LiteEmbedOptions = {}): CenterPlan {
    let lang = o.lang === undefined ? AUTO : o.lang;
    if (lang !== null && lang.trim().toLowerCase() === 'none') lang = null;
    if (lang !== null && lang !== AUTO && lang !== PER_SENTENCE) {
      const known = matchLangCode(lang, this.languages);
      if (known === null)
        throw new Error(
          `xling/lite: the model has no mean vector for lang '${lang}' (it knows ${langList(this.languages) || 'no language'}; or give 'auto', 'auto-per-sentence' or null)`,
        );
      lang = known;
    }
    return super.centerPlan(sentences, { lang, center: o.center });
  }

  /** Vectors of sentences: n × dim rows, L2-normalised, centred as lang and center ask (see LiteEmbedOptions). */
  embedSync(sentences: readonly string[], o: LiteEmbedOptions = {}): Float32Array {
    return this.embedPlanned(sentences, this.centerPlan(sentences, o));
  }

  /**
   * Vectors of sentences: n × dim rows, L2-normalised (unless `normalize` is false and the plan
   * centres nothing), centred by a plan (centerPlan), as the native embed path finishes them
   * (finishRows). Each sentence's ids are written straight into the kernels' memory.
   */
  embedPlanned(sentences: readonly string[], plan: CenterPlan, normalize = true): Float32Array {
    const out = this.project(
      sentences.length,
      (s) => this.tokenizer.encode(sentences[s]!),
      (s, view) => this.tokenizer.encodeInto(sentences[s]!, view),
    );
    finishRows(
      out,
      this.dim,
      this.meansOf(
        plan,
        Array.from(sentences, (_, s) => s),
      ),
      normalize,
    );
    return out;
  }

  /**
   * SentenceEncoder.encode: the rows of token-id sequences (each as tokenize() gives it),
   * L2-normalised when asked (the plain-TypeScript normaliser), into o.into when it has room.
   */
  encode(seqs: Int32Array[], o: EncodeOptions = {}): Float32Array {
    const into = o.into && o.into.length === seqs.length * this.dim ? o.into : undefined;
    const max = this.tokenizer.opts.maxFeatures;
    // the kernels take at most maxFeatures ids a sentence (what the tokenizer gives)
    const fits = seqs.every((q) => q.length <= max);
    const out = this.project(
      seqs.length,
      (s) => seqs[s]!,
      fits
        ? (s, view) => {
            const q = seqs[s]!;
            view.set(q);
            return q.length;
          }
        : null,
      into,
    );
    if (o.normalize) normalizeRows(out, this.dim);
    return out;
  }

  /** encode(): this runtime has no worker of its own behind the interface (xling/lite's pool splits sentences instead). */
  async encodeAsync(seqs: Int32Array[], o: EncodeOptions = {}): Promise<Float32Array> {
    return this.encode(seqs, o);
  }

  /**
   * The projected rows (before normalisation and centring) of n sentences: on the WebAssembly
   * kernels when in use and `fill` can write a sentence's ids into the kernels' memory, else in
   * TypeScript from `ids`.
   */
  private project(n: number, ids: (s: number) => Int32Array, fill: ((s: number, view: Int32Array) => number) | null, into?: Float32Array): Float32Array {
    const out = into ?? new Float32Array(n * this.dim);
    if (this.wasm && fill) this.projectWasm(n, fill, this.wasm, out);
    else this.projectJs(n, ids, out);
    return out;
  }

  private projectJs(n: number, ids: (s: number) => Int32Array, out: Float32Array): void {
    const d = this.dim,
      fd = this.featureDim,
      W = this.W,
      bias = this.b;
    const acc = new Float64Array(fd);
    // four sentences at a time through the projection: each weight is read once for four and the
    // four sums run side by side (one sum alone waits on its previous addition at every step);
    // each sentence's sum still runs over the same terms in the same order, so the same bits
    const hs = [0, 1, 2, 3].map(() => new Float64Array(fd));
    const [h0, h1, h2, h3] = hs as [Float64Array, Float64Array, Float64Array, Float64Array];
    for (let s0 = 0; s0 < n; s0 += 4) {
      const m = Math.min(4, n - s0);
      for (let b = 0; b < 4; b++) {
        if (b < m) this.pooled(ids(s0 + b), acc, hs[b]!);
        else hs[b]!.fill(0);
      }
      const o0 = s0 * d,
        o1 = o0 + d,
        o2 = o1 + d,
        o3 = o2 + d;
      for (let i = 0; i < d; i++) {
        let v0 = bias[i]!,
          v1 = v0,
          v2 = v0,
          v3 = v0;
        const o = i * fd;
        for (let j = 0; j < fd; j++) {
          const w = W[o + j]!;
          v0 += w * h0[j]!;
          v1 += w * h1[j]!;
          v2 += w * h2[j]!;
          v3 += w * h3[j]!;
        }
        out[o0 + i] = v0;
        if (m > 1) out[o1 + i] = v1;
        if (m > 2) out[o2 + i] = v2;
        if (m > 3) out[o3 + i] = v3;
      }
    }
  }

  /** project() by the WebAssembly kernels: batches of sentences' ids written into the kernel's slot, pooled and projected there. */
  private projectWasm(n: number, fill: (s: number, view: Int32Array) => number, k: WasmKernel, out: Float32Array): void {
    const d = this.dim,
      fd = this.featureDim,
      B = this.wasmBatch,
      map = this.bucketMap;
    const max = this.tokenizer.opts.maxFeatures;
    const buf = k.memory.buffer;
    const ids = new Int32Array(buf, k.ids, IDS_CAP),
      offs = new Int32Array(buf, k.offs, B + 1),
      y = new Float32Array(buf, k.y, B * d);
    const dt = this.dtype === 'fp32' ? 0 : this.dtype === 'fp16' ? 1 : 2,
      act = this.tanh ? 1 : 0,
      at = this.at;
    for (let s0 = 0; s0 < n; ) {
      let nb = 0,
        total = 0;
      offs[0] = 0;
      // as many sentences as fit (each has at most maxFeatures ids)
      while (nb < B && s0 + nb < n && (nb === 0 || total + max <= IDS_CAP)) {
        const view = ids.subarray(total, Math.min(IDS_CAP, total + max));
        const c = fill(s0 + nb, view);
        if (map) for (let i = 0; i < c; i++) view[i] = NGRAM_ID_OFFSET + map[view[i]! - NGRAM_ID_OFFSET]!;
        total += c;
        offs[++nb] = total;
      }
      if (this.pq) {
        const q = this.pqAt!;
        k.exports.embedBatchPq(
          at.table,
          this.pq.widths.length,
          q.widths,
          q.codebooks,
          this.pq.K,
          q.basis,
          q.mean,
          fd,
          act,
          at.W,
          at.b,
          d,
          k.ids,
          k.offs,
          nb,
          k.z,
          k.pack,
          k.h,
          k.y,
        );
      } else k.exports.embedBatch(dt, at.table, at.scales, fd, act, at.W, at.b, d, k.ids, k.offs, nb, k.h, k.y);
      out.set(y.subarray(0, nb * d), s0 * d);
      s0 += nb;
    }
  }

  /** The pooled, activated features of a sentence's ids into h (acc: scratch of the feature width). */
  private pooled(ids: Int32Array, acc: Float64Array, h: Float64Array): void {
    const fd = this.featureDim;
    const map = this.bucketMap,
      f32 = this.f32,
      f16 = this.f16,
      i8 = this.i8,
      sc = this.scales,
      lut = this.lut;
    const n = ids.length;
    acc.fill(0);
    // the mean of the feature rows: each weighted 1/n in float32, as the native embedding bag
    const w = Math.fround(1 / Math.max(1, n));
    if (this.pq) this.pqFeatures(ids, acc, w, map);
    else
      for (let k = 0; k < n; k++) {
        let r = ids[k]!;
        if (map) r = NGRAM_ID_OFFSET + map[r - NGRAM_ID_OFFSET]!;
        const o = r * fd;
        if (f32) for (let j = 0; j < fd; j++) acc[j] += w * f32[o + j]!;
        else if (i8) {
          const ws = Math.fround(sc![r]!);
          for (let j = 0; j < fd; j++) acc[j] += w * Math.fround(i8[o + j]! * ws);
        } else for (let j = 0; j < fd; j++) acc[j] += w * lut![f16![o + j]!]!;
      }
    for (let j = 0; j < fd; j++) h[j] = this.tanh ? Math.tanh(Math.fround(acc[j]!)) : Math.fround(acc[j]!);
  }

  /** The mean of a sentence's product-quantised rows into acc: the weighted sum of their K coordinates, then mean · Σw + basis · z. */
  private pqFeatures(ids: Int32Array, acc: Float64Array, w: number, map: Int32Array | null): void {
    const { codes, widths, offsets, codebooks, basis, mean, K, z } = this.pq!;
    const M = widths.length,
      fd = this.featureDim;
    z.fill(0);
    let sumW = 0;
    for (let k = 0; k < ids.length; k++) {
      let r = ids[k]!;
      if (map) r = NGRAM_ID_OFFSET + map[r - NGRAM_ID_OFFSET]!;
      const c0 = r * M;
      for (let j = 0; j < M; j++) {
        const o = offsets[j]!,
          cb = codes[c0 + j]! * K + o,
          wj = widths[j]!;
        for (let t = 0; t < wj; t++) z[o + t] += w * codebooks[cb + t]!;
      }
      sumW += w;
    }
    for (let i = 0; i < fd; i++) {
      let x = sumW * mean[i]!;
      const o = i * K;
      for (let k = 0; k < K; k++) x += basis[o + k]! * z[k]!;
      acc[i] = x;
    }
  }
}

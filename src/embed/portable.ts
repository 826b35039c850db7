// The portable runtime: an exported bag-of-n-grams dual encoder (xling export; the default model)
// run by xling/lite's model (src/lite/model.ts: its WebAssembly SIMD kernels over the model file,
// read into their memory) instead of libtorch. It is what the CLI, the server and the jobs embed
// such models with whether or not the native backend is there: the same vectors (within 1e-5),
// without the second and the hundreds of megabytes that loading libtorch and a dequantised table
// cost. xling/lite's model is a SentenceEncoder (src/models/encoder.ts: token ids in, float32 rows
// out), so the embed path's own tokenizer, batching, normalisation and centring
// (SentenceEncoderModel, InputEmbedder) run unchanged over it. Large batches are split over worker
// threads sharing the kernels' memory (src/lite/pool.ts IdsPool). loadEncoderForRuntime picks the
// runtime: this one for the models it runs, the addon for the others.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { LiteModel } from '../lite/model.js';
import { IdsPool, TextRows } from '../lite/pool.js';
import { parseSafetensors, safetensorsHeaderLength } from '../lite/safetensors.js';
import { arenaMemory, instantiateKernelSync, kernelModuleSync, planArena } from '../lite/wasm.js';
import type { EncodeOptions, SentenceEncoder } from '../models/encoder.js';
import { SavedModelConfig, specOf } from '../models/family.js';
import { nativeProblem } from '../tensor/backend.js';
import { loadLanguageIdentifier } from '../text/lid.js';
import { openXlingTokenizer } from '../text/spec.js';
import type { CenterPlan } from '../util/embed-policy.js';
import { NativeBackendMissing } from '../util/native-missing.js';
import { LoadOptions, loadSentenceEncoder, readModelConfig } from './model-dir.js';
import { SentenceEncoderModel } from './model.js';

/** Batches smaller than this are encoded on the calling thread alone (a worker's round trip costs more). */
const POOLED_MIN = 256;

/** Whether the portable runtime runs a model of this config: a bag-of-n-grams dual encoder (what xling/lite embeds with). */
export function runsPortably(cfg: SavedModelConfig): boolean {
  const m = cfg.model as { unit?: string; body?: string; pooling?: string[] } | undefined;
  return cfg.kind === 'dual' && m?.unit === 'sentence' && (m.body ?? 'none') === 'none' && (m.pooling ?? ['mean']).join() === 'mean';
}

/** The threads that compute: XLING_THREADS (--threads sets it: setComputeThreads), else all cores. */
function computeThreads(): number {
  const n = Number(process.env.XLING_THREADS);
  return Number.isInteger(n) && n >= 1 ? n : availableParallelism();
}

/**
 * xling/lite's model as the embed path's SentenceEncoder: encode() runs the kernels on the calling
 * thread, and a batch of at least POOLED_MIN sentences also on threads − 1 worker threads (started
 * on the first such batch); encodeAsync() runs on the workers alone, the event loop free.
 */
class PortableEncoder implements SentenceEncoder {
  private pool: IdsPool | null = null;

  constructor(
    readonly lite: LiteModel,
    private readonly startPool: (() => IdsPool) | null,
    /** The workers startPool starts. */
    private readonly poolSize: number,
  ) {}

  get dim(): number {
    return this.lite.dim;
  }

  get batchLimits() {
    return this.lite.batchLimits;
  }

  private pooled(n: number): IdsPool | null {
    if (!this.startPool || n < POOLED_MIN || this.pool?.inUse) return null;
    return (this.pool ??= this.startPool());
  }

  encode(seqs: Int32Array[], o: EncodeOptions = {}): Float32Array {
    const pool = this.pooled(seqs.length);
    if (!pool) return this.lite.encode(seqs, o);
    const normalize = !!o.normalize;
    const out = o.into && o.into.length === seqs.length * this.dim ? o.into : new Float32Array(seqs.length * this.dim);
    pool.encode(seqs, this.dim, normalize, out, (part, into) => {
      const rows = this.lite.encode(part, { normalize, into });
      if (rows !== into) into.set(rows);
    });
    return out;
  }

  async encodeAsync(seqs: Int32Array[], o: EncodeOptions = {}): Promise<Float32Array> {
    const pool = this.startPool && !this.pool?.inUse ? (this.pool ??= this.startPool()) : null;
    if (!pool) return this.lite.encode(seqs, o);
    return pool.encodeAsync(seqs, this.dim, !!o.normalize);
  }

  /** The kernels' threads for a streaming caller (textLanes): the pool's workers (started on the first job posted) and the calling thread. */
  lanes(): TextLanes {
    const free = this.startPool && !this.pool?.inUse;
    return {
      workers: free ? this.poolSize : 0,
      minJob: POOLED_MIN,
      queued: (i) => this.pool?.queued(i) ?? 0,
      onWorker: (i, sentences, plan, normalize) => (this.pool ??= this.startPool!()).embedText(i, sentences, plan, normalize),
      here: (sentences, plan, normalize) => {
        const before = this.lite.tokenizer.truncated;
        const rows = this.lite.embedPlanned(sentences, plan, normalize);
        return { rows, truncated: this.lite.tokenizer.truncated - before };
      },
    };
  }

  dispose(): void {
    void this.pool?.close();
    this.pool = null;
  }
}

/** Reads a model file into the WebAssembly kernels' shared memory (room for `threads` scratch slots) and builds xling/lite's model over it. */
function liteModelOf(file: string, cfg: SavedModelConfig, threads: number): { lite: LiteModel; startPool: (() => IdsPool) | null; workers: number } {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const first = new Uint8Array(8);
    readSync(fd, first, 0, 8, 0);
    const module = kernelModuleSync(true);
    const headerLen = safetensorsHeaderLength(first);
    const arena = module && Number.isSafeInteger(headerLen) && headerLen >= 0 ? planArena(size, headerLen, threads, true) : null;
    const memory = arena && arenaMemory(arena);
    const bytes = memory && arena ? new Uint8Array(memory.buffer, arena.base, size) : new Uint8Array(size);
    for (let at = 0; at < size; ) {
      const n = readSync(fd, bytes, at, Math.min(1 << 26, size - at), at);
      if (n <= 0) throw new Error(`${file}: unexpected end of file`);
      at += n;
    }
    const lite = new LiteModel(cfg as ConstructorParameters<typeof LiteModel>[0], parseSafetensors(bytes, file), file);
    if (!module || !memory || !arena || !lite.useWasm(instantiateKernelSync(module, memory, arena, 0))) return { lite, startPool: null, workers: 0 };
    return { lite, startPool: threads > 1 ? () => new IdsPool(threads - 1, memory, arena, cfg, file) : null, workers: threads - 1 };
  } finally {
    closeSync(fd);
  }
}

/**
 * A model directory's sentence encoder on the portable runtime: bag-of-n-grams dual encoders
 * (runsPortably); any other model is refused with the native backend's error (`missing`), or one
 * saying what runs here.
 */
export function loadPortableSentenceEncoder(dir: string, opts: LoadOptions = {}, missing?: NativeBackendMissing): SentenceEncoderModel {
  const cfg = readModelConfig(dir);
  const m = cfg.model as { body?: string } | undefined;
  if (!runsPortably(cfg))
    throw (
      missing ??
      new NativeBackendMissing(
        `${dir} is a ${cfg.kind} model${m?.body && m.body !== 'none' ? ` with a ${m.body} body` : ''}: only exported bag-of-n-grams dual encoders run on the portable runtime`,
      )
    );
  if ((opts.precision ?? 'fp32') !== 'fp32')
    throw new Error(`--precision ${opts.precision}: bfloat16 inference is for imported Hugging Face encoders on the native backend`);
  const { lite, startPool, workers } = liteModelOf(join(dir, 'model.safetensors'), cfg, computeThreads());
  lite.lid = loadLanguageIdentifier(dir);
  const tokenizer = openXlingTokenizer(dir, specOf(dir, cfg));
  return new SentenceEncoderModel(new PortableEncoder(lite, startPool, workers), tokenizer, new Map(lite.centers), cfg, lite.lid);
}

/**
 * Text embedded on the portable runtime's threads, for a caller that streams many lines
 * (InputEmbedder.embedStream): sentences go to the workers as text (tokenised there), or are
 * embedded on the calling thread; rows are centred by a plan and finished as
 * SentenceEncoderModel.embed finishes them (the same vectors).
 */
export interface TextLanes {
  readonly workers: number;
  /** Jobs of fewer sentences are embedded on the calling thread (a worker's start and round trip cost more). */
  readonly minJob: number;
  /** Jobs posted to worker i and not answered yet. */
  queued(i: number): number;
  onWorker(i: number, sentences: string[], plan: CenterPlan, normalize: boolean): Promise<TextRows>;
  here(sentences: string[], plan: CenterPlan, normalize: boolean): TextRows;
}

/** A model's text lanes where it runs on the portable runtime's WebAssembly kernels, else null. */
export function textLanes(m: SentenceEncoderModel): TextLanes | null {
  return onKernels(m) ? (m.encoder as PortableEncoder).lanes() : null;
}

/** Whether a model runs on the portable runtime's WebAssembly kernels (not its much slower TypeScript fallback). */
export function onKernels(m: SentenceEncoderModel): boolean {
  return m.encoder instanceof PortableEncoder && m.encoder.lite.kernel === 'wasm-simd';
}

/**
 * A model directory's sentence encoder for a command: bag-of-n-grams dual encoders (the default
 * model among them) on the portable runtime, which loads neither libtorch nor faiss (where its
 * WebAssembly kernels cannot run and the addon is there, on the addon: the TypeScript fallback is
 * many times slower); other models on the native backend, or NativeBackendMissing where it is not
 * there.
 */
export function loadEncoderForRuntime(dir: string, opts: LoadOptions = {}): SentenceEncoderModel {
  if (runsPortably(readModelConfig(dir)) && (opts.precision ?? 'fp32') === 'fp32') {
    const model = loadPortableSentenceEncoder(dir, opts);
    if (onKernels(model) || nativeProblem()) return model;
  }
  const missing = nativeProblem();
  if (missing) return loadPortableSentenceEncoder(dir, opts, missing);
  return loadSentenceEncoder(dir, opts);
}

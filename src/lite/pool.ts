// Node worker threads for xling/lite: every worker views the same model bytes (a
// SharedArrayBuffer), a batch is cut into one contiguous slice per worker, rows come back in order.
// WorkerPool embeds sentences for loadModel's threads option; IdsPool encodes token ids for the
// CLI's portable runtime (src/embed/portable.ts), whose callers wait synchronously.
import { MessageChannel, MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { CenterPlan, LiteEmbedOptions, LiteModel } from './model.js';
import { Arena, WasmMemory } from './wasm.js';

/** What the workers view: the model file's bytes (a SharedArrayBuffer), or the kernels' shared memory holding it. */
export type PoolSource = { bytes: Uint8Array } | { memory: WasmMemory; arena: Arena };

interface Pending {
  resolve(v: Float32Array): void;
  reject(e: Error): void;
}

export class WorkerPool {
  private readonly workers: Worker[] = [];
  private readonly pending = new Map<number, Pending>();
  private next = 0;
  private readonly started: Promise<void>[] = [];

  constructor(n: number, source: PoolSource, config: unknown, where: string) {
    for (let i = 0; i < n; i++) {
      // worker i uses the kernels' scratch slot i + 1 (slot 0 is the calling thread's)
      const w = new Worker(new URL('./worker.js', import.meta.url), { workerData: { ...source, slot: i + 1, config, where } });
      this.started.push(
        new Promise((resolve, reject) => {
          this.pending.set(-1 - i, { resolve: () => resolve(), reject });
        }),
      );
      w.on('message', (m: { id: number; rows?: Float32Array; error?: string }) => {
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        if (m.error !== undefined) p.reject(new Error(m.error));
        else p.resolve(m.rows!);
      });
      w.on('error', (e) => {
        for (const p of this.pending.values()) p.reject(e);
        this.pending.clear();
      });
      w.unref();
      this.workers.push(w);
    }
  }

  /** Resolves when every worker has built its model (or rejects with the first worker's error). */
  async ready(): Promise<void> {
    // the workers are unref'd; while they start they keep the process alive
    for (const w of this.workers) w.ref();
    try {
      await Promise.all(this.started);
    } catch (e) {
      await this.close();
      throw e;
    } finally {
      for (const w of this.workers) w.unref();
    }
  }

  async embed(model: LiteModel, sentences: readonly string[], o: LiteEmbedOptions): Promise<Float32Array> {
    const d = model.dim,
      n = sentences.length,
      k = this.workers.length;
    // the centring is decided over the whole input here ('auto' identifies its language), then applied in the slices
    const plan = model.centerPlan(sentences, o);
    // small batches: a round trip to a worker costs more than embedding them here
    if (n < 64 * k) return model.embedPlanned(sentences, plan);
    const out = new Float32Array(n * d);
    // the workers are unref'd (an idle pool never keeps the process alive); while they work they count
    for (const w of this.workers) w.ref();
    try {
      await this.run(sentences, plan, out, d);
    } finally {
      if (!this.pending.size) for (const w of this.workers) w.unref();
    }
    return out;
  }

  private async run(sentences: readonly string[], plan: CenterPlan, out: Float32Array, d: number): Promise<void> {
    const n = sentences.length,
      k = this.workers.length;
    await Promise.all(
      this.workers.map((w, i) => {
        const lo = Math.floor((i * n) / k),
          hi = Math.floor(((i + 1) * n) / k);
        const id = this.next++;
        return new Promise<void>((resolve, reject) => {
          this.pending.set(id, {
            resolve: (rows) => {
              out.set(rows, lo * d);
              resolve();
            },
            reject,
          });
          w.postMessage({ id, sentences: sentences.slice(lo, hi), plan: Array.isArray(plan) ? plan.slice(lo, hi) : plan });
        });
      }),
    );
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

/** A job of an IdsPool's worker: sentences' token ids (ids[offs[s] .. offs[s+1])), rows back normalised or not. */
export interface IdsJob {
  ids: Int32Array;
  offs: Int32Array;
  normalize: boolean;
}

/** A text job's rows (n × dim) and the number of its sentences whose features were cut at the model's maximum. */
export interface TextRows {
  rows: Float32Array;
  truncated: number;
}

interface IdsWorker {
  worker: Worker;
  port: MessagePort;
  flag: Int32Array;
  /** Text jobs posted and not answered yet. */
  texts: Map<number, { resolve(r: TextRows): void; reject(e: Error): void }>;
}

/**
 * Worker threads that encode token ids (SentenceEncoder.encode) for a caller that waits for them
 * synchronously, as SentenceEncoder.encode does: each worker has its own message port and a
 * shared flag; the caller posts a worker its slice, computes its own slice meanwhile, then waits on
 * the flag (Atomics.wait, as a worker's reply cannot arrive through the event loop of a thread that
 * is busy) and takes the rows off the port (receiveMessageOnPort). encodeAsync waits without
 * blocking the event loop (Atomics.waitAsync) and leaves the calling thread free. embedText gives
 * a worker text instead (tokenised there; replies through the event loop): a streaming caller
 * keeps every worker fed and its own thread free for reading and writing.
 */
export class IdsPool {
  private readonly workers: IdsWorker[] = [];
  private busy = false;
  private nextText = 0;

  constructor(n: number, memory: WasmMemory, arena: Arena, config: unknown, where: string) {
    for (let i = 0; i < n; i++) {
      const { port1, port2 } = new MessageChannel();
      const flag = new Int32Array(new SharedArrayBuffer(4));
      // worker i uses the kernels' scratch slot i + 1 (slot 0 is the calling thread's)
      const worker = new Worker(new URL('./worker.js', import.meta.url), {
        workerData: { memory, arena, slot: i + 1, config, where, port: port2, flag },
        transferList: [port2],
      });
      const w: IdsWorker = { worker, port: port1, flag, texts: new Map() };
      worker.on('message', (m: { id: number; rows?: Float32Array; truncated?: number; error?: string }) => textReply(w, m));
      worker.on('error', (e) => failTexts(w, e));
      worker.on('exit', (code) => failTexts(w, new Error(`xling/lite: a worker thread exited (code ${code})`)));
      // after the listeners (a 'message' listener refs the worker's port): an idle pool never keeps the process alive
      worker.unref();
      port1.unref();
      this.workers.push(w);
    }
  }

  /** Text jobs posted to worker i (embedText) and not answered yet. */
  queued(i: number): number {
    return this.workers[i]!.texts.size;
  }

  /**
   * The rows of sentences, tokenised and embedded on worker i, centred by plan and finished as
   * LiteModel.embedPlanned does (normalised unless `normalize` is false and nothing is centred).
   * Jobs of one worker run in the order posted; the worker keeps the process alive meanwhile.
   */
  embedText(i: number, sentences: string[], plan: CenterPlan, normalize: boolean): Promise<TextRows> {
    const w = this.workers[i]!,
      id = this.nextText++;
    return new Promise<TextRows>((resolve, reject) => {
      if (!w.texts.size) w.worker.ref();
      w.texts.set(id, { resolve, reject });
      w.worker.postMessage({ id, sentences, plan, normalize });
    });
  }

  /** Whether a job is in flight (encodeAsync): a synchronous caller then computes alone. */
  get inUse(): boolean {
    return this.busy;
  }

  /** Threads that compute a job: the workers and, for encode, the calling thread. */
  get size(): number {
    return this.workers.length;
  }

  /**
   * The rows of seqs (dim floats each) into out: slices by their token counts, the first to
   * `here` (the calling thread), the others to the workers.
   */
  encode(seqs: Int32Array[], dim: number, normalize: boolean, out: Float32Array, here: (part: Int32Array[], into: Float32Array) => void): void {
    const cuts = slices(seqs, this.workers.length + 1);
    this.busy = true;
    try {
      this.workers.forEach((w, i) => post(w, seqs, cuts[i + 1]!, cuts[i + 2]!, normalize));
      here(seqs.slice(0, cuts[1]), out.subarray(0, cuts[1]! * dim));
      this.workers.forEach((w, i) => {
        while (Atomics.wait(w.flag, 0, 0, 1000) === 'timed-out');
        out.set(reply(w), cuts[i + 1]! * dim);
      });
    } finally {
      this.busy = false;
    }
  }

  /** encode() on the workers alone, the calling thread's event loop free meanwhile. */
  async encodeAsync(seqs: Int32Array[], dim: number, normalize: boolean): Promise<Float32Array> {
    const cuts = slices(seqs, this.workers.length);
    const out = new Float32Array(seqs.length * dim);
    this.busy = true;
    try {
      this.workers.forEach((w, i) => post(w, seqs, cuts[i]!, cuts[i + 1]!, normalize));
      for (const [i, w] of this.workers.entries()) {
        const waited = waitAsync(w.flag, 0, 0);
        if (waited.async) await waited.value;
        out.set(reply(w), cuts[i]! * dim);
      }
    } finally {
      this.busy = false;
    }
    return out;
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.worker.terminate()));
  }
}

function textReply(w: IdsWorker, m: { id: number; rows?: Float32Array; truncated?: number; error?: string }): void {
  const job = w.texts.get(m.id);
  if (!job) return;
  w.texts.delete(m.id);
  if (!w.texts.size) w.worker.unref();
  if (m.error !== undefined) job.reject(new Error(m.error));
  else job.resolve({ rows: m.rows!, truncated: m.truncated ?? 0 });
}

function failTexts(w: IdsWorker, e: Error): void {
  for (const job of w.texts.values()) job.reject(e);
  w.texts.clear();
  w.worker.unref();
}

/** Atomics.waitAsync (Node 16+; not in this project's TypeScript library). */
const waitAsync = (Atomics as unknown as { waitAsync(a: Int32Array, i: number, v: number): { async: boolean; value: Promise<string> | string } }).waitAsync;

/** k + 1 cut points of seqs into k runs of about equal token counts. */
function slices(seqs: Int32Array[], k: number): number[] {
  let total = 0;
  for (const s of seqs) total += s.length + 1;
  const cuts = [0];
  let acc = 0,
    next = 1;
  for (let i = 0; i < seqs.length && next < k; i++) {
    acc += seqs[i]!.length + 1;
    while (next < k && acc >= (total * next) / k) {
      cuts.push(i + 1);
      next++;
    }
  }
  while (cuts.length <= k) cuts.push(seqs.length);
  return cuts;
}

function post(w: { port: MessagePort; flag: Int32Array }, seqs: Int32Array[], lo: number, hi: number, normalize: boolean): void {
  const offs = new Int32Array(hi - lo + 1);
  for (let s = lo; s < hi; s++) offs[s - lo + 1] = offs[s - lo]! + seqs[s]!.length;
  const ids = new Int32Array(offs[hi - lo]!);
  for (let s = lo; s < hi; s++) ids.set(seqs[s]!, offs[s - lo]!);
  Atomics.store(w.flag, 0, 0);
  const job: IdsJob = { ids, offs, normalize };
  w.port.postMessage(job, [ids.buffer, offs.buffer]);
}

function reply(w: { port: MessagePort }): Float32Array {
  const m = receiveMessageOnPort(w.port)?.message as { rows?: Float32Array; error?: string } | undefined;
  if (!m) throw new Error('xling/lite: a worker thread signalled without a reply');
  if (m.error !== undefined) throw new Error(m.error);
  return m.rows!;
}

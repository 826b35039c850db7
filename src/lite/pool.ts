// Node worker threads for xling/lite: every worker views the same model bytes (a
// SharedArrayBuffer), a batch is cut into one contiguous slice per worker, rows come back in order.
import { Worker } from 'node:worker_threads';
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

// Dynamic batching for the server: the sentences of concurrent requests are pooled into batches of
// up to a token budget (and a sentence cap), each encoded with the encoder's async entry point
// (heavy kernels on a worker thread, the event loop free), and the rows handed back to each
// request in order. One batch runs at a time: on 2 cores a second concurrent batch only competes.
// A row's vector never depends on the other rows of its batch (language identification and
// centring are per sentence, in the server, on the text).
import { SentenceEncoder } from '../models/encoder.js';

interface Job { seqs: Int32Array[]; tokens: number; signal?: AbortSignal; resolve: (r: Embedded) => void; reject: (e: unknown) => void }

export interface BatchStats { sentences: number; tokens: number; requests: number; seconds: number }

/** A request's raw (unnormalised) vectors [n, dim]. */
export interface Embedded { rows: Float32Array }

export class DynamicBatcher {
  private readonly queue: Job[] = [];
  private running = false;
  constructor(private readonly encoder: SentenceEncoder, readonly maxBatchTokens: number, readonly maxBatchSentences = 4096,
    private readonly onBatch?: (s: BatchStats) => void) {}

  /** Sentences waiting (not yet in a running batch). */
  get queueDepth(): number { return this.queue.reduce((a, j) => a + j.seqs.length, 0); }

  /**
   * Raw vectors of these token sequences. A job whose signal is aborted (its client went away)
   * before its batch starts is dropped, not encoded.
   */
  embed(seqs: Int32Array[], o: { signal?: AbortSignal } = {}): Promise<Embedded> {
    if (o.signal?.aborted) return Promise.reject(new Error('the request was aborted'));
    if (!seqs.length) return Promise.resolve({ rows: new Float32Array(0) });
    const tokens = seqs.reduce((a, s) => a + s.length, 0);
    return new Promise((resolve, reject) => {
      this.queue.push({ seqs, tokens, signal: o.signal, resolve, reject });
      if (!this.running) void this.run();
    });
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length) {
        // whole requests, first come first served, up to the budget (a larger request goes alone)
        const jobs: Job[] = [];
        let tokens = 0, sentences = 0;
        while (this.queue.length) {
          const j = this.queue[0]!;
          if (j.signal?.aborted) { this.queue.shift(); j.reject(new Error('the request was aborted')); continue; }
          if (jobs.length && (tokens + j.tokens > this.maxBatchTokens || sentences + j.seqs.length > this.maxBatchSentences)) break;
          jobs.push(this.queue.shift()!);
          tokens += j.tokens; sentences += j.seqs.length;
        }
        if (!jobs.length) continue;
        const t0 = performance.now();
        try {
          const rows = await this.encoder.encodeAsync(jobs.flatMap((j) => j.seqs));
          const d = this.encoder.dim;
          let at = 0;
          for (const j of jobs) {
            const n = j.seqs.length;
            j.resolve({ rows: rows.slice(at * d, (at + n) * d) });
            at += n;
          }
        } catch (e) {
          for (const j of jobs) j.reject(e);
        }
        this.onBatch?.({ sentences, tokens, requests: jobs.length, seconds: (performance.now() - t0) / 1000 });
      }
    } finally {
      this.running = false;
    }
  }
}

// Dynamic batching for the server: the sentences of concurrent requests are pooled into batches of
// up to a token budget (and a sentence cap), each encoded with the encoder's async entry point
// (heavy kernels on a worker thread, the event loop free), and the rows handed back to each
// request in order. One batch runs at a time: on 2 cores a second concurrent batch only competes;
// requests that arrive meanwhile wait and make the next batch (continuous batching, as TEI's).
// The texts that need their language identified are sent to the identification threads as they
// arrive (those of one event-loop turn together), so that identification runs while earlier
// batches are encoded, and a batch's rows are post-processed in one pass (`finish`: normalisation
// and centring), not once per request.
// A row's vector never depends on the other rows of its batch: identification is per text, and
// the encoder, normalisation and centring are per row.
import { SentenceEncoder } from '../models/encoder.js';
import type { Identified } from './identify.js';

interface Job<M> {
  seqs: Int32Array[];
  tokens: number;
  texts: (string | null)[] | null;
  meta: M;
  signal?: AbortSignal;
  /** The identification of its non-null texts, under way since it arrived. */
  found: Promise<(Identified | null)[]> | null;
  resolve: (r: Embedded) => void;
  reject: (e: unknown) => void;
}

/** Texts per identification call (a turn's texts are sent in groups of about this many). */
const IDENTIFY_GROUP = 256;

export interface BatchStats {
  sentences: number;
  tokens: number;
  requests: number;
  seconds: number;
}

/** A request's vectors [n, dim] (raw, or as `finish` left them) and, when asked, each input's identified language. */
export interface Embedded {
  rows: Float32Array;
  identified: (Identified | null)[] | null;
}

/** One request's part of a batch, for `finish`: its rows (a view into the batch's rows) and identifications. */
export interface BatchPart<M> {
  meta: M;
  rows: Float32Array;
  identified: (Identified | null)[] | null;
}

export interface BatcherOptions<M> {
  /** Identifies texts (in order; null: no evidence); without it nothing is identified. */
  identify?: (texts: string[]) => Promise<(Identified | null)[]>;
  /** Post-processes a batch's rows in place once they and the identifications are in (`normalized`: the encoder L2-normalised them). */
  finish?: (rows: Float32Array, parts: BatchPart<M>[], normalized: boolean) => void;
  /** Whether a job's rows are wanted L2-normalised whatever else: when every job of a batch says so, the encoder normalises them (one copy fewer). */
  normalizes?: (meta: M) => boolean;
}

export class DynamicBatcher<M = undefined> {
  private readonly queue: Job<M>[] = [];
  private running = false;
  private waiting = 0;
  /** Texts to identify, sent together at the end of this event-loop turn. */
  private toIdentify: { texts: string[]; resolve: (r: (Identified | null)[]) => void; reject: (e: unknown) => void }[] = [];
  constructor(
    private readonly encoder: SentenceEncoder,
    readonly maxBatchTokens: number,
    readonly maxBatchSentences = 4096,
    private readonly onBatch?: (s: BatchStats) => void,
    private readonly o: BatcherOptions<M> = {},
  ) {}

  /** Sentences waiting (not yet in a running batch). */
  get queueDepth(): number {
    return this.waiting;
  }

  /**
   * Vectors of these token sequences; `texts` (one per sequence, null: none) are identified
   * alongside. A job whose signal is aborted (its client went away) before its batch starts is
   * dropped, not encoded.
   */
  embed(seqs: Int32Array[], o: { signal?: AbortSignal; texts?: (string | null)[] | null; meta?: M } = {}): Promise<Embedded> {
    if (o.signal?.aborted) return Promise.reject(new Error('the request was aborted'));
    if (!seqs.length) return Promise.resolve({ rows: new Float32Array(0), identified: o.texts ? [] : null });
    if (o.texts && o.texts.length !== seqs.length) return Promise.reject(new Error(`${o.texts.length} texts for ${seqs.length} sequences`));
    let tokens = 0;
    for (const s of seqs) tokens += s.length;
    const texts = o.texts ?? null;
    const wanted = texts && this.o.identify ? texts.filter((t): t is string => t !== null) : [];
    const found = wanted.length ? this.identifySoon(wanted) : null;
    // a job dropped before its batch never reads its identification
    found?.catch(() => {});
    return new Promise((resolve, reject) => {
      this.queue.push({ seqs, tokens, texts, found, meta: o.meta as M, signal: o.signal, resolve, reject });
      this.waiting += seqs.length;
      if (!this.running) void this.run();
    });
  }

  /** Identifies texts together with the others that arrive in this event-loop turn. */
  private identifySoon(texts: string[]): Promise<(Identified | null)[]> {
    return new Promise((resolve, reject) => {
      if (!this.toIdentify.length) setImmediate(() => this.flushIdentify());
      this.toIdentify.push({ texts, resolve, reject });
    });
  }

  /** Sends the turn's texts in groups of about IDENTIFY_GROUP (in arrival order: the first requests' come back first). */
  private flushIdentify(): void {
    const waiting = this.toIdentify;
    this.toIdentify = [];
    for (let i = 0; i < waiting.length; ) {
      const group: typeof waiting = [],
        all: string[] = [];
      while (i < waiting.length && (!group.length || all.length + waiting[i]!.texts.length <= IDENTIFY_GROUP)) {
        const w = waiting[i++]!;
        group.push(w);
        for (const t of w.texts) all.push(t);
      }
      this.o.identify!(all).then(
        (r) => {
          let at = 0;
          for (const w of group) {
            w.resolve(r.slice(at, at + w.texts.length));
            at += w.texts.length;
          }
        },
        (e) => {
          for (const w of group) w.reject(e);
        },
      );
    }
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length) {
        // whole requests, first come first served, up to the budget (a larger request goes alone)
        const jobs: Job<M>[] = [];
        let tokens = 0,
          sentences = 0;
        while (this.queue.length) {
          const j = this.queue[0]!;
          if (j.signal?.aborted) {
            this.queue.shift();
            this.waiting -= j.seqs.length;
            j.reject(new Error('the request was aborted'));
            continue;
          }
          if (jobs.length && (tokens + j.tokens > this.maxBatchTokens || sentences + j.seqs.length > this.maxBatchSentences)) break;
          jobs.push(this.queue.shift()!);
          this.waiting -= j.seqs.length;
          tokens += j.tokens;
          sentences += j.seqs.length;
        }
        if (!jobs.length) continue;
        const t0 = performance.now();
        try {
          const seqs: Int32Array[] = [];
          for (const j of jobs) for (const s of j.seqs) seqs.push(s);
          const normalized = !!this.o.normalizes && jobs.every((j) => this.o.normalizes!(j.meta));
          const [rows, found] = await Promise.all([this.encoder.encodeAsync(seqs, { normalize: normalized }), Promise.all(jobs.map((j) => j.found))]);
          const d = this.encoder.dim,
            parts: BatchPart<M>[] = [];
          let at = 0;
          jobs.forEach((j, i) => {
            const n = j.seqs.length,
              f = found[i];
            let t = 0;
            const identified = j.texts ? j.texts.map((x) => (x !== null && f ? (f[t++] ?? null) : null)) : null;
            parts.push({ meta: j.meta, rows: rows.subarray(at * d, (at + n) * d), identified });
            at += n;
          });
          this.o.finish?.(rows, parts, normalized);
          jobs.forEach((j, i) => j.resolve({ rows: parts[i]!.rows, identified: parts[i]!.identified }));
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

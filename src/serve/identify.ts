// Language identification of a server batch's texts off the event loop: worker threads
// (lid-worker.ts), each with its own copy of the model's identifier, identify a batch's texts while
// the batch is being encoded. Each text is identified on its own, exactly as
// SentenceEncoderModel.sentenceCenter does (a blank text gives no evidence: null), so a text's
// language never depends on its batch-mates. A few texts are identified on the calling thread (a
// round trip costs more than they do); a worker that fails is replaced, and its texts identified here.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { LanguageIdentifier } from '../text/lid-core.js';
import type { IdentifyReply, IdentifyRequest } from './lid-worker.js';

export interface Identified {
  lang: string;
  confidence: number;
}

/** Batches of at most this many texts are identified on the calling thread. */
const INLINE_TEXTS = 4;
/** A batch is split over the workers in pieces of at least this many texts. */
const MIN_PIECE = 64;

export class LanguageIdentification {
  private readonly workers: (Worker | null)[];
  private next = 0;
  private seq = 0;
  private readonly pending = new Map<number, { resolve: (r: (Identified | null)[]) => void; texts: string[]; worker: number }>();
  private closed = false;

  /** workers: threads to use (default: one per core beyond the event loop's, 1 to 4). */
  constructor(
    private readonly lid: LanguageIdentifier,
    workers = Math.max(1, Math.min(4, availableParallelism() - 1)),
  ) {
    this.workers = Array.from({ length: workers }, () => null);
    // started now: a worker's first start (its module, the identifier's tables) is not a request's wait
    for (let w = 0; w < workers; w++) {
      try {
        this.workers[w] = this.start(w);
      } catch {
        /* started on first use, or identified here */
      }
    }
  }

  /** The identified language of each text (null: no evidence), in order. */
  identify(texts: string[]): Promise<(Identified | null)[]> {
    if (texts.length <= INLINE_TEXTS || this.closed) return Promise.resolve(texts.map((t) => this.here(t)));
    const pieces = Math.max(1, Math.min(this.workers.length, Math.floor(texts.length / MIN_PIECE)));
    if (pieces === 1) return this.send(this.pick(), texts);
    const size = Math.ceil(texts.length / pieces),
      parts: Promise<(Identified | null)[]>[] = [];
    for (let at = 0; at < texts.length; at += size) parts.push(this.send(this.pick(), texts.slice(at, at + size)));
    return Promise.all(parts).then((r) => r.flat());
  }

  private here(t: string): Identified | null {
    return t.trim() ? this.lid.identify(t) : null;
  }

  private pick(): number {
    const w = this.next;
    this.next = (this.next + 1) % this.workers.length;
    return w;
  }

  private send(w: number, texts: string[]): Promise<(Identified | null)[]> {
    let worker: Worker;
    try {
      worker = this.workers[w] ??= this.start(w);
    } catch {
      return Promise.resolve(texts.map((t) => this.here(t)));
    }
    const id = this.seq++;
    // blank texts give no evidence (sentenceCenter's rule): they are not sent
    const sent: string[] = [],
      at: number[] = [];
    texts.forEach((t, i) => {
      if (t.trim()) {
        sent.push(t);
        at.push(i);
      }
    });
    return new Promise<(Identified | null)[]>((resolve) => {
      this.pending.set(id, {
        texts: sent,
        worker: w,
        resolve: (r) => {
          const out = texts.map(() => null as Identified | null);
          at.forEach((i, k) => {
            out[i] = r[k]!;
          });
          resolve(out);
        },
      });
      worker.postMessage({ id, texts: sent } satisfies IdentifyRequest);
    });
  }

  private start(w: number): Worker {
    const worker = new Worker(new URL('./lid-worker.js', import.meta.url), { workerData: { lid: this.lid.toJSON() } });
    const langs = this.lid.languages;
    worker.on('message', (m: IdentifyReply) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.error !== undefined || !m.lang || !m.confidence) {
        p.resolve(p.texts.map((t) => this.here(t)));
        return;
      }
      const lang = m.lang,
        conf = m.confidence;
      p.resolve(p.texts.map((_, i) => (lang[i]! < 0 ? null : { lang: langs[lang[i]!]!, confidence: conf[i]! })));
    });
    // a worker that dies: what it held is identified here, and the next batch starts a new one
    const fail = () => {
      if (this.workers[w] === worker) this.workers[w] = null;
      for (const [id, p] of this.pending)
        if (p.worker === w) {
          this.pending.delete(id);
          p.resolve(p.texts.map((t) => this.here(t)));
        }
    };
    worker.on('error', fail);
    worker.on('exit', fail);
    worker.unref();
    return worker;
  }

  async close(): Promise<void> {
    this.closed = true;
    const ws = this.workers.splice(0).filter((w): w is Worker => !!w);
    await Promise.all(ws.map((w) => w.terminate()));
  }
}

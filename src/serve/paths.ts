// Minimax trajectories for the server, off its event loop: a search over a graph of millions of
// nodes reads rows for seconds, which on the event loop would stall every other request. One
// worker thread (path-worker.ts) holds its own reader of the graph; requests queue there.
import { Worker } from 'node:worker_threads';
import type { MinimaxPath } from '../graph/query.js';
import type { PathRequest } from './path-worker.js';

export class PathFinder {
  private worker: Worker | null = null;
  private next = 0;
  private readonly pending = new Map<number, { resolve: (p: MinimaxPath | null) => void; reject: (e: Error) => void }>();
  constructor(private readonly graphDir: string) {}

  find(from: number, to: number, undirected: boolean): Promise<MinimaxPath | null> {
    const w = (this.worker ??= this.start());
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      w.postMessage({ id, from, to, undirected } satisfies PathRequest);
    });
  }

  private start(): Worker {
    const w = new Worker(new URL('./path-worker.js', import.meta.url), { workerData: { dir: this.graphDir } });
    w.on('message', (m: { id: number; path?: MinimaxPath | null; error?: string }) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.error !== undefined) p.reject(new Error(m.error));
      else p.resolve(m.path ?? null);
    });
    // a worker that dies fails what it held; the next request starts a new one
    const fail = (e: Error) => {
      if (this.worker === w) this.worker = null;
      for (const p of this.pending.values()) p.reject(e);
      this.pending.clear();
    };
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`the path worker exited (${code})`)));
    w.unref();
    return w;
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    if (w) await w.terminate();
  }
}

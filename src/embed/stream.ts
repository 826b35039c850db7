// The one lines → vectors streamer (xling embed, the cluster worker's shards, the graph builder's
// embed step): chunks of input are embedded one at a time and their rows handed to a sink in
// order, with a callback after each chunk (progress, cancellation, yielding to the event loop);
// the sink is closed at the end and aborted on an error, so no partial output is left. streamJobs
// is the same as a pipeline over worker threads (xling embed on the portable runtime).
import { closeSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { float32ToFloat16 } from '../io/half.js';
import { jsonLinesOfRows } from '../io/json.js';
import { NpyWriter } from '../io/npy.js';
import { releaseTemp, tempPathFor } from '../util/atomic.js';

/** Where streamed vectors go, in row order. */
export interface VectorSink {
  append(rows: Float32Array): void;
  /** Resolves when what was appended may be followed by more (a full pipe drained). */
  flush?(): Promise<void>;
  close(): void;
  abort(): void;
}

/**
 * JSON lines: one array of `dim` numbers a row (float32's shortest decimals). A file is written
 * atomically (temporary, renamed on close); '-' streams to standard output, waiting while its pipe is full.
 */
export function jsonLinesSink(path: string, dim: number): VectorSink {
  if (path === '-') {
    let full = false;
    return {
      append(rows) {
        full = !process.stdout.write(jsonLinesOfRows(rows, dim)) || full;
      },
      async flush() {
        if (full) await new Promise((r) => process.stdout.once('drain', r));
        full = false;
      },
      close() {},
      abort() {},
    };
  }
  return byteFileSink(path, (rows) => jsonLinesOfRows(rows, dim));
}

/**
 * Rows written as the bytes `encode` makes of them (JSON lines, raw float32), to a file written
 * atomically: a temporary, renamed on close, removed on abort.
 */
export function byteFileSink(path: string, encode: (rows: Float32Array) => Uint8Array): VectorSink {
  const tmp = tempPathFor(path);
  const fd = openSync(tmp, 'w');
  const end = (keep: boolean) => {
    try {
      closeSync(fd);
    } catch {
      /* closed */
    }
    if (keep) renameSync(tmp, path);
    else rmSync(tmp, { force: true });
    releaseTemp(tmp);
  };
  return {
    append(rows) {
      writeSync(fd, encode(rows));
    },
    close: () => end(true),
    abort: () => end(false),
  };
}

/** A .npy of `dim` columns (float32, or float16 converted from the float32 rows), written atomically (temporary, renamed on close). */
export function npySink(path: string, dim: number, dtype: 'float32' | 'float16' = 'float32'): VectorSink {
  const w = NpyWriter.open(path, dim, dtype);
  return {
    append(rows) {
      w.append(dtype === 'float16' ? float32ToFloat16(rows) : rows);
    },
    close() {
      w.close();
    },
    abort() {
      w.abort();
    },
  };
}

/** Items of an async source in arrays of at most `size` (the last one shorter). */
export async function* chunksOf<T>(items: AsyncIterable<T>, size: number): AsyncGenerator<T[]> {
  let buf: T[] = [];
  for await (const x of items) {
    buf.push(x);
    if (buf.length >= size) {
      yield buf;
      buf = [];
    }
  }
  if (buf.length) yield buf;
}

/**
 * Embeds every chunk (embed returns its rows, `dim` floats each) into sink; after(rows of the
 * chunk, rows so far) runs after each chunk and may throw to stop. Returns the rows written.
 */
export async function streamEmbeddings<T>(
  chunks: AsyncIterable<T>,
  dim: number,
  embed: (chunk: T) => Float32Array | Promise<Float32Array>,
  sink: VectorSink,
  after?: (rows: number, total: number) => void | Promise<void>,
): Promise<number> {
  let total = 0;
  try {
    for await (const c of chunks) {
      const v = await embed(c);
      sink.append(v);
      await sink.flush?.();
      const n = v.length / dim;
      total += n;
      await after?.(n, total);
    }
    sink.close();
  } catch (e) {
    sink.abort();
    throw e;
  }
  return total;
}

/**
 * Where streamJobs runs its jobs: on worker threads (each with a queue of its own), or on the
 * calling thread.
 */
export interface JobRunner<T> {
  /** Worker threads taking jobs (0: every job runs on the calling thread). */
  readonly workers: number;
  /** Whether a job is worth a worker's round trip (false: computed on the calling thread). */
  worthPosting(job: T): boolean;
  /** Jobs posted to worker i and not answered yet. */
  queued(i: number): number;
  /** A job's rows, computed on worker i. */
  onWorker(i: number, job: T): Promise<Float32Array>;
  /** A job's rows, computed on the calling thread. */
  here(job: T): Float32Array;
}

/** A job of streamJobs in flight: its rows once they are there (or its error). */
interface InFlight {
  rows: Float32Array | null;
  error: unknown;
  settled: Promise<void>;
}

/**
 * streamEmbeddings as a pipeline: each chunk read becomes a job, posted to a worker with fewer than
 * `depth` jobs queued, or (every worker busy) computed on the calling thread; rows are written to
 * the sink in input order as soon as the jobs before them are written, so reading, embedding and
 * writing overlap and all threads compute. At most `depth` jobs a worker plus two are held at once.
 */
export async function streamJobs<T>(
  chunks: AsyncIterable<T>,
  dim: number,
  runner: JobRunner<T>,
  sink: VectorSink,
  after?: (rows: number, total: number) => void | Promise<void>,
  depth = 2,
): Promise<number> {
  const ahead: InFlight[] = [];
  const cap = depth * runner.workers + 2;
  let total = 0;
  // writes the jobs at the head that are done (all: every job, waiting for each)
  const flush = async (all: boolean) => {
    while (ahead.length && (all || ahead[0]!.rows || ahead[0]!.error !== null || ahead.length > cap)) {
      const job = ahead.shift()!;
      await job.settled;
      if (job.error !== null) throw job.error;
      sink.append(job.rows!);
      const n = job.rows!.length / dim;
      total += n;
      await after?.(n, total);
    }
  };
  try {
    for await (const c of chunks) {
      ahead.push(start(runner, c, depth));
      await flush(false);
    }
    await flush(true);
    sink.close();
  } catch (e) {
    sink.abort();
    await Promise.all(ahead.map((j) => j.settled));
    throw e;
  }
  return total;
}

/** A job posted to the least busy worker with room in its queue, else computed here. */
function start<T>(runner: JobRunner<T>, job: T, depth: number): InFlight {
  let best = -1;
  for (let i = 0; i < runner.workers && runner.worthPosting(job); i++)
    if (runner.queued(i) < depth && (best < 0 || runner.queued(i) < runner.queued(best))) best = i;
  if (best < 0) {
    try {
      return { rows: runner.here(job), error: null, settled: Promise.resolve() };
    } catch (e) {
      return { rows: null, error: e, settled: Promise.resolve() };
    }
  }
  const f: InFlight = { rows: null, error: null, settled: Promise.resolve() };
  f.settled = runner.onWorker(best, job).then(
    (rows) => {
      f.rows = rows;
    },
    (e: unknown) => {
      f.error = e ?? new Error('a worker thread failed');
    },
  );
  return f;
}

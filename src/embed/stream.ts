// The one lines → vectors streamer (xling embed, the cluster worker's shards, the graph builder's
// embed step): chunks of input are embedded one at a time and their rows handed to a sink in
// order, with a callback after each chunk (progress, cancellation, yielding to the event loop);
// the sink is closed at the end and aborted on an error, so no partial output is left.
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
      writeSync(fd, jsonLinesOfRows(rows, dim));
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

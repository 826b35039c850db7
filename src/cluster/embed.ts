// The jobs of a sharded embed: each shard embeds a range of the input's lines into its own .npy
// in the flow's work directory (written under a temporary name and renamed when complete, so a
// killed worker never leaves a file that looks finished); the merge job concatenates the shards,
// in order, into the output. Vectors equal `xling embed`'s: same options, same language (decided
// once by the submitter for the whole input), and a sentence's vector does not depend on its batch.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { SentenceEncoderModel } from '../embed/model.js';
import { float32ToFloat16 } from '../io/half.js';
import { readLines } from '../io/lines.js';
import { NpyRowReader, NpyWriter } from '../io/npy.js';

export interface EmbedShardJob {
  flow: string;
  /** The flow's work directory (shard files, the cancellation marker). */
  work: string;
  shard: number;
  shards: number;
  model: string;
  input: string;
  /** Lines [start, end) of the input, 0-based. */
  start: number;
  end: number;
  lang?: string;
  center: boolean;
  normalize: boolean;
  batchTokens?: number;
  batchSentences?: number;
  /** Lines embedded between progress reports (and cancellation checks). */
  chunk: number;
  out: string;
}

export interface EmbedMergeJob { flow: string; work: string; shardFiles: string[]; output: string; fp16: boolean; rows: number }

/** Line ranges of n lines over `shards` shards (as even as possible; empty shards are dropped). */
export function shardRanges(n: number, shards: number): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < shards; i++) {
    const a = Math.floor((i * n) / shards), b = Math.floor(((i + 1) * n) / shards);
    if (b > a) out.push([a, b]);
  }
  return out;
}

/** An error in a job's input (its file or lines): retrying cannot help. */
export class InputError extends Error {}

export const shardFile = (work: string, shard: number) => join(work, `shard-${String(shard).padStart(5, '0')}.npy`);

/** Rows of a finished shard file, or -1 when there is none (or it is not a readable .npy). */
function finishedRows(path: string): number {
  if (!existsSync(path)) return -1;
  try {
    const r = NpyRowReader.open(path);
    const rows = r.rows;
    r.close();
    return rows;
  } catch {
    return -1;
  }
}

/**
 * Embeds one shard. A shard whose file already holds its rows (an earlier attempt finished but its
 * completion was lost) is not embedded again. `progress` is awaited after every chunk; it throws
 * to stop (cancellation). Errors of the input are InputErrors naming the file and line.
 */
export async function runEmbedShard(j: EmbedShardJob, model: SentenceEncoderModel, progress: (done: number) => Promise<void>): Promise<{ rows: number; reused: boolean }> {
  const want = j.end - j.start;
  if (finishedRows(j.out) === want) return { rows: want, reused: true };
  const w = NpyWriter.open(j.out, model.dim, 'float32');
  try {
    let buf: string[] = [], done = 0, lineNo = 0;
    const flush = async () => {
      const v = await model.embedAsync(buf, { lang: j.lang, center: j.center, normalize: j.normalize, maxTokens: j.batchTokens, maxSentences: j.batchSentences });
      w.append(v);
      done += buf.length;
      buf = [];
      await progress(done);
    };
    const lines = readLines(j.input)[Symbol.asyncIterator]();
    for (;;) {
      let next: IteratorResult<{ line: string; no: number }>;
      try { next = await lines.next(); } catch (e) { throw new InputError((e as Error).message); }
      if (next.done) break;
      const { line, no } = next.value;
      lineNo = no;
      if (no - 1 < j.start) continue;
      if (no - 1 >= j.end) { await lines.return?.(undefined); break; }
      buf.push(line);
      if (buf.length >= j.chunk) await flush();
    }
    if (buf.length) await flush();
    if (done !== want) throw new InputError(`${j.input}: shard ${j.shard + 1}/${j.shards} expected lines ${j.start + 1}–${j.end}, but the file ends at line ${lineNo} (was it changed after submission?)`);
    w.close();
    return { rows: done, reused: false };
  } catch (e) {
    w.abort();
    throw e;
  }
}

/** Concatenates the shard files, in order, into the output .npy (float16 on request); returns the rows. */
export function mergeVectorShards(j: EmbedMergeJob): number {
  const first = NpyRowReader.open(j.shardFiles[0]!);
  const d = first.cols;
  first.close();
  const w = NpyWriter.open(j.output, d, j.fp16 ? 'float16' : 'float32');
  try {
    for (const f of j.shardFiles) {
      const r = NpyRowReader.open(f);
      try {
        if (r.cols !== d || r.dtype !== 'float32') throw new Error(`${f}: expected float32 rows of ${d}, got ${r.dtype} × ${r.cols}`);
        for (let a = 0; a < r.rows; a += 65536) {
          const rows = r.readRows(a, Math.min(r.rows, a + 65536));
          w.append(j.fp16 ? float32ToFloat16(rows) : rows);
        }
      } finally {
        r.close();
      }
    }
    if (w.rows !== j.rows) throw new Error(`merge: the shards hold ${w.rows} rows, expected ${j.rows}`);
    w.close();
    // every shard is complete: what is left of attempts that died (killed workers) goes
    for (const f of readdirSync(j.work)) if (/^shard-\d+\.npy\.tmp-/.test(f)) rmSync(join(j.work, f), { force: true });
    return j.rows;
  } catch (e) {
    w.abort();
    throw e;
  }
}

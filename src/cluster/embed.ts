// The jobs of a sharded embed. Every shard writes its rows straight into one .npy of the final
// shape in the flow's work directory (created by the first shard to start; disjoint row ranges,
// so no copy at the end), then records that it is complete in a marker file written atomically
// after an fsync; the merge job checks every marker and renames the file into place as the
// output. A killed worker leaves rows but no marker, so its shard is written again; the output
// never exists until every row is there. Shards start reading their input at a byte offset the
// submitter recorded (plain files), not from line 1. Vectors equal `xling embed`'s: same options,
// same language (decided once by the submitter for the whole input), and a sentence's vector
// does not depend on its batch.
import { copyFileSync, existsSync, linkSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SentenceEncoderModel } from '../embed/model.js';
import { chunksOf, streamEmbeddings, VectorSink } from '../embed/stream.js';
import { float32ToFloat16 } from '../io/half.js';
import { readLines } from '../io/input.js';
import { NpyRowWriter, readNpyHeader } from '../io/npy.js';
import { releaseTemp, tempPathFor, writeFileAtomicSync } from '../util/atomic.js';

/** How a flow's shards embed: the same for the request and each shard's job. */
export interface ShardEmbedding {
  lang?: string;
  center: boolean | 'force';
  normalize: boolean;
  fp16: boolean;
  batchTokens?: number;
  batchSentences?: number;
  /** The encoder's arithmetic (xling cluster embed --precision; fp32 when absent). */
  precision?: 'fp32' | 'bf16';
  /** Lines embedded between progress reports (and cancellation checks). */
  chunk: number;
}

export interface EmbedShardJob extends ShardEmbedding {
  flow: string;
  /** The flow's work directory (vectors in progress, shard markers, the cancellation marker). */
  work: string;
  shard: number;
  shards: number;
  model: string;
  input: string;
  /** The input's size when submitted: a file changed since is an input error, not garbage. */
  inputBytes: number;
  /** Lines [start, end) of the input, 0-based. */
  start: number;
  end: number;
  /** Where to start reading: a byte offset at or before line `start`, and the 0-based line there. */
  seekByte: number;
  seekLine: number;
  /** All lines of the input (the rows of the vectors file). */
  rows: number;
}

export interface EmbedMergeJob {
  flow: string;
  work: string;
  shards: number;
  output: string;
  rows: number;
}

/** Every `SEEK_EVERY`-th line's byte offset is recorded by the submitter's counting pass. */
export const SEEK_EVERY = 4096;

export { shardRanges } from '../util/shards.js';

/** An error in a job's input (its file or lines): retrying cannot help. */
export class InputError extends Error {}

/** The vectors being written by a flow's shards (renamed to the output by the merge). */
export const vectorsInProgress = (work: string) => join(work, 'vectors.npy.partial');
/** Present (holding the shard's row count) once a shard's rows are all written and synced. */
export const shardMarker = (work: string, shard: number) => join(work, `shard-${String(shard).padStart(5, '0')}.done`);

function markedRows(path: string): number {
  try {
    return Number(readFileSync(path, 'utf8').trim());
  } catch {
    return -1;
  }
}

/** Creates the flow's vectors file unless another shard has: made under a temporary name, then linked (atomic, fails if present). */
function ensureVectorsFile(path: string, rows: number, cols: number, fp16: boolean): void {
  if (existsSync(path)) return;
  const tmp = tempPathFor(path);
  try {
    NpyRowWriter.create(tmp, rows, cols, fp16 ? 'float16' : 'float32');
    try {
      linkSync(tmp, path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  } finally {
    rmSync(tmp, { force: true });
    releaseTemp(tmp);
  }
}

/**
 * Embeds one shard into the flow's vectors file. A shard whose marker exists (an earlier attempt
 * finished but its completion was lost) is not embedded again. `progress` is awaited after every
 * chunk; it throws to stop (cancellation). Errors of the input are InputErrors naming the file and line.
 */
export async function runEmbedShard(
  j: EmbedShardJob,
  model: SentenceEncoderModel,
  progress: (done: number) => Promise<void>,
): Promise<{ rows: number; reused: boolean }> {
  const want = j.end - j.start,
    marker = shardMarker(j.work, j.shard);
  if (markedRows(marker) === want) return { rows: want, reused: true };
  let size: number;
  try {
    size = statSync(j.input).size;
  } catch {
    throw new InputError(`${j.input}: no such file`);
  }
  if (size !== j.inputBytes) throw new InputError(`${j.input}: ${size} bytes, ${j.inputBytes} when the flow was submitted (was it changed after submission?)`);
  const file = vectorsInProgress(j.work);
  ensureVectorsFile(file, j.rows, model.dim, j.fp16);
  const w = NpyRowWriter.open(file);
  try {
    if (w.cols !== model.dim || w.rows !== j.rows)
      throw new Error(`${file}: shape [${w.rows}, ${w.cols}], expected [${j.rows}, ${model.dim}] (left from another flow?)`);
    let done = 0,
      lineNo = j.seekLine;
    // the shard's lines [start, end), read from the recorded byte offset
    async function* shardLines(): AsyncGenerator<string> {
      const lines = readLines(j.input, { startByte: j.seekByte, firstLine: j.seekLine + 1 })[Symbol.asyncIterator]();
      for (;;) {
        let next: IteratorResult<{ line: string; no: number }>;
        try {
          next = await lines.next();
        } catch (e) {
          throw new InputError((e as Error).message);
        }
        if (next.done) return;
        const { line, no } = next.value;
        lineNo = no;
        if (no - 1 < j.start) continue;
        if (no - 1 >= j.end) {
          await lines.return?.(undefined);
          return;
        }
        yield line;
      }
    }
    // rows go straight to their place in the flow's vectors file (w is closed below)
    const sink: VectorSink = {
      append: (v) => {
        w.write(j.start + done, j.fp16 ? float32ToFloat16(v) : v);
        done += v.length / model.dim;
      },
      close() {},
      abort() {},
    };
    await streamEmbeddings(
      chunksOf(shardLines(), j.chunk),
      model.dim,
      (buf) => model.embedAsync(buf, { lang: j.lang, center: j.center, normalize: j.normalize, maxTokens: j.batchTokens, maxSentences: j.batchSentences }),
      sink,
      (_, total) => progress(total),
    );
    if (done !== want)
      throw new InputError(
        `${j.input}: shard ${j.shard + 1}/${j.shards} expected lines ${j.start + 1}–${j.end}, but the file ends at line ${lineNo} (was it changed after submission?)`,
      );
  } finally {
    w.close();
  }
  writeFileAtomicSync(marker, `${want}\n`);
  return { rows: want, reused: false };
}

/** Checks every shard's marker and renames the vectors into place as the output; returns the rows. */
export function mergeVectorShards(j: EmbedMergeJob): number {
  const file = vectorsInProgress(j.work);
  // an earlier attempt renamed it but its completion was lost
  if (!existsSync(file) && existsSync(j.output) && readNpyHeader(j.output).shape[0] === j.rows) return j.rows;
  const missing = [...Array(j.shards).keys()].filter((i) => markedRows(shardMarker(j.work, i)) < 0);
  if (missing.length) throw new Error(`merge: shard${missing.length > 1 ? 's' : ''} ${missing.map((i) => i + 1).join(', ')} of ${j.shards} not complete`);
  const h = readNpyHeader(file);
  if (h.shape[0] !== j.rows) throw new Error(`merge: ${file} holds ${h.shape[0]} rows, expected ${j.rows}`);
  try {
    renameSync(file, j.output);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e;
    // the output is on another filesystem: copy next to it, then rename (still atomic there)
    const tmp = tempPathFor(j.output);
    try {
      copyFileSync(file, tmp);
      renameSync(tmp, j.output);
    } finally {
      rmSync(tmp, { force: true });
      releaseTemp(tmp);
    }
    rmSync(file, { force: true });
  }
  for (const f of readdirSync(j.work)) if (/^shard-\d+\.done$|\.tmp-/.test(f)) rmSync(join(j.work, f), { force: true });
  return j.rows;
}

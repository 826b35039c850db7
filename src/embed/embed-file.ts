// xling embed's work: a file of sentences (or doc_id<TAB>sentence documents) to a file of vectors,
// streamed with bounded memory in one of the output forms (.npy float32/float16, quantised .npy,
// raw float32 rows, JSON lines), the language identified over the whole input when it is not given.
import { SpreadSample } from './centering.js';
import { EmbedSettings, InputEmbedder } from './input.js';
import { loadEncoderForRuntime } from './portable.js';
import { embeddingRanges, quantizeEmbeddings, VectorPrecision } from './quantize.js';
import { byteFileSink, jsonLinesSink, npySink, VectorSink } from './stream.js';
import { DocumentVectors } from './vectors.js';
import { float32ToFloat16 } from '../io/half.js';
import { readLines, shownPath } from '../io/lines.js';
import { NpyWriter, readNpy, writeNpy } from '../io/npy.js';
import { writeFileAtomicSync } from '../util/atomic.js';
import { pause } from '../util/pause.js';
import { Progress } from '../util/progress.js';

/** What xling embed writes: JSON lines, raw float32 rows, or a .npy of `dtype`. */
export interface EmbedFileOutput {
  /** The vectors' file ('-' with jsonl: standard output). */
  path: string;
  jsonl: boolean;
  rawF32: boolean;
  dtype: 'float32' | 'float16' | 'int8' | 'uint8' | 'binary' | 'ubinary';
  /** --ranges: the [2, dim] .npy to quantise int8/uint8 with. */
  ranges?: string;
  /** Where int8/uint8 without ranges writes the ranges it used. */
  rangesOut?: string;
}

export interface EmbedFileOptions {
  model: string;
  input: string;
  output: EmbedFileOutput;
  /** Documents: doc_id<TAB>sentence lines, one averaged vector per document (ids in OUTPUT.ids). */
  docs: boolean;
  /** Sentences read and length-sorted at a time. */
  chunk: number;
  precision: 'fp32' | 'bf16';
  /** How to embed (label, normalize and langFlag are xling embed's). */
  settings: Omit<EmbedSettings, 'label' | 'langFlag'>;
}

/**
 * Quantised vectors (--dtype, sentence-transformers' quantize_embeddings): binary ones and int8 with
 * --ranges stream; int8/uint8 without ranges hold the float rows until close (ranges from all of
 * them), and write the ranges used to OUTPUT.ranges.npy ([2, dim] float32) for quantising queries alike.
 */
function quantizedSink(path: string, dim: number, precision: Exclude<VectorPrecision, 'float32'>, ranges: Float32Array | null, rangesOut: string): VectorSink {
  const binary = precision === 'binary' || precision === 'ubinary';
  const cols = binary ? Math.ceil(dim / 8) : dim;
  const w = NpyWriter.open(path, cols, precision === 'binary' || precision === 'int8' ? 'int8' : 'uint8');
  const held: Float32Array[] = [];
  return {
    append(rows) {
      if (binary || ranges) w.append(quantizeEmbeddings(rows, dim, precision, ranges ?? undefined));
      else held.push(rows.slice());
    },
    close() {
      if (!binary && !ranges) {
        const all = new Float32Array(held.reduce((a, r) => a + r.length, 0));
        let at = 0;
        for (const r of held) {
          all.set(r, at);
          at += r.length;
        }
        const r = embeddingRanges(all, dim);
        w.append(quantizeEmbeddings(all, dim, precision, r));
        writeNpy(rangesOut, r, [2, dim], 'float32');
      }
      w.close();
    },
    abort() {
      w.abort();
    },
  };
}

/** --ranges FILE: a [2, dim] float32/float64 .npy (mins, maxes), as OUTPUT.ranges.npy or numpy's vstack((min, max)). */
function readRanges(file: string, dim: number): Float32Array {
  const r = readNpy(file);
  if (r.shape.length !== 2 || r.shape[0] !== 2 || r.shape[1] !== dim || !(r.dtype === 'float32' || r.dtype === 'float64'))
    throw new Error(`--ranges ${file}: expected a [2, ${dim}] float array (mins, maxes), got ${r.dtype} [${r.shape.join(', ')}]`);
  return Float32Array.from(r.data as Float32Array);
}

/** The streaming sink of an output (its ranges read first, so a bad --ranges fails before any embedding). */
function sinkMaker(o: EmbedFileOutput, dim: number): () => VectorSink {
  const fp16 = o.dtype === 'float16';
  const precision = (fp16 ? 'float32' : o.dtype) as VectorPrecision;
  const ranges = o.ranges ? readRanges(o.ranges, dim) : null;
  return () => {
    if (o.jsonl) return jsonLinesSink(o.path, dim);
    if (precision !== 'float32') return quantizedSink(o.path, dim, precision, ranges, o.rangesOut!);
    if (o.rawF32) return byteFileSink(o.path, (rows) => new Uint8Array(rows.buffer, rows.byteOffset, rows.byteLength));
    return npySink(o.path, dim, fp16 ? 'float16' : 'float32');
  };
}

/** A whole matrix of `rows` vectors written as the output says (a plain .npy in one write). */
function writeVectors(o: EmbedFileOutput, sinkFor: () => VectorSink, out: Float32Array, rows: number, dim: number): void {
  const fp16 = o.dtype === 'float16';
  if (o.rawF32 || o.jsonl || (o.dtype !== 'float32' && !fp16)) {
    const sink = sinkFor();
    sink.append(out);
    sink.close();
  } else writeNpy(o.path, fp16 ? float32ToFloat16(out) : out, [rows, dim], fp16 ? 'float16' : 'float32');
}

/** doc_id<TAB>sentence lines: each document's sentences embedded and averaged (DocumentVectors), in the order the ids first come. */
async function embedDocuments(
  input: string,
  chunk: number,
  job: InputEmbedder,
  prog: Progress,
  normalize: boolean,
): Promise<{ matrix: Float32Array; ids: string[] }> {
  const sums = new DocumentVectors(job.model.dim);
  let buf: { doc: number; s: string }[] = [];
  const flush = () => {
    sums.add(
      job.embed(buf.map((b) => b.s)),
      buf.map((b) => b.doc),
    );
    prog.tick(buf.length);
    buf = [];
  };
  for await (const { line, no } of readLines(input)) {
    const tab = line.indexOf('\t');
    if (tab <= 0) throw new Error(`${input}:${no}: expected doc_id<TAB>sentence`);
    buf.push({ doc: sums.numberOf(line.slice(0, tab)), s: line.slice(tab + 1) });
    if (buf.length >= chunk) flush();
  }
  if (buf.length) flush();
  return { matrix: sums.matrix(normalize), ids: sums.ids };
}

/**
 * xling embed: the model loaded for its runtime (a bag-of-n-grams model on the portable one, others
 * on the native backend), the language identified over a sample spread over the whole input when
 * it is to be identified (so every row is centred alike whatever the chunk), then the sentences
 * streamed to the output, or the documents averaged and written with their ids (OUTPUT.ids).
 */
export async function embedFile(o: EmbedFileOptions): Promise<void> {
  const m = loadEncoderForRuntime(o.model, { precision: o.precision });
  const sinkFor = sinkMaker(o.output, m.dim);
  const normalize = o.settings.normalize ?? true;
  const job = new InputEmbedder(m, { ...o.settings, normalize: o.docs ? true : normalize, langFlag: '--lang', label: 'embed' }, shownPath(o.input));
  if (job.needsSample) {
    const sample = new SpreadSample();
    for await (const { line } of readLines(o.input)) sample.add(o.docs ? line.slice(line.indexOf('\t') + 1) : line);
    job.identify(sample.lines);
  }
  const prog = new Progress({ label: 'embed', unit: 'sents', silent: o.settings.quiet });
  if (o.docs) {
    const out = await embedDocuments(o.input, o.chunk, job, prog, normalize);
    writeVectors(o.output, sinkFor, out.matrix, out.ids.length, m.dim);
    writeFileAtomicSync(`${o.output.path}.ids`, out.ids.length ? out.ids.join('\n') + '\n' : '');
  } else {
    async function* lines() {
      for await (const { line } of readLines(o.input)) yield line;
    }
    const n = await job.embedStream(lines(), o.chunk, sinkFor(), async (rows) => {
      prog.tick(rows);
      await pause();
    });
    if (!n && !o.settings.quiet) process.stderr.write(`[embed] warning: ${shownPath(o.input)} is empty: writing a (0, ${m.dim}) array\n`);
  }
  prog.done();
  job.finish();
}

// xling embed: one sentence per line in, one vector per line out (same order), streamed with
// bounded memory; documents (doc_id<TAB>sentence) averaged into one vector each.
import { SpreadSample } from '../embed/centering.js';
import { loadEncoderForRuntime } from '../embed/portable.js';
import { float32ToFloat16 } from '../io/half.js';
import { readLines, shownPath } from '../io/lines.js';
import { NpyWriter, readNpy, writeNpy } from '../io/npy.js';
import { embeddingRanges, quantizeEmbeddings, VectorPrecision } from '../embed/quantize.js';
import { byteFileSink, jsonLinesSink, npySink, VectorSink } from '../embed/stream.js';
import { writeFileAtomicSync } from '../util/atomic.js';
import { Progress } from '../util/progress.js';
import { DocumentVectors } from '../embed/vectors.js';
import { command, usage } from './command.js';
import { checkPaths } from './io.js';
import { EMBED_FILE_OPTIONS, InputEmbedder } from './vectors.js';
import { pause } from '../util/pause.js';
import { setComputeThreads } from '../tensor/backend.js';
import { DEFAULTED_MODEL_OPTION, modelOrDefault } from './default-model.js';

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

function openSink(path: string, dim: number, fp16: boolean, raw: boolean): VectorSink {
  if (raw) return byteFileSink(path, (rows) => new Uint8Array(rows.buffer, rows.byteOffset, rows.byteLength));
  return npySink(path, dim, fp16 ? 'float16' : 'float32');
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

export const embedCommand = command(
  ['embed'],
  {
    name: 'xling embed',
    summary: 'embed sentences (or documents) into vectors (.npy or JSON lines)',
    options: {
      ...EMBED_FILE_OPTIONS,
      model: DEFAULTED_MODEL_OPTION,
      input: {
        type: 'string',
        required: true,
        metavar: 'FILE',
        help: 'one sentence per line (or doc_id<TAB>sentence with --docs); gzip allowed (recognised by its bytes); - for standard input (pipes and /dev/fd/N work too); an empty input gives a (0, d) array',
      },
      output: {
        type: 'string',
        required: true,
        alias: 'o',
        metavar: 'FILE',
        help: 'vectors: .npy (default), .jsonl (one JSON array of numbers a line; - for standard output) or raw float32 with --raw-f32',
      },
      rawF32: { type: 'boolean', default: false, help: 'write headerless little-endian float32 rows (LASER format)' },
      dtype: {
        type: 'string',
        choices: ['float32', 'float16', 'int8', 'uint8', 'binary', 'ubinary'],
        default: 'float32',
        help: "the vectors' type: float16 halves the file; int8/uint8/binary/ubinary are quantised (sentence-transformers' quantize_embeddings): int8/uint8 per-dimension buckets over [min, max] ranges (--ranges, else from the vectors themselves, written to OUTPUT.ranges.npy); ubinary: one bit per dimension (x > 0) packed 8 to a byte (numpy.packbits), binary: that byte − 128 as int8",
      },
      ranges: {
        type: 'string',
        metavar: 'FILE',
        help: "with --dtype int8/uint8: the [2, dim] .npy of per-dimension mins and maxes to quantise with (e.g. the corpus's OUTPUT.ranges.npy)",
      },
      docs: { type: 'boolean', default: false, help: 'input is doc_id<TAB>sentence; output one averaged vector per document (ids in OUTPUT.ids)' },
      chunk: {
        type: 'number',
        default: 50000,
        range: { int: true, min: 1 },
        help: 'sentences read and length-sorted at a time (memory bound; the vectors do not depend on it)',
      },
      threads: { type: 'number', range: { int: true, min: 1 }, help: 'threads that compute (default: all cores)' },
      quiet: { type: 'boolean', default: false, help: 'no progress or identification lines (warnings and errors are still printed)' },
    },
    examples: [
      'xling embed --input sentences.txt -o vectors.npy',
      'xling embed --input sentences.txt -o vectors.jsonl',
      "echo 'Guten Morgen' | xling embed --input - -o -",
    ],
  },
  async (a) => {
    const fp16 = a.dtype === 'float16';
    const precision = (fp16 ? 'float32' : a.dtype) as VectorPrecision;
    if (a.rawF32 && a.dtype !== 'float32') usage(`--raw-f32 writes float32 rows: it excludes --dtype ${a.dtype}`);
    if (a.ranges && precision !== 'int8' && precision !== 'uint8') usage('--ranges goes with --dtype int8 or uint8');
    // JSON lines: a .jsonl file, or standard output
    const jsonl = a.output === '-' || /\.jsonl$/i.test(a.output);
    if (jsonl && (a.rawF32 || a.dtype !== 'float32'))
      usage(`-o ${a.output}: JSON lines hold float32 vectors; ${a.rawF32 ? '--raw-f32' : `--dtype ${a.dtype}`} writes a file of its own (name it FILE.npy)`);
    if (a.output === '-' && a.docs) usage('--docs with -o -: the document ids are written beside the vectors (OUTPUT.ids); give -o FILE.jsonl or FILE.npy');
    const rangesOut = precision === 'int8' || precision === 'uint8' ? (a.ranges ? undefined : `${a.output}.ranges.npy`) : undefined;
    checkPaths([
      ['--model', a.model, 'in-dir'],
      ['--input', a.input, 'in-text'],
      ['--ranges', a.ranges, 'in'],
      ['--output', a.output, jsonl ? 'out-text' : 'out'],
      ['--output (document ids)', a.docs ? `${a.output}.ids` : undefined, 'out'],
      ['--output (ranges)', rangesOut, 'out'],
    ]);
    const model = modelOrDefault(a.model, a.quiet);
    if (a.threads) setComputeThreads(a.threads);
    // a bag-of-n-grams model (the default one) on the portable runtime, others on the native backend
    const m = loadEncoderForRuntime(model, { precision: a.precision as 'fp32' | 'bf16' });
    const d = m.dim;
    const ranges = a.ranges ? readRanges(a.ranges, d) : null;
    const sinkFor = () =>
      jsonl
        ? jsonLinesSink(a.output, d)
        : precision === 'float32'
          ? openSink(a.output, d, fp16, a.rawF32)
          : quantizedSink(a.output, d, precision, ranges, rangesOut!);
    const writeVectors = (out: Float32Array, rows: number) => {
      if (a.rawF32 || precision !== 'float32' || jsonl) {
        const sink = sinkFor();
        sink.append(out);
        sink.close();
      } else writeNpy(a.output, fp16 ? float32ToFloat16(out) : out, [rows, d], fp16 ? 'float16' : 'float32');
    };
    const job = new InputEmbedder(
      m,
      {
        lang: a.lang,
        langFlag: '--lang',
        center: a.center,
        forceCenter: a.forceCenter,
        batchTokens: a.batchTokens,
        batchSentences: a.batchSentences,
        normalize: a.docs ? true : a.normalize,
        quiet: a.quiet,
        label: 'embed',
      },
      shownPath(a.input),
    );
    const sentenceOf = (line: string) => (a.docs ? line.slice(line.indexOf('\t') + 1) : line);
    if (job.needsSample) {
      // a first pass: the language is identified from lines spread over the whole input, so every
      // row is centred alike whatever --chunk is
      const sample = new SpreadSample();
      for await (const { line } of readLines(a.input)) sample.add(sentenceOf(line));
      job.identify(sample.lines);
    }
    const prog = new Progress({ label: 'embed', unit: 'sents', silent: a.quiet });

    if (a.docs) {
      const out = await embedDocuments(a.input, a.chunk, job, prog, a.normalize);
      writeVectors(out.matrix, out.ids.length);
      writeFileAtomicSync(`${a.output}.ids`, out.ids.length ? out.ids.join('\n') + '\n' : '');
      prog.done();
      job.finish();
      return;
    }

    async function* lines() {
      for await (const { line } of readLines(a.input)) yield line;
    }
    const n = await job.embedStream(lines(), a.chunk, sinkFor(), async (rows) => {
      prog.tick(rows);
      await pause();
    });
    if (!n && !a.quiet) process.stderr.write(`[embed] warning: ${shownPath(a.input)} is empty: writing a (0, ${d}) array\n`);
    prog.done();
    job.finish();
  },
);

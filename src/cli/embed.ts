// xling embed: one sentence per line in, one vector per line out (same order), streamed with
// bounded memory; documents (doc_id<TAB>sentence) averaged into one vector each.
import { embedFile, EmbedFileOutput } from '../embed/embed-file.js';
import { setComputeThreads } from '../tensor/backend.js';
import { command, usage } from './command.js';
import { DEFAULTED_MODEL_OPTION, modelOrDefault } from './default-model.js';
import { checkPaths } from './io.js';
import { EMBED_FILE_OPTIONS } from './vectors.js';

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
    const precision = a.dtype === 'float16' ? 'float32' : a.dtype;
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
    const { lang, center, forceCenter, batchTokens, batchSentences, normalize, quiet } = a;
    await embedFile({
      model,
      input: a.input,
      output: { path: a.output, jsonl, rawF32: a.rawF32, dtype: a.dtype as EmbedFileOutput['dtype'], ranges: a.ranges, rangesOut },
      docs: a.docs,
      chunk: a.chunk,
      precision: a.precision as 'fp32' | 'bf16',
      settings: { lang, center, forceCenter, batchTokens, batchSentences, normalize, quiet },
    });
  },
);

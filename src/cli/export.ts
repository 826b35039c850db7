// xling export: the encoder alone (for embedding), or the word vectors in word2vec text format.
import { join } from 'node:path';
import { checkCompactExport, exportCompact, ExportDtype } from '../embed/export.js';
import { exportEncoder, readModelConfig } from '../embed/model-dir.js';
import { loadTensors } from '../nn/serialize.js';
import { Tokenizer } from '../text/tokenizer.js';
import { parseSources, readSources, SentenceSource, sourcePath } from '../train-data/sources.js';
import { Rng } from '../util/rng.js';
import { command, usage } from './command.js';
import { checkPaths, writeTextOutput } from './io.js';

/**
 * word2vec text format: "V dim", then one "token v1 … vdim" line per vocabulary entry (the special
 * tokens left out). The vectors are the rows of the encoder's token-embedding table.
 */
export function wordVectorsText(modelDir: string): { text: string; words: number; dim: number } {
  const cfg = readModelConfig(modelDir);
  if (!cfg.tokenizer) throw new Error(`--model ${modelDir}: this ${cfg.kind} model has no word or subword vocabulary (its features are hashed)`);
  const tok = Tokenizer.load(join(modelDir, cfg.tokenizer));
  const { tensors } = loadTensors(join(modelDir, 'model.safetensors'), (k) => k === 'encoder.embed.weight');
  try {
    const t = tensors.get('encoder.embed.weight');
    if (t?.shape.length !== 2 || t.shape[0]! < tok.vocabSize)
      throw new Error(`--model ${modelDir}: no token-embedding table (encoder.embed.weight) over its ${tok.vocabSize} tokens`);
    const dim = t.shape[1]!,
      w = t.float().toFloat32Array();
    const lines = [''];
    for (let v = 4; v < tok.vocabSize; v++) {
      const word = tok.vocab[v]!.replace(/\s/g, '_');
      lines.push(`${word} ${Array.from(w.subarray(v * dim, (v + 1) * dim), (x) => +x.toPrecision(6)).join(' ')}`);
    }
    lines[0] = `${lines.length - 1} ${dim}`;
    return { text: lines.join('\n') + '\n', words: lines.length - 1, dim };
  } finally {
    for (const x of tensors.values()) x.dispose();
  }
}

/** A uniform sample of n sentences of the sources (reservoir sampling, seeded: the same files give the same sample). */
async function sampleSentences(sources: SentenceSource[], n: number): Promise<string[]> {
  const rng = new Rng('pq-data'),
    out: string[] = [];
  let seen = 0;
  for await (const { text } of readSources(sources)) {
    if (out.length < n) out.push(text);
    else {
      const k = rng.int(seen + 1);
      if (k < n) out[k] = text;
    }
    seen++;
  }
  if (!out.length) throw new Error(`--pq-data: no sentences in ${sources.map(sourcePath).join(', ')}`);
  process.stderr.write(`[export] ${out.length} of ${seen} sentences of --pq-data to refit the codebooks on\n`);
  return out;
}

export const exportCommand = command(
  ['export'],
  {
    name: 'xling export',
    summary: 'write the encoder alone (-o DIR), or the word vectors in word2vec text format (--words FILE)',
    options: {
      model: {
        type: 'string',
        required: true,
        metavar: 'DIR',
        help: 'the model to export (no default: the model that comes with xling is already exported, PQ-compressed)',
      },
      out: { type: 'string', alias: 'o', metavar: 'DIR', help: 'a model directory holding only the encoder (and the per-language means)' },
      words: { type: 'string', metavar: 'FILE', help: 'word2vec text format: the vocabulary with its embedding rows (word-level and subword models)' },
      dtype: {
        type: 'string',
        choices: ['fp32', 'fp16', 'int8', 'pq'],
        help: 'compact export: the embedding / n-gram tables as float16, or int8 rows with a float32 scale each (other weights stay float32); pq (dual encoder): the n-gram table product-quantised, --pq-bytes a row over its first --pq-dims principal components',
      },
      pqBytes: {
        type: 'number',
        range: { int: true, min: 1 },
        metavar: 'M',
        help: 'with --dtype pq: bytes a row of the n-gram table (default 56: a 2^20-bucket table in 59 MB)',
      },
      pqDims: {
        type: 'number',
        range: { int: true, min: 1 },
        metavar: 'K',
        help: 'with --dtype pq: principal components kept (default min(table width, 2 × M)); each byte codes K/M of them',
      },
      pqData: {
        type: 'list',
        splitCommas: false,
        metavar: 'TEXT',
        help: "with --dtype pq: sentences to refit the codebooks on, so that each sentence's mean row read back from the codes matches the original (least squares; frequent n-grams count as often as they occur): an N-way TSV(.gz) (every cell), TSV:de,en (those columns) or LANG=FILE; repeatable",
      },
      pqSentences: {
        type: 'number',
        default: 60000,
        range: { int: true, min: 1 },
        metavar: 'N',
        help: 'with --pq-data: a uniform sample of this many of its sentences (seeded)',
      },
      dims: {
        type: 'number',
        range: { int: true, min: 1 },
        metavar: 'N',
        help: 'compact export (dual encoder): keep the first N dimensions of the sentence vectors (Matryoshka; see loss.matryoshka)',
      },
      pruneUnused: {
        type: 'boolean',
        default: false,
        help: 'compact export (dual encoder): drop the hashed n-gram buckets training never touched (rows still equal to their initial draw); unseen n-grams share --fallback rows (bucket mod fallback)',
      },
      pruneKeep: {
        type: 'number',
        range: { int: true, min: 1 },
        metavar: 'N',
        help: 'compact export (dual encoder): keep at most N hashed n-gram buckets, those training moved farthest from their initial draw; the others share --fallback rows (implies --prune-unused; for a size target: a long run touches nearly every bucket)',
      },
      fallback: {
        type: 'number',
        default: 1024,
        range: { int: true, min: 1 },
        metavar: 'N',
        help: 'with --prune-unused / --prune-keep: rows shared by the dropped buckets',
      },
    },
  },
  async (a) => {
    if (!a.out && !a.words) usage('give -o DIR (encoder) and/or --words FILE (word vectors)');
    const compact = a.dtype !== undefined || a.dims !== undefined || a.pruneUnused || a.pruneKeep !== undefined;
    if ((a.pqBytes !== undefined || a.pqDims !== undefined || a.pqData.length) && a.dtype !== 'pq')
      usage('--pq-bytes, --pq-dims and --pq-data go with --dtype pq');
    if (compact && !a.out) usage('--dtype, --dims, --prune-unused and --prune-keep shape the -o DIR export; give -o DIR');
    const pqSources = parseSources(a.pqData);
    checkPaths([
      ['--model', a.model, 'in-dir'],
      ['--out', a.out, 'out-dir'],
      ['--words', a.words, 'out-text'],
      ...pqSources.map((p) => ['--pq-data', sourcePath(p), 'in-text'] as const),
    ]);
    const opts = {
      dtype: (a.dtype ?? 'fp32') as ExportDtype,
      dims: a.dims,
      prune: a.pruneUnused,
      pruneKeep: a.pruneKeep,
      fallback: a.fallback,
      pqBytes: a.pqBytes,
      pqDims: a.pqDims,
      log: (l: string) => process.stderr.write(l + '\n'),
    };
    // the options against the model first: reading --pq-data is work
    if (a.out && compact) checkCompactExport(a.model, { ...opts, pqSentences: pqSources.length ? [] : undefined });
    const pqSentences = pqSources.length ? await sampleSentences(pqSources, a.pqSentences) : undefined;
    if (a.out && compact) {
      const r = exportCompact(a.model, a.out, { ...opts, pqSentences });
      process.stderr.write(
        `[export] ${r.dtype}${r.pq ? ` (${r.pq.bytes} bytes a row, ${r.pq.dims} components)` : ''}${r.dims ? `, ${r.dims} dimensions` : ''}${r.prune ? `, ${r.prune.kept} of ${r.prune.buckets} buckets` : ''}: ${(r.bytes / 1048576).toFixed(1)} MiB → ${a.out}\n`,
      );
    } else if (a.out) {
      exportEncoder(a.model, a.out);
    }
    if (a.words) {
      const r = wordVectorsText(a.model);
      writeTextOutput(a.words, r.text);
      process.stderr.write(`[export] ${r.words} word vectors of ${r.dim} dimensions → ${a.words === '-' ? 'standard output' : a.words}\n`);
    }
  },
  { native: true },
);

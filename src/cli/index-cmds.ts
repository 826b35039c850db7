// xling index build / merge, xling search: faiss indexes over .npy vectors, in chunks, with
// sharding (ids = global row numbers) for corpora that outgrow one machine (src/index/build-file.ts,
// merge.ts, search.ts).
import { buildIndexFile } from '../index/build-file.js';
import { Metric } from '../index/faiss.js';
import { mergeIndexFiles } from '../index/merge.js';
import { searchToFiles, TextQueries } from '../index/search.js';
import { setNumThreads } from '../tensor/tensor.js';
import { command, usage } from './command.js';
import { checkPaths } from './io.js';
import { embedQueries, isNpyFile, queryModel, readTextQueries } from '../embed/queries.js';
import { modelDim, vectorsArgument } from './vectors.js';

export const indexBuildCommand = command(
  ['index', 'build'],
  {
    name: 'xling index build',
    summary: 'train and fill a faiss index from a .npy of vectors',
    positionals: [{ name: 'vectors', help: '.npy matrix [n, d] of float32/float16/float64 (read in chunks, never whole); or --vectors' }],
    options: {
      vectors: { type: 'string', metavar: 'NPY', help: "the vectors (the same as the first argument; one spelling with the other commands' vectors inputs)" },
      factory: {
        type: 'string',
        default: 'Flat',
        help: 'faiss index_factory string: Flat, IVFn,Flat, IVFn,PQm, OPQm,IVFn,PQm, HNSWm, SQ8, SQfp16, PQm (sharded builds of non-IVF indexes get an ID map: IDMap2,…)',
      },
      metric: { type: 'string', default: 'ip', choices: ['ip', 'l2'], help: 'inner product (cosine for normalised vectors) or Euclidean distance' },
      trainSample: { type: 'number', default: 200000, range: { int: true, min: 1 }, help: 'rows sampled (seeded) to train the index' },
      trained: { type: 'string', metavar: 'FAISS', help: 'start from this trained empty index instead of training' },
      trainOnly: { type: 'boolean', default: false, help: 'write the trained empty index and stop (for sharded builds)' },
      shard: { type: 'string', metavar: 'i/n', help: 'add only rows of shard i of n (ids stay global row numbers; not for HNSW, which faiss cannot merge)' },
      chunk: { type: 'number', default: 100000, range: { int: true, min: 1 }, help: 'rows added per call' },
      normalize: { type: 'boolean', default: true, help: 'L2-normalise rows (cosine via inner product)' },
      seed: { type: 'number', default: 1, range: { int: true, min: 0 }, help: 'random seed of the training sample' },
      opqIters: { type: 'number', default: 20, range: { int: true, min: 1 }, help: 'OPQ optimisation iterations (faiss default 50; each costs a d×d SVD)' },
      polysemous: { type: 'boolean', default: false, help: 'polysemous PQ training (only for Hamming filtering; slow)' },
      allowDuplicateIds: { type: 'boolean', default: false, help: "with --trained: add even when the index already holds some of these rows' ids" },
      model: {
        type: 'string',
        metavar: 'DIR',
        help: 'the model that made the vectors, recorded beside the index (FAISS.json): xling search embeds text queries with it',
      },
      output: { type: 'string', alias: 'o', required: true, metavar: 'FAISS', help: 'the index file written' },
    },
  },
  async (a) => {
    const path = vectorsArgument(a);
    checkPaths([
      ['<vectors>', path, 'in'],
      ['--trained', a.trained, 'in'],
      ['--model', a.model, 'in-dir'],
      ['--output', a.output, 'out'],
    ]);
    const model = a.model;
    await buildIndexFile({
      ...a,
      vectors: path,
      metric: a.metric as Metric,
      model: model === undefined ? undefined : { dir: model, dim: () => modelDim(model) },
    });
  },
  { native: true },
);

export const indexMergeCommand = command(
  ['index', 'merge'],
  {
    name: 'xling index merge',
    summary: 'merge index shards (built from the same trained index) into one',
    positionals: [{ name: 'shards', required: true, variadic: true, help: 'index files of one kind, each holding a shard of the rows (in row order)' }],
    options: {
      output: { type: 'string', alias: 'o', required: true, metavar: 'FAISS', help: 'the merged index file' },
      allowDuplicateIds: { type: 'boolean', default: false, help: 'merge even when a file is given twice or shards share ids' },
    },
  },
  async (a) => {
    if (a._.length < 2) usage('give at least two shard files');
    checkPaths([...a._.map((f) => ['<shards>', f, 'in'] as const), ['--output', a.output, 'out']]);
    mergeIndexFiles(a._, a.output, a);
  },
);

export const searchCommand = command(
  ['search'],
  {
    name: 'xling search',
    summary: 'k nearest neighbours of query sentences or vectors (through an index, or exactly against a .npy), with the sentences found',
    description:
      'Results as TSV (query_row, rank, id, score, and the sentence with --store; rows, ranks and ids from 0), as JSON lines (one {"query", "hits": [{"id", "score", "text"}]} a query: -o FILE.jsonl or --json) and/or as faiss\'s D and I arrays in .npy (--distances, --ids: [queries, k], float32 and int64, -1 ids where fewer than k were found). Text queries are embedded with --model, else the model index build --model recorded, else the default model, each centred by its own language.',
    options: {
      index: { type: 'string', metavar: 'FAISS', help: 'search through this index' },
      base: { type: 'string', metavar: 'NPY', help: 'or: exact search against these vectors (chunked)' },
      query: { type: 'list', splitCommas: false, metavar: 'TEXT', help: 'a query sentence (repeatable), embedded with the model' },
      queries: {
        type: 'string',
        metavar: 'FILE',
        help: 'query vectors (.npy), or query sentences, one a line (any other file; - for standard input)',
      },
      store: {
        type: 'string',
        metavar: 'FILE',
        help: "the index's sentences, line i for row i (plain, or lang<TAB>sentence): the hits get their text",
      },
      model: {
        type: 'string',
        metavar: 'DIR',
        help: 'embeds text queries (default: the model recorded by xling index build --model, else the default model)',
      },
      k: { type: 'number', alias: 'k', default: 10, range: { int: true, min: 1 }, help: 'neighbours per query' },
      metric: {
        type: 'string',
        choices: ['ip', 'l2', 'cosine'],
        help: "cosine: queries (and --base rows) L2-normalised, then inner product; default: the index's metric, cosine for --base",
      },
      nprobe: {
        type: 'number',
        range: { int: true, min: 1 },
        help: 'IVF lists visited per query (--index of an IVF index; default: the smallest reaching --recall-target on a sample of the queries)',
      },
      recallTarget: {
        type: 'number',
        default: 0.95,
        range: { above: 0, max: 1 },
        help: 'IVF without --nprobe: recall@k against searching every list that the chosen nprobe reaches',
      },
      efSearch: {
        type: 'number',
        range: { int: true, min: 1 },
        help: "HNSW indexes: candidates kept while searching the graph (faiss's efSearch, default 16; more: higher recall, slower)",
      },
      baseBlock: { type: 'number', default: 262144, range: { int: true, min: 1 }, help: 'exact search: base rows read per block' },
      output: {
        type: 'string',
        alias: 'o',
        metavar: 'TSV',
        help: 'query_row<TAB>rank<TAB>id<TAB>score[<TAB>sentence] (0-based rows, ranks and ids); FILE.jsonl: JSON lines (see --json); - for standard output (the default for text queries)',
      },
      json: {
        type: 'string',
        metavar: 'FILE',
        implicit: '-',
        help: 'the hits as JSON lines, one {"query", "hits": [{"id", "score", "text"}]} a query (- or the bare flag: standard output; with -o -, standard output holds them alone)',
      },
      distances: { type: 'string', metavar: 'NPY', help: "faiss's D: float32 [queries, k] (scores: inner products, or squared L2 distances)" },
      ids: { type: 'string', metavar: 'NPY', help: "faiss's I: int64 [queries, k] (-1: no result)" },
      rescore: {
        type: 'number',
        range: { int: true, min: 1 },
        metavar: 'R',
        help: "binary codes (--index of a binary flat index, --base of uint8/int8 codes from embed --dtype ubinary|binary) with float --queries: re-rank the k·R nearest by Hamming distance by the query's inner product with their ±1 vectors (score: that cosine); without it scores are Hamming distances",
      },
      threads: { type: 'number', range: { int: true, min: 1 }, help: 'threads for the search (default: all cores)' },
    },
    examples: [
      "xling search --index corpus.faiss --store sentences.txt --query 'Wo ist der Bahnhof?' -k 5",
      'xling search --index corpus.faiss --store sentences.txt --queries questions.txt -o hits.jsonl',
      'xling search --index corpus.faiss --queries q.npy -k 10 --distances D.npy --ids I.npy',
      'xling search --base corpus.npy --queries q.npy -k 5 --metric cosine -o -',
    ],
  },
  async (a) => {
    const { query, text, out } = searchOptions(a);
    checkPaths([
      ['--index', a.index, 'in'],
      ['--base', a.base, 'in'],
      ['--queries', a.queries, text ? 'in-text' : 'in'],
      ['--store', a.store, 'in-text'],
      ['--model', a.model, 'in-dir'],
      [out.tsv?.[0] ?? '--output', out.tsv?.[1], 'out-text'],
      [out.jsonl?.[0] ?? '--json', out.jsonl?.[1], 'out-text'],
      ['--distances', a.distances, 'out'],
      ['--ids', a.ids, 'out'],
    ]);
    if (a.threads) setNumThreads(a.threads);
    await searchToFiles({
      ...a,
      metric: a.metric as 'ip' | 'l2' | 'cosine' | undefined,
      textQueries: text ? () => textQueries(query, a.queries, a.model, a.index) : undefined,
      tsv: out.tsv?.[1],
      jsonl: out.jsonl?.[1],
    });
  },
  { native: true },
);

/** Text queries read and embedded: with --model, else the model recorded beside the index, else the default model. */
async function textQueries(query: string[] | undefined, file: string | undefined, model: string | undefined, index: string | undefined): Promise<TextQueries> {
  const texts = await readTextQueries(query, file);
  const m = queryModel(model, index, (l) => process.stderr.write(l));
  return { texts, vectors: embedQueries(texts, m), model: m };
}

/** xling search's options checked together: the queries (text or vectors) and where the hits go. */
function searchOptions(a: {
  index?: string;
  base?: string;
  query: string[];
  queries?: string;
  model?: string;
  nprobe?: number;
  efSearch?: number;
  output?: string;
  json?: string;
  distances?: string;
  ids?: string;
}): { query: string[] | undefined; text: boolean; out: ReturnType<typeof searchOutputs> } {
  if (!a.index === !a.base) usage('give exactly one of --index or --base');
  const query = a.query.length ? a.query : undefined;
  if ((query === undefined) === (a.queries === undefined))
    usage('give the queries: --query TEXT (repeatable) or --queries FILE (.npy vectors, or sentences one a line), one of them');
  const text = query !== undefined || !isNpyFile(a.queries!);
  if (a.model !== undefined && !text) usage(`--model embeds text queries (--query, --queries FILE.txt); --queries ${a.queries} holds vectors`);
  if (a.nprobe !== undefined && !a.index) usage('--nprobe applies to --index');
  if (a.efSearch !== undefined && !a.index) usage('--ef-search applies to --index (of an HNSW index)');
  const out = searchOutputs(a, text);
  if (!out.tsv && !out.jsonl && !a.distances && !a.ids) usage('give an output: -o TSV (or FILE.jsonl), --json, and/or --distances D.npy and --ids I.npy');
  if (a.output && a.output !== '-' && /\.npy$/i.test(a.output))
    usage(`-o ${a.output}: -o writes TSV; faiss's D and I as .npy are --distances FILE.npy and --ids FILE.npy`);
  for (const [flag, f] of [
    ['--distances', a.distances],
    ['--ids', a.ids],
  ] as const)
    if (f !== undefined && !/\.npy$/i.test(f)) usage(`${flag} ${f}: a .npy file (name it FILE.npy)`);
  if (a.distances && a.ids && a.distances === a.ids) usage('--distances and --ids name the same file');
  return { query, text, out };
}

/**
 * Where xling search writes its hits: TSV (-o), JSON lines (--json, or -o FILE.jsonl); -o - with
 * --json - gives the JSON lines alone on standard output; text queries without any output: TSV on
 * standard output. Each as [the option that named it, the path].
 */
function searchOutputs(
  a: { output?: string; json?: string; distances?: string; ids?: string },
  text: boolean,
): { tsv?: [string, string]; jsonl?: [string, string] } {
  const toJsonl = a.output !== undefined && /\.jsonl$/i.test(a.output);
  if (toJsonl && a.json !== undefined) usage(`-o ${a.output} and --json ${a.json}: the JSON lines twice; give one of them`);
  const jsonl: [string, string] | undefined = a.json !== undefined ? ['--json', a.json] : toJsonl ? ['--output', a.output!] : undefined;
  if (a.output !== undefined && !toJsonl && !(a.output === '-' && a.json === '-')) return { tsv: ['--output', a.output], jsonl };
  if (!jsonl && !a.distances && !a.ids && text) return { tsv: ['--output', '-'] };
  return { jsonl };
}

// xling index build / merge, xling search: faiss indexes over .npy vectors, in chunks, with
// sharding (ids = global row numbers) for corpora that outgrow one machine.
import { statSync } from 'node:fs';
import { addRows, createIndex, readVectorRows, shardRows, trainIndex } from '../index/build.js';
import { FaissIndex, knn, Metric, openIndex } from '../index/faiss.js';
import { Progress } from '../util/progress.js';
import { Rng } from '../util/rng.js';
import { knnChunked, mergeTopK } from '../index/exact.js';
import { writeNpy } from '../io/npy.js';
import { setNumThreads } from '../tensor/tensor.js';
import { command, usage } from './command.js';
import { checkPaths, inContext, writeTextOutput } from './io.js';
import { openVectors, readVectors, Vectors } from './vectors.js';
import { binarySearch, buildBinaryIndex, isBinaryVectors } from './binary-search.js';
import { isBinaryIndexFile } from '../index/binary.js';
import { writeIndexMeta } from '../index/meta.js';
import { hitsJsonLines, hitsTsv, SearchHits } from '../index/hits.js';
import { loadStore } from '../io/sentence-store.js';
import { embedQueries, isNpyFile, queryModel, readTextQueries } from '../embed/queries.js';
import { modelDim, vectorsArgument } from './vectors.js';

function parseShard(s: string | undefined): [number, number] {
  if (!s) return [0, 1];
  const m = /^(\d+)\/(\d+)$/.exec(s);
  if (!m || Number(m[2]) < 1 || Number(m[1]) >= Number(m[2])) usage(`--shard must be i/n with 0 <= i < n, got '${s}'`);
  return [Number(m![1]), Number(m![2])];
}

const HNSW_MERGE = 'faiss cannot merge HNSW graphs';

/** Whether any of ids lies in [lo, hi). */
function anyIdIn(ids: BigInt64Array, lo: number, hi: number): boolean {
  const a = BigInt(lo),
    b = BigInt(hi);
  for (const id of ids) if (id >= a && id < b) return true;
  return false;
}

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
    // packed sign bits (embed --dtype ubinary|binary): a faiss binary flat index
    if (isBinaryVectors(path)) {
      buildBinaryIndex(path, a.output, a);
      return;
    }
    const [si, sn] = parseShard(a.shard);
    const r = openVectors(path);
    const n = r.rows,
      d = r.cols;
    if (a.model && modelDim(a.model) !== d) throw new Error(`--model ${a.model} gives ${modelDim(a.model)}-d vectors, ${path} holds ${d}-d ones`);
    let index: FaissIndex;
    if (a.trained) {
      index = openIndex('--trained', a.trained);
      if (index.d !== d) throw new Error(`--trained ${a.trained}: dimension ${index.d}, but ${path} has ${d}`);
      if (!index.isTrained) throw new Error(`--trained ${a.trained}: the index is not trained`);
    } else {
      index = inContext(`--factory '${a.factory}'`, () =>
        createIndex(d, { factory: a.factory, metric: a.metric as Metric }, a.shard !== undefined || a.trainOnly),
      );
    }
    if (sn > 1 && index.info.hnsw) usage(`--shard ${a.shard}: ${HNSW_MERGE}, so HNSW shards could never be combined; build the index in one piece`);
    if (!a.trained) {
      const t0 = performance.now();
      const training = {
        factory: a.factory,
        metric: a.metric as Metric,
        trainSample: a.trainSample,
        seed: a.seed,
        opqIters: a.opqIters,
        polysemous: a.polysemous,
        normalize: a.normalize,
      };
      const rows = await inContext(`training ${a.factory} on ${Math.min(n, a.trainSample)} rows of ${path} (--train-sample)`, () =>
        trainIndex(index, r, path, training, { label: 'index train' }),
      );
      if (rows) process.stderr.write(`[index] trained ${a.factory} on ${rows} rows in ${((performance.now() - t0) / 1000).toFixed(1)}s\n`);
    }
    if (a.trainOnly) {
      r.close();
      inContext(`--output ${a.output}`, () => index.write(a.output));
      index.dispose();
      return;
    }
    const [lo, hi] = shardRows(n, [si, sn]);
    const before = index.ntotal;
    if (before > 0 && hi > lo && !a.allowDuplicateIds) {
      const stored = index.storedIds();
      if (stored ? anyIdIn(stored, lo, hi) : lo < before)
        throw new Error(
          `--trained ${a.trained} already holds ${before} vectors, some with the ids of rows ${lo}..${hi - 1} of ${path}: they would be stored twice (start from the empty index of --train-only, or pass --allow-duplicate-ids)`,
        );
    }
    // an index that numbers its vectors itself can only take rows that continue its numbering
    const withIds = index.takesIds;
    if (!withIds && lo !== before)
      throw new Error(
        `--trained ${a.trained}: this index numbers its vectors itself (no IVF lists, no ID map), so it cannot give rows ${lo}..${hi - 1} their row numbers as ids; make the trained index with --train-only, which adds an ID map`,
      );
    const prog = new Progress({ label: 'index add', unit: 'vecs', total: hi - lo });
    await inContext(`adding rows ${lo}..${hi - 1} of ${path}`, () =>
      addRows(index, r, path, lo, hi, { normalize: a.normalize, chunk: a.chunk, onChunk: (k) => prog.tick(k) }),
    );
    prog.done();
    r.close();
    inContext(`--output ${a.output}`, () => index.write(a.output));
    writeIndexMeta(a.output, a.model ? { model: a.model, dim: d } : null);
    process.stderr.write(`[index] ${a.output}: ${index.ntotal} vectors (rows ${lo}..${hi - 1})\n`);
    index.dispose();
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
    if (!a.allowDuplicateIds) {
      const seen = new Map<string, string>();
      for (const f of a._) {
        const st = statSync(f),
          key = `${st.dev}:${st.ino}`;
        if (seen.has(key))
          usage(`${f} is the same file as ${seen.get(key)}: every vector would be in the index twice (pass --allow-duplicate-ids to merge anyway)`);
        seen.set(key, f);
      }
    }
    const base = openIndex('<shards>', a._[0]!);
    const ids: BigInt64Array[] = [];
    const check = (ix: FaissIndex, f: string) => {
      if (ix.info.hnsw) throw new Error(`${f}: ${HNSW_MERGE}; build the index in one piece (without --shard)`);
      const s = ix.storedIds();
      if (s) ids.push(s);
    };
    check(base, a._[0]!);
    for (const f of a._.slice(1)) {
      const s = openIndex('<shards>', f);
      check(s, f);
      inContext(`merging ${f} into ${a._[0]}`, () => base.mergeFrom(s));
      s.dispose();
    }
    if (!a.allowDuplicateIds && ids.length) {
      const all = new BigInt64Array(ids.reduce((t, x) => t + x.length, 0));
      ids.reduce((at, x) => {
        all.set(x, at);
        return at + x.length;
      }, 0);
      all.sort();
      for (let i = 1; i < all.length; i++)
        if (all[i] === all[i - 1])
          throw new Error(
            `the shards share ids (e.g. ${all[i]}): built from overlapping rows? Each id would be in the index twice (pass --allow-duplicate-ids to merge anyway)`,
          );
    }
    inContext(`--output ${a.output}`, () => base.write(a.output));
    process.stderr.write(`[index] merged ${a._.length} shards: ${base.ntotal} vectors → ${a.output}\n`);
    base.dispose();
  },
);

/**
 * The smallest nprobe (powers of two, then every list) whose recall@k, against a search of every
 * list of the same index, reaches the target on a seeded sample of the queries: what the probing
 * loses, measured on this index and these queries (the index's codes set the rest).
 */
export async function tuneNprobe(
  index: FaissIndex,
  q: Float32Array,
  d: number,
  k: number,
  target: number,
  log: (l: string) => void,
): Promise<{ nprobe: number; recall: number }> {
  const nlist = index.info.nlist,
    n = q.length / d;
  // the reference scans every list for each sampled query: keep it to ~2·10⁸ codes
  const m = Math.max(1, Math.min(n, 256, Math.ceil(2e8 / Math.max(1, index.ntotal))));
  const rows = new Rng(3).sample(n, m).sort((a, b) => a - b);
  const sample = new Float32Array(m * d);
  rows.forEach((r, i) => sample.set(q.subarray(r * d, (r + 1) * d), i * d));
  index.setNprobe(nlist);
  const ref = await index.searchAsync(sample, k);
  let p = Math.min(nlist, 1),
    recall = 1;
  for (; ; p = Math.min(nlist, p * 2)) {
    index.setNprobe(p);
    const r = await index.searchAsync(sample, k);
    let hit = 0,
      all = 0;
    for (let i = 0; i < m; i++) {
      const truth = new Set<bigint>();
      for (let j = 0; j < ref.k; j++) {
        const l = ref.labels[i * ref.k + j]!;
        if (l >= 0n) truth.add(l);
      }
      all += truth.size;
      for (let j = 0; j < r.k; j++) if (truth.has(r.labels[i * r.k + j]!)) hit++;
    }
    recall = all ? hit / all : 1;
    if (recall >= target || p >= nlist) break;
  }
  log(
    `[search] nprobe ${p} of ${nlist} lists: recall@${k} ${recall.toFixed(3)} against searching every list, on ${m} sampled queries (--recall-target ${target}; --nprobe to set it)`,
  );
  return { nprobe: p, recall };
}

/** A .npy of vectors as float32, as stored (not normalised). */
function rawVectors(path: string): { data: Float32Array; n: number; d: number } {
  const r = openVectors(path);
  try {
    return { data: r.readRows(0, r.rows), n: r.rows, d: r.cols };
  } finally {
    r.close();
  }
}

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
    if ((a.index && isBinaryIndexFile(a.index)) || (a.base && isBinaryVectors(a.base))) {
      const where = a.index ? `--index ${a.index}` : `--base ${a.base}`;
      if (a.metric || a.nprobe !== undefined || a.efSearch !== undefined)
        usage(`--metric/--nprobe/--ef-search: ${where} holds binary codes, searched exactly by Hamming distance`);
      if (text || a.store || out.jsonl)
        usage(`${where} holds binary codes: it is searched with .npy queries, into TSV, --distances and --ids (no text queries, --store or JSON lines)`);
      binarySearch({ index: a.index, base: a.base, queries: a.queries!, k: a.k, rescore: a.rescore, output: a.output, distances: a.distances, ids: a.ids });
      return;
    }
    if (a.rescore !== undefined) usage('--rescore applies to binary codes (an --index of a binary flat index, or a --base of uint8/int8 codes)');
    const metric = a.metric as 'ip' | 'l2' | 'cosine' | undefined;
    const store = a.store ? { store: await loadStore(a.store), path: a.store } : undefined;
    // text queries are embedded (normalised); vector queries are L2-normalised unless --metric ip or l2 asks for the raw vectors
    const texts = text ? await readTextQueries(query, a.queries) : null;
    const model = texts ? queryModel(a.model, a.index, (l) => process.stderr.write(l)) : undefined;
    const q = texts ? embedQueries(texts, model!) : metric === 'ip' || metric === 'l2' ? rawVectors(a.queries!) : readVectors(a.queries!);
    const queriesAre = texts ? `the queries' vectors (of the model ${model}; --model for another)` : `--queries ${a.queries}`;
    let res,
      l2 = metric === 'l2';
    if (a.index) {
      const idx = openIndex('--index', a.index, a.nprobe);
      l2 = idx.metric === 'l2';
      try {
        if (idx.d !== q.d) throw new Error(`dimension mismatch: --index ${a.index} has ${idx.d}, ${queriesAre} ${q.d}`);
        if (metric && (metric === 'l2') !== (idx.metric === 'l2'))
          throw new Error(
            `--metric ${metric}: --index ${a.index} is built for ${idx.metric === 'l2' ? 'L2 distances' : 'inner products'}${idx.metric === 'ip' ? ' (ip, or cosine: the queries normalised)' : ' (l2)'}`,
          );
        if (a.efSearch !== undefined) {
          if (!idx.info.hnsw) throw new Error(`--ef-search: --index ${a.index} is not an HNSW index (efSearch is how many candidates an HNSW search keeps)`);
          idx.setParams(`efSearch=${a.efSearch}`);
        }
        if (idx.info.ivf && a.nprobe === undefined && idx.ntotal > 0) {
          const t = await tuneNprobe(idx, q.data, q.d, a.k, a.recallTarget, (l) => process.stderr.write(`${l}\n`));
          idx.setNprobe(t.nprobe);
        }
        res = await inContext(`searching --index ${a.index}`, () => idx.searchAsync(q.data, a.k));
      } finally {
        idx.dispose();
      }
    } else res = exactSearch(q, a.base!, metric ?? 'cosine', a.k, a.baseBlock, queriesAre);
    const hits = faissArrays(res, a.k, l2);
    if (a.distances) writeNpy(a.distances, hits.D, [hits.n, hits.k]);
    if (a.ids) writeNpy(a.ids, hits.I, [hits.n, hits.k]);
    if (out.tsv) writeTextOutput(out.tsv[1], hitsTsv(hits, store));
    if (out.jsonl) writeTextOutput(out.jsonl[1], hitsJsonLines(hits, texts ?? Array.from({ length: hits.n }, (_, i) => i), store));
  },
  { native: true },
);

/** Exact search of the queries against a .npy: the base read in blocks of rows (any size), each block's top k merged in. */
function exactSearch(q: Vectors, base: string, m: 'ip' | 'l2' | 'cosine', k: number, block: number, queriesAre: string): ReturnType<typeof knnChunked> {
  const r = openVectors(base);
  if (r.cols !== q.d) throw new Error(`dimension mismatch: --base ${base} has ${r.cols}, ${queriesAre} ${q.d}`);
  const fn = (x: Float32Array, b: Float32Array, dd: number, kk: number) => knn(x, b, dd, kk, m === 'l2' ? 'l2' : 'ip');
  const prog = new Progress({ label: 'exact search', unit: 'base rows', total: r.rows });
  let acc: ReturnType<typeof knnChunked> | null = null;
  for (let i = 0; i < r.rows; i += block) {
    const j = Math.min(r.rows, i + block);
    const part = knnChunked(q.data, readVectorRows(r, i, j, m === 'cosine', base), q.d, k, 65536, fn);
    // mergeTopK keeps the largest scores: L2 distances are merged negated
    if (m === 'l2') for (let t = 0; t < part.distances.length; t++) part.distances[t] = -part.distances[t]!;
    acc = mergeTopK(acc, part, i, Math.min(k, j));
    prog.tick(j - i);
  }
  prog.done();
  r.close();
  const res = acc ?? { n: q.n, k: 0, labels: new BigInt64Array(0), distances: new Float32Array(0) };
  if (m === 'l2') for (let t = 0; t < res.distances.length; t++) res.distances[t] = -res.distances[t]!;
  return res;
}

/** faiss's D and I of a search: [queries, K], -1 ids (and the worst scores) where fewer than K were found. */
function faissArrays(res: { n: number; k: number; labels: BigInt64Array; distances: Float32Array }, K: number, l2: boolean): SearchHits {
  const D = new Float32Array(res.n * K).fill(l2 ? Infinity : -Infinity),
    I = new BigInt64Array(res.n * K).fill(-1n);
  for (let i = 0; i < res.n; i++)
    for (let j = 0; j < Math.min(K, res.k); j++) {
      D[i * K + j] = res.distances[i * res.k + j]!;
      I[i * K + j] = res.labels[i * res.k + j]!;
    }
  return { D, I, n: res.n, k: K };
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

// xling worker / xling cluster embed|graph|index|mine|status|cancel: sharded jobs on a BullMQ queue in Redis, run
// by any number of workers on machines that share a filesystem (--work).
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SpreadSample } from '../embed/centering.js';
import { loadSentenceEncoder, readModelConfig } from '../embed/model-dir.js';
import { SEEK_EVERY } from '../cluster/embed.js';
import { GRAPH_PLAN } from '../cluster/graph.js';
import { INDEX_PLAN } from '../cluster/index-build.js';
import { MINE_PLAN } from '../cluster/mine.js';
import { readSentences } from '../train-data/corpus.js';
import { MarginKind, Retrieval } from '../mine/mine.js';
import { thresholdFromFile } from '../mine/calibration.js';
import { anyFilter, FilterOptions } from '../mine/filters.js';
import { Assignment, openScorer } from '../mine/scorer/index.js';
import { checkLangOptions } from './vectors.js';
import { createIndex } from '../index/build.js';
import { Metric } from '../index/faiss.js';
import { parseSources, sourcePath } from '../train-data/sources.js';
import { checkGraphSettings, readGraphMeta } from '../graph/build.js';
import { isGzipFile, readLines, readOnce } from '../io/input.js';
import { writeNpy } from '../io/npy.js';
import { setNumThreads } from '../tensor/tensor.js';
import { formatCount, formatDuration } from '../util/progress.js';
import { command, usage } from './command.js';
import { DEFAULTED_MODEL_OPTION, modelOrDefault } from './default-model.js';
import { checkPaths, inContext, writeJsonOutput } from './io.js';
import { GRAPH_BUILD_OPTIONS } from './graph-options.js';
import {
  checkTargetPrecision,
  configWhere,
  filterOptionsOf,
  lidFilterOf,
  MINE_CONFIG_OPTION,
  MINE_FILTER_OPTIONS,
  MINE_INPUT_OPTIONS,
  MINE_MODEL_OPTIONS,
  MINE_OPTIONS,
  MINE_SCORING_OPTIONS,
  parseThreshold,
  settingsOf,
} from './mine-options.js';
import { EMBED_FILE_OPTIONS, InputEmbedder, openVectors, vectorsArgument } from './vectors.js';
import { PER_SENTENCE } from '../embed/language.js';
import type { FlowStatus } from '../cluster/flow.js';
import type { StagePlan } from '../cluster/stages.js';

/**
 * The queue's modules (BullMQ and ioredis: a third of the start-up of any xling command), loaded
 * when a cluster command runs rather than with the command table.
 */
async function queueModules() {
  const [queue, flow, stages, worker] = await Promise.all([
    import('../cluster/queue.js'),
    import('../cluster/flow.js'),
    import('../cluster/stages.js'),
    import('../cluster/worker.js'),
  ]);
  return { ...queue, ...flow, ...stages, ...worker };
}

const REDIS = { type: 'string', required: true, metavar: 'URL', help: 'the queue: redis://host:port (one Redis for the submitter and every worker)' } as const;

export const workerCommand = command(
  ['worker'],
  {
    name: 'xling worker',
    summary: 'run xling cluster jobs from a Redis queue (one process per machine or core group)',
    description:
      'Takes jobs submitted by `xling cluster …` and runs them until SIGTERM/SIGINT, which finishes the jobs in hand (a second signal stops at once; those jobs are taken again by another worker after --lock-seconds).',
    options: {
      redis: REDIS,
      concurrency: { type: 'number', default: 1, range: { int: true, min: 1, max: 64 }, help: 'jobs run at once by this process' },
      threads: { type: 'number', range: { int: true, min: 1 }, help: 'intra-op threads (default: all cores)' },
      name: { type: 'string', help: 'worker name shown by xling cluster status (default host:pid)' },
      lockSeconds: {
        type: 'number',
        default: 30,
        range: { int: true, min: 1, max: 3600 },
        help: "a job's lock: a killed worker's job is taken again after this long",
      },
      quiet: { type: 'boolean', default: false, help: 'no line per job' },
    },
    examples: ['xling worker --redis redis://queue-host:6379 --threads 16'],
  },
  async (a) => {
    const { checkRedisUrl, pingRedis, startWorker } = await queueModules();
    checkRedisUrl(a.redis);
    if (a.threads) setNumThreads(a.threads);
    await pingRedis(a.redis);
    const log = (l: string) => {
      if (!a.quiet) process.stderr.write(`[worker] ${l}\n`);
    };
    const worker = startWorker({ redis: a.redis, concurrency: a.concurrency, name: a.name, lockSeconds: a.lockSeconds, log });
    await worker.waitUntilReady();
    process.stderr.write(`[worker] ${a.name ?? `pid ${process.pid}`} ready on ${a.redis} (concurrency ${a.concurrency})\n`);
    await new Promise<void>((resolve) => {
      let stopping = false;
      const stop = (sig: string) => {
        if (stopping) {
          process.stderr.write(`[worker] ${sig} again: stopping now\n`);
          process.exit(130);
        }
        stopping = true;
        process.stderr.write(`[worker] ${sig}: finishing the jobs in hand\n`);
        void worker.close().then(resolve);
      };
      process.on('SIGTERM', () => stop('SIGTERM'));
      process.on('SIGINT', () => stop('SIGINT'));
    });
  },
  { ownSignals: true },
);

export const clusterEmbedCommand = command(
  ['cluster', 'embed'],
  {
    name: 'xling cluster embed',
    summary: 'xling embed split into shards run by xling workers',
    description:
      'Counts the input, decides the centring language once (as xling embed does), submits one job per shard and a merge job, then follows them (shards done, sentences/s, ETA). The same command again follows or resumes the same flow: finished shards are kept. Exit 1 when a shard fails for good.',
    options: {
      ...EMBED_FILE_OPTIONS,
      model: {
        ...DEFAULTED_MODEL_OPTION,
        help: "model directory (every worker must reach it at this path; default: the model that comes with xling, models/default, at the path of this command's installation)",
      },
      input: { type: 'string', required: true, metavar: 'FILE', help: 'one sentence per line; .gz allowed' },
      output: { type: 'string', required: true, alias: 'o', metavar: 'FILE', help: 'vectors (.npy), written by the merge job' },
      dtype: {
        type: 'string',
        choices: ['float32', 'float16'],
        default: 'float32',
        help: "the vectors' type: float16 halves the file (as xling embed --dtype float16)",
      },
      redis: REDIS,
      shards: { type: 'number', required: true, range: { int: true, min: 1, max: 100000 }, help: 'jobs the input is split into' },
      work: { type: 'string', required: true, metavar: 'DIR', help: 'directory every worker can reach: shard files (flow id subdirectory)' },
      chunk: { type: 'number', default: 10000, range: { int: true, min: 1 }, help: 'lines between progress reports (and cancellation checks) within a shard' },
      attempts: {
        type: 'number',
        default: 3,
        range: { int: true, min: 1, max: 100 },
        help: 'tries per job (exponential backoff from 2 s; input errors are not retried)',
      },
      detach: { type: 'boolean', default: false, help: 'submit and exit (follow with xling cluster status)' },
      quiet: { type: 'boolean', default: false, help: 'no progress lines (warnings and errors are still printed)' },
    },
    examples: [
      'xling cluster embed --model runs/fast --input corpus.txt --output corpus.npy --redis redis://queue-host:6379 --shards 64 --work /shared/xling-work',
    ],
  },
  async (a) => {
    const { checkRedisUrl, pingRedis, submitEmbedFlow, followFlow } = await queueModules();
    checkRedisUrl(a.redis);
    if (readOnce(a.input))
      usage(
        `--input ${a.input}: the workers read the input at its path, so it must be a file (standard input and pipes can be read only once); use xling embed, or write it to a file first`,
      );
    a.model = resolve(modelOrDefault(a.model));
    checkPaths([
      ['--model', a.model, 'in-dir'],
      ['--input', a.input, 'in'],
      ['--output', a.output, 'out'],
    ]);
    if (existsSync(a.work) && !statSync(a.work).isDirectory()) usage(`--work ${a.work}: not a directory`);
    readModelConfig(a.model); // a bad model directory is named before Redis is asked
    // the model is loaded here only to check --lang and identify the input's language (one decision for every shard)
    const precision = a.precision as 'fp32' | 'bf16';
    const job = new InputEmbedder(
      loadSentenceEncoder(a.model, { precision }),
      { lang: a.lang, langFlag: '--lang', center: a.center, forceCenter: a.forceCenter, quiet: a.quiet, label: 'cluster embed' },
      a.input,
    );
    // one pass: count the lines (xling embed's rows), note where every SEEK_EVERY-th line starts
    // (shards of a plain file start reading there) and sample them for the language
    const sample = new SpreadSample();
    const seekMarks: number[] | null = isGzipFile(a.input) ? null : [];
    let lines = 0;
    for await (const { line, offset } of readLines(a.input)) {
      if (seekMarks && lines % SEEK_EVERY === 0) seekMarks.push(offset);
      lines++;
      sample.add(line);
    }
    const fp16 = a.dtype === 'float16';
    if (!lines) {
      // as xling embed: an empty input gives a (0, d) array (written here; there is no shard to run)
      const d = loadSentenceEncoder(a.model).dim;
      writeNpy(a.output, fp16 ? new Uint16Array(0) : new Float32Array(0), [0, d], fp16 ? 'float16' : 'float32');
      if (!a.quiet) process.stderr.write(`[cluster] ${a.input} is empty: wrote a (0, ${d}) array to ${a.output}\n`);
      return;
    }
    await pingRedis(a.redis);
    job.identify(sample.lines);
    const lang = job.perSentence && !job.choice ? PER_SENTENCE : (job.lang ?? undefined);
    const center = !a.center || (!job.perSentence && !job.lang) ? false : a.forceCenter ? ('force' as const) : true;
    const sub = await submitEmbedFlow({
      redis: a.redis,
      work: a.work,
      model: a.model,
      input: a.input,
      output: a.output,
      lines,
      seekMarks,
      shards: a.shards,
      lang,
      center,
      normalize: a.normalize,
      fp16,
      batchTokens: a.batchTokens,
      batchSentences: a.batchSentences,
      precision,
      chunk: a.chunk,
      attempts: a.attempts,
    });
    const say = (l: string) => {
      if (!a.quiet) process.stderr.write(`[cluster] ${l}\n`);
    };
    if (sub.state === 'completed') {
      say(`flow ${sub.flow}: already completed → ${a.output}`);
      return;
    }
    say(
      `flow ${sub.flow}: ${sub.state === 'running' ? 'already queued, following it' : `${sub.shards} shards of ${formatCount(lines)} lines submitted`} (work ${sub.work})`,
    );
    if (a.detach) {
      process.stdout.write(`${sub.flow}\n`);
      return;
    }
    const t0 = performance.now();
    let first: number | null = null,
      last = 0;
    const done = await followFlow(a.redis, sub.flow, (s) => {
      const n = s.shards.reduce((x, y) => x + y.done, 0);
      first ??= n;
      const now = performance.now();
      if (now - last < 5000 && s.state !== 'completed') return;
      last = now;
      const rate = (n - first) / ((now - t0) / 1000);
      say(
        `${s.shards.filter((x) => x.state === 'completed').length}/${s.shards.length} shards, ${formatCount(n)}/${formatCount(lines)} sentences, ${formatCount(rate)}/s, ETA ${rate > 0 ? formatDuration((lines - n) / rate) : '?'}${retried(s)}`,
      );
    });
    say(`flow ${done.flow}: done in ${formatDuration((performance.now() - t0) / 1000)} → ${a.output}`);
  },
);

/** Options of every staged cluster command (graph, index). */
const STAGED_OPTIONS = {
  redis: REDIS,
  shards: { type: 'number', required: true, range: { int: true, min: 1, max: 100000 }, help: 'jobs each sharded stage is split into' },
  work: {
    type: 'string',
    required: true,
    metavar: 'DIR',
    help: "directory every worker can reach: the flow's bookkeeping and intermediate files (flow id subdirectory)",
  },
  attempts: {
    type: 'number',
    default: 3,
    range: { int: true, min: 1, max: 100 },
    help: 'tries per job (exponential backoff from 2 s; errors reading the input are not retried)',
  },
  detach: { type: 'boolean', default: false, help: 'submit and exit (follow with xling cluster status)' },
  quiet: { type: 'boolean', default: false, help: 'no progress lines (warnings and errors are still printed)' },
} as const;

export const clusterGraphCommand = command(
  ['cluster', 'graph'],
  {
    name: 'xling cluster graph',
    summary: 'xling graph build as stages run by xling workers (embed, add and query split into shards)',
    description:
      'Submits the first stage not done (store → embed → train → add → query → stats; the job that ends a stage adds the next), then follows the flow stage by stage. The graph directory (--out), the model and the sentence files must be reachable by every worker at the same paths. The same command again follows or resumes the flow; finished steps are kept. Exit 1 when a job fails for good.',
    options: {
      ...GRAPH_BUILD_OPTIONS,
      ...STAGED_OPTIONS,
    },
    examples: [
      'xling cluster graph --model runs/fast --data data/sample/gettext.train.tsv.gz --out /shared/graphs/gettext --redis redis://queue-host:6379 --shards 16 --work /shared/xling-work',
    ],
  },
  async (a) => {
    const { checkRedisUrl, pingRedis } = await queueModules();
    checkRedisUrl(a.redis);
    const sources = parseSources(a.data).map((s) => ('text' in s ? { ...s, text: resolve(s.text) } : { ...s, tsv: resolve(s.tsv) }));
    if (!sources.length && !existsSync(join(a.out, 'graph.json'))) usage('--data: give the sentences (a new graph starts with its store)');
    a.model = resolve(modelOrDefault(a.model));
    checkPaths([['--model', a.model, 'in-dir'], ...sources.map((s) => ['--data', sourcePath(s), 'in'] as const)]);
    if (existsSync(a.work) && !statSync(a.work).isDirectory()) usage(`--work ${a.work}: not a directory`);
    if (existsSync(a.out) && !statSync(a.out).isDirectory()) usage(`--out ${a.out}: exists and is not a directory`);
    readModelConfig(a.model);
    await pingRedis(a.redis);
    const request = {
      model: resolve(a.model),
      sources,
      out: resolve(a.out),
      k: a.k,
      factory: a.factory,
      nprobe: a.nprobe,
      candidates: a.candidates,
      recallTarget: a.recallTarget,
      trainSample: a.trainSample,
      filter: { minWords: a.minWords, maxWords: a.maxWords, dedup: a.dedup },
    };
    checkGraphSettings(a.out, request); // a graph directory built with other settings is refused before anything is queued
    await submitAndFollow(GRAPH_PLAN, request, a, () => {
      const m = readGraphMeta(a.out);
      return m.recall_at_10 !== undefined
        ? `${m.sentences} sentences, recall@10 ${m.recall_at_10}, ${m.bytes_per_sentence} bytes/sentence (index + graph)`
        : null;
    });
  },
);

export const clusterIndexCommand = command(
  ['cluster', 'index'],
  {
    name: 'xling cluster index',
    summary: 'xling index build as jobs run by xling workers: train once, add rows in shards, merge',
    description:
      "Trains the index on a seeded sample (one job), adds the rows in shards, each from the trained index into its own file with the rows' global numbers as ids, and merges them into --output: the index xling index build writes. The vectors and --output must be reachable by every worker at the same paths.",
    options: {
      vectors: { type: 'string', metavar: 'NPY', help: 'the vectors (the same as the first argument)' },
      factory: { type: 'string', default: 'Flat', help: 'faiss index_factory string (not HNSW: faiss cannot merge HNSW graphs)' },
      metric: { type: 'string', default: 'ip', choices: ['ip', 'l2'], help: 'inner product (cosine for normalised vectors) or Euclidean distance' },
      trainSample: { type: 'number', default: 200000, range: { int: true, min: 1 }, help: 'rows sampled (seeded) to train the index' },
      chunk: { type: 'number', default: 100000, range: { int: true, min: 1 }, help: 'rows added per call' },
      normalize: { type: 'boolean', default: true, help: 'L2-normalise rows (cosine via inner product)' },
      seed: { type: 'number', default: 1, range: { int: true, min: 0 }, help: 'random seed of the training sample' },
      opqIters: { type: 'number', default: 20, range: { int: true, min: 1 }, help: 'OPQ optimisation iterations' },
      polysemous: { type: 'boolean', default: false, help: 'polysemous PQ training' },
      output: { type: 'string', alias: 'o', required: true, metavar: 'FAISS', help: 'the index file written' },
      ...STAGED_OPTIONS,
    },
    positionals: [{ name: 'vectors', help: '.npy matrix [n, d] of float32/float16/float64; or --vectors' }],
    examples: [
      'xling cluster index /shared/corpus.npy --factory OPQ32,IVF4096,PQ32 -o /shared/corpus.faiss --redis redis://queue-host:6379 --shards 16 --work /shared/xling-work',
    ],
  },
  async (a) => {
    const { checkRedisUrl, pingRedis } = await queueModules();
    checkRedisUrl(a.redis);
    const vectors = vectorsArgument(a);
    checkPaths([
      ['<vectors>', vectors, 'in'],
      ['--output', a.output, 'out'],
    ]);
    if (existsSync(a.work) && !statSync(a.work).isDirectory()) usage(`--work ${a.work}: not a directory`);
    const r = openVectors(vectors);
    const d = r.cols;
    r.close();
    // a factory faiss cannot build (or cannot merge) is refused before any work
    const probe = inContext(`--factory '${a.factory}'`, () => createIndex(d, { factory: a.factory, metric: a.metric as Metric }, true));
    const hnsw = probe.info.hnsw;
    probe.dispose();
    if (hnsw) usage(`--factory ${a.factory}: faiss cannot merge HNSW graphs, so HNSW shards could never be combined; use xling index build`);
    await pingRedis(a.redis);
    const request = {
      vectors: resolve(vectors),
      output: resolve(a.output),
      factory: a.factory,
      metric: a.metric as Metric,
      trainSample: a.trainSample,
      seed: a.seed,
      opqIters: a.opqIters,
      polysemous: a.polysemous,
      normalize: a.normalize,
      chunk: a.chunk,
    };
    await submitAndFollow(INDEX_PLAN, request, a, () => null);
  },
);

export const clusterMineCommand = command(
  ['cluster', 'mine'],
  {
    name: 'xling cluster mine',
    summary: 'xling mine (exact k-NN, from vectors) with the searches of both directions split into shards',
    description:
      'Shard i searches source rows i/n against every target and target rows i/n against every source (exact inner product); one merge job scores the margins over the joined tables — or, with --scorer, the candidates as xling mine --scorer does — and writes the pairs as xling mine does. The files (the scorer and --model included) must be reachable by every worker at the same paths; embed large corpora with xling cluster embed first. Filters, the margin and candidate selection (margin, retrieval), assignment, header, job attempts and quiet are in the --config file (configs/scorer-mine.json).',
    options: {
      ...MINE_INPUT_OPTIONS,
      // the vectors are required (xling cluster embed makes them); --model only for a scorer's pair model
      srcVectors: { ...MINE_INPUT_OPTIONS.srcVectors, required: true },
      trgVectors: { ...MINE_INPUT_OPTIONS.trgVectors, required: true },
      model: { type: 'string', metavar: 'DIR', help: "with --scorer: the vectors' encoder (for a pair model)" },
      srcLang: MINE_MODEL_OPTIONS.srcLang,
      trgLang: MINE_MODEL_OPTIONS.trgLang,
      output: { type: 'string', alias: 'o', required: true, metavar: 'TSV', help: 'the pairs, as xling mine writes them' },
      k: MINE_OPTIONS.k,
      ...MINE_SCORING_OPTIONS,
      stats: { ...MINE_FILTER_OPTIONS.stats, help: 'kept and rejected counts by reason (JSON)' },
      keepAll: MINE_FILTER_OPTIONS.keepAll,
      config: MINE_CONFIG_OPTION,
      redis: STAGED_OPTIONS.redis,
      shards: STAGED_OPTIONS.shards,
      work: STAGED_OPTIONS.work,
      detach: STAGED_OPTIONS.detach,
    },
    examples: [
      'xling cluster mine --src de.txt --trg en.txt --src-vectors de.npy --trg-vectors en.npy -o pairs.tsv --redis redis://queue-host:6379 --shards 8 --work /shared/xling-work',
      'xling cluster mine --src de.txt --trg en.txt --src-vectors de.npy --trg-vectors en.npy --scorer /shared/scorers/p --model /shared/runs/fast --src-lang de --trg-lang en -o pairs.tsv --redis redis://queue-host:6379 --shards 8 --work /shared/xling-work',
    ],
  },
  async (a) => {
    const s = settingsOf('xling cluster mine', a.config);
    const { checkRedisUrl, pingRedis } = await queueModules();
    const asked = parseThreshold(a.threshold);
    if (asked === 'auto' && !a.scorer)
      usage("--threshold auto goes with --scorer (a scorer's probabilities give it); give a margin threshold as a number, or --threshold-from");
    if (s.assignment !== 'greedy' && !a.scorer) usage(`${configWhere(a.config)}: 'assignment' goes with --scorer (margin mining keeps its 'retrieval' rule)`);
    if (a.model && !a.scorer) usage('--model goes with --scorer (cluster mine reads the vectors: xling cluster embed makes them)');
    checkTargetPrecision(s, a.thresholdFrom, a.config);
    if (asked !== undefined && a.thresholdFrom) usage('give --threshold or --threshold-from, not both');
    const lid = lidFilterOf(s.filters, a, null, configWhere(a.config));
    const filters: Omit<FilterOptions, 'lid'> = filterOptionsOf(s.filters, configWhere(a.config)),
      filtering = anyFilter({ ...filters, lid });
    const filtersSent = { ...filters, ...(lid ? { lid: { dir: resolve(lid.dir), src: lid.src, trg: lid.trg, minConfidence: lid.minConfidence } } : {}) };
    checkRedisUrl(a.redis);
    checkPaths([
      ['--src', a.src, 'in'],
      ['--trg', a.trg, 'in'],
      ['--src-vectors', a.srcVectors, 'in'],
      ['--trg-vectors', a.trgVectors, 'in'],
      ['--model', a.model, 'in-dir'],
      ['--scorer', a.scorer, 'in-dir'],
      ['--threshold-from', a.thresholdFrom, 'in'],
      ['--output', a.output, 'out'],
      ['--stats', a.stats, 'out'],
      ['--keep-all', a.keepAll, 'out'],
    ]);
    // the scorer opened here, so that what it lacks (--model for a pair model, tables for the pair) is said before any work
    checkLangOptions(a.model, [
      ['--src-lang', a.srcLang],
      ['--trg-lang', a.trgLang],
    ]);
    const opened = openScorer(a.scorer, a.model, a.srcLang, a.trgLang, { selfTables: s.selfTables, say: (l) => process.stderr.write(`[cluster] ${l}\n`) });
    const scorer = opened?.scorer ?? null;
    if (scorer && a.k !== scorer.k) process.stderr.write(`[cluster] the scorer was trained on candidates of k=${scorer.k}: using k=${scorer.k}\n`);
    const k = scorer ? scorer.k : a.k;
    const threshold = a.thresholdFrom
      ? thresholdFromFile(
          a.thresholdFrom,
          s.targetPrecision ?? undefined,
          { scorer: !!scorer, margin: s.margin, k, scorerTables: opened ? !!opened.aligner : undefined },
          'cluster',
        )
      : asked === 'auto'
        ? undefined
        : (asked ?? (scorer ? 0.5 : undefined));
    if (existsSync(a.work) && !statSync(a.work).isDirectory()) usage(`--work ${a.work}: not a directory`);
    // what the jobs will read is checked here, before any work: sentences, and one vector per line
    const cols: number[] = [];
    for (const [flag, text, flagV, vec] of [
      ['--src', a.src, '--src-vectors', a.srcVectors],
      ['--trg', a.trg, '--trg-vectors', a.trgVectors],
    ] as const) {
      const n = (await readSentences(text)).sentences.length;
      const r = openVectors(vec);
      r.close();
      if (r.rows !== n) throw new Error(`${flagV} ${vec}: ${r.rows} vectors but ${flag} ${text} has ${n} lines`);
      cols.push(r.cols);
    }
    if (cols[0] !== cols[1])
      throw new Error(`dimension mismatch: --src-vectors ${a.srcVectors} has ${cols[0]} columns, --trg-vectors ${a.trgVectors} ${cols[1]}`);
    await pingRedis(a.redis);
    const request = {
      src: resolve(a.src),
      trg: resolve(a.trg),
      srcVectors: resolve(a.srcVectors),
      trgVectors: resolve(a.trgVectors),
      output: resolve(a.output),
      k,
      margin: s.margin as MarginKind,
      retrieval: s.retrieval as Retrieval,
      threshold,
      ...(a.scorer
        ? {
            scorer: {
              dir: resolve(a.scorer),
              ...(a.model ? { model: resolve(a.model) } : {}),
              srcLang: a.srcLang,
              trgLang: a.trgLang,
              selfTables: s.selfTables,
              assignment: s.assignment as Assignment,
              auto: asked === 'auto',
            },
          }
        : {}),
      ...(filtering ? { filters: filtersSent } : {}),
      ...(s.header ? { header: true } : {}),
      ...(a.stats ? { stats: resolve(a.stats) } : {}),
      ...(a.keepAll ? { keepAll: resolve(a.keepAll) } : {}),
    };
    await submitAndFollow(MINE_PLAN, request, { ...a, attempts: s.attempts, quiet: s.quiet }, () => null);
  },
);

/** Submits a staged job (or finds it), then follows it stage by stage; throws when it fails. */
async function submitAndFollow<R>(
  plan: StagePlan<R>,
  request: R,
  a: { redis: string; work: string; shards: number; attempts: number; detach: boolean; quiet: boolean },
  summary: () => string | null,
): Promise<void> {
  const { stagedFlowStatus, submitStaged } = await queueModules();
  const sub = await submitStaged(plan, { redis: a.redis, work: a.work, shards: a.shards, attempts: a.attempts, request });
  const say = (l: string) => {
    if (!a.quiet) process.stderr.write(`[cluster] ${l}\n`);
  };
  const out = plan.output(request);
  if (sub.state === 'completed') {
    say(`flow ${sub.flow}: already completed → ${out}`);
    return;
  }
  say(
    `flow ${sub.flow}: ${sub.state === 'running' ? 'already queued, following it' : `submitted from the ${plan.stages[sub.stage]!.name} stage, ${a.shards} shards per sharded stage`} (work ${sub.work})`,
  );
  if (a.detach) {
    process.stdout.write(`${sub.flow}\n`);
    return;
  }
  const t0 = performance.now();
  let shown = '';
  for (;;) {
    const s = await stagedFlowStatus(a.redis, sub.flow);
    if (!s) throw new Error(`flow ${sub.flow} is no longer in the queue (cancelled?)`);
    if (s.state === 'completed') break;
    if (s.state === 'failed') {
      const bad = s.jobs.filter((j) => j.state === 'failed' && j.failedReason && j.failedReason !== s.failedReason).map((j) => `  ${j.failedReason}`);
      throw new Error(
        `flow ${sub.flow} failed in its ${s.stages[s.stage]} stage: ${s.failedReason ?? 'a job failed'}${bad.length ? `\n${bad.join('\n')}` : ''}`,
      );
    }
    if (s.state === 'stalled')
      throw new Error(
        `flow ${sub.flow}: the ${s.stages[s.stage]} stage was never added (a worker stopped between stages); run the same command again to resume`,
      );
    const shards = s.jobs.filter((j) => j.shard !== null);
    const line = `stage ${s.stage + 1}/${s.stages.length} ${s.stages[s.stage]}${shards.length ? `: ${shards.filter((j) => j.state === 'completed').length}/${shards.length} shards` : ''}`;
    if (line !== shown) {
      say(`${line} (${formatDuration((performance.now() - t0) / 1000)})`);
      shown = line;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  say(`flow ${sub.flow}: done in ${formatDuration((performance.now() - t0) / 1000)} → ${out}`);
  const extra = summary();
  if (extra) say(extra);
}

function retried(s: FlowStatus): string {
  const r = s.shards.filter((x) => x.attempts > 1 || (x.attempts > 0 && x.state !== 'completed' && x.failedReason)).length;
  return r ? `, ${r} shard${r > 1 ? 's' : ''} retried` : '';
}

export const clusterStatusCommand = command(
  ['cluster', 'status'],
  {
    name: 'xling cluster status',
    summary: 'the flows in a queue, or one flow shard by shard (state, progress, tries, worker, failure)',
    options: {
      redis: REDIS,
      flow: { type: 'string', help: 'flow id (printed by xling cluster …); without it, every flow' },
      json: { type: 'string', metavar: 'FILE', help: 'write the status as JSON (- for standard output)' },
    },
  },
  async (a) => {
    const { checkRedisUrl, pingRedis, listFlows, flowStatus, planOf, stagedFlowStatus } = await queueModules();
    checkRedisUrl(a.redis);
    checkPaths([['--json', a.json, 'out-text']]);
    await pingRedis(a.redis);
    if (!a.flow) {
      const flows = await listFlows(a.redis);
      if (a.json) writeJsonOutput(a.json, flows);
      if (a.json !== '-') for (const f of flows) process.stdout.write(`${f.flow}\t${f.state}\t${f.created}\n`);
      return;
    }
    if (planOf(a.flow)) {
      const g = await stagedFlowStatus(a.redis, a.flow);
      if (!g) throw new Error(`--flow ${a.flow}: no such flow in the queue`);
      if (a.json) writeJsonOutput(a.json, g);
      if (a.json === '-') return;
      process.stdout.write(
        `${g.flow} (${g.kind}): ${g.state}, stage ${g.stage + 1}/${g.stages.length} ${g.stages[g.stage]} → ${g.output}${g.failedReason ? `\n  ${g.failedReason}` : ''}\n`,
      );
      for (const j of g.jobs)
        process.stdout.write(
          `  ${j.shard === null ? g.stages[g.stage] : `shard ${j.shard + 1}/${g.shards}`}\t${j.state}\ttries ${j.attempts}\t${j.worker ?? '-'}${j.failedReason ? `\t${j.failedReason}` : ''}\n`,
        );
      return;
    }
    const s = await flowStatus(a.redis, a.flow);
    if (!s) throw new Error(`--flow ${a.flow}: no such flow in the queue`);
    if (a.json) writeJsonOutput(a.json, s);
    if (a.json === '-') return;
    process.stdout.write(`${s.flow} (${s.kind}): ${s.state}${s.output ? ` → ${s.output}` : ''}${s.failedReason ? `\n  ${s.failedReason}` : ''}\n`);
    for (const x of s.shards)
      process.stdout.write(
        `  shard ${x.shard + 1}/${s.shards.length}\t${x.state}\t${x.done}/${x.total}\ttries ${x.attempts}\t${x.worker ?? '-'}${x.failedReason ? `\t${x.failedReason}` : ''}\n`,
      );
  },
);

export const clusterCancelCommand = command(
  ['cluster', 'cancel'],
  {
    name: 'xling cluster cancel',
    summary: 'cancel a flow: queued jobs are removed, running ones stop within one chunk',
    options: {
      redis: REDIS,
      flow: { type: 'string', required: true, help: 'flow id' },
    },
  },
  async (a) => {
    const { checkRedisUrl, pingRedis, cancelFlow, planOf, cancelStaged } = await queueModules();
    checkRedisUrl(a.redis);
    await pingRedis(a.redis);
    const r = planOf(a.flow) ? await cancelStaged(a.redis, a.flow) : await cancelFlow(a.redis, a.flow);
    process.stderr.write(`[cluster] flow ${a.flow} cancelled${r.removed ? ' and removed' : ' (jobs held by workers stop at their next check)'}\n`);
  },
);

// xling worker / xling cluster embed|graph|index|mine|status|cancel: sharded jobs on a BullMQ queue in Redis, run
// by any number of workers on machines that share a filesystem (--work).
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readModelConfig } from '../embed/model-dir.js';
import { GRAPH_PLAN } from '../cluster/graph.js';
import { INDEX_PLAN } from '../cluster/index-build.js';
import { MineSettings } from '../mine/settings.js';
import { createIndex } from '../index/build.js';
import { Metric } from '../index/faiss.js';
import { parseSources, sourcePath } from '../train-data/sources.js';
import { checkGraphSettings, readGraphMeta } from '../graph/build.js';
import { readOnce } from '../io/input.js';
import { setNumThreads } from '../tensor/tensor.js';
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
import { EMBED_FILE_OPTIONS, openVectors, vectorsArgument } from './vectors.js';

/**
 * The queue's modules (BullMQ and ioredis: a third of the start-up of any xling command), loaded
 * when a cluster command runs rather than with the command table.
 */
async function queueModules() {
  const [queue, flow, stages, worker, follow, embed, mine] = await Promise.all([
    import('../cluster/queue.js'),
    import('../cluster/flow.js'),
    import('../cluster/stages.js'),
    import('../cluster/worker.js'),
    import('../cluster/follow.js'),
    import('../cluster/submit-embed.js'),
    import('../cluster/submit-mine.js'),
  ]);
  return { ...queue, ...flow, ...stages, ...worker, ...follow, ...embed, ...mine };
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
    const { checkRedisUrl, checkWorkDir, submitClusterEmbed } = await queueModules();
    checkRedisUrl(a.redis);
    if (readOnce(a.input))
      usage(
        `--input ${a.input}: the workers read the input at its path, so it must be a file (standard input and pipes can be read only once); use xling embed, or write it to a file first`,
      );
    const model = resolve(modelOrDefault(a.model));
    checkPaths([
      ['--model', model, 'in-dir'],
      ['--input', a.input, 'in'],
      ['--output', a.output, 'out'],
    ]);
    checkWorkDir(a.work);
    await submitClusterEmbed({ ...a, model, dtype: a.dtype as 'float32' | 'float16', precision: a.precision as 'fp32' | 'bf16' });
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
    const { checkRedisUrl, checkWorkDir, pingRedis, submitAndFollow } = await queueModules();
    checkRedisUrl(a.redis);
    const sources = parseSources(a.data).map((s) => ('text' in s ? { ...s, text: resolve(s.text) } : { ...s, tsv: resolve(s.tsv) }));
    if (!sources.length && !existsSync(join(a.out, 'graph.json'))) usage('--data: give the sentences (a new graph starts with its store)');
    a.model = resolve(modelOrDefault(a.model));
    checkPaths([['--model', a.model, 'in-dir'], ...sources.map((s) => ['--data', sourcePath(s), 'in'] as const)]);
    checkWorkDir(a.work);
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
    const { checkRedisUrl, checkWorkDir, pingRedis, submitAndFollow } = await queueModules();
    checkRedisUrl(a.redis);
    const vectors = vectorsArgument(a);
    checkPaths([
      ['<vectors>', vectors, 'in'],
      ['--output', a.output, 'out'],
    ]);
    checkWorkDir(a.work);
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
    const { checkRedisUrl, submitClusterMine } = await queueModules();
    const threshold = checkedThreshold(a, s);
    const lid = lidFilterOf(s.filters, a, null, configWhere(a.config));
    const filters = filterOptionsOf(s.filters, configWhere(a.config));
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
    await submitClusterMine({ ...a, threshold, settings: s, filters, lid });
  },
);

/** cluster mine's options that go together checked against the settings; --threshold as given (a number or 'auto'). */
function checkedThreshold(
  a: { scorer?: string; model?: string; threshold?: string; thresholdFrom?: string; config?: string },
  s: MineSettings,
): number | 'auto' | undefined {
  const asked = parseThreshold(a.threshold);
  if (asked === 'auto' && !a.scorer)
    usage("--threshold auto goes with --scorer (a scorer's probabilities give it); give a margin threshold as a number, or --threshold-from");
  if (s.assignment !== 'greedy' && !a.scorer) usage(`${configWhere(a.config)}: 'assignment' goes with --scorer (margin mining keeps its 'retrieval' rule)`);
  if (a.model && !a.scorer) usage('--model goes with --scorer (cluster mine reads the vectors: xling cluster embed makes them)');
  checkTargetPrecision(s, a.thresholdFrom, a.config);
  if (asked !== undefined && a.thresholdFrom) usage('give --threshold or --threshold-from, not both');
  return asked;
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

// A long-running worker: takes xling jobs from the queue and runs them. Inference runs on the
// addon's worker threads (embedAsync), so the event loop stays free to renew job locks; a worker
// killed mid-job loses its lock, and after --lock-seconds another worker takes the job again.
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { Job, UnrecoverableError, Worker } from 'bullmq';
import { loadSentenceEncoder } from '../embed/model-dir.js';
import { SentenceEncoderModel } from '../embed/model.js';
import { EmbedMergeJob, EmbedShardJob, InputError, mergeVectorShards, runEmbedShard } from './embed.js';
import { isInputStage, runStageJob, StageJob, stageJobLabel } from './stages.js';
import { cancelMarker, JOB, QUEUE, redisConnection } from './queue.js';

export interface WorkerOptions {
  redis: string;
  /** Jobs run at once by this process. */
  concurrency: number;
  /** Shown in `xling cluster status` (default host:pid). */
  name?: string;
  /** How long a job's lock lasts without renewal: a killed worker's job is taken again after it. */
  lockSeconds: number;
  log?: (line: string) => void;
}

/** The shard's place in the input, for messages: "shard 3/8 (input lines 201–300)". */
const shardLabel = (d: EmbedShardJob) => `shard ${d.shard + 1}/${d.shards} (${d.input} lines ${d.start + 1}–${d.end})`;

export function startWorker(o: WorkerOptions): Worker {
  const log = o.log ?? (() => {});
  const name = o.name ?? `${hostname()}:${process.pid}`;
  // one model in memory at a time: a job for another model (or precision) replaces it
  let cached: { dir: string; precision: 'fp32' | 'bf16'; model: SentenceEncoderModel } | null = null;
  const modelFor = (dir: string, precision: 'fp32' | 'bf16' = 'fp32') => {
    if (cached?.dir !== dir || cached.precision !== precision) cached = { dir, precision, model: loadSentenceEncoder(dir, { precision }) };
    return cached.model;
  };
  const checkCancelled = (work: string, flow: string) => {
    if (existsSync(cancelMarker(work))) throw new UnrecoverableError(`flow ${flow} was cancelled`);
  };

  const processor = async (job: Job) => {
    switch (job.name) {
      case JOB.embedShard: {
        const d = job.data as EmbedShardJob;
        checkCancelled(d.work, d.flow);
        try {
          const t0 = performance.now();
          const r = await runEmbedShard(d, modelFor(d.model, d.precision), async (done) => {
            checkCancelled(d.work, d.flow);
            await job.updateProgress({ done, total: d.end - d.start });
          });
          log(`${job.id}: ${r.reused ? 'already embedded' : `${r.rows} sentences in ${((performance.now() - t0) / 1000).toFixed(1)} s`}`);
          return r;
        } catch (e) {
          if (e instanceof UnrecoverableError) throw e;
          const msg = `${shardLabel(d)}: ${(e as Error).message}`;
          throw e instanceof InputError ? new UnrecoverableError(msg) : new Error(msg);
        }
      }
      case JOB.embedMerge: {
        const d = job.data as EmbedMergeJob;
        checkCancelled(d.work, d.flow);
        const rows = mergeVectorShards(d);
        log(`${job.id}: ${rows} vectors → ${d.output}`);
        return { rows, output: d.output };
      }
      case JOB.stageRun:
      case JOB.stageMerge: {
        const d = job.data as StageJob;
        checkCancelled(d.work, d.flow);
        const label = `${stageJobLabel(d)}${job.name === JOB.stageMerge ? ' (merge)' : ''}`;
        const t0 = performance.now();
        try {
          await runStageJob(o.redis, d, job.name === JOB.stageMerge, (l) => log(`${job.id}: ${l}`));
        } catch (e) {
          const msg = `${label}: ${(e as Error).message}`;
          throw isInputStage(d) && job.name === JOB.stageRun ? new UnrecoverableError(msg) : new Error(msg);
        }
        log(`${job.id}: ${label} done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
        return { stage: d.stage };
      }
      default:
        throw new UnrecoverableError(`unknown job '${job.name}' (a newer xling submitted it?)`);
    }
  };

  const lock = o.lockSeconds * 1000;
  const worker = new Worker(QUEUE, processor, {
    connection: redisConnection(o.redis),
    concurrency: o.concurrency,
    name,
    lockDuration: lock,
    stalledInterval: lock,
    maxStalledCount: 2,
  });
  worker.on('failed', (job, err) => log(`${job?.id ?? '?'}: failed (attempt ${job?.attemptsMade ?? '?'}): ${err.message}`));
  worker.on('error', (err) => log(`queue error: ${err.message}`));
  return worker;
}

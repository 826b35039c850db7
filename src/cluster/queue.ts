// The job queue of xling's workers: BullMQ on Redis. One queue carries every kind of job; a job's
// name says what it is (JOB) and its data holds everything a worker needs
// (absolute paths on the shared --work filesystem), so any worker can run any job.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ConnectionOptions, Job, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { writeFileAtomicSync } from '../util/atomic.js';

export const QUEUE = 'xling';

/** Job names: what a job does. */
export const JOB = { embedShard: 'embed-shard', embedMerge: 'embed-merge', stageRun: 'stage-run', stageMerge: 'stage-merge' } as const;

/** A cancelled flow's work directory holds this file (written by `xling cluster cancel`). */
export const cancelMarker = (work: string) => join(work, 'CANCELLED');

/** Checks a redis:// URL (a bad one is an argument error, not a hang). */
export function checkRedisUrl(url: string, flag = '--redis'): void {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`${flag} ${url}: not a URL (expected redis://host:port)`);
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') throw new Error(`${flag} ${url}: expected a redis:// or rediss:// URL`);
}

/** BullMQ connection options: blocking commands need maxRetriesPerRequest null. */
export function redisConnection(url: string): ConnectionOptions {
  checkRedisUrl(url);
  return { url, maxRetriesPerRequest: null };
}

/**
 * One PING with a short timeout: commands that talk to Redis fail at once with a clear message
 * when it is not there (BullMQ's own clients would retry forever).
 */
export async function pingRedis(url: string, timeoutMs = 3000): Promise<void> {
  checkRedisUrl(url);
  const r = new Redis(url, { lazyConnect: true, connectTimeout: timeoutMs, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  r.on('error', () => {
    /* reported by connect() below */
  });
  try {
    await r.connect();
    await r.ping();
  } catch (e) {
    throw new Error(`cannot reach Redis at ${url}: ${(e as Error).message} (start one with: redis-server --port PORT)`);
  } finally {
    r.disconnect();
  }
}

/** Runs fn with the queue open (closed after). */
export async function withQueue<T>(redis: string, fn: (q: Queue) => Promise<T>): Promise<T> {
  const q = new Queue(QUEUE, { connection: redisConnection(redis) });
  try {
    return await fn(q);
  } finally {
    await q.close();
  }
}

/** Removes a job (and its children) if it is there; a job a worker holds cannot be removed: it fails at its next check. */
export async function removeJob(q: Queue, id: string): Promise<void> {
  const j = await Job.fromId(q, id);
  if (j)
    await j.remove({ removeChildren: true }).catch(() => {
      /* locked by a worker */
    });
}

/** A job's row in a flow's status: its state, tries, the worker that ran it and why it failed. */
export async function jobStatus(
  q: Queue,
  id: string,
): Promise<{ job: Job | undefined; state: string; attempts: number; worker: string | null; failedReason: string | null }> {
  const job = await Job.fromId(q, id);
  return {
    job,
    state: job ? await job.getState() : 'missing',
    attempts: job?.attemptsMade ?? 0,
    worker: job?.processedBy ?? null,
    failedReason: job?.failedReason || null,
  };
}

/**
 * Cancels a flow (an embed flow or a staged one, as `status` reports it): a marker in its work
 * directory makes every job of it fail at its next check, then `remove` takes the jobs no worker
 * holds out of the queue; true when the flow is gone from the queue (`status` finds nothing).
 */
export async function cancelFlowJobs<S extends { state: string; output: string | null; work: string | null }>(
  redis: string,
  flow: string,
  status: (redis: string, flow: string) => Promise<S | null>,
  remove: (q: Queue, st: S) => Promise<void>,
): Promise<{ removed: boolean }> {
  const st = await status(redis, flow);
  if (!st) throw new Error(`no flow ${flow} in the queue (xling cluster status lists them)`);
  if (st.state === 'completed') throw new Error(`flow ${flow} has already completed (${st.output})`);
  if (st.work) {
    mkdirSync(st.work, { recursive: true });
    writeFileAtomicSync(cancelMarker(st.work), `cancelled ${new Date().toISOString()}\n`);
  }
  await withQueue(redis, (q) => remove(q, st));
  return { removed: !(await status(redis, flow)) };
}

// The job queue of xling's workers: BullMQ on Redis. One queue carries every kind of job; a job's
// name says what it is (JOB) and its data holds everything a worker needs
// (absolute paths on the shared --work filesystem), so any worker can run any job.
import { join } from 'node:path';
import { ConnectionOptions } from 'bullmq';
import { Redis } from 'ioredis';

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

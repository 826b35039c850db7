// Flows: a parent job that merges, with one child job per shard (BullMQ FlowProducer). Job ids
// are derived from the request (inputs, options, shard count), so submitting the same request
// again follows or resumes the same flow and never duplicates work: shards whose files are
// complete are not embedded again.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { FlowProducer, Job, Queue } from 'bullmq';
import { writeFileAtomicSync } from '../util/atomic.js';
import { EmbedMergeJob, EmbedShardJob, SEEK_EVERY, ShardEmbedding, shardRanges, vectorsInProgress } from './embed.js';
import { stagedFlowStatus } from './stages.js';
import { cancelFlowJobs, cancelMarker, JOB, jobStatus, QUEUE, redisConnection, removeJob, withQueue } from './queue.js';

export interface EmbedFlowRequest extends ShardEmbedding {
  redis: string;
  /** A directory every worker can reach (shared filesystem). */
  work: string;
  model: string;
  input: string;
  output: string;
  /** Lines of the input (counted by the submitter). */
  lines: number;
  /** Byte offsets of lines 0, SEEK_EVERY, 2·SEEK_EVERY, … (plain files; null for .gz: shards read from the start). */
  seekMarks: number[] | null;
  shards: number;
  /** Tries per job (retries with exponential backoff from 2 s). */
  attempts: number;
}

export interface ShardStatus {
  shard: number;
  id: string;
  state: string;
  done: number;
  total: number;
  attempts: number;
  worker: string | null;
  failedReason: string | null;
}
export interface FlowStatus {
  flow: string;
  kind: string;
  state: string;
  output: string | null;
  work: string | null;
  failedReason: string | null;
  shards: ShardStatus[];
}

const mergeId = (flow: string) => `${flow}-merge`;
const shardId = (flow: string, i: number) => `${flow}-shard-${i}`;

/** The flow id of a request: same inputs (path, size, mtime), options and shards → same id. */
export function embedFlowId(r: EmbedFlowRequest): string {
  const inStat = statSync(r.input);
  const key = {
    model: resolve(r.model),
    input: resolve(r.input),
    size: inStat.size,
    mtime: inStat.mtimeMs,
    output: resolve(r.output),
    lines: r.lines,
    shards: r.shards,
    lang: r.lang ?? null,
    center: r.center,
    normalize: r.normalize,
    fp16: r.fp16,
    batchTokens: r.batchTokens ?? null,
    batchSentences: r.batchSentences ?? null,
    // (absent at fp32: the ids of fp32 flows stay what they were)
    ...(r.precision === 'bf16' ? { precision: 'bf16' } : {}),
  };
  return `embed-${createHash('sha1').update(JSON.stringify(key)).digest('hex').slice(0, 12)}`;
}

/**
 * Submits a sharded embed (or finds it already there). 'completed': the output exists from an
 * earlier run; 'running': the flow was already queued (it is followed, not added again);
 * 'submitted': added now — after removing a failed or cancelled flow of the same id, whose
 * finished shard files are reused.
 */
export async function submitEmbedFlow(
  r: EmbedFlowRequest,
): Promise<{ flow: string; work: string; shards: number; state: 'submitted' | 'running' | 'completed' }> {
  const flow = embedFlowId(r);
  const work = resolve(r.work, flow);
  const ranges = shardRanges(r.lines, r.shards);
  return withQueue(r.redis, async (q) => {
    const existing = await Job.fromId(q, mergeId(flow));
    if (existing) {
      const state = await existing.getState();
      if (state === 'completed' && existsSync(r.output)) return { flow, work, shards: ranges.length, state: 'completed' as const };
      if (state !== 'completed' && state !== 'failed' && !existsSync(cancelMarker(work)))
        return { flow, work, shards: ranges.length, state: 'running' as const };
      await removeFlow(q, flow, ranges.length);
    }
    mkdirSync(work, { recursive: true });
    rmSync(cancelMarker(work), { force: true });
    // markers of finished shards are kept for reuse only with the rows they describe
    if (!existsSync(vectorsInProgress(work))) for (const f of readdirSync(work)) if (f.endsWith('.done')) rmSync(join(work, f), { force: true });
    const common = { flow, work };
    const inputBytes = statSync(r.input).size;
    const merge: EmbedMergeJob = { ...common, shards: ranges.length, output: resolve(r.output), rows: r.lines };
    writeFileAtomicSync(join(work, 'flow.json'), JSON.stringify({ flow, kind: 'embed', request: { ...r, redis: undefined }, merge }, null, 1) + '\n');
    const opts = { attempts: r.attempts, backoff: { type: 'exponential', delay: 2000 } };
    const producer = new FlowProducer({ connection: redisConnection(r.redis) });
    try {
      await producer.add({
        name: JOB.embedMerge,
        queueName: QUEUE,
        data: merge,
        opts: { ...opts, jobId: mergeId(flow) },
        children: ranges.map(([start, end], i) => {
          const mark = r.seekMarks ? Math.min(Math.floor(start / SEEK_EVERY), r.seekMarks.length - 1) : 0;
          const data: EmbedShardJob = {
            ...common,
            shard: i,
            shards: ranges.length,
            model: resolve(r.model),
            input: resolve(r.input),
            inputBytes,
            start,
            end,
            seekByte: r.seekMarks ? r.seekMarks[mark]! : 0,
            seekLine: mark * SEEK_EVERY,
            rows: r.lines,
            lang: r.lang,
            center: r.center,
            normalize: r.normalize,
            fp16: r.fp16,
            batchTokens: r.batchTokens,
            batchSentences: r.batchSentences,
            chunk: r.chunk,
            ...(r.precision === 'bf16' ? { precision: 'bf16' as const } : {}),
          };
          return { name: JOB.embedShard, queueName: QUEUE, data, opts: { ...opts, jobId: shardId(flow, i), failParentOnFailure: true } };
        }),
      });
    } finally {
      await producer.close();
    }
    return { flow, work, shards: ranges.length, state: 'submitted' as const };
  });
}

/** Removes a flow's jobs (a job a worker holds cannot be removed: it fails at its next check). */
async function removeFlow(q: Queue, flow: string, shards: number): Promise<void> {
  for (let i = 0; i < shards; i++) await removeJob(q, shardId(flow, i));
  await removeJob(q, mergeId(flow));
}

function shardCount(parent: Job): number {
  const n = (parent.data as EmbedMergeJob).shards;
  return Number.isInteger(n) ? n : 0;
}

/** Per-shard state, progress, tries, the worker that ran it and why it failed. */
export async function flowStatus(redis: string, flow: string): Promise<FlowStatus | null> {
  return withQueue(redis, async (q) => {
    const parent = await Job.fromId(q, mergeId(flow));
    if (!parent) return null;
    const shards: ShardStatus[] = [];
    for (let i = 0; i < shardCount(parent); i++) {
      const { job: j, state: found, attempts, worker, failedReason } = await jobStatus(q, shardId(flow, i));
      const d = j?.data as EmbedShardJob | undefined;
      const p = j?.progress as { done?: number } | undefined;
      const state = j ? found : 'removed';
      const total = d ? d.end - d.start : 0;
      shards.push({ shard: i, id: shardId(flow, i), state, done: state === 'completed' ? total : (p?.done ?? 0), total, attempts, worker, failedReason });
    }
    const pd = parent.data as EmbedMergeJob;
    return {
      flow,
      kind: parent.name,
      state: await parent.getState(),
      output: pd.output ?? null,
      work: pd.work ?? null,
      failedReason: parent.failedReason || null,
      shards,
    };
  });
}

/** The flows in the queue (their merge jobs), newest first. */
export async function listFlows(redis: string): Promise<{ flow: string; state: string; created: string }[]> {
  return withQueue(redis, async (q) => {
    const jobs = await q.getJobs(['waiting-children', 'waiting', 'active', 'delayed', 'completed', 'failed'], 0, 1000);
    const out = [];
    for (const j of jobs) {
      if (!j.id) continue;
      if (j.name === JOB.embedMerge)
        out.push({ flow: j.id.replace(/-merge$/, ''), state: await j.getState(), created: new Date(j.timestamp).toISOString(), ts: j.timestamp });
      // a staged flow (graph, index, mine): the job that ends its first stage names it; its state is its current stage's
      const staged = /^(.*)-s0-[a-z]+$/.exec(j.id);
      if ((j.name === JOB.stageRun || j.name === JOB.stageMerge) && staged)
        out.push({
          flow: staged[1]!,
          state: (await stagedFlowStatus(redis, staged[1]!))?.state ?? 'removed',
          created: new Date(j.timestamp).toISOString(),
          ts: j.timestamp,
        });
    }
    return out.sort((a, b) => b.ts - a.ts).map(({ ts: _ts, ...f }) => f);
  });
}

/** Cancels a flow (cancelFlowJobs: a running shard stops within one chunk). */
export async function cancelFlow(redis: string, flow: string): Promise<{ removed: boolean }> {
  return cancelFlowJobs(redis, flow, flowStatus, (q, st) => removeFlow(q, flow, st.shards.length));
}

/**
 * Follows a flow until its merge job completes (resolves) or fails (rejects with the reason and
 * every failed shard's). `onTick` gets the status about once a second.
 */
export async function followFlow(redis: string, flow: string, onTick: (s: FlowStatus) => void, pollMs = 1000): Promise<FlowStatus> {
  for (;;) {
    const s = await flowStatus(redis, flow);
    if (!s) throw new Error(`flow ${flow} is no longer in the queue (cancelled?)`);
    onTick(s);
    if (s.state === 'completed') return s;
    if (s.state === 'failed') {
      const bad = s.shards.filter((x) => x.state === 'failed' && x.failedReason).map((x) => `  ${x.failedReason}`);
      throw new Error(`flow ${flow} failed: ${s.failedReason ?? 'a job failed'}${bad.length ? `\n${bad.join('\n')}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

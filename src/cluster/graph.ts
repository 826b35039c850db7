// `xling graph build` as a chain of stages on the queue: store → embed (shards) → train → add
// (shards) → query (shards) → stats. A sharded stage is a BullMQ flow (one child job per shard,
// a parent that runs `graph merge`); a stage that cannot be split is one job. Stages must run in
// order and a BullMQ job has one parent, so the job that ends a stage adds the next stage's jobs
// itself before it completes (ids are derived from the request: adding them twice is a no-op).
// Every step is buildGraph's own, which skips outputs that exist, so a job run twice (a killed
// worker, a lost completion) redoes nothing that was finished.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { FlowJob, FlowProducer, Job, Queue } from 'bullmq';
import { SentenceSource, sourcePath } from '../data/sources.js';
import { GraphBuildOptions, GraphStep } from '../graph/build.js';
import { writeFileAtomicSync } from '../util/atomic.js';
import { cancelMarker, JOB, QUEUE, redisConnection } from './queue.js';

/** The stages in order; embed, add and query are split into shards. */
export const GRAPH_STAGES: { step: GraphStep; sharded: boolean }[] = [
  { step: 'store', sharded: false }, { step: 'embed', sharded: true }, { step: 'train', sharded: false },
  { step: 'add', sharded: true }, { step: 'query', sharded: true }, { step: 'stats', sharded: false },
];

/** What a graph flow builds: xling graph build's options (paths absolute, for every worker). */
export type GraphBuildRequest = Omit<GraphBuildOptions, 'shard' | 'steps' | 'quiet' | 'log'>;

export interface GraphFlowRequest {
  redis: string;
  /** A directory every worker can reach: the flow's bookkeeping (the graph itself goes to build.out). */
  work: string;
  build: GraphBuildRequest;
  shards: number;
  attempts: number;
}

/** The data of every job of a graph flow. */
export interface GraphJob {
  flow: string;
  work: string;
  stage: number;
  /** [i, n] for a shard's job; absent for the job that ends the stage. */
  shard?: [number, number];
  shards: number;
  attempts: number;
  build: GraphBuildRequest;
}

const stageId = (flow: string, s: number) => `${flow}-s${s}-${GRAPH_STAGES[s]!.step}`;
const stageShardId = (flow: string, s: number, i: number) => `${stageId(flow, s)}-shard-${i}`;
export const isGraphFlow = (flow: string) => flow.startsWith('graph-');

/** Same model, sentence files (path, size, mtime), output, options and shards → same flow id. */
export function graphFlowId(r: GraphFlowRequest): string {
  const files = r.build.sources.map((s: SentenceSource) => { const p = resolve(sourcePath(s)); const st = statSync(p); return [JSON.stringify(s), p, st.size, st.mtimeMs]; });
  const key = { ...r.build, model: resolve(r.build.model), out: resolve(r.build.out), files, shards: r.shards };
  return `graph-${createHash('sha1').update(JSON.stringify(key)).digest('hex').slice(0, 12)}`;
}

/** The jobs of stage s: one job, or a merge job with one child per shard. */
function stageFlow(d: Omit<GraphJob, 'stage' | 'shard'>, s: number): FlowJob {
  const opts = { attempts: d.attempts, backoff: { type: 'exponential', delay: 2000 } };
  const data: GraphJob = { ...d, stage: s };
  if (!GRAPH_STAGES[s]!.sharded) return { name: JOB.graphStep, queueName: QUEUE, data, opts: { ...opts, jobId: stageId(d.flow, s) } };
  return {
    name: JOB.graphMerge, queueName: QUEUE, data, opts: { ...opts, jobId: stageId(d.flow, s) },
    children: Array.from({ length: d.shards }, (_, i) => ({
      name: JOB.graphStep, queueName: QUEUE, data: { ...data, shard: [i, d.shards] as [number, number] },
      opts: { ...opts, jobId: stageShardId(d.flow, s, i), failParentOnFailure: true },
    })),
  };
}

/** Adds stage s of a flow (a no-op for jobs already there). Called by the submitter and by the job that ends stage s − 1. */
export async function addGraphStage(redis: string, d: Omit<GraphJob, 'stage' | 'shard'>, s: number): Promise<void> {
  const producer = new FlowProducer({ connection: redisConnection(redis) });
  try { await producer.add(stageFlow(d, s)); } finally { await producer.close(); }
}

async function withQueue<T>(redis: string, fn: (q: Queue) => Promise<T>): Promise<T> {
  const q = new Queue(QUEUE, { connection: redisConnection(redis) });
  try { return await fn(q); } finally { await q.close(); }
}

async function removeStages(q: Queue, flow: string, from: number, shards: number): Promise<void> {
  for (let s = GRAPH_STAGES.length - 1; s >= from; s--) {
    if (GRAPH_STAGES[s]!.sharded) for (let i = 0; i < shards; i++) { const j = await Job.fromId(q, stageShardId(flow, s, i)); if (j) await j.remove().catch(() => { /* locked */ }); }
    const j = await Job.fromId(q, stageId(flow, s));
    if (j) await j.remove({ removeChildren: true }).catch(() => { /* locked */ });
  }
}

/**
 * Submits a graph build, or picks it up where it stands: 'completed' when its last stage is;
 * 'running' when its current stage is queued or running; else the first stage not completed
 * (failed, cancelled, or never added because a worker died between stages) is added again —
 * finished steps are skipped by the workers.
 */
export async function submitGraphFlow(r: GraphFlowRequest): Promise<{ flow: string; work: string; state: 'submitted' | 'running' | 'completed'; stage: number }> {
  const flow = graphFlowId(r);
  const work = resolve(r.work, flow);
  const d = { flow, work, shards: r.shards, attempts: r.attempts, build: r.build };
  return withQueue(r.redis, async (q) => {
    let s = 0;
    for (; s < GRAPH_STAGES.length; s++) {
      const j = await Job.fromId(q, stageId(flow, s));
      const state = j ? await j.getState() : 'missing';
      if (state === 'completed') continue;
      if (state !== 'missing' && state !== 'failed' && !existsSync(cancelMarker(work))) return { flow, work, state: 'running' as const, stage: s };
      break;
    }
    if (s === GRAPH_STAGES.length && existsSync(join(r.build.out, 'neighbours.npy'))) return { flow, work, state: 'completed' as const, stage: s - 1 };
    if (s === GRAPH_STAGES.length) s = 0; // the graph was removed since: build it again
    await removeStages(q, flow, s, r.shards);
    mkdirSync(work, { recursive: true });
    rmSync(cancelMarker(work), { force: true });
    writeFileAtomicSync(join(work, 'flow.json'), JSON.stringify({ flow, kind: 'graph', request: { ...r, redis: undefined } }, null, 1) + '\n');
    await addGraphStage(r.redis, d, s);
    return { flow, work, state: 'submitted' as const, stage: s };
  });
}

export interface GraphFlowStatus {
  flow: string;
  state: string;
  /** The stage running or next (the last one when completed). */
  stage: number;
  step: GraphStep;
  work: string | null;
  output: string | null;
  failedReason: string | null;
  /** Shards of the sharded stages. */
  shards: number;
  /** The current stage's jobs: one per shard, or the stage's single job. */
  jobs: { id: string; shard: number | null; state: string; attempts: number; worker: string | null; failedReason: string | null }[];
}

/** Where a graph flow stands: its current stage and that stage's jobs. Null when no stage of it is in the queue. */
export async function graphFlowStatus(redis: string, flow: string): Promise<GraphFlowStatus | null> {
  return withQueue(redis, async (q) => {
    let data: GraphJob | null = null, s = 0, top: Job | undefined, topState = 'missing';
    for (; s < GRAPH_STAGES.length; s++) {
      top = await Job.fromId(q, stageId(flow, s));
      topState = top ? await top.getState() : 'missing';
      if (top) data = top.data as GraphJob;
      if (topState !== 'completed') break;
    }
    if (!data) return null;
    const last = Math.min(s, GRAPH_STAGES.length - 1);
    // completed stages end in a job that added the next one: a missing stage after them means
    // the chain broke (a worker died in between) — the same command again resumes it
    const state = s === GRAPH_STAGES.length ? 'completed' : topState === 'missing' ? 'stalled' : topState === 'waiting-children' ? 'active' : topState;
    const jobs: GraphFlowStatus['jobs'] = [];
    const describe = async (id: string, shard: number | null) => {
      const j = await Job.fromId(q, id);
      jobs.push({ id, shard, state: j ? await j.getState() : 'missing', attempts: j?.attemptsMade ?? 0, worker: j?.processedBy ?? null, failedReason: j?.failedReason || null });
    };
    if (GRAPH_STAGES[last]!.sharded) for (let i = 0; i < data.shards; i++) await describe(stageShardId(flow, last, i), i);
    await describe(stageId(flow, last), null);
    return { flow, state, stage: last, step: GRAPH_STAGES[last]!.step, shards: data.shards, work: data.work, output: data.build.out, failedReason: state === 'failed' ? (top?.failedReason || null) : null, jobs };
  });
}

/** Cancels a graph flow: the marker stops its jobs at their next start, and its queued jobs are removed. */
export async function cancelGraphFlow(redis: string, flow: string): Promise<{ removed: boolean }> {
  const st = await graphFlowStatus(redis, flow);
  if (!st) throw new Error(`no flow ${flow} in the queue (xling cluster status lists them)`);
  if (st.state === 'completed') throw new Error(`flow ${flow} has already completed (${st.output})`);
  if (st.work) { mkdirSync(st.work, { recursive: true }); writeFileAtomicSync(cancelMarker(st.work), `cancelled ${new Date().toISOString()}\n`); }
  await withQueue(redis, (q) => removeStages(q, flow, 0, st.shards));
  return { removed: !(await graphFlowStatus(redis, flow)) };
}

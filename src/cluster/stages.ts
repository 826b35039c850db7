// Jobs that run in stages: a chain of steps, some split into shards, each stage started only when
// the one before has ended (xling cluster graph, xling cluster index). A sharded stage is a BullMQ
// flow (one child job per shard, a parent that merges their outputs); a stage that cannot be
// split is one job. A BullMQ job has one parent, so one flow cannot say "every shard of stage s + 1
// waits for stage s": the job that ends a stage adds the next stage's jobs itself before it
// completes (their ids are derived from the request, so adding them twice is a no-op). A plan
// says what each stage does; its steps must skip outputs that exist, so a job run twice (a killed
// worker, a lost completion) redoes nothing that was finished.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { FlowJob, FlowProducer, Job, Queue } from 'bullmq';
import { writeFileAtomicSync } from '../util/atomic.js';
import { PLANS } from './plans.js';
import { cancelFlowJobs, cancelMarker, JOB, jobStatus, QUEUE, redisConnection, removeJob, withQueue } from './queue.js';
import type { StageJob, StagePlan } from './stage-plan.js';

export type { StageContext, StageJob, StagePlan } from './stage-plan.js';

const stageId = (plan: StagePlan<never>, flow: string, s: number) => `${flow}-s${s}-${plan.stages[s]!.name}`;
const stageShardId = (plan: StagePlan<never>, flow: string, s: number, i: number) => `${stageId(plan, flow, s)}-shard-${i}`;

/** The flow id of a request: its kind and a hash of its key and shard count. */
export function stagedFlowId<R>(plan: StagePlan<R>, req: R, shards: number): string {
  return `${plan.kind}-${createHash('sha1')
    .update(JSON.stringify({ key: plan.key(req), shards }))
    .digest('hex')
    .slice(0, 12)}`;
}

/** The jobs of stage s: one job, or a merge job with one child per shard. */
function stageFlow(plan: StagePlan<never>, d: Omit<StageJob, 'stage' | 'shard'>, s: number): FlowJob {
  const opts = { attempts: d.attempts, backoff: { type: 'exponential', delay: 2000 } };
  const data: StageJob = { ...d, stage: s };
  const id = stageId(plan, d.flow, s);
  if (!plan.stages[s]!.sharded) return { name: JOB.stageRun, queueName: QUEUE, data, opts: { ...opts, jobId: id } };
  return {
    name: JOB.stageMerge,
    queueName: QUEUE,
    data,
    opts: { ...opts, jobId: id },
    children: Array.from({ length: d.shards }, (_, i) => ({
      name: JOB.stageRun,
      queueName: QUEUE,
      data: { ...data, shard: [i, d.shards] as [number, number] },
      opts: { ...opts, jobId: stageShardId(plan, d.flow, s, i), failParentOnFailure: true },
    })),
  };
}

/** Adds stage s of a flow (a no-op for jobs already there). */
export async function addStage(plan: StagePlan<never>, redis: string, d: Omit<StageJob, 'stage' | 'shard'>, s: number): Promise<void> {
  const producer = new FlowProducer({ connection: redisConnection(redis) });
  try {
    await producer.add(stageFlow(plan, d, s));
  } finally {
    await producer.close();
  }
}

async function removeStages(plan: StagePlan<never>, q: Queue, flow: string, from: number, shards: number): Promise<void> {
  for (let s = plan.stages.length - 1; s >= from; s--) {
    if (plan.stages[s]!.sharded) for (let i = 0; i < shards; i++) await removeJob(q, stageShardId(plan, flow, s, i));
    await removeJob(q, stageId(plan, flow, s));
  }
}

/**
 * Submits a staged job, or picks it up where it stands: 'completed' when its last stage is (and
 * its output exists); 'running' when its current stage is queued or running; else the first stage
 * not completed (failed, cancelled, or never added because a worker died between stages) is added
 * again — finished steps are skipped by the workers.
 */
export async function submitStaged<R>(
  plan: StagePlan<R>,
  o: { redis: string; work: string; shards: number; attempts: number; request: R },
): Promise<{ flow: string; work: string; state: 'submitted' | 'running' | 'completed'; stage: number }> {
  const p = plan as unknown as StagePlan<never>;
  const flow = stagedFlowId(plan, o.request, o.shards);
  const work = resolve(o.work, flow);
  const d = { kind: plan.kind, flow, work, shards: o.shards, attempts: o.attempts, request: o.request };
  return withQueue(o.redis, async (q) => {
    let s = 0;
    for (; s < plan.stages.length; s++) {
      const j = await Job.fromId(q, stageId(p, flow, s));
      const state = j ? await j.getState() : 'missing';
      if (state === 'completed') continue;
      if (state !== 'missing' && state !== 'failed' && !existsSync(cancelMarker(work))) return { flow, work, state: 'running' as const, stage: s };
      break;
    }
    if (s === plan.stages.length && plan.done(o.request)) return { flow, work, state: 'completed' as const, stage: s - 1 };
    if (s === plan.stages.length) s = 0; // the output was removed since: build it again
    await removeStages(p, q, flow, s, o.shards);
    mkdirSync(work, { recursive: true });
    rmSync(cancelMarker(work), { force: true });
    writeFileAtomicSync(join(work, 'flow.json'), JSON.stringify({ flow, kind: plan.kind, shards: o.shards, request: o.request }, null, 1) + '\n');
    await addStage(p, o.redis, d, s);
    return { flow, work, state: 'submitted' as const, stage: s };
  });
}

export interface StagedFlowStatus {
  flow: string;
  kind: string;
  state: string;
  /** The stage running or next (the last one when completed). */
  stage: number;
  stages: string[];
  shards: number;
  work: string | null;
  output: string | null;
  failedReason: string | null;
  /** The current stage's jobs: one per shard, then the job that ends the stage. */
  jobs: { id: string; shard: number | null; state: string; attempts: number; worker: string | null; failedReason: string | null }[];
}

/** Where a staged flow stands: its current stage and that stage's jobs. Null when no stage of it is in the queue. */
export async function stagedFlowStatus(redis: string, flow: string): Promise<StagedFlowStatus | null> {
  const plan = planOf(flow);
  if (!plan) return null;
  return withQueue(redis, async (q) => {
    let data: StageJob | null = null,
      s = 0,
      top: Job | undefined,
      topState = 'missing';
    for (; s < plan.stages.length; s++) {
      top = await Job.fromId(q, stageId(plan, flow, s));
      topState = top ? await top.getState() : 'missing';
      if (top) data = top.data as StageJob;
      if (topState !== 'completed') break;
    }
    if (!data) return null;
    const last = Math.min(s, plan.stages.length - 1);
    // completed stages end in a job that added the next one: a missing stage after them means
    // the chain broke (a worker died in between) — the same command again resumes it
    const state = s === plan.stages.length ? 'completed' : topState === 'missing' ? 'stalled' : topState === 'waiting-children' ? 'active' : topState;
    const jobs: StagedFlowStatus['jobs'] = [];
    const describe = async (id: string, shard: number | null) => {
      const { job: _, ...row } = await jobStatus(q, id);
      jobs.push({ id, shard, ...row });
    };
    if (plan.stages[last]!.sharded) for (let i = 0; i < data.shards; i++) await describe(stageShardId(plan, flow, last, i), i);
    await describe(stageId(plan, flow, last), null);
    return {
      flow,
      kind: plan.kind,
      state,
      stage: last,
      stages: plan.stages.map((x) => x.name),
      shards: data.shards,
      work: data.work,
      output: plan.output(data.request as never),
      failedReason: state === 'failed' ? top?.failedReason || null : null,
      jobs,
    };
  });
}

/** Cancels a staged flow (cancelFlowJobs: its jobs stop at their next start). */
export async function cancelStaged(redis: string, flow: string): Promise<{ removed: boolean }> {
  return cancelFlowJobs(redis, flow, stagedFlowStatus, (q, st) => removeStages(planOf(flow)!, q, flow, 0, st.shards));
}

/**
 * Runs one job of a staged flow (in a worker): the stage's step or shard, or the merge that ends a
 * sharded stage; the job that ends a stage then adds the next stage.
 */
export async function runStageJob(redis: string, d: StageJob, merge: boolean, log: (l: string) => void): Promise<void> {
  const plan = PLANS.get(d.kind) as StagePlan<unknown> | undefined;
  if (!plan) throw new Error(`unknown staged job kind '${d.kind}' (a newer xling submitted it?)`);
  const ctx = { work: d.work, log };
  if (merge) await plan.merge(d.request, d.stage, d.shards, ctx);
  else await plan.run(d.request, d.stage, d.shard, ctx);
  if (!d.shard && d.stage + 1 < plan.stages.length) await addStage(plan as unknown as StagePlan<never>, redis, d, d.stage + 1);
}

/** What a job is, for messages: "graph query shard 2/8". */
export function stageJobLabel(d: StageJob): string {
  const name = PLANS.get(d.kind)?.stages[d.stage]?.name ?? `stage ${d.stage}`;
  return `${d.kind} ${name}${d.shard ? ` shard ${d.shard[0] + 1}/${d.shard[1]}` : ''}`;
}

export const isInputStage = (d: StageJob) => PLANS.get(d.kind)?.inputStage?.(d.stage) ?? false;

/** The plan of a flow id (its kind is the id's first part). */
export const planOf = (flow: string) => PLANS.get(flow.slice(0, flow.indexOf('-')));

// What the submitting side of a cluster command does once its request is made: submit the flow
// (or find it), then follow it on standard error — an embed flow shard by shard (sentences/s,
// ETA), a staged flow stage by stage — until it is done, exiting with the reason when it fails.
import { existsSync, statSync } from 'node:fs';
import { UsageError } from '../util/args.js';
import { formatCount, formatDuration } from '../util/progress.js';
import { EmbedFlowRequest, FlowStatus, followFlow, submitEmbedFlow } from './flow.js';
import { stagedFlowStatus, StagedFlowStatus, submitStaged } from './stages.js';
import type { StagePlan } from './stage-plan.js';

/** How a cluster command submits and follows its flow. */
export interface Following {
  redis: string;
  work: string;
  shards: number;
  attempts: number;
  /** Submit, print the flow id on standard output and return. */
  detach: boolean;
  /** No progress lines. */
  quiet: boolean;
}

/** --work must be a directory (or not there yet). */
export function checkWorkDir(work: string): void {
  if (existsSync(work) && !statSync(work).isDirectory()) throw new UsageError(`--work ${work}: not a directory`);
}

/** The progress lines of a cluster command ([cluster] …), none when quiet. */
const sayer =
  (quiet: boolean) =>
  (l: string): void => {
    if (!quiet) process.stderr.write(`[cluster] ${l}\n`);
  };

/** Submits an embed flow (or finds it), then follows it shard by shard; throws when it fails. */
export async function submitAndFollowEmbed(r: EmbedFlowRequest, a: Pick<Following, 'detach' | 'quiet'>): Promise<void> {
  const sub = await submitEmbedFlow(r);
  const say = sayer(a.quiet);
  if (sub.state === 'completed') return say(`flow ${sub.flow}: already completed → ${r.output}`);
  say(
    `flow ${sub.flow}: ${sub.state === 'running' ? 'already queued, following it' : `${sub.shards} shards of ${formatCount(r.lines)} lines submitted`} (work ${sub.work})`,
  );
  if (a.detach) {
    process.stdout.write(`${sub.flow}\n`);
    return;
  }
  const t0 = performance.now();
  let first: number | null = null,
    last = 0;
  const done = await followFlow(r.redis, sub.flow, (s) => {
    const n = s.shards.reduce((x, y) => x + y.done, 0);
    first ??= n;
    const now = performance.now();
    if (now - last < 5000 && s.state !== 'completed') return;
    last = now;
    const rate = (n - first) / ((now - t0) / 1000);
    say(
      `${s.shards.filter((x) => x.state === 'completed').length}/${s.shards.length} shards, ${formatCount(n)}/${formatCount(r.lines)} sentences, ${formatCount(rate)}/s, ETA ${rate > 0 ? formatDuration((r.lines - n) / rate) : '?'}${retried(s)}`,
    );
  });
  say(`flow ${done.flow}: done in ${formatDuration((performance.now() - t0) / 1000)} → ${r.output}`);
}

function retried(s: FlowStatus): string {
  const r = s.shards.filter((x) => x.attempts > 1 || (x.attempts > 0 && x.state !== 'completed' && x.failedReason)).length;
  return r ? `, ${r} shard${r > 1 ? 's' : ''} retried` : '';
}

/** Submits a staged job (or finds it), then follows it stage by stage; throws when it fails. `summary`: a last line, once it is done. */
export async function submitAndFollow<R>(plan: StagePlan<R>, request: R, a: Following, summary: () => string | null): Promise<void> {
  const sub = await submitStaged(plan, { redis: a.redis, work: a.work, shards: a.shards, attempts: a.attempts, request });
  const say = sayer(a.quiet);
  const out = plan.output(request);
  if (sub.state === 'completed') return say(`flow ${sub.flow}: already completed → ${out}`);
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
    checkRunning(sub.flow, s);
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

/** A staged flow that failed, or stalled between stages, is an error saying why. */
function checkRunning(flow: string, s: StagedFlowStatus): void {
  if (s.state === 'failed') {
    const bad = s.jobs.filter((j) => j.state === 'failed' && j.failedReason && j.failedReason !== s.failedReason).map((j) => `  ${j.failedReason}`);
    throw new Error(`flow ${flow} failed in its ${s.stages[s.stage]} stage: ${s.failedReason ?? 'a job failed'}${bad.length ? `\n${bad.join('\n')}` : ''}`);
  }
  if (s.state === 'stalled')
    throw new Error(`flow ${flow}: the ${s.stages[s.stage]} stage was never added (a worker stopped between stages); run the same command again to resume`);
}

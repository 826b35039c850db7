// What a kind of staged job is (src/cluster/stages.ts runs them): its plan, what a step gets, the
// data of its jobs. Apart from the engine, so that the plans (listed in plans.ts, which the engine
// reads) do not import the engine.

/** What a kind of staged job does (a plan), listed in PLANS (src/cluster/plans.ts) by its kind. */
export interface StagePlan<R = unknown> {
  kind: string;
  stages: { name: string; sharded: boolean }[];
  /** What identifies a request (paths resolved, input files' sizes and times): same key, same flow. */
  key(req: R): unknown;
  /** Runs an unsharded stage, or one shard ([i, n]) of a sharded one. */
  run(req: R, stage: number, shard: [number, number] | undefined, ctx: StageContext): Promise<void>;
  /** Joins the shards' outputs of a sharded stage (and anything the next stage needs once). */
  merge(req: R, stage: number, shards: number, ctx: StageContext): Promise<void>;
  /** Whether the request's final output exists (a completed flow whose output was removed is built again). */
  done(req: R): boolean;
  output(req: R): string;
  /** Whether an error in this stage is the input's (not retried). */
  inputStage?(stage: number): boolean;
}

/** What a plan's step gets besides the request: the flow's work directory (on the shared filesystem) and a log. */
export interface StageContext {
  work: string;
  log: (line: string) => void;
}

/** The data of every job of a staged flow. */
export interface StageJob<R = unknown> {
  kind: string;
  flow: string;
  work: string;
  stage: number;
  /** [i, n] for a shard's job; absent for the job that ends the stage. */
  shard?: [number, number];
  shards: number;
  attempts: number;
  request: R;
}

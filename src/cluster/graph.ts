// `xling graph build` as a staged job (src/cluster/stages.ts): store → embed (shards) → train →
// add (shards) → query (shards) → stats, every step buildGraph's own (it skips outputs that exist).
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { sourcePath } from '../train-data/sources.js';
import { buildGraph, GraphBuildOptions, GraphStep, mergeGraphShards, tuneGraph } from '../graph/build.js';
import type { StagePlan } from './stage-plan.js';

/** What a graph flow builds: xling graph build's options (paths absolute, for every worker). */
export type GraphBuildRequest = Omit<GraphBuildOptions, 'shard' | 'steps' | 'quiet' | 'log'>;

const STAGES: { name: GraphStep; sharded: boolean }[] = [
  { name: 'store', sharded: false },
  { name: 'embed', sharded: true },
  { name: 'train', sharded: false },
  { name: 'add', sharded: true },
  { name: 'query', sharded: true },
  { name: 'stats', sharded: false },
];

export const GRAPH_PLAN: StagePlan<GraphBuildRequest> = {
  kind: 'graph',
  stages: STAGES,
  key: (r) => ({
    ...r,
    model: resolve(r.model),
    out: resolve(r.out),
    files: r.sources.map((s) => {
      const f = resolve(sourcePath(s));
      const st = statSync(f);
      return [f, st.size, st.mtimeMs];
    }),
  }),
  run: async (r, stage, shard, { log }) => {
    await buildGraph({ ...r, steps: [STAGES[stage]!.name], shard, quiet: true, log });
  },
  merge: async (r, stage, _shards, { log }) => {
    mergeGraphShards(r.out, log);
    // every shard of the query stage must use one nprobe: chosen once, here
    if (STAGES[stage]!.name === 'add') tuneGraph(r.out, r.recallTarget, log);
  },
  done: (r) => existsSync(join(r.out, 'neighbours.npy')),
  output: (r) => r.out,
  // the store step only reads the sentence files: its errors are the input's
  inputStage: (stage) => STAGES[stage]!.name === 'store',
};

// The kinds of staged jobs a worker can run (src/cluster/stages.ts): one line per plan.
import { GRAPH_PLAN } from './graph.js';
import { INDEX_PLAN } from './index-build.js';
import { MINE_PLAN } from './mine.js';
import type { StagePlan } from './stage-plan.js';

export const PLANS = new Map<string, StagePlan<never>>([GRAPH_PLAN, INDEX_PLAN, MINE_PLAN].map((p) => [p.kind, p as unknown as StagePlan<never>]));

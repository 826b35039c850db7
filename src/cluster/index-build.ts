// `xling index build` as a staged job (src/cluster/stages.ts): train (one job, on a seeded sample)
// → add (shards, each into its own index file from the trained one, ids = global row numbers) →
// merge into the output, the index one process would build.
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readIndex } from '../index/faiss.js';
import { addRows, createIndex, IndexTraining, shardRows, trainIndex } from '../index/build.js';
import { NpyRowReader } from '../io/npy.js';
import type { StagePlan } from './stage-plan.js';

export interface IndexBuildRequest extends IndexTraining {
  vectors: string;
  output: string;
  chunk: number;
}

const trainedFile = (work: string) => join(work, 'trained.faiss');
const shardIndexFile = (work: string, [i, n]: [number, number]) => join(work, `index.shard-${String(i).padStart(5, '0')}-of-${n}.faiss`);

export const INDEX_PLAN: StagePlan<IndexBuildRequest> = {
  kind: 'index',
  stages: [
    { name: 'train', sharded: false },
    { name: 'add', sharded: true },
  ],
  key: (r) => {
    const st = statSync(r.vectors);
    return { ...r, vectors: resolve(r.vectors), output: resolve(r.output), size: st.size, mtime: st.mtimeMs };
  },
  run: async (r, stage, shard, { work, log }) => {
    const vectors = NpyRowReader.open(r.vectors);
    try {
      if (stage === 0) {
        if (existsSync(trainedFile(work))) return;
        const index = createIndex(vectors.cols, r, true);
        try {
          const rows = await trainIndex(index, vectors, r.vectors, r, { label: `index train` });
          index.write(trainedFile(work));
          log(`trained ${r.factory} on ${rows} rows`);
        } finally {
          index.dispose();
        }
        return;
      }
      const out = shardIndexFile(work, shard!);
      if (existsSync(out)) return;
      const [lo, hi] = shardRows(vectors.rows, shard!);
      const index = readIndex(trainedFile(work));
      try {
        await addRows(index, vectors, r.vectors, lo, hi, r);
        index.write(out);
        log(`rows ${lo}..${hi - 1} added`);
      } finally {
        index.dispose();
      }
    } finally {
      vectors.close();
    }
  },
  merge: async (r, _stage, shards, { work, log }) => {
    const files = Array.from({ length: shards }, (_, i) => shardIndexFile(work, [i, shards]));
    // an earlier attempt wrote the output but its completion was lost
    if (!files.some((f) => existsSync(f)) && existsSync(r.output)) return;
    const base = readIndex(files[0]!);
    try {
      for (const f of files.slice(1)) {
        const s = readIndex(f);
        try {
          base.mergeFrom(s);
        } finally {
          s.dispose();
        }
      }
      base.write(r.output);
      log(`merged ${shards} shards: ${base.ntotal} vectors → ${r.output}`);
    } finally {
      base.dispose();
    }
    for (const f of readdirSync(work)) if (/^index\.shard-|\.tmp-/.test(f)) rmSync(join(work, f), { force: true });
  },
  done: (r) => existsSync(r.output),
  output: (r) => r.output,
  inputStage: (stage) => stage === 0,
};

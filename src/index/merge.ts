// xling index merge: index shards built from one trained index (ids: global row numbers) merged
// into one file, refusing what would store a vector twice (a file given twice, shared ids).
import { statSync } from 'node:fs';
import { UsageError } from '../util/args.js';
import { HNSW_MERGE } from './build-file.js';
import { inContext } from './context.js';
import { FaissIndex, openIndex } from './faiss.js';

/** Merges the shard files (at least two, in row order) into `output`; a summary on standard error. */
export function mergeIndexFiles(files: readonly string[], output: string, o: { allowDuplicateIds: boolean }): void {
  if (!o.allowDuplicateIds) refuseSameFiles(files);
  const base = openIndex('<shards>', files[0]!);
  try {
    const ids: BigInt64Array[] = [];
    const check = (ix: FaissIndex, f: string) => {
      if (ix.info.hnsw) throw new Error(`${f}: ${HNSW_MERGE}; build the index in one piece (without --shard)`);
      const s = ix.storedIds();
      if (s) ids.push(s);
    };
    check(base, files[0]!);
    for (const f of files.slice(1)) {
      const s = openIndex('<shards>', f);
      try {
        check(s, f);
        inContext(`merging ${f} into ${files[0]}`, () => base.mergeFrom(s));
      } finally {
        s.dispose();
      }
    }
    if (!o.allowDuplicateIds && ids.length) refuseSharedIds(ids);
    inContext(`--output ${output}`, () => base.write(output));
    process.stderr.write(`[index] merged ${files.length} shards: ${base.ntotal} vectors → ${output}\n`);
  } finally {
    base.dispose();
  }
}

/** A file given twice (by device and inode: links count) would put every vector in the index twice. */
function refuseSameFiles(files: readonly string[]): void {
  const seen = new Map<string, string>();
  for (const f of files) {
    const st = statSync(f),
      key = `${st.dev}:${st.ino}`;
    if (seen.has(key))
      throw new UsageError(`${f} is the same file as ${seen.get(key)}: every vector would be in the index twice (pass --allow-duplicate-ids to merge anyway)`);
    seen.set(key, f);
  }
}

/** Shards that share ids (built from overlapping rows) would store those vectors twice. */
function refuseSharedIds(ids: BigInt64Array[]): void {
  const all = new BigInt64Array(ids.reduce((t, x) => t + x.length, 0));
  ids.reduce((at, x) => {
    all.set(x, at);
    return at + x.length;
  }, 0);
  all.sort();
  for (let i = 1; i < all.length; i++)
    if (all[i] === all[i - 1])
      throw new Error(
        `the shards share ids (e.g. ${all[i]}): built from overlapping rows? Each id would be in the index twice (pass --allow-duplicate-ids to merge anyway)`,
      );
}

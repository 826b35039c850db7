// The library behind xling index build / merge / search, called directly: an IVF index trained
// once and filled in two shards, merged, finds what an exact search finds (ids: global rows);
// merging a file twice or overlapping shards is refused; an HNSW index cannot be sharded; bad
// --shard values are usage errors.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { buildIndexFile, IndexFileBuild, parseShard } from '../../src/index/build-file.js';
import { readIndex } from '../../src/index/faiss.js';
import { mergeIndexFiles } from '../../src/index/merge.js';
import { searchToFiles } from '../../src/index/search.js';
import { readNpy, writeNpy } from '../../src/io/npy.js';
import { UsageError } from '../../src/util/args.js';
import { Rng } from '../../src/util/rng.js';

const dir = mkdtempSync(join(tmpdir(), 'xling-index-files-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const p = (f: string) => join(dir, f);

const n = 400,
  d = 8,
  nq = 20,
  k = 5;
const rng = new Rng(5);
const base = Float32Array.from({ length: n * d }, () => rng.normal());
const queries = Float32Array.from({ length: nq * d }, () => rng.normal());
writeNpy(p('base.npy'), base, [n, d]);
writeNpy(p('q.npy'), queries, [nq, d]);

/** The k rows of largest cosine with each query, by brute force. */
function exactIds(): bigint[][] {
  const norm = (x: Float32Array, i: number) => Math.hypot(...x.subarray(i * d, (i + 1) * d));
  return Array.from({ length: nq }, (_, i) => {
    const s = Array.from({ length: n }, (_, j) => {
      let dot = 0;
      for (let t = 0; t < d; t++) dot += queries[i * d + t]! * base[j * d + t]!;
      return { j, cos: dot / (norm(queries, i) * norm(base, j)) };
    });
    return s
      .sort((a, b) => b.cos - a.cos)
      .slice(0, k)
      .map((x) => BigInt(x.j));
  });
}

const build = (o: Partial<IndexFileBuild> & { output: string }): Promise<void> =>
  buildIndexFile({
    vectors: p('base.npy'),
    factory: 'IVF4,Flat',
    metric: 'ip',
    trainSample: 1000,
    seed: 1,
    opqIters: 20,
    polysemous: false,
    normalize: true,
    trainOnly: false,
    chunk: 64,
    allowDuplicateIds: false,
    ...o,
  });

describe('index build, merge and search as library calls', () => {
  it('two shards of one trained IVF index, merged, find the exact neighbours when every list is searched', async () => {
    await build({ output: p('empty.faiss'), trainOnly: true });
    await build({ output: p('s0.faiss'), trained: p('empty.faiss'), shard: '0/2' });
    await build({ output: p('s1.faiss'), trained: p('empty.faiss'), shard: '1/2' });
    mergeIndexFiles([p('s0.faiss'), p('s1.faiss')], p('all.faiss'), { allowDuplicateIds: false });
    const ix = readIndex(p('all.faiss'));
    assert.equal(ix.ntotal, n);
    ix.dispose();
    await searchToFiles({ index: p('all.faiss'), queries: p('q.npy'), k, nprobe: 4, recallTarget: 0.95, baseBlock: 100, ids: p('I.npy'), tsv: p('hits.tsv') });
    const I = readNpy(p('I.npy'));
    assert.deepEqual(I.shape, [nq, k]);
    const got = Array.from({ length: nq }, (_, i) => Array.from((I.data as BigInt64Array).subarray(i * k, (i + 1) * k)));
    assert.deepEqual(got, exactIds());
    // the exact search of --base, in blocks smaller than the base, gives the same rows
    await searchToFiles({ base: p('base.npy'), queries: p('q.npy'), k, recallTarget: 0.95, baseBlock: 37, ids: p('I-exact.npy') });
    assert.deepEqual(Array.from(readNpy(p('I-exact.npy')).data as BigInt64Array), got.flat());
    const tsv = readFileSync(p('hits.tsv'), 'utf8').trimEnd().split('\n');
    assert.equal(tsv.length, nq * k);
    assert.equal(tsv[0]!.split('\t').slice(0, 3).join('\t'), `0\t0\t${got[0]![0]}`);
  });

  it('refuses a file merged twice, overlapping shards, HNSW shards and a bad --shard', async () => {
    assert.throws(() => mergeIndexFiles([p('s0.faiss'), p('s0.faiss')], p('twice.faiss'), { allowDuplicateIds: false }), UsageError);
    await build({ output: p('s0b.faiss'), trained: p('empty.faiss'), shard: '0/2' });
    assert.throws(() => mergeIndexFiles([p('s0.faiss'), p('s0b.faiss')], p('overlap.faiss'), { allowDuplicateIds: false }), /the shards share ids/);
    await assert.rejects(build({ output: p('hnsw.faiss'), factory: 'HNSW8', shard: '0/2' }), (e: Error) => e instanceof UsageError && /HNSW/.test(e.message));
    assert.throws(() => parseShard('2/2'), UsageError);
    assert.deepEqual(parseShard('1/3'), [1, 3]);
    assert.deepEqual(parseShard(undefined), [0, 1]);
  });
});

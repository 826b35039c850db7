// `xling mine` (exact k-NN, from vectors) as a staged job (src/cluster/stages.ts): the k-NN search
// of both directions split into shards (shard i searches source rows i/n against every target and
// target rows i/n against every source), then one merge that scores the margins over the joined
// tables — or the candidates with a second-stage scorer, as xling mine --scorer — applies xling
// mine's filters and writes the pairs (and --stats, --keep-all) as xling mine does.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { readSentences } from '../train-data/corpus.js';
import type { SearchResult } from '../index/faiss.js';
import { shardRows } from '../index/build.js';
import { NpyRowReader, NpyWriter } from '../io/npy.js';
import { readVectors } from '../io/vectors.js';
import { FilterOptions } from '../mine/filters.js';
import { minedFiles } from '../mine/mined-files.js';
import { clampK, minePairs } from '../mine/pipeline.js';
import { MarginKind, Retrieval } from '../mine/mine.js';
import { Assignment, openScorer } from '../mine/scorer/index.js';
import { loadLanguageIdentifier } from '../text/lid.js';
import { knnChunkedAsync, rescoreExact } from '../index/exact.js';
import { writeFileAtomicSync } from '../util/atomic.js';
import { fileStamps } from '../util/stamps.js';
import type { StagePlan } from './stage-plan.js';

export interface MineRequest {
  src: string;
  trg: string;
  srcVectors: string;
  trgVectors: string;
  output: string;
  k: number;
  margin: MarginKind;
  retrieval: Retrieval;
  threshold?: number;
  /** xling mine --scorer: the scorer (its k is the request's), the encoder of its pair model, the languages that pick its word tables. */
  scorer?: { dir: string; model?: string; srcLang?: string; trgLang?: string; selfTables: boolean; assignment: Assignment; auto: boolean };
  /** xling mine's filters; the language identifier by its model directory. */
  filters?: Omit<FilterOptions, 'lid'> & { lid?: { dir: string; src?: string; trg?: string; minConfidence: number } };
  /** xling mine's header (settings), --stats and --keep-all. */
  header?: boolean;
  stats?: string;
  keepAll?: string;
}

/** The request's filters, with the language identifier loaded. */
function filtersOf(r: MineRequest): FilterOptions {
  const { lid, ...rest } = r.filters ?? {};
  if (!lid) return rest;
  const id = loadLanguageIdentifier(lid.dir);
  if (!id) throw new Error(`filters.lid: ${lid.dir} has no language identifier (lid.json)`);
  return { ...rest, lid: { identify: (t) => id.identify(t), src: lid.src, trg: lid.trg, minConfidence: lid.minConfidence } };
}

const knnFile = (work: string, dir: 'fwd' | 'bwd', what: 'dist' | 'ids', i: number, n: number) =>
  join(work, `knn-${dir}-${what}.shard-${String(i).padStart(5, '0')}-of-${n}.npy`);

/**
 * Written in the work directory once the merge has written the output, before it removes the k-NN
 * files: another delivery of the same merge job (its lock lost while the merge held the CPU) then
 * knows the work is done, whether it starts after or fails reading files being removed.
 */
const mergedMarker = (work: string) => join(work, 'merged');

/** Both directions' k-NN tables of the shards, joined (rows in order). */
function joinShards(work: string, dir: 'fwd' | 'bwd', n: number, k: number): SearchResult {
  const parts = Array.from({ length: n }, (_, i) => {
    const dr = NpyRowReader.open(knnFile(work, dir, 'dist', i, n)),
      ir = NpyRowReader.open(knnFile(work, dir, 'ids', i, n));
    try {
      return { distances: dr.readRows(0, dr.rows), labels: ir.readRowsRaw(0, ir.rows) as BigInt64Array, rows: dr.rows };
    } finally {
      dr.close();
      ir.close();
    }
  });
  const rows = parts.reduce((a, p) => a + p.rows, 0);
  const distances = new Float32Array(rows * k),
    labels = new BigInt64Array(rows * k);
  let at = 0;
  for (const p of parts) {
    distances.set(p.distances, at * k);
    labels.set(p.labels, at * k);
    at += p.rows;
  }
  return { distances, labels, n: rows, k };
}

export const MINE_PLAN: StagePlan<MineRequest> = {
  kind: 'mine',
  stages: [{ name: 'search', sharded: true }],
  key: (r) => ({
    ...r,
    files: [r.src, r.trg, r.srcVectors, r.trgVectors, ...(r.scorer ? [r.scorer.dir, ...(r.scorer.model ? [r.scorer.model] : [])] : [])].flatMap(fileStamps),
  }),
  run: async (r, _stage, shard, { work, log }) => {
    const [i, n] = shard!;
    rmSync(mergedMarker(work), { force: true }); // the flow is (re)built
    if ((['fwd', 'bwd'] as const).every((dir) => existsSync(knnFile(work, dir, 'ids', i, n)))) return;
    const sv = readVectors(r.srcVectors),
      tv = readVectors(r.trgVectors),
      d = sv.d;
    const k = clampK(r.k, sv.n, tv.n);
    for (const [dir, q, base] of [
      ['fwd', sv, tv],
      ['bwd', tv, sv],
    ] as const) {
      const [lo, hi] = shardRows(q.n, [i, n]);
      const part = q.data.subarray(lo * d, hi * d);
      const res = rescoreExact(await knnChunkedAsync(part, base.data, d, k), part, base.data, d); // as xling mine scores
      const dw = NpyWriter.open(knnFile(work, dir, 'dist', i, n), k, 'float32'),
        iw = NpyWriter.open(knnFile(work, dir, 'ids', i, n), k, 'int64');
      try {
        dw.append(res.distances);
        iw.append(res.labels);
        dw.close();
        iw.close();
      } catch (e) {
        dw.abort();
        iw.abort();
        throw e;
      }
      log(`${dir}: rows ${lo}..${hi - 1}, k ${k}`);
    }
  },
  merge: async (r, _stage, shards, ctx) => {
    const doneBefore = () => existsSync(mergedMarker(ctx.work)) && existsSync(r.output);
    if (doneBefore()) return ctx.log('merged already by another delivery of this job');
    try {
      await mergeMined(r, shards, ctx);
    } catch (e) {
      if (doneBefore()) return ctx.log('merged by another delivery of this job while this one ran');
      throw e;
    }
  },
  done: (r) => existsSync(r.output),
  output: (r) => r.output,
};

/** The merge of a mining flow: the shards' k-NN tables joined, the pairs picked as xling mine picks them, the output written. */
async function mergeMined(r: MineRequest, shards: number, { work, log }: { work: string; log: (l: string) => void }): Promise<void> {
  const sv = readVectors(r.srcVectors),
    tv = readVectors(r.trgVectors);
  const S = await readSentences(r.src),
    T = await readSentences(r.trg);
  // the pairs as xling mine picks them (src/mine/pipeline.ts) from the shards' k-NN tables, with the scorer opened as it opens it
  const sc = r.scorer ? openScorer(r.scorer.dir, r.scorer.model, r.scorer.srcLang, r.scorer.trgLang, { selfTables: r.scorer.selfTables, say: log }) : null;
  const { rows, threshold, auto, k } = await minePairs(
    { vectors: sv, texts: S.sentences, what: `srcVectors ${r.srcVectors}` },
    { vectors: tv, texts: T.sentences, what: `trgVectors ${r.trgVectors}` },
    {
      k: r.k,
      margin: r.margin,
      retrieval: r.retrieval,
      threshold: r.scorer?.auto ? 'auto' : r.threshold,
      scorer: sc
        ? {
            model: sc.scorer,
            aligner: sc.aligner,
            selfTables: sc.selfTables,
            assignment: r.scorer!.assignment,
            encoder: r.scorer!.model,
            srcLang: r.scorer!.srcLang,
            trgLang: r.scorer!.trgLang,
          }
        : undefined,
      tables: (k) => ({ fwd: joinShards(work, 'fwd', shards, k), bwd: joinShards(work, 'bwd', shards, k) }),
      say: log,
    },
  );
  const wordTables = sc?.wordTables();
  const run = {
    model: r.scorer?.model ?? null,
    margin: r.margin,
    retrieval: r.scorer ? 'scorer' : r.retrieval,
    k,
    scorer: r.scorer?.dir ?? null,
    wordTables,
    threshold,
    auto,
  };
  const out = minedFiles(rows, S, T, filtersOf(r), run, { header: r.header });
  if (out.filtered) log(out.filtered);
  // the output last: a flow is done when it exists
  if (r.keepAll) writeFileAtomicSync(r.keepAll, out.rejected);
  if (r.stats) writeFileAtomicSync(r.stats, out.stats);
  writeFileAtomicSync(r.output, out.text);
  log(`${out.pairs} pairs (${r.scorer ? `scorer ${r.scorer.dir}` : `${r.margin}, ${r.retrieval}`}, k=${k}) → ${r.output}`);
  writeFileAtomicSync(mergedMarker(work), `${r.output}\n`);
  for (const f of readdirSync(work)) if (/^knn-|\.tmp-/.test(f)) rmSync(join(work, f), { force: true });
}

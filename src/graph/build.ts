// Building the k-nearest-neighbour graph of a whole multilingual collection (Schwenk, Kiela &
// Douze 2019): store the sentences → embed them (float16 on disk) → train a compressed faiss index
// on a sample → add every vector → query every sentence for its k neighbours (self excluded),
// the index's candidates re-ranked with the exact vectors → graph files (CSR: neighbour ids int32
// + distances float16) and statistics. Each step writes its outputs atomically and is skipped when
// they exist (a killed build resumes at its step); embed, add and query take --shard i/n, and
// `graph merge` joins the shards' outputs. The steps are here; graph.json and the settings in
// meta.ts, the query step's search in search.ts, recall and nprobe in recall.ts, merge in merge.ts.
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { loadSentenceEncoder } from '../embed/model-dir.js';
import { SentenceEncoderModel } from '../embed/model.js';
import { cutLinesWarning } from '../embed/input.js';
import { npySink, streamEmbeddings } from '../embed/stream.js';
import { FaissIndex, readIndex } from '../index/faiss.js';
import { float32ToFloat16 } from '../io/half.js';
import { NpyRowReader, NpyWriter } from '../io/npy.js';
import { writeJson } from '../nn/serialize.js';
import { TrainingLog } from '../index/train-log.js';
import { Progress } from '../util/progress.js';
import { Rng } from '../util/rng.js';
import { buildStore, GraphStore, StoreInfo } from './store.js';
import { pause } from '../util/pause.js';
import {
  checkGraphSettings,
  defaultFactory,
  EXACT,
  EXACT_CROSSOVER_N,
  GRAPH_STEPS,
  GraphBuildOptions,
  GraphMeta,
  GraphStep,
  metaFile,
  readGraphMeta,
  relativeToGraph,
  rowsOf,
  settingsOf,
  shardSuffix,
  storedFactory,
  trainRows,
} from './meta.js';
import { EXACT_QUERY_BLOCK, exactGraphRows, loadVectors, openQueryIndex, queryRowsAsync } from './search.js';
import { graphRecall, tuneGraphNprobe } from './recall.js';

export * from './meta.js';
export * from './search.js';
export { graphRecall, TIE_TOLERANCE, tuneGraph, tuneGraphNprobe, MAX_CANDIDATE_FACTOR } from './recall.js';
export { mergeGraphShards } from './merge.js';

/** Embeds store rows [lo, hi) (each sentence centred with its language) into a float16 .npy. */
async function embedRows(model: SentenceEncoderModel, store: GraphStore, lo: number, hi: number, file: string, quiet: boolean): Promise<void> {
  const d = model.dim;
  const prog = new Progress({ label: 'graph embed', unit: 'sentences', total: hi - lo, silent: quiet });
  const cutBefore = model.tokenizer.truncated ?? 0;
  async function* ranges(): AsyncGenerator<[number, number]> {
    for (let a = lo; a < hi; a += 50000) yield [a, Math.min(hi, a + 50000)];
  }
  await streamEmbeddings(
    ranges(),
    d,
    async ([a, b]) => {
      const { text, lang } = store.range(a, b);
      const out = new Float32Array((b - a) * d);
      const groups = new Map<string, number[]>();
      lang.forEach((l, i) => {
        const g = groups.get(l);
        if (g) g.push(i);
        else groups.set(l, [i]);
      });
      for (const [l, idx] of groups) {
        const v = await model.embedAsync(
          idx.map((i) => text[i]!),
          { lang: l },
        );
        idx.forEach((i, k) => out.set(v.subarray(k * d, (k + 1) * d), i * d));
      }
      return out;
    },
    npySink(file, d, 'float16'),
    async (rows) => {
      prog.tick(rows);
      await pause();
    },
  );
  prog.done();
  const cut = (model.tokenizer.truncated ?? 0) - cutBefore;
  if (cut) process.stderr.write(cutLinesWarning('graph', `the store's rows ${lo}..${hi - 1}`, cut, hi - lo));
}

export async function buildGraph(o: GraphBuildOptions): Promise<GraphMeta> {
  return new GraphBuild(o).run();
}

/** What the steps after the store work on: the graph's metadata as they began, its store, and this process's rows [lo, hi). */
interface BuildPart {
  meta: GraphMeta;
  store: GraphStore;
  N: number;
  lo: number;
  hi: number;
  exact: boolean;
}

/** One buildGraph call: the steps asked for, each skipped when its outputs exist. */
class GraphBuild {
  private readonly log: (line: string) => void;
  private readonly g: string;
  private readonly steps: Set<GraphStep>;
  private readonly sfx: string;
  // the model is loaded only by the steps that embed (a large one takes seconds and gigabytes; a
  // cluster worker runs the train, add and query jobs without it)
  private loaded: SentenceEncoderModel | undefined;
  private readonly t0: number;
  /** Steps run by this call. */
  private ran = 0;

  constructor(private readonly o: GraphBuildOptions) {
    this.log = o.log ?? ((l: string) => process.stderr.write(`[graph] ${l}\n`));
    this.g = o.out;
    this.steps = new Set(o.steps ?? GRAPH_STEPS);
    this.sfx = shardSuffix(o.shard);
    this.t0 = performance.now();
  }

  private model(): SentenceEncoderModel {
    return (this.loaded ??= loadSentenceEncoder(this.o.model));
  }

  async run(): Promise<GraphMeta> {
    const { o, g, log } = this;
    // a graph built with other settings is refused (its finished steps would be kept), and a
    // factory faiss cannot build, before any work
    const resumed = existsSync(metaFile(g));
    checkGraphSettings(g, o);
    if (o.factory && o.factory !== EXACT) FaissIndex.create(existsSync(metaFile(g)) ? readGraphMeta(g).model.dim : this.model().dim, o.factory, 'ip').dispose();

    if (this.steps.has('store') && !existsSync(metaFile(g))) await this.storeStep();
    const meta = readGraphMeta(g);
    const store = new GraphStore(g);
    const N = store.size;
    const [lo, hi] = rowsOf(N, o.shard);
    try {
      // a shard whose next step needs every shard's output stops here
      if (!(await this.shardSteps({ meta, store, N, lo, hi, exact: meta.factory === EXACT }))) return readGraphMeta(g);
    } finally {
      store.close();
    }
    if (resumed && !this.ran) log(`nothing to do: every step asked for was already done with these settings → ${g}`);
    else log(`done in ${((performance.now() - this.t0) / 1000).toFixed(0)}s → ${g}`);
    return readGraphMeta(g);
  }

  /** Runs fn as a step, recording its time: in graph.json, or (a shard) in its own file that mergeGraphShards adds up. */
  private async timed(step: GraphStep, fn: () => Promise<void> | void): Promise<void> {
    const { g, sfx } = this;
    this.ran++;
    const s0 = performance.now();
    await fn();
    const seconds = +((performance.now() - s0) / 1000).toFixed(1);
    // shards run side by side (other processes, other machines): each writes its own time, and
    // mergeGraphShards adds them into graph.json, so no shard's write can undo another's
    if (sfx) {
      writeJson(join(g, `steps.${step}${sfx}.json`), { seconds });
      return;
    }
    const m = readGraphMeta(g);
    m.steps[step] = { seconds };
    writeJson(metaFile(g), m);
  }

  /** The store step: the sentence store and graph.json (with the factory for the collection's size when none is given). */
  private async storeStep(): Promise<void> {
    const { o, g, log } = this;
    if (existsSync(g) && !statSync(g).isDirectory()) throw new Error(`${g}: exists and is not a directory`);
    const created = !existsSync(g);
    const encoder = this.model(); // the metadata records its kind and dimension: a model that cannot load fails before any output
    mkdirSync(g, { recursive: true });
    const s0 = performance.now();
    let info: StoreInfo;
    try {
      info = await buildStore(g, o.sources, o.filter, o.quiet);
    } catch (e) {
      if (created) rmSync(g, { recursive: true, force: true }); // a failed first step leaves nothing behind
      throw e;
    }
    const meta: GraphMeta = {
      format: 'xling-graph',
      version: 1,
      model: { dir: relativeToGraph(g, o.model), dir_base: 'graph', kind: (encoder.config as { kind?: string } | null)?.kind ?? null, dim: encoder.dim },
      k: o.k,
      factory: o.factory ?? defaultFactory(info.sentences, encoder.dim),
      nprobe: o.nprobe ?? null,
      candidates: o.candidates,
      filter: o.filter,
      settings: settingsOf(o, o.factory ?? null),
      sentences: info.sentences,
      langs: info.langs,
      steps: { store: { seconds: +((performance.now() - s0) / 1000).toFixed(1) } },
    };
    writeJson(metaFile(g), meta);
    log(
      `store: ${info.sentences} sentences in ${info.langs.length} languages (${info.dropped.length} outside the length bounds, ${info.dropped.duplicates} duplicates left out)`,
    );
    if (!o.factory)
      log(
        meta.factory === EXACT
          ? `exact search: ${info.sentences} sentences are below the crossover (${EXACT_CROSSOVER_N} at 512 dimensions) where a compressed index would cost less`
          : `index ${meta.factory}: ${info.sentences} sentences are above the crossover of exact search (${EXACT_CROSSOVER_N} at 512 dimensions)`,
      );
  }

  /** The steps after the store, in order; false when a shard must wait for 'graph merge' before the next one. */
  private async shardSteps(p: BuildPart): Promise<boolean> {
    const { o, g, steps, sfx, log } = this;
    const sharded = !!o.shard && o.shard[1] > 1;
    if (steps.has('embed') && !existsSync(join(g, 'vectors.npy')) && !existsSync(join(g, `vectors${sfx}.npy`))) await this.embedStep(p);
    if (sharded && (steps.has('add') || steps.has('query')) && !existsSync(join(g, 'vectors.npy'))) {
      log(`shard ${o.shard!.join('/')}: embedded; run 'xling graph merge' once every shard has, then the next steps`);
      return false;
    }
    if (steps.has('train') && !p.exact && !existsSync(join(g, 'index.trained.faiss'))) await this.trainStep(p);
    if (steps.has('add') && !p.exact && !existsSync(join(g, 'index.faiss')) && !existsSync(join(g, `index${sfx}.faiss`))) await this.addStep(p);
    if ((steps.has('query') || steps.has('stats')) && !p.exact && !existsSync(join(g, 'index.faiss')) && sharded) {
      log(`shard ${o.shard!.join('/')}: added; run 'xling graph merge' once every shard has, then query`);
      return false;
    }
    const queryDue = steps.has('query') && !existsSync(join(g, 'neighbours.npy')) && !existsSync(join(g, `neighbours${sfx}.npy`));
    if (queryDue && p.exact) await this.exactQueryStep(p);
    if (queryDue && !p.exact) await this.indexQueryStep(p);
    if (steps.has('stats') && existsSync(join(g, 'neighbours.npy')) && readGraphMeta(g).recall_at_10 === undefined) this.statsStep(p);
    return true;
  }

  /** The embed step: this process's rows into vectors.npy (a shard: its own vectors file). */
  private async embedStep({ meta, store, lo, hi }: BuildPart): Promise<void> {
    const { o, g, sfx } = this;
    const dim = meta.model.dim;
    if (this.model().dim !== dim) throw new Error(`${g}: built with ${dim}-d vectors, --model gives ${this.model().dim}-d`);
    await this.timed('embed', () => embedRows(this.model(), store, lo, hi, join(g, `vectors${sfx}.npy`), o.quiet ?? false));
    this.log(`embed: rows ${lo}..${hi - 1} → vectors${sfx}.npy`);
  }

  /** The train step: the index (ids taken with the vectors) trained on a sample of the vectors, as index.trained.faiss. */
  private async trainStep({ meta, N }: BuildPart): Promise<void> {
    const { o, g } = this;
    const dim = meta.model.dim;
    if (!existsSync(join(g, 'vectors.npy')))
      throw new Error(`${g}: the index is trained on the vectors (run the embed step first, and 'graph merge' after sharded embeds)`);
    await this.timed('train', async () => {
      const factory = storedFactory(meta.factory);
      let index = FaissIndex.create(dim, factory, 'ip');
      // node ids go in with the vectors (shards add their own rows): indexes that number their
      // vectors themselves (Flat, HNSW, PQ) are wrapped in an id map
      if (!index.takesIds) {
        index.dispose();
        index = FaissIndex.create(dim, `IDMap,${factory}`, 'ip');
      }
      const set = index.setTrainingParams({ polysemous: false, opqIters: 20 });
      if (!index.isTrained) {
        const r = NpyRowReader.open(join(g, 'vectors.npy'));
        const m = trainRows(N, o.trainSample, factory);
        const rows = new Rng(1).sample(N, m).sort((a, b) => a - b);
        const x = new Float32Array(m * dim);
        rows.forEach((row, i) => x.set(r.readRows(row, row + 1), i * dim));
        r.close();
        // faiss's OPQ and k-means iterations as progress lines
        const tl = new TrainingLog({ label: 'graph train', opqIters: set.opqIters, silent: o.quiet });
        await index.trainAsync(x, (l) => tl.line(l));
        tl.done();
      }
      index.write(join(g, 'index.trained.faiss'));
      index.dispose();
    });
    this.log(`train: ${meta.factory} on ${trainRows(N, o.trainSample, storedFactory(meta.factory))} vectors`);
  }

  /** The add step: this process's rows added to the trained index, as index.faiss (a shard: its own index file). */
  private async addStep({ lo, hi }: BuildPart): Promise<void> {
    const { g, sfx } = this;
    await this.timed('add', async () => {
      const index = readIndex(join(g, 'index.trained.faiss'));
      const r = NpyRowReader.open(join(g, 'vectors.npy'));
      for (let a = lo; a < hi; a += 100000) {
        const b = Math.min(hi, a + 100000);
        await index.addAsync(
          r.readRows(a, b),
          BigInt64Array.from({ length: b - a }, (_, t) => BigInt(a + t)),
        );
      }
      r.close();
      index.write(join(g, `index${sfx}.faiss`));
      index.dispose();
    });
    this.log(`add: rows ${lo}..${hi - 1} → index${sfx}.faiss`);
  }

  /** The query step of an exact graph: blocked exact search over the float16 vectors. */
  private async exactQueryStep({ meta, lo, hi }: BuildPart): Promise<void> {
    const { g } = this;
    if (!existsSync(join(g, 'vectors.npy')))
      throw new Error(`${g}: the query step reads every vector (run the embed step first, and 'graph merge' after sharded embeds)`);
    const vectors = loadVectors(g);
    try {
      await this.timed('query', () =>
        this.writeNeighbours(
          'graph query (exact)',
          meta.k,
          lo,
          hi,
          (a) => Math.min(hi, (Math.floor(a / EXACT_QUERY_BLOCK) + 1) * EXACT_QUERY_BLOCK),
          (a, b) => exactGraphRows(vectors, a, b, meta.k),
        ),
      );
      this.log(`query: ${meta.k} neighbours of rows ${lo}..${hi - 1} by exact search over the float16 vectors`);
    } finally {
      vectors.dispose();
    }
  }

  /** The query step of an indexed graph: nprobe tuned (once for all shards), the index's candidates re-ranked with the exact vectors. */
  private async indexQueryStep({ meta, lo, hi }: BuildPart): Promise<void> {
    const { g } = this;
    const vectors = loadVectors(g);
    const index = openQueryIndex(g, meta.factory);
    try {
      meta.nprobe = tuneGraphNprobe(g, index, vectors, this.o.recallTarget, this.log);
      meta.candidates = readGraphMeta(g).candidates;
      if (meta.nprobe) index.setNprobe(meta.nprobe);
      await this.timed('query', () =>
        this.writeNeighbours(
          'graph query',
          meta.k,
          lo,
          hi,
          (a) => Math.min(hi, a + 512),
          (a, b) => queryRowsAsync(index, vectors, a, b, meta.k, meta.candidates),
        ),
      );
      this.log(`query: ${meta.k} neighbours of rows ${lo}..${hi - 1} (nprobe ${meta.nprobe ?? '-'}, ${meta.candidates} candidates re-ranked)`);
    } finally {
      index.dispose();
      vectors.dispose();
    }
  }

  /**
   * The k neighbours and distances of rows [lo, hi), block by block (blockEnd: where the block
   * starting at a row ends), into this process's neighbours and distances files; neither is left
   * behind on an error.
   */
  private async writeNeighbours(
    label: string,
    k: number,
    lo: number,
    hi: number,
    blockEnd: (a: number) => number,
    rows: (a: number, b: number) => Promise<{ ids: Int32Array; dist: Float32Array }>,
  ): Promise<void> {
    const { g, sfx } = this;
    const nb = NpyWriter.open(join(g, `neighbours${sfx}.npy`), k, 'int32');
    const ds = NpyWriter.open(join(g, `distances${sfx}.npy`), k, 'float16');
    const prog = new Progress({ label, unit: 'sentences', total: hi - lo, silent: this.o.quiet });
    try {
      for (let a = lo; a < hi; ) {
        const b = blockEnd(a);
        const r = await rows(a, b);
        nb.append(r.ids);
        ds.append(float32ToFloat16(r.dist));
        prog.tick(b - a);
        a = b;
      }
      nb.close();
      ds.close();
      prog.done();
    } catch (e) {
      nb.abort();
      ds.abort();
      throw e;
    }
  }

  /** The stats step: recall@10 against exact search on a sample, the sizes and the build time, into graph.json. */
  private statsStep({ N, exact }: BuildPart): void {
    const { o, g, log } = this;
    const vectors = loadVectors(g);
    try {
      const s0 = performance.now();
      const sampled = Math.min(2000, N);
      const { recall, byIds } = graphRecall(g, vectors, sampled);
      const m = readGraphMeta(g);
      const size = (f: string) => (existsSync(join(g, f)) ? statSync(join(g, f)).size : 0);
      m.recall_at_10 = +recall.toFixed(4);
      m.recall_at_10_by_ids = +byIds.toFixed(4);
      m.bytes = {
        index: exact ? 0 : size('index.faiss'),
        graph: size('neighbours.npy') + size('distances.npy'),
        store: size('sentences.txt') + size('sentences.offsets.npy') + size('sentences.langs.npy'),
        vectors: size('vectors.npy'),
      };
      m.bytes_per_sentence = +((m.bytes.index + m.bytes.graph) / N).toFixed(2);
      m.steps.stats = { seconds: +((performance.now() - s0) / 1000).toFixed(1) };
      m.build_seconds = +Object.entries(m.steps)
        .filter(([k]) => k !== 'store' && k !== 'embed' && k !== 'stats')
        .reduce((a, [, v]) => a + (v?.seconds ?? 0), 0)
        .toFixed(1);
      writeJson(metaFile(g), m);
      this.ran++;
      log(
        `recall@10 vs exact search (${sampled === N ? `all ${N} sentences` : `${sampled} of ${N} sentences`}, tied neighbours counted as found): ${recall.toFixed(3)} (by ids alone ${byIds.toFixed(3)}); index ${(m.bytes.index / N).toFixed(1)} bytes/sentence, graph ${(m.bytes.graph / N).toFixed(1)}`,
      );
      const target = m.settings?.recall_target ?? o.recallTarget;
      if (recall < target)
        log(
          `warning: recall@10 ${recall.toFixed(3)} is below the recall target ${target}${m.nprobe ? ` (nprobe ${m.nprobe})` : ''}: more --candidates, a larger --nprobe or a finer --factory would raise it`,
        );
    } finally {
      vectors.dispose();
    }
  }
}

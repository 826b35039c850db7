// The options of a graph build, shared by xling graph build and xling cluster graph.
import { DEFAULTED_MODEL_OPTION } from './default-model.js';

/** What a graph is built from and how (xling graph build and xling cluster graph). */
export const GRAPH_BUILD_OPTIONS = {
  model: DEFAULTED_MODEL_OPTION,
  data: {
    type: 'list',
    splitCommas: false,
    metavar: 'SRC',
    help: 'sentences: an N-way TSV(.gz) (every column; TSV:de,en for some), or LANG=FILE (one sentence per line); repeatable (store step)',
  },
  out: { type: 'string', required: true, metavar: 'DIR', help: 'graph directory' },
  k: { type: 'number', alias: 'k', default: 20, range: { int: true, min: 1, max: 1000 }, help: 'neighbours kept per sentence (the edges of the graph)' },
  factory: {
    type: 'string',
    help: "'exact' (blocked exact search over the float16 vectors, no index) or a faiss index factory; default by the collection's size: exact below the measured crossover (150k sentences at 512 dimensions, scaled as N²·d), OPQ16,IVF√N,PQ16 above (where that cannot reach --recall-target, the build says so and names OPQ16,IVF(8√N)_HNSW32,PQ16: an HNSW coarse quantizer over many lists; bench/RESULTS.md)",
  },
  nprobe: {
    type: 'number',
    range: { int: true, min: 1 },
    help: 'IVF lists per query (default: the smallest power of two reaching --recall-target on a sample)',
  },
  candidates: {
    type: 'number',
    default: 64,
    range: { int: true, min: 1, max: 10000 },
    help: 'index candidates per sentence re-ranked with the exact (float16) vectors (without --nprobe, the tuning raises them up to 8× where more lists stop raising the recall)',
  },
  recallTarget: {
    type: 'number',
    default: 0.95,
    range: { above: 0, max: 1 },
    help: 'recall@10 against exact search (tied neighbours counted as found) the automatic nprobe aims for',
  },
  trainSample: { type: 'number', default: 200000, range: { int: true, min: 1 }, help: 'vectors sampled (seeded) to train the index; at least 40 per IVF list' },
  minWords: { type: 'number', default: 4, range: { int: true, min: 0 }, help: 'leave out shorter sentences (0: no bound)' },
  maxWords: { type: 'number', default: 60, range: { int: true, min: 0 }, help: 'leave out longer sentences (0: no bound)' },
  dedup: { type: 'boolean', default: true, help: 'leave out exact duplicates (after normalisation), per language' },
} as const;

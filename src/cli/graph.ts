// xling graph build | merge | stats | neighbours | path: the k-nn graph of a multilingual collection.
import { existsSync } from 'node:fs';
import { parseSources, sourcePath } from '../train-data/sources.js';
import { readModelConfig } from '../embed/model-dir.js';
import { buildGraph, checkGraphSettings, GRAPH_STEPS, GraphBuildOptions, GraphStep, mergeGraphShards, readGraphMeta } from '../graph/build.js';
import { graphNeighbours, graphPathReport, graphStatsReport } from '../graph/report.js';
import { setNumThreads } from '../tensor/tensor.js';
import { DEFAULTED_MODEL_OPTION, modelOrDefault } from './default-model.js';
import { GRAPH_BUILD_OPTIONS } from './graph-options.js';
import { command, usage } from './command.js';
import { checkPaths, summaryWriter, writeJsonOutput, writeTextOutput } from './io.js';

function parseShard(s: string | undefined): [number, number] | undefined {
  if (!s) return undefined;
  const m = /^(\d+)\/(\d+)$/.exec(s);
  if (!m || Number(m[2]) < 1 || Number(m[1]) >= Number(m[2])) usage(`--shard must be i/n with 0 <= i < n, got '${s}'`);
  return [Number(m![1]), Number(m![2])];
}

export const graphBuildCommand = command(
  ['graph', 'build'],
  {
    name: 'xling graph build',
    summary: 'the k-nearest-neighbour graph of a multilingual collection (store, embed, index, query)',
    description:
      'Steps store → embed → train → add → query → stats, each written atomically and skipped when done (a killed build resumes). With --shard i/n: embed, add and query do rows of shard i only; run `xling graph merge` after each sharded step.',
    options: {
      ...GRAPH_BUILD_OPTIONS,
      model: DEFAULTED_MODEL_OPTION,
      shard: { type: 'string', metavar: 'i/n', help: 'do shard i of n (0-based) of the embed, add and query steps; then xling graph merge' },
      step: { type: 'list', choices: [...GRAPH_STEPS], help: 'run only these steps (default: all that are not done)' },
      threads: { type: 'number', range: { int: true, min: 1 }, help: 'intra-op threads (default: all cores)' },
      quiet: { type: 'boolean', default: false, help: 'no progress lines (warnings and errors are still printed)' },
    },
    examples: ['xling graph build --data data/sample/gettext.train.tsv.gz --out graphs/gettext'],
  },
  async (a) => {
    const shard = parseShard(a.shard);
    const sources = parseSources(a.data);
    const fresh = !existsSync(`${a.out}/graph.json`);
    if (fresh && !sources.length) usage('--data: give the sentences (a new graph starts with its store)');
    const model = modelOrDefault(a.model, a.quiet);
    checkPaths([['--model', model, 'in-dir'], ...sources.map((s) => ['--data', sourcePath(s), 'in-text'] as const)]);
    readModelConfig(model); // a bad --model is an error even when the steps left do not embed
    if (a.threads) setNumThreads(a.threads);
    const options: GraphBuildOptions = {
      model,
      sources,
      out: a.out,
      k: a.k,
      factory: a.factory,
      nprobe: a.nprobe,
      candidates: a.candidates,
      recallTarget: a.recallTarget,
      trainSample: a.trainSample,
      filter: { minWords: a.minWords, maxWords: a.maxWords, dedup: a.dedup },
      shard,
      steps: a.step.length ? (a.step as GraphStep[]) : undefined,
      quiet: a.quiet,
    };
    if (!fresh) checkGraphSettings(a.out, options);
    const meta = await buildGraph(options);
    if (meta.recall_at_10 !== undefined)
      process.stderr.write(
        `[graph] ${meta.sentences} sentences, recall@10 ${meta.recall_at_10}, ${meta.bytes_per_sentence} bytes/sentence (index + graph), ${meta.build_seconds}s after embedding\n`,
      );
  },
  { native: true },
);

export const graphMergeCommand = command(
  ['graph', 'merge'],
  {
    name: 'xling graph merge',
    summary: 'join the outputs of the shards of a graph build step (vectors, index, neighbours)',
    options: { graph: { type: 'string', required: true, metavar: 'DIR', help: 'graph directory (xling graph build --shard)' } },
  },
  async (a) => {
    checkPaths([['--graph', a.graph, 'in-dir']]);
    readGraphMeta(a.graph);
    mergeGraphShards(a.graph);
  },
);

export const graphStatsCommand = command(
  ['graph', 'stats'],
  {
    name: 'xling graph stats',
    summary: "a graph's size, recall, build times, distance histograms and language mixing",
    options: {
      graph: { type: 'string', required: true, metavar: 'DIR', help: 'graph directory (xling graph build)' },
      json: {
        type: 'string',
        metavar: 'FILE',
        help: 'sentences, recall_at_10, bytes_per_sentence, build_seconds, steps, same-language shares, distance quantiles',
      },
      svg: { type: 'string', metavar: 'FILE', help: 'histogram of the distance to the nearest and to the k-th neighbour' },
      sample: { type: 'number', default: 50000, range: { int: true, min: 1 }, help: 'sentences sampled (seeded) for the distance statistics' },
    },
  },
  async (a) => {
    checkPaths([
      ['--graph', a.graph, 'in-dir'],
      ['--json', a.json, 'out-text'],
      ['--svg', a.svg, 'out-text'],
    ]);
    const r = graphStatsReport(a.graph, a.sample);
    summaryWriter(a.json, a.svg)(r.text);
    if (a.json) writeJsonOutput(a.json, r.json);
    if (a.svg) writeTextOutput(a.svg, r.svg());
  },
);

const QUERY_OPTIONS = {
  graph: { type: 'string', required: true, metavar: 'DIR', help: 'graph directory (xling graph build)' },
  model: { type: 'string', metavar: 'DIR', help: 'embed texts with this model (default: the one the graph was built with)' },
  lang: { type: 'string', help: 'language of the query text (default: identified)' },
  json: { type: 'string', metavar: 'FILE', implicit: '-', help: 'write the result as JSON (- or the bare flag: standard output)' },
} as const;

export const graphNeighboursCommand = command(
  ['graph', 'neighbours'],
  {
    name: 'xling graph neighbours',
    summary: 'nearest sentences of a text (or of a sentence id) in every language: paraphrases and translations',
    positionals: [{ name: 'query', required: true, help: 'a sentence, or #ID for a sentence of the graph' }],
    options: {
      ...QUERY_OPTIONS,
      k: { type: 'number', alias: 'k', range: { int: true, min: 1, max: 1000 }, help: "how many (default: the graph's k)" },
      threshold: { type: 'number', range: { min: 0 }, help: 'only neighbours within this cosine distance' },
    },
    examples: [
      'xling graph neighbours --graph graphs/gettext "Datei kann nicht geöffnet werden"',
      'xling graph neighbours --graph graphs/gettext "#1234" --json',
    ],
  },
  async (a) => {
    checkPaths([
      ['--graph', a.graph, 'in-dir'],
      ['--model', a.model, 'in-dir'],
      ['--json', a.json, 'out-text'],
    ]);
    const r = graphNeighbours(a.graph, a._[0]!, { model: a.model, lang: a.lang, k: a.k, threshold: a.threshold });
    if (a.json) writeJsonOutput(a.json, r.json);
    if (a.json !== '-') process.stdout.write(r.text);
  },
);

export const graphPathCommand = command(
  ['graph', 'path'],
  {
    name: 'xling graph path',
    summary: 'the minimax trajectory between two sentences (the path whose largest step is smallest)',
    positionals: [
      { name: 'from', required: true, help: 'a sentence (snapped to its nearest sentence of the graph) or #ID' },
      { name: 'to', required: true, help: 'the other end: a sentence or #ID' },
    ],
    options: {
      ...QUERY_OPTIONS,
      undirected: {
        type: 'boolean',
        help: 'walk edges both ways from the start (without it, only where no path follows their direction; 8 bytes an edge in memory)',
      },
    },
    examples: ['xling graph path --graph graphs/gettext "Open the file" "#5321"'],
  },
  async (a) => {
    checkPaths([
      ['--graph', a.graph, 'in-dir'],
      ['--model', a.model, 'in-dir'],
      ['--json', a.json, 'out-text'],
    ]);
    const r = graphPathReport(a.graph, a._, { model: a.model, undirected: a.undirected });
    if (a.json) writeJsonOutput(a.json, r.json);
    if (a.json !== '-') process.stdout.write(r.text);
  },
);

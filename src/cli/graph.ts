// xling graph build | merge | stats | neighbours | path: the k-nn graph of a multilingual collection.
import { checkLangOption } from './vectors.js';
import { existsSync } from 'node:fs';
import { parseSources, sourcePath } from '../train-data/sources.js';
import { loadSentenceEncoder, readModelConfig } from '../embed/model-dir.js';
import { buildGraph, checkGraphSettings, GRAPH_STEPS, GraphBuildOptions, graphModelDir, GraphStep, mergeGraphShards, readGraphMeta } from '../graph/build.js';
import { GraphReader, graphPath, graphStatistics, neighboursOfText, openGraphIndex, snap } from '../graph/query.js';
import { setNumThreads } from '../tensor/tensor.js';
import { binValues, lineChart } from '../util/svg.js';
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
    const g = new GraphReader(a.graph);
    try {
      const s = graphStatistics(g, a.sample);
      const q = (xs: number[], p: number) => {
        const v = [...xs].sort((x, y) => x - y);
        return v.length ? v[Math.min(v.length - 1, Math.floor(p * v.length))]! : NaN;
      };
      const m = g.meta;
      const out = {
        sentences: m.sentences,
        recall_at_10: m.recall_at_10 ?? null,
        recall_at_10_by_ids: m.recall_at_10_by_ids ?? null,
        bytes_per_sentence: m.bytes_per_sentence ?? null,
        build_seconds: m.build_seconds ?? null,
        k: m.k,
        factory: m.factory,
        nprobe: m.nprobe,
        candidates: m.candidates,
        languages: m.langs.length,
        steps: m.steps,
        bytes: m.bytes ?? null,
        index_bytes_per_sentence: m.bytes ? +(m.bytes.index / m.sentences).toFixed(2) : null,
        sample: s.sample,
        zero_distances: s.zeroDistances,
        distance_nearest: { median: q(s.nearest, 0.5), p10: q(s.nearest, 0.1), p90: q(s.nearest, 0.9) },
        distance_kth: { median: q(s.kth, 0.5), p10: q(s.kth, 0.1), p90: q(s.kth, 0.9) },
        same_language_share: +s.sameLanguageOverall.toFixed(4),
        same_language: Object.fromEntries(Object.entries(s.sameLanguage).map(([l, v]) => [l, { sentences: v.sentences, share: +v.share.toFixed(4) }])),
      };
      const say = summaryWriter(a.json, a.svg);
      say(
        `${m.sentences} sentences, ${m.langs.length} languages, k = ${m.k}; recall@10 ${out.recall_at_10 ?? '?'}; ${out.bytes_per_sentence ?? '?'} bytes/sentence (index + graph); built in ${out.build_seconds ?? '?'}s after embedding\n`,
      );
      say(
        `distance to the nearest neighbour: median ${out.distance_nearest.median.toFixed(3)}; to the ${m.k}th: median ${out.distance_kth.median.toFixed(3)} (${s.zeroDistances.nearest} zero distances left out of ${s.sample})\n`,
      );
      say(`neighbours in the same language: ${(100 * s.sameLanguageOverall).toFixed(1)}%\n`);
      if (a.json) writeJsonOutput(a.json, out);
      if (a.svg) {
        const edges = Array.from({ length: 41 }, (_, i) => (i * Math.max(q(s.kth, 0.995), q(s.nearest, 0.995))) / 40);
        const poly = (xs: number[]) => {
          const b = binValues(xs, edges);
          return b.counts.map((c, i) => [(b.edges[i]! + b.edges[i + 1]!) / 2, c] as [number, number]);
        };
        writeTextOutput(
          a.svg,
          lineChart({
            title: `Distance to the nearest and the ${m.k}th neighbour (${s.sample} sentences)`,
            xLabel: 'cosine distance',
            yLabel: 'sentences',
            series: [
              { name: 'nearest', points: poly(s.nearest) },
              { name: `${m.k}th nearest`, points: poly(s.kth) },
            ],
          }),
        );
      }
    } finally {
      g.close();
    }
  },
);

/** The model that embeds query texts: --model, or the graph's own (resolved from graph.json; says which path was used). */
function queryModel(a: { model?: string; graph: string }, quiet = false) {
  if (a.model) return loadSentenceEncoder(a.model);
  const { path, how } = graphModelDir(a.graph);
  if (!existsSync(path)) throw new Error(`--graph ${a.graph}: its model ${path} (${how}) does not exist; pass --model DIR`);
  if (!quiet) process.stderr.write(`[graph] model ${path} (${how})\n`);
  return loadSentenceEncoder(path);
}

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
    if (a.model) readModelConfig(a.model); // a bad --model is an error even when every query is an id
    const g = new GraphReader(a.graph);
    try {
      const q = a._[0]!;
      let res: { lang: string | null; neighbours: ReturnType<GraphReader['neighboursOf']> };
      if (/^#\d+$/.test(q)) {
        const id = Number(q.slice(1));
        if (id >= g.size) usage(`#${id}: the graph has ${g.size} sentences`);
        res = { lang: g.store.lang(id), neighbours: g.neighboursOf(id, a.threshold ?? Infinity).slice(0, a.k ?? g.meta.k) };
      } else {
        const model = queryModel(a);
        const index = openGraphIndex(a.graph);
        const lang = checkLangOption(model, a.lang, '--lang');
        try {
          res = neighboursOfText(g, model, index, q, {
            k: a.k,
            lang: lang === 'auto' || lang === 'auto-per-sentence' ? undefined : (lang ?? undefined),
            threshold: a.threshold,
          });
        } finally {
          index.dispose();
        }
      }
      if (a.json) {
        writeJsonOutput(a.json, { query: q, ...res });
        if (a.json === '-') return;
      }
      const byLang = new Map<string, typeof res.neighbours>();
      for (const n of res.neighbours) byLang.set(n.lang, [...(byLang.get(n.lang) ?? []), n]);
      for (const [l, ns] of byLang) {
        process.stdout.write(`${l}\n`);
        for (const n of ns) process.stdout.write(`  ${n.distance.toFixed(3)}  #${n.id}  ${n.text}\n`);
      }
    } finally {
      g.close();
    }
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
    if (a.model) readModelConfig(a.model); // a bad --model is an error even when every query is an id
    const g = new GraphReader(a.graph);
    try {
      const needsModel = a._.some((x) => !/^#\d+$/.test(x));
      const model = needsModel ? queryModel(a) : null;
      const index = needsModel ? openGraphIndex(a.graph) : null;
      const ends = a._.slice(0, 2).map((x) => {
        if (/^#\d+$/.test(x)) {
          const id = Number(x.slice(1));
          if (id >= g.size) usage(`${x}: the graph has ${g.size} sentences`);
          return id;
        }
        return snap(g, model!, index!, x);
      });
      index?.dispose();
      const p = graphPath(g, ends[0]!, ends[1]!, { undirected: a.undirected });
      if (!p)
        throw new Error(
          `no path from #${ends[0]} to #${ends[1]} along the graph's neighbour edges${a.undirected ? ' walked both ways' : ', in either direction'}`,
        );
      if (p.fallback)
        process.stderr.write(
          `[graph] no path from #${ends[0]} to #${ends[1]} along the neighbour edges as built; this one walks them both ways (as --undirected)\n`,
        );
      const steps = p.steps.map((s) => ({ ...s, text: g.store.text(s.id), lang: g.store.lang(s.id) }));
      if (a.json) {
        writeJsonOutput(a.json, { from: ends[0], to: ends[1], edges: p.edges, fallback: p.fallback, maxStep: p.maxStep, visited: p.visited, steps });
        if (a.json === '-') return;
      }
      steps.forEach((s, i) =>
        process.stdout.write(`${String(i).padStart(3)}  ${i ? s.distance.toFixed(3) : '     '}  ${s.lang.padEnd(6)} #${s.id}  ${s.text}\n`),
      );
      process.stdout.write(
        `largest step ${p.maxStep.toFixed(3)}; ${steps.length - 1} steps (${p.visited} of ${g.size} sentences visited${p.edges === 'undirected' ? '; edges walked both ways' : ''})\n`,
      );
    } finally {
      g.close();
    }
  },
);

// What xling graph stats, neighbours and path report about a graph directory: each opens the graph
// (and, for texts, a model and the graph's index), answers, closes what it opened, and returns the
// JSON and the lines shown.
import { existsSync } from 'node:fs';
import { checkLangOption } from '../embed/input.js';
import { SentenceEncoderModel } from '../embed/model.js';
import { loadSentenceEncoder, readModelConfig } from '../embed/model-dir.js';
import { UsageError } from '../util/args.js';
import { binValues, lineChart } from '../util/svg.js';
import { graphModelDir } from './meta.js';
import { GraphReader, graphPath, graphStatistics, GraphStatistics, Neighbour, neighboursOfText, openGraphIndex, snap } from './query.js';

export interface GraphReport {
  json: Record<string, unknown>;
  /** The lines shown (on standard output unless the JSON goes there). */
  text: string;
}

/** Runs fn over the graph of a directory, closing it after. */
function withGraph<T>(dir: string, fn: (g: GraphReader) => T): T {
  const g = new GraphReader(dir);
  try {
    return fn(g);
  } finally {
    g.close();
  }
}

const quantile = (xs: number[], p: number) => {
  const v = [...xs].sort((x, y) => x - y);
  return v.length ? v[Math.min(v.length - 1, Math.floor(p * v.length))]! : NaN;
};

function statsJson(g: GraphReader, s: GraphStatistics): Record<string, unknown> & { distance_nearest: { median: number }; distance_kth: { median: number } } {
  const m = g.meta;
  const spread = (xs: number[]) => ({ median: quantile(xs, 0.5), p10: quantile(xs, 0.1), p90: quantile(xs, 0.9) });
  return {
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
    distance_nearest: spread(s.nearest),
    distance_kth: spread(s.kth),
    same_language_share: +s.sameLanguageOverall.toFixed(4),
    same_language: Object.fromEntries(Object.entries(s.sameLanguage).map(([l, v]) => [l, { sentences: v.sentences, share: +v.share.toFixed(4) }])),
  };
}

/** Histograms of the distance to the nearest and to the k-th neighbour. */
function distanceChart(s: GraphStatistics, k: number): string {
  const edges = Array.from({ length: 41 }, (_, i) => (i * Math.max(quantile(s.kth, 0.995), quantile(s.nearest, 0.995))) / 40);
  const poly = (xs: number[]) => {
    const b = binValues(xs, edges);
    return b.counts.map((c, i) => [(b.edges[i]! + b.edges[i + 1]!) / 2, c] as [number, number]);
  };
  return lineChart({
    title: `Distance to the nearest and the ${k}th neighbour (${s.sample} sentences)`,
    xLabel: 'cosine distance',
    yLabel: 'sentences',
    series: [
      { name: 'nearest', points: poly(s.nearest) },
      { name: `${k}th nearest`, points: poly(s.kth) },
    ],
  });
}

/** xling graph stats: size, recall, build times, distance quantiles and language mixing over `sample` sentences; svg() draws the distances. */
export function graphStatsReport(dir: string, sample: number): GraphReport & { svg(): string } {
  return withGraph(dir, (g) => {
    const s = graphStatistics(g, sample);
    const m = g.meta;
    const out = statsJson(g, s);
    const text =
      `${m.sentences} sentences, ${m.langs.length} languages, k = ${m.k}; recall@10 ${out.recall_at_10 ?? '?'}; ${out.bytes_per_sentence ?? '?'} bytes/sentence (index + graph); built in ${out.build_seconds ?? '?'}s after embedding\n` +
      `distance to the nearest neighbour: median ${out.distance_nearest.median.toFixed(3)}; to the ${m.k}th: median ${out.distance_kth.median.toFixed(3)} (${s.zeroDistances.nearest} zero distances left out of ${s.sample})\n` +
      `neighbours in the same language: ${(100 * s.sameLanguageOverall).toFixed(1)}%\n`;
    return { json: out, text, svg: () => distanceChart(s, m.k) };
  });
}

/** The model that embeds query texts: the given one, or the graph's own (resolved from graph.json; says which path was used). */
function queryModel(dir: string, model: string | undefined): SentenceEncoderModel {
  if (model) return loadSentenceEncoder(model);
  const { path, how } = graphModelDir(dir);
  if (!existsSync(path)) throw new Error(`--graph ${dir}: its model ${path} (${how}) does not exist; pass --model DIR`);
  process.stderr.write(`[graph] model ${path} (${how})\n`);
  return loadSentenceEncoder(path);
}

/** A sentence of the graph given as #ID (a usage error past its end, naming it as `shown` says), or null for a text. */
function sentenceId(g: GraphReader, q: string, shown: (id: number) => string = () => q): number | null {
  if (!/^#\d+$/.test(q)) return null;
  const id = Number(q.slice(1));
  if (id >= g.size) throw new UsageError(`${shown(id)}: the graph has ${g.size} sentences`);
  return id;
}

export interface GraphQueryOptions {
  /** The model that embeds texts (default: the one the graph was built with); checked first when given. */
  model?: string;
  /** The language of a query text (default: identified). */
  lang?: string;
}

function neighboursListing(neighbours: Neighbour[]): string {
  const byLang = new Map<string, Neighbour[]>();
  for (const n of neighbours) byLang.set(n.lang, [...(byLang.get(n.lang) ?? []), n]);
  let text = '';
  for (const [l, ns] of byLang) {
    text += `${l}\n`;
    for (const n of ns) text += `  ${n.distance.toFixed(3)}  #${n.id}  ${n.text}\n`;
  }
  return text;
}

/** xling graph neighbours: the nearest sentences of a text (or of #ID) in every language, listed by language. */
export function graphNeighbours(dir: string, query: string, o: GraphQueryOptions & { k?: number; threshold?: number }): GraphReport {
  if (o.model) readModelConfig(o.model); // a bad --model is an error even when every query is an id
  return withGraph(dir, (g) => {
    let res: { lang: string | null; neighbours: Neighbour[] };
    const id = sentenceId(g, query, (n) => `#${n}`);
    if (id !== null) res = { lang: g.store.lang(id), neighbours: g.neighboursOf(id, o.threshold ?? Infinity).slice(0, o.k ?? g.meta.k) };
    else {
      const model = queryModel(dir, o.model);
      const index = openGraphIndex(dir);
      const lang = checkLangOption(model, o.lang, '--lang');
      try {
        res = neighboursOfText(g, model, index, query, {
          k: o.k,
          lang: lang === 'auto' || lang === 'auto-per-sentence' ? undefined : (lang ?? undefined),
          threshold: o.threshold,
        });
      } finally {
        index.dispose();
      }
    }
    return { json: { query, ...res }, text: neighboursListing(res.neighbours) };
  });
}

/** The two ends of a path: #IDs, or texts snapped to their nearest sentence of the graph. */
function pathEnds(g: GraphReader, dir: string, ends: string[], model: string | undefined): number[] {
  const needsModel = ends.some((x) => !/^#\d+$/.test(x));
  const m = needsModel ? queryModel(dir, model) : null;
  const index = needsModel ? openGraphIndex(dir) : null;
  try {
    return ends.slice(0, 2).map((x) => sentenceId(g, x) ?? snap(g, m!, index!, x));
  } finally {
    index?.dispose();
  }
}

/** xling graph path: the minimax trajectory between two sentences (#ID or a text), step by step. */
export function graphPathReport(dir: string, ends: string[], o: { model?: string; undirected?: boolean }): GraphReport {
  if (o.model) readModelConfig(o.model); // a bad --model is an error even when every query is an id
  return withGraph(dir, (g) => {
    const [from, to] = pathEnds(g, dir, ends, o.model) as [number, number];
    const p = graphPath(g, from, to, { undirected: o.undirected });
    if (!p) throw new Error(`no path from #${from} to #${to} along the graph's neighbour edges${o.undirected ? ' walked both ways' : ', in either direction'}`);
    if (p.fallback)
      process.stderr.write(`[graph] no path from #${from} to #${to} along the neighbour edges as built; this one walks them both ways (as --undirected)\n`);
    const steps = p.steps.map((s) => ({ ...s, text: g.store.text(s.id), lang: g.store.lang(s.id) }));
    let text = steps.map((s, i) => `${String(i).padStart(3)}  ${i ? s.distance.toFixed(3) : '     '}  ${s.lang.padEnd(6)} #${s.id}  ${s.text}\n`).join('');
    text += `largest step ${p.maxStep.toFixed(3)}; ${steps.length - 1} steps (${p.visited} of ${g.size} sentences visited${p.edges === 'undirected' ? '; edges walked both ways' : ''})\n`;
    return { json: { from, to, edges: p.edges, fallback: p.fallback, maxStep: p.maxStep, visited: p.visited, steps }, text };
  });
}

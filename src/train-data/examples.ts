// Training examples from an N-way parallel corpus, following the configured paths, and a
// deterministic, resumable batch stream (length-sorted chunks as LASER does, shuffled batches).
import { Rng } from '../util/rng.js';
import { SOURCE_COLUMN, sourceNames } from './corpus.js';

/**
 * A training path. '1:1': each source language → one target language. '1:N': one source decoded
 * into several target languages in the same step (losses summed). 'M:1': several source
 * languages of the same sentence, sentence vectors averaged, one target.
 * Language lists accept '*' = every language of the corpus except the targets. A 1:1 path with
 * src and trg both '*' pairs every two languages of a row once (the earlier corpus column as the
 * source): the N-way corpus as all its translation pairs, for losses that treat both sides alike.
 */
export interface PathConfig {
  kind: '1:1' | '1:N' | 'M:1';
  src: string[] | '*';
  trg: string[] | '*';
  /** Relative sampling weight of this path's examples (default 1). */
  weight?: number;
  /** Only rows whose `#source` cell names one of these sources (default: every row). */
  sources?: string[];
}

/**
 * Token ids of every cell: ids.get(lang)[row] (undefined when the row has no such cell); each row's
 * `#source` cell when the corpus has one.
 */
export type EncodedCorpus = { langs: string[]; rows: number; ids: Map<string, (Int32Array | undefined)[]>; sources?: string[] };

export interface Example {
  kind: PathConfig['kind'];
  row: number;
  src: string[]; // one source language, or several (M:1)
  trg: string[]; // one target language, or several (1:N)
}

export interface Batch {
  kind: PathConfig['kind'];
  examples: Example[];
  /** (source, target) pairs this batch trains on. */
  pairs: number;
}

function resolveSrc(src: PathConfig['src'], trg: string[], langs: string[]): string[] {
  return src === '*' ? langs.filter((l) => !trg.includes(l)) : src;
}

/** How a path reads in messages. */
const pathName = (p: PathConfig) => `${p.kind} ${JSON.stringify(p.src)}→${p.trg === '*' ? '*' : p.trg.join(',')}`;

/** The rows a path reads: every row, or those whose `#source` names one of the path's sources. */
function pathRows(c: EncodedCorpus, p: PathConfig): (r: number) => boolean {
  if (!p.sources) return () => true;
  const want = new Set(p.sources);
  const cells = c.sources;
  if (!cells) throw new Error(`path ${pathName(p)}: 'sources' needs a corpus with a ${SOURCE_COLUMN} column`);
  const rows = new Uint8Array(c.rows);
  let n = 0;
  for (let r = 0; r < c.rows; r++)
    if (sourceNames(cells[r]).some((s) => want.has(s))) {
      rows[r] = 1;
      n++;
    }
  if (!n) throw new Error(`path ${pathName(p)}: no row of the corpus comes from ${p.sources.join(', ')}`);
  return (r) => rows[r] === 1;
}

/**
 * Enumerates the examples of every path (M:1 uses pairs of sources of the same row). A path's
 * weight repeats its examples (integer part) and keeps a fixed, evenly spread share of them
 * (fractional part), so weights rebalance paths deterministically.
 */
export function buildExamples(c: EncodedCorpus, paths: PathConfig[]): Example[] {
  const out: Example[] = [];
  for (const p of paths) {
    const start = out.length;
    pathExamples(c, p, out);
    const w = p.weight ?? 1;
    if (!(w > 0)) throw new Error(`path ${pathName(p)}: weight must be > 0`);
    if (w !== 1) {
      const own = out.splice(start);
      const whole = Math.floor(w),
        frac = w - whole;
      // (a loop, not push(...own): spreading a path of 10⁵+ examples overflows the call stack)
      for (let r = 0; r < whole; r++) for (const e of own) out.push(e);
      if (frac > 0) for (let i = 0; i < own.length; i++) if (Math.floor((i + 1) * frac) > Math.floor(i * frac)) out.push(own[i]!);
    }
  }
  if (!out.length) throw new Error('no training examples: check the paths against the corpus languages');
  return out;
}

/**
 * One shared array per language list: millions of examples name the same few lists, and an array
 * each would cost the heap hundreds of megabytes on a large corpus (examples never change them).
 */
function langLists(): (langs: string[]) => string[] {
  const seen = new Map<string, string[]>();
  return (langs) => {
    const k = langs.join('\t');
    let got = seen.get(k);
    if (!got) seen.set(k, (got = langs));
    return got;
  };
}

function pathExamples(c: EncodedCorpus, p: PathConfig, out: Example[]): void {
  const read = pathRows(c, p);
  const list = langLists();
  if (p.trg === '*') {
    if (p.kind !== '1:1' || p.src !== '*') throw new Error(`path ${pathName(p)}: trg '*' needs kind 1:1 and src '*'`);
    for (let r = 0; r < c.rows; r++) {
      if (!read(r)) continue;
      const present = c.langs.filter((l) => c.ids.get(l)?.[r] !== undefined);
      for (let i = 0; i < present.length; i++)
        for (let j = i + 1; j < present.length; j++) out.push({ kind: '1:1', row: r, src: list([present[i]!]), trg: list([present[j]!]) });
    }
    return;
  }
  for (const l of [...(p.src === '*' ? [] : p.src), ...p.trg]) {
    if (!c.ids.has(l)) throw new Error(`path ${pathName(p)}: language '${l}' is not in the corpus (has ${c.langs.join(' ')})`);
  }
  const srcs = resolveSrc(p.src, p.trg, c.langs);
  for (let r = 0; r < c.rows; r++) {
    if (!read(r)) continue;
    const has = (l: string) => c.ids.get(l)?.[r] !== undefined;
    const trg = list(p.trg.filter(has));
    if (p.kind === '1:1') {
      if (!trg.length) continue;
      // src == trg (auto-encoding, e.g. en→en) only when the path names it explicitly
      for (const s of srcs) if (has(s) && (s !== trg[0] || p.src !== '*')) out.push({ kind: '1:1', row: r, src: list([s]), trg });
    } else if (p.kind === '1:N') {
      if (trg.length < p.trg.length) continue;
      for (const s of srcs) if (has(s) && !trg.includes(s)) out.push({ kind: '1:N', row: r, src: list([s]), trg });
    } else {
      if (!trg.length) continue;
      const present = srcs.filter((s) => has(s) && !trg.includes(s));
      for (let i = 0; i + 1 < present.length; i += 2) out.push({ kind: 'M:1', row: r, src: list([present[i]!, present[i + 1]!]), trg: list([trg[0]!]) });
    }
  }
}

export interface StreamState {
  epoch: number;
  batch: number;
}

/**
 * What an epoch's batches are cut from: the examples and their corpus, the seed, and the cut:
 * batches of `size` examples (or fewer when maxTokens, if not 0, caps the padded source tokens),
 * length-sorted in chunks of size*sortChunk.
 */
export interface EpochSource {
  ex: Example[];
  c: EncodedCorpus;
  seed: number;
  size: number;
  sortChunk: number;
  maxTokens: number;
}

/**
 * Batches of one epoch: examples shuffled with seed+epoch, cut into chunks of
 * size*sortChunk, each chunk sorted by (kind, source length) and cut into batches of `size`
 * examples (or fewer when maxTokens caps the padded source tokens), batches shuffled.
 */
export function epochBatches(s: EpochSource, epoch: number): Batch[] {
  const rng = new Rng(s.seed * 7919 + epoch);
  const order = rng.shuffle(Array.from(s.ex.keys())).map((j) => s.ex[j]!);
  return cutBatches(order, s, rng);
}

/** Shuffled examples cut into chunks of size*sortChunk, each length-sorted and cut into shuffled batches. */
function cutBatches(order: Example[], { c, size, sortChunk, maxTokens }: EpochSource, rng: Rng): Batch[] {
  const len = (e: Example) => c.ids.get(e.src[0]!)![e.row]!.length;
  const kindRank = { '1:1': 0, '1:N': 1, 'M:1': 2 } as const;
  const batches: Batch[] = [];
  const chunkSize = size * Math.max(1, sortChunk);
  for (let i = 0; i < order.length; i += chunkSize) {
    const chunk = order.slice(i, i + chunkSize);
    chunk.sort((a, b) => kindRank[a.kind] - kindRank[b.kind] || len(a) - len(b));
    const local: Batch[] = [];
    let cur: Example[] = [];
    let maxLen = 0;
    const flush = () => {
      if (cur.length) local.push({ kind: cur[0]!.kind, examples: cur, pairs: pairsOf(cur) });
      cur = [];
      maxLen = 0;
    };
    for (const e of chunk) {
      const l = len(e);
      if (cur.length && (cur[0]!.kind !== e.kind || cur.length >= size || (maxTokens > 0 && Math.max(maxLen, l) * (cur.length + 1) > maxTokens))) flush();
      cur.push(e);
      maxLen = Math.max(maxLen, l);
    }
    flush();
    batches.push(...rng.shuffle(local));
  }
  return batches;
}

/** Examples grouped by language pair (pairKey), the keys sorted. */
function groupByPair(ex: Example[]): { keys: string[]; groups: Map<string, Example[]> } {
  const groups = new Map<string, Example[]>();
  for (const e of ex) {
    const k = pairKey(e);
    let g = groups.get(k);
    if (!g) groups.set(k, (g = []));
    g.push(e);
  }
  return { keys: [...groups.keys()].sort(), groups };
}

/** Each group's share of an epoch: n^(1/T) normalised (T = 1: its own share; large T: towards equal shares). */
export function temperatureShares(sizes: number[], temperature: number): number[] {
  const w = sizes.map((n) => n ** (1 / temperature));
  const sum = w.reduce((a, x) => a + x, 0);
  return w.map((x) => x / sum);
}

/** How mixed batches weigh language pairs (see epochLangBatches). */
export interface LangSampling {
  /** Shares ∝ n^(1/T) (1: in proportion to the pair's examples). */
  temperature: number;
  /** A pair with fewer examples an epoch is raised to this many (0: no floor)… */
  minRows: number;
  /** …but to at most this many times its own examples. */
  maxRepeat: number;
}

/**
 * Examples each language pair takes in an epoch: its temperature share of the corpus's size, then
 * raised to min(minRows, maxRepeat × n) where that is more (the epoch grows by what the small
 * pairs add; the large pairs keep their examples).
 */
export function langQuotas(sizes: number[], total: number, o: LangSampling): number[] {
  const shares = temperatureShares(sizes, o.temperature);
  return sizes.map((n, i) => {
    const q = Math.round(shares[i]! * total);
    return o.minRows > 0 ? Math.max(q, Math.min(o.minRows, Math.round(o.maxRepeat * n))) : q;
  });
}

/**
 * Batches of one epoch that mix language pairs, each pair taking its quota of examples
 * (langQuotas: a temperature over the pairs' sizes, as XLM and LASER2 upsample low-resource
 * languages, and a floor for the smallest): a pair reads its examples in an order reshuffled at
 * each pass over them, so a small pair repeats and a large one may be read in part, continuing
 * where the previous epoch stopped (the position is a function of the epoch, so the stream stays
 * resumable). Then shuffled, length-sorted in chunks and cut as in epochBatches.
 */
export function epochLangBatches(s: EpochSource, epoch: number, sampling: LangSampling): Batch[] {
  const { keys, groups } = groupByPair(s.ex);
  const seed = s.seed;
  const quotas = langQuotas(
    keys.map((k) => groups.get(k)!.length),
    s.ex.length,
    sampling,
  );
  const picked: Example[] = [];
  keys.forEach((k, gi) => {
    const g = groups.get(k)!;
    const quota = quotas[gi]!;
    let cycle = -1;
    let perm: number[] = [];
    for (let pos = epoch * quota; pos < (epoch + 1) * quota; pos++) {
      const cy = Math.floor(pos / g.length);
      if (cy !== cycle) {
        cycle = cy;
        perm = new Rng(seed * 31 + 1000003 * (gi + 1) + cy * 7).shuffle(Array.from(g.keys()));
      }
      picked.push(g[perm[pos - cy * g.length]!]!);
    }
  });
  const rng = new Rng(seed * 7919 + epoch);
  return cutBatches(rng.shuffle(picked), s, rng);
}

export function pairsOf(examples: Example[]): number {
  return examples.reduce((a, e) => a + (e.kind === '1:N' ? e.trg.length : 1), 0);
}

/** The language pair of an example: path kind, source language(s) → target language(s). */
export function pairKey(e: Example): string {
  return `${e.kind} ${e.src.join('+')}>${e.trg.join('+')}`;
}

/**
 * Batches of one epoch where every batch holds one language pair (as LASER trains): each pair's
 * examples are cut into length-sorted batches as in epochBatches, then each batch slot draws a
 * pair with probability ∝ n_pair^(1/T) (T = 1: proportional to its size; large T: towards
 * uniform, so small pairs are seen more often) and takes that pair's next batch, starting
 * the pair over (reshuffled) when it runs out. The epoch has as many batches as all pairs have.
 */
export function epochPairBatches(s: EpochSource, epoch: number, temperature: number): Batch[] {
  const { keys, groups } = groupByPair(s.ex);
  const seed = s.seed;
  // each pair's batches, cut with a seed of its own (cycle: how many times it was started over)
  const pairBatches = (gi: number, cycle: number) => epochBatches({ ...s, ex: groups.get(keys[gi]!)!, seed: seed + 1000003 * (gi + 1) }, epoch * 1009 + cycle);
  const lists = keys.map((_, gi) => ({ gi, cycle: 0, at: 0, batches: pairBatches(gi, 0) }));
  const total = lists.reduce((a, l) => a + l.batches.length, 0);
  const w = keys.map((k) => groups.get(k)!.length ** (1 / temperature));
  const cum: number[] = [];
  w.reduce((a, x, i) => (cum[i] = a + x), 0);
  const wsum = cum[cum.length - 1]!;
  const rng = new Rng(seed * 104729 + epoch);
  const out: Batch[] = [];
  for (let b = 0; b < total; b++) {
    const u = rng.next() * wsum;
    let g = 0;
    while (g + 1 < cum.length && cum[g]! <= u) g++;
    const l = lists[g]!;
    if (l.at >= l.batches.length) {
      l.cycle++;
      l.at = 0;
      l.batches = pairBatches(l.gi, l.cycle);
    }
    out.push(l.batches[l.at++]!);
  }
  return out;
}

export interface StreamOptions {
  /** One language pair per batch, pairs drawn with this temperature (0 = off: batches mix pairs). */
  pairTemperature?: number;
  /** Mixed batches, each language pair's share of an epoch ∝ n^(1/T) (0 or 1 = off: in proportion to its examples). */
  langTemperature?: number;
  /** Mixed batches where a language pair takes at least this many examples an epoch (0 = off)… */
  langMinRows?: number;
  /** …repeating its own at most this many times (default 10). */
  langMaxRepeat?: number;
}

/** Endless resumable stream of batches. */
export class BatchStream {
  private cache: { epoch: number; batches: Batch[] } | null = null;
  private readonly source: EpochSource;
  constructor(
    ex: Example[],
    c: EncodedCorpus,
    seed: number,
    size: number,
    sortChunk: number,
    maxTokens: number,
    public state: StreamState = { epoch: 0, batch: 0 },
    private readonly opts: StreamOptions = {},
  ) {
    this.source = { ex, c, seed, size, sortChunk, maxTokens };
  }

  private epoch(e: number): Batch[] {
    const { pairTemperature: T = 0, langTemperature: L = 0, langMinRows: minRows = 0, langMaxRepeat: maxRepeat = 10 } = this.opts;
    if (T > 0) return epochPairBatches(this.source, e, T);
    if ((L > 0 && L !== 1) || minRows > 0) return epochLangBatches(this.source, e, { temperature: L > 0 ? L : 1, minRows, maxRepeat });
    return epochBatches(this.source, e);
  }

  next(): Batch {
    for (;;) {
      if (!this.cache || this.cache.epoch !== this.state.epoch) {
        this.cache = { epoch: this.state.epoch, batches: this.epoch(this.state.epoch) };
      }
      const b = this.cache.batches[this.state.batch];
      if (b) {
        this.state = { epoch: this.state.epoch, batch: this.state.batch + 1 };
        return b;
      }
      this.state = { epoch: this.state.epoch + 1, batch: 0 };
    }
  }
}

/** Truncates a batch so that it trains on exactly `pairs` pairs (for exact budgets). */
export function truncateBatch(b: Batch, pairs: number): Batch {
  if (b.pairs <= pairs) return b;
  const kept: Example[] = [];
  let n = 0;
  for (const e of b.examples) {
    const p = e.kind === '1:N' ? e.trg.length : 1;
    if (n + p > pairs) break;
    kept.push(e);
    n += p;
  }
  return { kind: b.kind, examples: kept, pairs: n };
}

/** A training configuration's batch settings (its `batch` section; src/models/family.ts says what each does). */
export interface BatchSettings {
  size: number;
  maxTokens: number;
  sortChunk: number;
  pairTemperature: number;
  langTemperature: number;
  langMinRows: number;
  langMaxRepeat: number;
}

/** The batch stream of a training run: `examples` cut into batches as `batch` says, shuffled from `seed`. */
export function batchStreamOf(examples: Example[], c: EncodedCorpus, seed: number, batch: BatchSettings): BatchStream {
  const { size, sortChunk, maxTokens, pairTemperature, langTemperature, langMinRows, langMaxRepeat } = batch;
  return new BatchStream(examples, c, seed, size, sortChunk, maxTokens, undefined, { pairTemperature, langTemperature, langMinRows, langMaxRepeat });
}

/**
 * The batch side of a training task over one stream of examples (a TrainingTask<Batch>'s
 * nextBatch, resumable streamState, pairs and truncate): a family's task extends it with its
 * model and loss.
 */
export abstract class BatchStreamTask {
  private readonly stream: BatchStream;

  constructor(
    protected readonly corpus: EncodedCorpus,
    examples: Example[],
    seed: number,
    batch: BatchSettings,
  ) {
    this.stream = batchStreamOf(examples, corpus, seed, batch);
  }

  /** The token ids of a language's sentence in a corpus row. */
  protected ids(lang: string, row: number): Int32Array {
    return this.corpus.ids.get(lang)![row]!;
  }
  get streamState(): StreamState {
    return this.stream.state;
  }
  set streamState(s: unknown) {
    this.stream.state = s as StreamState;
  }
  nextBatch(): Batch {
    return this.stream.next();
  }
  pairs(b: Batch): number {
    return b.pairs;
  }
  truncate(b: Batch, n: number): Batch {
    return truncateBatch(b, n);
  }
}

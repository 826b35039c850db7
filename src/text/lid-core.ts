// Language identification: a multinomial naive Bayes classifier over character 1–4-grams (the
// approach of Cavnar & Trenkle's n-gram profiles and of langid.py, Lui & Baldwin 2012, without the
// feature weighting). Pure TypeScript, no tensors: it runs wherever text is read.
//
// Training keeps, per language, the `topK` most frequent n-grams with their counts (a profile);
// p(g | l) = (count_l(g) + α) / (total_l + α·V) with V the number of distinct n-grams seen in
// training, so a profile's missing n-gram costs the language its smoothing floor. N-grams in no
// profile are ignored. The raw log-likelihoods of a sentence are far too peaked to be read as
// probabilities (naive Bayes counts every overlapping n-gram as independent evidence), so the
// posterior is softmax(score / (T · n^β)) with n the sentence's matched n-grams and (T, β) fitted
// by minimising the negative log-likelihood on held-out lines (temperature scaling, Guo et al.,
// 2017): `confidence` is then a calibrated probability (see bench/RESULTS.md, "Language
// identification").
//
// The identifier is stored in a model directory as `lid.json` (a few hundred kB).
//
// This module imports nothing of Node (xling/lite runs it in browsers); ./lid.ts adds the file
// system: loadLanguageIdentifier, and `save` (registered there).

/** File name of the identifier in a model directory. */
export const LID_FILE = 'lid.json';

export { LID_CONFIDENCE } from '../util/embed-policy.js';

export interface LidTrainOptions {
  /** Smallest and largest n-gram length in characters (code points); default [1, 4]. */
  ngrams?: [number, number];
  /** N-grams kept per language (its most frequent); default 1000. */
  topK?: number;
  /** Additive smoothing; default 0.5. */
  alpha?: number;
  /** At most this many lines per language are used (spread over its lines); default 5000. */
  maxLines?: number;
  /** Every `heldOutEvery`-th line is held out to fit the calibration (default 10). */
  heldOutEvery?: number;
}

interface LangProfile {
  total: number;
  ngrams: string[];
  counts: number[];
}

interface LidFile {
  format: 'xling-lid';
  version: 1;
  ngrams: [number, number];
  alpha: number;
  vocabulary: number;
  temperature: number;
  lengthPower: number;
  /** Lines each language was trained on (information only). */
  lines: Record<string, number>;
  languages: Record<string, LangProfile>;
}

/** Characters of a text an identifier reads (the rest adds nothing but time: a 2 MB line must not stall it). */
export const LID_MAX_CHARS = 1000;

/** The text an identifier sees: its first LID_MAX_CHARS characters, NFC, lower case, digits as 0, one space between words, a space either side. */
export function lidText(s: string): string {
  if (s.length > LID_MAX_CHARS) s = s.slice(0, LID_MAX_CHARS);
  const t = s
    .normalize('NFC')
    .toLowerCase()
    .replace(/\p{Nd}/gu, '0')
    .replace(/\s+/gu, ' ')
    .trim();
  return t ? ` ${t} ` : '';
}

/**
 * N-grams as numbers (faster map keys than strings): each character a dense id in [1, 2^bits), an
 * n-gram the base-2^bits number of its ids (prefixes of different lengths never collide, as ids
 * start at 1). Characters without an id end every n-gram through them.
 */
class NgramKeys {
  readonly ids = new Map<string, number>();
  /** The same ids by code point: those in the Basic Multilingual Plane (0: none), the others. */
  private readonly bmpIds = new Int32Array(0x10000);
  private readonly astralIds = new Map<number, number>();
  readonly chars: string[] = [''];
  readonly radix: number;
  constructor(
    chars: Iterable<string>,
    readonly lo: number,
    readonly hi: number,
  ) {
    const bits = Math.floor(53 / hi);
    this.radix = 2 ** bits;
    for (const c of chars) {
      if (this.chars.length >= this.radix) break;
      if (!this.ids.has(c)) {
        this.ids.set(c, this.chars.length);
        const code = c.codePointAt(0)!;
        if (code > 0xffff) this.astralIds.set(code, this.chars.length);
        else this.bmpIds[code] = this.chars.length;
        this.chars.push(c);
      }
    }
  }
  /** The ids of g's characters into out (room for g.length); their number, or −1 when a character has none. */
  idsOf(g: string, out: Int32Array): number {
    let n = 0;
    for (let i = 0; i < g.length; i++) {
      const c = g.codePointAt(i)!;
      let id: number;
      if (c > 0xffff) {
        id = this.astralIds.get(c) ?? 0;
        i++;
      } else id = this.bmpIds[c]!;
      if (!id) return -1;
      out[n++] = id;
    }
    return n;
  }
  /** The keys of every n-gram of a prepared text (with repeats; only n-grams with a character other than space and 0). */
  each(t: string, fn: (key: number) => void): void {
    const id: number[] = [],
      info: boolean[] = [];
    for (const c of t) {
      id.push(this.ids.get(c) ?? 0);
      info.push(c !== ' ' && c !== '0');
    }
    for (let i = 0; i < id.length; i++) {
      let k = 0,
        informative = false;
      for (let n = 1; n <= this.hi && i + n <= id.length; n++) {
        const c = id[i + n - 1]!;
        if (!c) break;
        k = k * this.radix + c;
        if (info[i + n - 1]) informative = true;
        if (n >= this.lo && informative) fn(k);
      }
    }
  }
  /** The n-gram of a key. */
  text(key: number): string {
    let s = '';
    while (key > 0) {
      const c = key % this.radix;
      s = this.chars[c]! + s;
      key = (key - c) / this.radix;
    }
    return s;
  }
}

/**
 * The identifier's n-grams as a trie over character ids, in one open-addressing hash table of
 * (node, character) → child (integer keys: no string or float hashing per n-gram). Every prefix
 * of a known n-gram is a node, so a walk that leaves the trie can stop: no longer n-gram from that
 * position is known.
 */
class NgramTrie {
  /** Per node: its feature number, or −1 for a prefix that is no feature. */
  feature: Int32Array;
  private nodes = 1;
  private parent: Int32Array;
  private char: Int32Array;
  private child: Int32Array;
  private mask: number;
  constructor(maxNodes: number) {
    let size = 16;
    while (size < 2 * maxNodes) size *= 2;
    this.mask = size - 1;
    this.parent = new Int32Array(size).fill(-1);
    this.char = new Int32Array(size);
    this.child = new Int32Array(size);
    this.feature = new Int32Array(maxNodes + 1).fill(-1);
  }
  private slot(node: number, c: number): number {
    let h = Math.imul(node, 0x9e3779b1) ^ Math.imul(c, 0x85ebca6b);
    h = (h ^ (h >>> 15)) & this.mask;
    while (this.parent[h] !== -1 && (this.parent[h] !== node || this.char[h] !== c)) h = (h + 1) & this.mask;
    return h;
  }
  /** The child of node through character c, or −1. */
  next(node: number, c: number): number {
    const h = this.slot(node, c);
    return this.parent[h] === -1 ? -1 : this.child[h]!;
  }
  /** The node of the n-gram of character ids cs[0 … n), added (with its prefixes) if new. */
  insert(cs: Int32Array, n: number): number {
    let node = 0;
    for (let i = 0; i < n; i++) {
      const c = cs[i]!;
      const h = this.slot(node, c);
      if (this.parent[h] === -1) {
        this.parent[h] = node;
        this.char[h] = c;
        this.child[h] = this.nodes++;
      }
      node = this.child[h]!;
    }
    return node;
  }
}

/**
 * The tables an identifier scores with. log p(g | l) is a language's smoothing floor for every
 * n-gram outside its profile, and a feature is in few profiles (about two of ~150 languages): a
 * sentence's scores are n · floor(l) plus, for each matched feature, its few (language, log p −
 * floor) entries, kept by feature (compressed rows: entries start[f] … start[f + 1] − 1). The same
 * sums as a dense [features, languages] table, at a fraction of the additions.
 */
interface LidTables {
  keys: NgramKeys;
  trie: NgramTrie;
  /** Number of n-gram features (the union of the languages' profiles). */
  features: number;
  floor: Float64Array;
  start: Int32Array;
  entryLang: Int32Array;
  entryDelta: Float64Array;
}

/** The distinct characters (code points) of every profile n-gram, sorted as strings. */
function profileChars(profiles: LangProfile[]): string[] {
  const bmp = new Uint8Array(0x10000),
    astral = new Set<number>();
  for (const p of profiles)
    for (const g of p.ngrams)
      for (let i = 0; i < g.length; i++) {
        const c = g.codePointAt(i)!;
        if (c > 0xffff) {
          astral.add(c);
          i++;
        } else bmp[c] = 1;
      }
  const out: string[] = [];
  bmp.forEach((seen, c) => {
    if (seen) out.push(String.fromCharCode(c));
  });
  for (const c of astral) out.push(String.fromCodePoint(c));
  return out.sort();
}

/**
 * Every profile n-gram numbered once, in order of first appearance (those through a character
 * without an id are never counted), and put in the trie, which also finds the ones seen before:
 * each profile entry's feature (−1: none).
 */
function numberFeatures(profiles: LangProfile[], keys: NgramKeys): { trie: NgramTrie; features: number; featureAt: Int32Array[] } {
  let room = 0;
  for (const p of profiles) for (const g of p.ngrams) room += g.length;
  const trie = new NgramTrie(room);
  const ids = new Int32Array(64);
  let features = 0;
  const featureAt = profiles.map((p) => {
    const at = new Int32Array(p.ngrams.length);
    p.ngrams.forEach((g, i) => {
      const n = keys.idsOf(g, ids);
      if (n < 0) {
        at[i] = -1;
        return;
      }
      const node = trie.insert(ids, n);
      if (trie.feature[node]! < 0) trie.feature[node] = features++;
      at[i] = trie.feature[node]!;
    });
    return at;
  });
  return { trie, features, featureAt };
}

/** The scoring tables of an identifier file (languages: its languages, sorted). */
function buildTables(file: LidFile, languages: string[]): LidTables {
  const L = languages.length,
    V = file.vocabulary,
    a = file.alpha;
  const profiles = languages.map((l) => file.languages[l]!);
  const keys = new NgramKeys(profileChars(profiles), file.ngrams[0], file.ngrams[1]);
  const { trie, features: F, featureAt } = numberFeatures(profiles, keys);
  // (values rounded to float32 as the identifier has always stored them: the same scores)
  const floor = new Float64Array(L),
    denom = new Float64Array(L);
  const start = new Int32Array(F + 1);
  profiles.forEach((p, j) => {
    denom[j] = Math.log(p.total + a * V);
    floor[j] = Math.fround(Math.log(a) - denom[j]!);
    for (const f of featureAt[j]!) if (f >= 0) start[f + 1]!++;
  });
  for (let f = 0; f < F; f++) start[f + 1]! += start[f]!;
  const entryLang = new Int32Array(start[F]!),
    entryDelta = new Float64Array(start[F]!);
  // each feature's entries in language order, then profile order
  const fill = start.slice(0, F);
  profiles.forEach((p, j) => {
    const at = featureAt[j]!;
    for (let i = 0; i < at.length; i++) {
      const f = at[i]!;
      if (f < 0) continue;
      const e = fill[f]!++;
      entryLang[e] = j;
      entryDelta[e] = Math.fround(Math.log(p.counts[i]! + a) - denom[j]!) - floor[j]!;
    }
  });
  return { keys, trie, features: F, floor, start, entryLang, entryDelta };
}

export class LanguageIdentifier {
  /** The languages it can answer, sorted. */
  readonly languages: string[];
  /** Built on first use (a model's identifier is loaded with it, and many runs never identify). */
  private built: LidTables | null = null;

  private constructor(private readonly file: LidFile) {
    this.languages = Object.keys(file.languages).sort();
  }

  private get tables(): LidTables {
    return (this.built ??= buildTables(this.file, this.languages));
  }

  /** Number of n-gram features (the union of the languages' profiles). */
  get features(): number {
    return this.tables.features;
  }

  /** The fitted calibration: posterior = softmax(score / (temperature · n^lengthPower)). */
  get calibration(): { temperature: number; lengthPower: number } {
    return { temperature: this.file.temperature, lengthPower: this.file.lengthPower };
  }

  /** Summed log-likelihoods per language and the number of n-grams that matched a profile. */
  private scores(text: string): { s: Float64Array; n: number } {
    const L = this.languages.length,
      s = new Float64Array(L);
    let n = 0;
    const { start, entryLang: lang, entryDelta: delta, trie, keys, floor } = this.tables,
      feature = trie.feature;
    const { lo, hi } = keys,
      id: number[] = [],
      info: boolean[] = [];
    // the n-grams NgramKeys.each enumerates (informative ones, through characters with ids), walked down the trie
    for (const c of lidText(text)) {
      id.push(keys.ids.get(c) ?? 0);
      info.push(c !== ' ' && c !== '0');
    }
    for (let i = 0; i < id.length; i++) {
      let node = 0,
        informative = false;
      for (let len = 1; len <= hi && i + len <= id.length; len++) {
        const c = id[i + len - 1]!;
        if (!c) break;
        node = trie.next(node, c);
        if (node < 0) break;
        if (info[i + len - 1]) informative = true;
        const f = feature[node]!;
        if (len < lo || !informative || f < 0) continue;
        n++;
        for (let e = start[f]!, end = start[f + 1]!; e < end; e++) s[lang[e]!] += delta[e]!;
      }
    }
    for (let j = 0; j < L; j++) s[j] += n * floor[j]!;
    return { s, n };
  }

  private static softmax(s: Float64Array, n: number, T: number, beta: number): Float64Array {
    const k = 1 / (T * n ** beta);
    let m = -Infinity;
    for (const x of s) m = Math.max(m, x * k);
    const p = new Float64Array(s.length);
    let z = 0;
    for (let j = 0; j < s.length; j++) {
      p[j] = Math.exp(s[j]! * k - m);
      z += p[j]!;
    }
    for (let j = 0; j < s.length; j++) p[j]! /= z;
    return p;
  }

  /** Posterior probability of each language (`languages` order); null when no n-gram of the text is known (blank, digits only, an unknown script). */
  posteriors(text: string): Float64Array | null {
    const { s, n } = this.scores(text);
    return n ? LanguageIdentifier.softmax(s, n, this.file.temperature, this.file.lengthPower) : null;
  }

  /** The most probable language and its posterior probability; null when the text gives no evidence. */
  identify(text: string): { lang: string; confidence: number } | null {
    const p = this.posteriors(text);
    return p && LanguageIdentifier.best(p, this.languages);
  }

  /**
   * The language of a set of sentences taken to share one (a file): the mean of their posteriors
   * (sentences without evidence left out); confidence = the winner's mean posterior.
   */
  identifyAll(texts: Iterable<string>): { lang: string; confidence: number; sentences: number } | null {
    const sum = new Float64Array(this.languages.length);
    let n = 0;
    for (const t of texts) {
      const p = this.posteriors(t);
      if (!p) continue;
      n++;
      for (let j = 0; j < p.length; j++) sum[j] += p[j]!;
    }
    if (!n) return null;
    for (let j = 0; j < sum.length; j++) sum[j]! /= n;
    return { ...LanguageIdentifier.best(sum, this.languages), sentences: n };
  }

  private static best(p: ArrayLike<number>, langs: string[]): { lang: string; confidence: number } {
    let b = 0;
    for (let j = 1; j < p.length; j++) if (p[j]! > p[b]!) b = j;
    return { lang: langs[b]!, confidence: p[b]! };
  }

  toJSON(): LidFile {
    return this.file;
  }

  /** Writes `lid.json` into a model directory (atomically: a temporary file, then a rename); needs Node (src/text/lid.ts). */
  save(modelDir: string): string {
    if (!saver) throw new Error('LanguageIdentifier.save needs the file system: import it from src/text/lid.js (Node)');
    return saver(this, modelDir);
  }

  /** Parses a stored identifier (checked: a foreign file is untrusted); `where` names it in errors. */
  static fromJSON(x: unknown, where: string): LanguageIdentifier {
    const bad = (m: string): never => {
      throw new Error(`${where}: ${m}`);
    };
    const o = x as Partial<LidFile>;
    if (!o || typeof o !== 'object' || o.format !== 'xling-lid') bad("not a language identifier (format must be 'xling-lid')");
    if (o.version !== 1) bad(`unsupported version ${String(o.version)} (this xling reads 1)`);
    const ng = o.ngrams;
    if (!Array.isArray(ng) || ng.length !== 2 || !ng.every((v) => Number.isInteger(v)) || ng[0]! < 1 || ng[1]! < ng[0]! || ng[1]! > 8)
      bad("'ngrams' must be [lo, hi] with 1 ≤ lo ≤ hi ≤ 8");
    for (const k of ['alpha', 'vocabulary', 'temperature'] as const)
      if (typeof o[k] !== 'number' || !(o[k]! > 0) || !Number.isFinite(o[k])) bad(`'${k}' must be a positive number`);
    if (typeof o.lengthPower !== 'number' || !(o.lengthPower >= 0 && o.lengthPower <= 1)) bad("'lengthPower' must be in [0, 1]");
    if (!o.languages || typeof o.languages !== 'object' || !Object.keys(o.languages).length) bad("'languages' must name at least one language");
    for (const [l, p] of Object.entries(o.languages!)) {
      if (!p || !Array.isArray(p.ngrams) || !Array.isArray(p.counts) || p.ngrams.length !== p.counts.length)
        bad(`language '${l}': 'ngrams' and 'counts' must be arrays of one length`);
      if (!p.ngrams.every((g) => typeof g === 'string' && g.length > 0)) bad(`language '${l}': every n-gram must be a non-empty string`);
      if (!p.counts.every((c) => Number.isInteger(c) && c > 0)) bad(`language '${l}': counts must be positive integers`);
      if (!(typeof p.total === 'number' && p.total >= p.counts.reduce((a, c) => a + c, 0)))
        bad(`language '${l}': 'total' must be at least the sum of its counts`);
    }
    return new LanguageIdentifier({ lines: {}, ...o } as LidFile);
  }

  /**
   * Trains on sentences by language (at least two languages with lines). Deterministic: the
   * same input gives the same file.
   */
  static train(byLang: Map<string, string[]>, o: LidTrainOptions = {}): LanguageIdentifier {
    const [lo, hi] = o.ngrams ?? [1, 4];
    const langs = [...byLang.keys()].filter((l) => byLang.get(l)!.some((t) => lidText(t))).sort();
    if (langs.length < 2) throw new Error(`language identification needs sentences of at least two languages (got ${langs.length ? langs.join(' ') : 'none'})`);
    // a spread of at most maxLines lines (not the first ones: corpora are often sorted by source)
    const prepared = langs.map((l) =>
      spread(
        byLang
          .get(l)!
          .map(lidText)
          .filter((t) => t),
        o.maxLines ?? 5000,
      ),
    );
    // characters by frequency: the most frequent get ids (n-grams through the rarest are not counted)
    const charCount = new Map<string, number>();
    for (const pick of prepared) for (const t of pick) for (const c of t) charCount.set(c, (charCount.get(c) ?? 0) + 1);
    const keys = new NgramKeys(
      [...charCount].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map((e) => e[0]),
      lo,
      hi,
    );
    const { languages, lines, vocabulary, heldOut } = languageProfiles(langs, prepared, keys, o.topK ?? 1000, o.heldOutEvery ?? 10);
    const base: LidFile = {
      format: 'xling-lid',
      version: 1,
      ngrams: [lo, hi],
      alpha: o.alpha ?? 0.5,
      vocabulary,
      temperature: 1,
      lengthPower: 0,
      lines,
      languages,
    };
    const raw = new LanguageIdentifier(base);
    const fit = calibrate((text) => raw.scores(text), heldOut);
    return fit ? new LanguageIdentifier({ ...base, temperature: fit.T, lengthPower: fit.beta }) : raw;
  }
}

/** At most `max` items spread evenly over `all`. */
function spread<T>(all: T[], max: number): T[] {
  const step = Math.max(1, all.length / max),
    pick: T[] = [];
  for (let x = 0; Math.floor(x) < all.length && pick.length < max; x += step) pick.push(all[Math.floor(x)]!);
  return pick;
}

/**
 * Each language's n-gram profile (its topK n-grams with their counts) from its lines, every
 * `every`-th line held out (languages with 2 × every lines or more) for the calibration.
 */
function languageProfiles(
  langs: string[],
  prepared: string[][],
  keys: NgramKeys,
  topK: number,
  every: number,
): { languages: Record<string, LangProfile>; lines: Record<string, number>; vocabulary: number; heldOut: { lang: number; text: string }[] } {
  const vocab = new Set<number>();
  const languages: Record<string, LangProfile> = {},
    lines: Record<string, number> = {};
  const heldOut: { lang: number; text: string }[] = [];
  langs.forEach((l, j) => {
    const pick = prepared[j]!;
    const counts = new Map<number, number>();
    let total = 0,
      used = 0;
    pick.forEach((t, i) => {
      if (every > 1 && pick.length >= 2 * every && i % every === every - 1) {
        heldOut.push({ lang: j, text: t });
        return;
      }
      used++;
      keys.each(t, (g) => {
        counts.set(g, (counts.get(g) ?? 0) + 1);
        total++;
      });
    });
    for (const g of counts.keys()) vocab.add(g);
    const top = [...counts].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, topK);
    languages[l] = { total, ngrams: top.map((e) => keys.text(e[0])), counts: top.map((e) => e[1]) };
    lines[l] = used;
  });
  return { languages, lines, vocabulary: vocab.size, heldOut };
}

/**
 * Calibration on the held-out lines: (T, β) minimising the mean negative log-likelihood (at most
 * 4000 lines, spread over all languages; scores shifted by their maximum once); null without any.
 */
function calibrate(scores: (text: string) => { s: Float64Array; n: number }, heldOut: { lang: number; text: string }[]): { T: number; beta: number } | null {
  const scored: { s: Float64Array; n: number; lang: number }[] = [];
  const hstep = Math.max(1, heldOut.length / 4000);
  for (let x = 0; Math.floor(x) < heldOut.length; x += hstep) {
    const h = heldOut[Math.floor(x)]!,
      r = scores(h.text);
    if (!r.n) continue;
    let m = -Infinity;
    for (const v of r.s) m = Math.max(m, v);
    for (let j = 0; j < r.s.length; j++) r.s[j]! -= m;
    scored.push({ ...r, lang: h.lang });
  }
  if (!scored.length) return null;
  const nll = (T: number, beta: number): number => {
    let acc = 0;
    for (const h of scored) {
      // −log softmax(s·k)[y] = log Σ exp(s_j·k) − s_y·k, with max_j s_j = 0
      const k = 1 / (T * h.n ** beta);
      let z = 0;
      for (let j = 0; j < h.s.length; j++) z += Math.exp(h.s[j]! * k);
      acc += Math.log(z) - h.s[h.lang]! * k;
    }
    return acc / scored.length;
  };
  let fit = { T: 1, beta: 0 },
    best = Infinity;
  for (const beta of [0, 0.25, 0.5, 0.75, 1]) {
    const T = Math.exp(goldenSection((logT) => nll(Math.exp(logT), beta), Math.log(1e-3), Math.log(1e4), 40)),
      v = nll(T, beta);
    if (v < best) {
      best = v;
      fit = { T, beta };
    }
  }
  return fit;
}

/** Golden-section search for the minimum of f on [a, b]: the middle of the last bracket. */
function goldenSection(f: (x: number) => number, a: number, b: number, iterations: number): number {
  const g = (Math.sqrt(5) - 1) / 2;
  let c = b - g * (b - a),
    d = a + g * (b - a),
    fc = f(c),
    fd = f(d);
  for (let it = 0; it < iterations; it++) {
    if (fc < fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - g * (b - a);
      fc = f(c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + g * (b - a);
      fd = f(d);
    }
  }
  return (a + b) / 2;
}

let saver: ((lid: LanguageIdentifier, modelDir: string) => string) | null = null;

/** How `save` writes (set by src/text/lid.ts, which has the file system). */
export function setLanguageIdentifierSaver(fn: (lid: LanguageIdentifier, modelDir: string) => string): void {
  saver = fn;
}

// Code-switching probe (Schwenk, Kiela & Douze 2019, section 4.4): English sentences whose words
// are partly replaced by their aligned words in other languages — a share of the words, drawn from
// a few languages at once — are embedded and searched among every sentence of a collection; the
// probe counts how often the original English sentence is still the nearest. A language-agnostic
// space keeps a sentence's meaning whatever mix of languages spells it.
// Word translations come from the word aligner (src/align: fast_align-style EM, both directions
// intersected) run on the collection's own English–X rows and any extra parallel rows given.
import { alignBothWays, IdPair } from '../mine/scorer/word-align/fast-align.js';
import { Rng } from '../util/rng.js';

/** Words of a sentence: whitespace-separated (punctuation stays attached, as the aligner sees it). */
export const words = (s: string): string[] => s.split(/\s+/).filter(Boolean);

/**
 * Per language, per row: the aligned words for English word positions (position → the target
 * words it is linked to, in target order). Rows without both sides are absent.
 */
export type RowAlignments = Map<string, Map<number, Map<number, string[]>>>;

/**
 * Aligns English with each language over the rows (N-way: cells by language). `train` rows feed
 * only the aligner's statistics (more text, better links); the links kept are those of `rows`.
 */
export function alignRows(rows: Map<string, string>[], langs: string[], o: { train?: Map<string, string>[]; log?: (l: string) => void } = {}): RowAlignments {
  const out: RowAlignments = new Map();
  for (const l of langs) {
    const t0 = performance.now();
    const vocab = new Map<string, number>();
    const id = (w: string) => {
      let v = vocab.get(w);
      if (v === undefined) vocab.set(w, (v = vocab.size));
      return v;
    };
    const pairs: IdPair[] = [],
      keep: { row: number; en: string[]; xx: string[] }[] = [];
    const add = (r: Map<string, string>, row: number) => {
      const en = r.get('en'),
        xx = r.get(l);
      if (!en || !xx) return;
      const we = words(en),
        wx = words(xx);
      if (!we.length || !wx.length) return;
      pairs.push({ src: Int32Array.from(we, id), trg: Int32Array.from(wx, id) });
      if (row >= 0) keep.push({ row, en: we, xx: wx });
    };
    rows.forEach((r, i) => add(r, i));
    const probeRows = keep.length;
    for (const r of o.train ?? []) add(r, -1);
    const links = alignBothWays(pairs, vocab.size, vocab.size);
    const perRow = new Map<number, Map<number, string[]>>();
    for (let k = 0; k < probeRows; k++) {
      const byWord = new Map<number, string[]>();
      for (const [j, i] of [...links[k]!].sort((a, b) => a[1] - b[1])) {
        const list = byWord.get(j);
        if (list) list.push(keep[k]!.xx[i]!);
        else byWord.set(j, [keep[k]!.xx[i]!]);
      }
      perRow.set(keep[k]!.row, byWord);
    }
    out.set(l, perRow);
    o.log?.(`aligned en–${l}: ${probeRows} rows (+${pairs.length - probeRows} for the statistics) in ${((performance.now() - t0) / 1000).toFixed(1)}s`);
  }
  return out;
}

/**
 * One code-switched version of an English sentence: `rate` of its words (at least one) replaced
 * by their aligned words in languages drawn from `langs` (`nLangs` of them, each replaced word
 * from one of those that has a link for it). Null when fewer words than asked can be replaced.
 */
export function codeSwitch(
  en: string,
  row: number,
  al: RowAlignments,
  langs: string[],
  nLangs: number,
  rate: number,
  rng: Rng,
): { text: string; langs: string[]; replaced: number } | null {
  const w = words(en);
  const chosen = rng
    .shuffle([...langs])
    .filter((l) => al.get(l)?.get(row)?.size)
    .slice(0, nLangs);
  if (chosen.length < nLangs) return null;
  const want = Math.max(1, Math.round(rate * w.length));
  const candidates = w.map((_, j) => j).filter((j) => chosen.some((l) => al.get(l)!.get(row)!.has(j)));
  if (candidates.length < want) return null;
  const used = new Set<string>();
  const out = [...w];
  for (const j of rng.shuffle(candidates).slice(0, want)) {
    const l = rng.pick(chosen.filter((x) => al.get(x)!.get(row)!.has(j)));
    out[j] = al.get(l)!.get(row)!.get(j)!.join(' ');
    used.add(l);
  }
  return { text: out.join(' '), langs: [...used].sort(), replaced: want };
}

export interface CodeSwitchCell {
  rate: number;
  langs: number;
  probes: number;
  originalTop1: number;
  rowTop1: number;
  meanLangsUsed: number;
}

export interface CodeSwitchOptions {
  /** The collection: every sentence of every language of these rows is a search candidate. */
  rows: Map<string, string>[];
  langs: string[];
  rates: number[];
  switchLangs: number[];
  /** English sentences probed per cell (the first rows that can be switched). */
  sentences: number;
  seed: number;
  /** Rows that only feed the aligner. */
  alignTrain?: Map<string, string>[];
  /** Embeds sentences of one language (unit rows); lang 'en' for the switched sentences. */
  embed: (texts: string[], lang: string) => Promise<Float32Array>;
  /** Exact k-NN (inner product) of queries among the collection. */
  knn: (queries: Float32Array, base: Float32Array, d: number, k: number) => { labels: BigInt64Array };
  dim: number;
  log?: (l: string) => void;
}

/** Runs the probe: per rate × number of languages, how often the original English sentence is still the nearest of the collection. */
export async function codeSwitchProbe(
  o: CodeSwitchOptions,
): Promise<{ collection: number; cells: CodeSwitchCell[]; examples: { rate: number; langs: number; original: string; switched: string; nearest: string }[] }> {
  const al = alignRows(o.rows, o.langs, { train: o.alignTrain, log: o.log });
  // the collection: every sentence of the rows, each language embedded as itself
  const texts: string[] = [],
    rowOf: number[] = [],
    parts: Float32Array[] = [];
  const allLangs = [...new Set(o.rows.flatMap((r) => [...r.keys()]))].sort();
  for (const l of allLangs) {
    const idx = o.rows.map((r, i) => (r.get(l) ? i : -1)).filter((i) => i >= 0);
    if (!idx.length) continue;
    const t = idx.map((i) => o.rows[i]!.get(l)!);
    parts.push(await o.embed(t, l));
    for (let j = 0; j < t.length; j++) {
      texts.push(t[j]!);
      rowOf.push(idx[j]!);
    } // (no push(...): 10⁵+ rows overflow the stack)
  }
  const base = new Float32Array(texts.length * o.dim);
  let at = 0;
  for (const p of parts) {
    base.set(p, at);
    at += p.length;
  }
  o.log?.(`collection: ${texts.length} sentences in ${allLangs.length} languages`);
  const cells: CodeSwitchCell[] = [],
    examples: { rate: number; langs: number; original: string; switched: string; nearest: string }[] = [];
  for (const rate of o.rates) {
    for (const n of o.switchLangs) {
      const rng = new Rng(`${o.seed}:${rate}:${n}`);
      const probes: { row: number; text: string; used: number }[] = [];
      for (let r = 0; r < o.rows.length && probes.length < o.sentences; r++) {
        const en = o.rows[r]!.get('en');
        if (!en) continue;
        const s = codeSwitch(en, r, al, o.langs, n, rate, rng);
        if (s) probes.push({ row: r, text: s.text, used: s.langs.length });
      }
      if (!probes.length) {
        cells.push({ rate, langs: n, probes: 0, originalTop1: NaN, rowTop1: NaN, meanLangsUsed: NaN });
        continue;
      }
      const q = await o.embed(
        probes.map((p) => p.text),
        'en',
      );
      const { labels } = o.knn(q, base, o.dim, 1);
      let orig = 0,
        row = 0;
      probes.forEach((p, i) => {
        const nb = Number(labels[i]!);
        if (texts[nb] === o.rows[p.row]!.get('en')) orig++;
        if (rowOf[nb] === p.row) row++;
        if (i < 2) examples.push({ rate, langs: n, original: o.rows[p.row]!.get('en')!, switched: p.text, nearest: texts[nb]! });
      });
      const cell = {
        rate,
        langs: n,
        probes: probes.length,
        originalTop1: orig / probes.length,
        rowTop1: row / probes.length,
        meanLangsUsed: probes.reduce((a, p) => a + p.used, 0) / probes.length,
      };
      cells.push(cell);
      o.log?.(
        `rate ${rate}, ${n} languages: ${probes.length} probes, original nearest ${(100 * cell.originalTop1).toFixed(1)}%, its row ${(100 * cell.rowTop1).toFixed(1)}%`,
      );
    }
  }
  return { collection: texts.length, cells, examples };
}

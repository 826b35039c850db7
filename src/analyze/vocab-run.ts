// xling analyze vocab's run: a seeded sample of each language's sentences streamed from the
// collection, their token distributions under a model's tokenizer, and the report (a table, the
// divergences, the neighbour-joining tree as Newick and SVG).
import { cutLinesWarning } from '../embed/input.js';
import { loadSentenceEncoder } from '../embed/model-dir.js';
import { readSources, SentenceSource } from '../train-data/sources.js';
import { Rng } from '../util/rng.js';
import { neighbourJoining, symmetricKL, tokenCounts, toNewick, treeSvg, VocabUse, vocabularyUse } from './vocab.js';

/** Letters a romanising tokenizer rewrites (Cyrillic, Greek). */
const ROMANISED_SCRIPT = /[\u0370-\u03ff\u1f00-\u1fff\u0400-\u052f]/u;

export interface VocabAnalysisOptions {
  modelDir: string;
  sources: SentenceSource[];
  /** The sources as given (for messages). */
  data: string[];
  /** Sentences per language. */
  sample: number;
  /** Add-alpha smoothing of token counts. */
  alpha: number;
  /** Languages with fewer sentences are left out. */
  minSentences: number;
  seed: number;
}

export interface VocabReport {
  /** The per-language table (lines), marking the languages the tokenizer romanises. */
  table: string;
  newick: string;
  svg: string;
  /** What --json writes. */
  json: Record<string, unknown>;
}

interface Reservoir {
  seen: number;
  kept: string[];
  rng: Rng;
  /** Sentences in a script the tokenizer may romanise. */
  script: number;
}

/** A seeded reservoir per language (Algorithm R): memory bounded by `sample`. */
async function sampleLanguages(sources: SentenceSource[], sample: number, seed: number): Promise<Map<string, Reservoir>> {
  const reservoirs = new Map<string, Reservoir>();
  for await (const { lang, text } of readSources(sources)) {
    let r = reservoirs.get(lang);
    if (!r) reservoirs.set(lang, (r = { seen: 0, kept: [], rng: new Rng(`${seed}:${lang}`), script: 0 }));
    if (ROMANISED_SCRIPT.test(text)) r.script++;
    const j = r.seen++ < sample ? r.kept.length : r.rng.int(r.seen);
    if (j < sample) r.kept[j] = text;
  }
  return reservoirs;
}

/** The languages with at least minSentences sentences (the others said on stderr); two or more, or an error. */
function keptLanguages(reservoirs: Map<string, Reservoir>, minSentences: number): Map<string, string[]> {
  const byLang = new Map([...reservoirs].filter(([, r]) => r.seen >= minSentences).map(([l, r]) => [l, r.kept]));
  const skipped = [...reservoirs].filter(([, r]) => r.seen < minSentences).map(([l]) => l);
  if (skipped.length) process.stderr.write(`[vocab] left out (fewer than --min-sentences ${minSentences} sentences): ${skipped.join(', ')}\n`);
  if (byLang.size < 2)
    throw new Error(
      `--data: ${byLang.size} language(s) with at least --min-sentences ${minSentences} sentences; the analysis needs two or more (give a lower --min-sentences to keep languages with fewer)`,
    );
  return byLang;
}

function vocabTable(use: VocabUse[], byLang: Map<string, string[]>, marked: Set<string>, vocabSize: number): string {
  let t = `${'lang'.padEnd(8)}${'sentences'.padStart(10)}${'tokens'.padStart(10)}${'types'.padStart(9)}${'% vocab'.padStart(9)}${'only this'.padStart(11)}\n`;
  for (const u of use)
    t += `${(u.lang + (marked.has(u.lang) ? '*' : '')).padEnd(8)}${String(byLang.get(u.lang)!.length).padStart(10)}${String(u.tokens).padStart(10)}${String(u.types).padStart(9)}${((100 * u.types) / vocabSize).toFixed(2).padStart(9)}${String(u.onlyThisLanguage).padStart(11)}\n`;
  if (marked.size) t += '* romanised by the tokenizer\n';
  return t;
}

/** How the languages of a collection share a model's vocabulary (xling analyze vocab). */
export async function analyzeVocabulary(o: VocabAnalysisOptions): Promise<VocabReport> {
  const tok = loadSentenceEncoder(o.modelDir).tokenizer;
  const romanises = !!(tok as { norm?: { romanize?: boolean } }).norm?.romanize;
  const reservoirs = await sampleLanguages(o.sources, o.sample, o.seed);
  const byLang = keptLanguages(reservoirs, o.minSentences);
  const cutBefore = tok.truncated ?? 0;
  const langs = tokenCounts(tok, byLang, o.sample, o.seed).sort((x, y) => x.lang.localeCompare(y.lang));
  const cut = (tok.truncated ?? 0) - cutBefore;
  if (cut)
    process.stderr.write(
      cutLinesWarning(
        'vocab',
        `--data ${o.data.join(' ')}`,
        cut,
        [...byLang.values()].reduce((n, x) => n + x.length, 0),
      ),
    );
  const use = vocabularyUse(langs);
  const names = langs.map((l) => l.lang);
  const dist = langs.map((p) => langs.map((q) => (p === q ? 0 : symmetricKL(p, q, o.alpha))));
  const tree = neighbourJoining(names, dist);
  const marked = new Set(romanises ? names.filter((l) => reservoirs.get(l)!.script > reservoirs.get(l)!.seen / 2) : []);
  const newick = toNewick(tree);
  return {
    table: vocabTable(use, byLang, marked, tok.vocabSize),
    newick,
    svg: treeSvg(tree, { title: `Vocabulary use: neighbour joining over symmetrised KL (${names.length} languages)`, marked }),
    json: {
      model: o.modelDir,
      vocab_size: tok.vocabSize,
      sample: o.sample,
      alpha: o.alpha,
      smoothing: "add-alpha over the union of both languages' token types",
      languages: use.map((u) => ({ ...u, sentences: byLang.get(u.lang)!.length, romanised: marked.has(u.lang) })),
      symmetric_kl: Object.fromEntries(names.map((l, i) => [l, Object.fromEntries(names.map((m, j) => [m, +dist[i]![j]!.toFixed(6)]))])),
      newick,
    },
  };
}

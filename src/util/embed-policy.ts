// The embed policy shared by the native embed path (src/embed/model.ts) and the portable runtime
// (xling/lite, src/lite/model.ts): which language's mean vector a sentence is centred with (a
// language given, identified over the whole input, or per sentence; Libovický et al., 2020, "On the
// language neutrality of pre-trained multilingual representations"), how language codes are read,
// and in what order rows are normalised and centred. Plain TypeScript with no Node API and no
// tensor: the browser bundle carries it, and the native path plugs its own row normaliser in.
//
// The rule:
//  - the language is given (matched to the model's spelling: `pt-BR` = `pt_br`, `de-AT` → `de`), or
//  - identified by the model's language identifier (lid.json, src/text/lid-core.ts) with a
//    confidence of at least LID_CONFIDENCE — over a spread sample of a whole input ('auto'), or for
//    each sentence on its own ('auto-per-sentence');
//  - otherwise the vectors are not centred, and the caller can say why (CenterChoice.reason).
// Centring is skipped by default when the model's mean vectors are too small to matter
// (meansNegligible, CENTER_MIN_NORM); center 'force' applies it anyway.
// Rows: L2-normalised (when asked, or centred), the mean subtracted, normalised again (when asked).
import { spreadSample } from './spread-sample.js';
import { normalizeRows } from './vectors.js';

/**
 * The confidence (posterior probability) at or above which an identified language is trusted,
 * e.g. for per-language centring: more likely than every other language together. On the gettext
 * dev set, 97% of sentences reach it and 99.3% of those are right (bench/RESULTS.md).
 */
export const LID_CONFIDENCE = 0.5;

/** What the policy asks of a language identifier (src/text/lid-core.ts LanguageIdentifier): its languages, one text's language, a sample's. */
export interface LanguageIdentification {
  readonly languages: string[];
  identify(text: string): { lang: string; confidence: number } | null;
  identifyAll(texts: Iterable<string>): { lang: string; confidence: number; sentences: number } | null;
}

/**
 * The smallest mean norm (the average of |μ_l| over the model's languages, vectors L2-normalised)
 * at which per-language centring is applied by default. Below it the means are too small to
 * matter: on the gettext dev set the dual encoder's means (|μ| ≈ 0.05) change the
 * similarity-search error by ≤ 0.03 points either way, while LASER-style models (|μ| well above)
 * gain ~1 point (bench/RESULTS.md, "Language identification").
 */
export const CENTER_MIN_NORM = 0.1;

/** The average norm of the mean vectors (0 when there are none). */
export function meanNorm(centers: Map<string, Float32Array>): number {
  if (!centers.size) return 0;
  let s = 0;
  for (const m of centers.values()) {
    let n = 0;
    for (const x of m) n += x * x;
    s += Math.sqrt(n);
  }
  return s / centers.size;
}

/** Whether the model's mean vectors are too small for centring to matter (see CENTER_MIN_NORM). */
export function meansNegligible(centers: Map<string, Float32Array>): boolean {
  return centers.size > 0 && meanNorm(centers) < CENTER_MIN_NORM;
}

/** Identify the language of a whole input from a spread sample of its lines. */
export const AUTO = 'auto';
/** Identify (and centre) each sentence on its own: inputs that mix languages. */
export const PER_SENTENCE = 'auto-per-sentence';

/** Lower case with '_' between subtags (`pt-BR`, `pt_BR`, `PT_br` → `pt_br`). */
export function canonicalLang(code: string): string {
  return code.trim().toLowerCase().replace(/-/g, '_');
}

const CODE = /^[a-z]{2,3}(_[a-z0-9]{2,8})*$/;

/** Whether a string is a language code in any BCP-47 spelling (`de`, `pt-BR`, `pt_br`); 'auto' is not. */
export function isLangCode(given: string): boolean {
  return CODE.test(canonicalLang(given));
}

/**
 * The entry of `known` a language code names, compared as BCP-47 spellings (`pt-BR` = `pt_br`),
 * then in ISO 639-1 form (isoLangCode: `deu` = `de`, `zho_Hant` = `zh_tw`, `tl` = `fil`), a region
 * or script falling back to its bare language when that is known (`de-AT` → `de`); null when none
 * is (or `given` is not a code).
 */
export function matchLangCode(given: string, known: Iterable<string>): string | null {
  const c = canonicalLang(given);
  if (!CODE.test(c)) return null;
  const langs = [...known];
  const exact = langs.find((l) => canonicalLang(l) === c);
  if (exact !== undefined) return exact;
  // the same language spelled another way (`deu`, `zho_Hant`, `zh-HK`, `iw`, `tgl`): compared in ISO 639-1 form
  const iso = isoLangCode(c);
  const isos = langs.map((l) => isoLangCode(canonicalLang(l)));
  let at = isos.indexOf(iso);
  if (at < 0 && iso.includes('_')) at = isos.indexOf(iso.split('_')[0]!);
  return at >= 0 ? langs[at]! : null;
}

/** Chinese regions written in Traditional script. */
const TRADITIONAL_REGIONS = new Set(['tw', 'hk', 'mo']);

/**
 * The corpus's code for Chinese of a script and region subtag (lower case, either absent): a
 * script decides (Hant → zh_tw, Hans → zh), then the region (Taiwan, Hong Kong, Macau → zh_tw);
 * anything else is zh.
 */
export function chineseCode(script: string | undefined, region: string | undefined): 'zh' | 'zh_tw' {
  if (script === 'hant') return 'zh_tw';
  if (script === 'hans') return 'zh';
  return region !== undefined && TRADITIONAL_REGIONS.has(region) ? 'zh_tw' : 'zh';
}

/**
 * A code (canonicalLang's spelling) with its language in ISO 639-1 form where ICU (CLDR's aliases)
 * has one: ISO 639-2 and 639-3 codes (`deu` → `de`, `hye` → `hy`), a macrolanguage's individual
 * languages (`arb` → `ar`, `cmn` → `zh`, `swh` → `sw`), withdrawn and replaced codes (`iw` → `he`,
 * `tl` → `fil`); Chinese as the corpus codes it (chineseCode: `zho_Hant`, `zh_HK` → `zh_tw`);
 * Norwegian → `nb` (CLDR's Norwegian is Bokmål). Other subtags are kept (`deu_latn` → `de_latn`).
 */
export function isoLangCode(code: string): string {
  const [first, ...rest] = code.split('_');
  let primary = first!;
  try {
    const canon = canonicalLang(Intl.getCanonicalLocales(primary)[0] ?? primary);
    const [p, ...tail] = canon.split('_');
    primary = p!;
    for (const t of tail) if (!rest.includes(t)) rest.push(t); // sh → sr_latn
  } catch {
    return code; // not a well-formed BCP 47 language subtag
  }
  if (primary === 'no') primary = 'nb';
  if (primary === 'zh')
    return chineseCode(
      rest.find((t) => t === 'hant' || t === 'hans'),
      rest.find((t) => t.length === 2),
    );
  return [primary, ...rest].join('_');
}

/** A list of languages for a message (the first 24 and the count beyond that). */
export function langList(langs: string[]): string {
  return langs.length > 24 ? `${langs.slice(0, 24).join(' ')} … (${langs.length})` : langs.join(' ');
}

/**
 * A language code given on the command line (or in a request) in the model's own spelling:
 * BCP-47 case and separators are normalised (`DE` → `de`, `pt-BR` → `pt_br`), a region the model
 * does not distinguish falls back to the bare language when that is unambiguous (`de-AT` → `de`).
 * Anything else is refused with an error naming `what` (the option). `known`: the model's
 * languages (mean vectors and identifier); when it has none, a well-formed code is kept
 * (lower case) — nothing depends on it.
 */
export function resolveLangCode(given: string, known: Iterable<string>, what: string): string {
  const c = canonicalLang(given);
  const langs = [...new Set(known)].sort();
  const list = langList(langs);
  if (!CODE.test(c))
    throw new Error(`${what} '${given}': not a language code (expected e.g. de, pt_br or pt-BR${langs.length ? `; the model knows ${list}` : ''})`);
  if (!langs.length) return c;
  const match = matchLangCode(given, langs);
  if (match !== null) return match;
  throw new Error(`${what} '${given}': the model has no language of that code (it knows ${list}); give one of them, '${AUTO}' or '${PER_SENTENCE}'`);
}

/**
 * A language option as given (undefined, 'auto', 'auto-per-sentence', 'none' or a code) checked
 * and normalised before any work: returns 'auto', 'auto-per-sentence', null (none: no centring)
 * or the model's code.
 */
export function resolveLangOption(given: string | null | undefined, known: Iterable<string>, what: string, dflt: string | null = AUTO): string | null {
  if (given === undefined) return dflt;
  if (given === null || given.toLowerCase() === 'none') return null;
  const g = given.trim().toLowerCase();
  if (g === AUTO) return AUTO;
  if (g === PER_SENTENCE || g === 'auto_per_sentence' || g === 'per-sentence') return PER_SENTENCE;
  return resolveLangCode(given, known, what);
}

/** Per-language centring: on (the default), off, or 'force' (even when the means are negligible). */
export type CenterMode = boolean | 'force';

/** A language identification: the language, the identifier's confidence, and how many sentences it rests on. */
export type Identified = { lang: string; confidence: number; sentences?: number };

/** What centring a text or an input gets, and why (for log lines, JSON fields and headers). */
export interface CenterChoice {
  /** The language whose mean is subtracted; null: not centred. */
  lang: string | null;
  /** The identified (or given) language, also when it is not used. */
  identified?: Identified | null;
  /** Why nothing is centred: 'off' (center false), 'negligible' (the means are too small), 'no-means', 'no-identifier', 'unsure' (below LID_CONFIDENCE), 'no-evidence' (blank or unknown script), 'no-mean-for-language'. */
  reason?: 'off' | 'negligible' | 'no-means' | 'no-identifier' | 'unsure' | 'no-evidence' | 'no-mean-for-language';
}

/** What centring the sentences of one call get (the options of both runtimes' embed). */
export interface CenterOptions {
  /** A language code of the model, 'auto', 'auto-per-sentence', or null/undefined: not centred. */
  lang?: string | null;
  center?: CenterMode;
  /** Each sentence's language (already decided, e.g. by sentenceCenter; null: not centred); replaces `lang`. */
  langs?: (string | null)[];
}

/** The language each sentence is centred with: one (or none) for all, or one per sentence (null: none). */
export type CenterPlan = string | null | (string | null)[];

/**
 * The centring policy of a model: its per-language mean vectors and its language identifier, and
 * the one rule that decides from them. Both runtimes' models are one (SentenceEncoderModel,
 * LiteModel), so that the same options centre the same sentences alike.
 */
export class CenterPolicy<L extends LanguageIdentification = LanguageIdentification> {
  constructor(
    /** Per-language mean vectors (model.safetensors: center.<lang>); empty for models without them. */
    public centers: Map<string, Float32Array> = new Map(),
    /** The model's language identifier (lid.json), null when it has none. */
    public lid: L | null = null,
  ) {}

  /** The languages a language option may name: those with mean vectors and those the identifier knows. */
  get languages(): string[] {
    return [...new Set([...this.centers.keys(), ...(this.lid?.languages ?? [])])].sort();
  }

  /** The average norm of the mean vectors, and whether it is too small to matter (centring then skipped unless forced). */
  get meanVectors(): { languages: number; meanNorm: number; negligible: boolean } {
    return { languages: this.centers.size, meanNorm: meanNorm(this.centers), negligible: meansNegligible(this.centers) };
  }

  /**
   * The centring rule of every command, the server and xling/lite, for a language that is given (a
   * code, 'auto' with the input's identification `identified`, or undefined/null: none).
   */
  chooseCenter(lang: string | null | undefined, center: CenterMode | undefined, identified?: Identified | null): CenterChoice {
    if (center === false) return { lang: null, reason: 'off' };
    if (!this.centers.size) return { lang: null, reason: 'no-means' };
    if (center !== 'force' && meansNegligible(this.centers)) return { lang: null, reason: 'negligible', identified };
    if (!lang) return { lang: null };
    if (lang === AUTO || lang === PER_SENTENCE) {
      if (!this.lid) return { lang: null, reason: 'no-identifier' };
      if (!identified) return { lang: null, reason: 'no-evidence', identified: null };
      if (identified.confidence < LID_CONFIDENCE) return { lang: null, reason: 'unsure', identified };
      lang = identified.lang;
    }
    return this.centers.has(lang) ? { lang, identified } : { lang: null, reason: 'no-mean-for-language', identified };
  }

  /**
   * The language of a set of sentences taken to share one language (a file), by the model's
   * language identifier: the mean of the per-sentence posteriors over a spread sample of at most
   * `sample` non-blank sentences (spreadSample: a streamed input sampled the same way gets the
   * same answer); `confidence` is the winner's mean posterior. null when the model has no
   * identifier or no sentence gives evidence.
   */
  identifyLanguage(sentences: Iterable<string>, sample = 2000): { lang: string; confidence: number; sentences: number } | null {
    if (!this.lid) return null;
    return this.lid.identifyAll(spreadSample(sentences, sample));
  }

  /** What centring one sentence gets with lang 'auto-per-sentence' (or 'auto' for a single text). */
  sentenceCenter(text: string, center?: CenterMode): CenterChoice {
    return this.chooseCenter(PER_SENTENCE, center, this.lid && text.trim() ? this.lid.identify(text) : null);
  }

  /**
   * The language each of these sentences is centred with under options o (chooseCenter's rule;
   * 'auto' identifies the language over the sentences, only when centring can apply at all).
   */
  centerPlan(sentences: readonly string[], o: CenterOptions): CenterPlan {
    const center = o.center;
    if (o.langs) {
      if (o.langs.length !== sentences.length) throw new Error(`embed: ${o.langs.length} languages for ${sentences.length} sentences`);
      return center === false ? null : o.langs.map((l) => (l ? this.chooseCenter(l, center).lang : null));
    }
    const lang = o.lang;
    if (!lang) return null;
    // off, no means or negligible ones: decided before identifying anything
    const pre = this.chooseCenter(lang, center, { lang: '', confidence: 1 });
    if (pre.reason === 'off' || pre.reason === 'no-means' || pre.reason === 'negligible' || pre.reason === 'no-identifier') return null;
    if (lang === PER_SENTENCE) return sentences.map((t) => this.sentenceCenter(t, center).lang);
    if (lang === AUTO) return this.chooseCenter(AUTO, center, this.identifyLanguage(sentences)).lang;
    return pre.lang;
  }

  /** The mean vector a plan centres sentence s with (null: none). */
  meanOf(plan: CenterPlan, s: number): Float32Array | null {
    const lang = typeof plan === 'string' ? plan : Array.isArray(plan) ? plan[s] : null;
    return lang ? (this.centers.get(lang) ?? null) : null;
  }

  /**
   * The mean vectors of rows idx under a plan (in idx's order; null: that row is not centred), or
   * null for a plan that centres nothing (finishRows: the rows of a per-sentence plan are all
   * normalised, centred or not).
   */
  meansOf(plan: CenterPlan, idx: readonly number[]): (Float32Array | null)[] | null {
    return plan === null ? null : idx.map((s) => this.meanOf(plan, s));
  }
}

/** L2-normalises rows of d values in place (the native path: torch's normalize; elsewhere normalizeRows). */
export type RowNormalizer = (rows: Float32Array, d: number) => void;

/**
 * In place: each row with a mean (mus[r], null: left as it is) minus it, then (optionally) those
 * rows L2-normalised by l2. Rows are L2-normalised on entry.
 */
export function centerEachRow(rows: Float32Array, d: number, mus: (Float32Array | null)[], normalize: boolean, l2: RowNormalizer = normalizeRows): void {
  const centred: number[] = [];
  mus.forEach((mu, r) => {
    if (!mu) return;
    for (let j = 0; j < d; j++) rows[r * d + j] = rows[r * d + j]! - mu[j]!;
    centred.push(r);
  });
  if (!normalize || !centred.length) return;
  if (centred.length === mus.length) {
    l2(rows, d);
    return;
  }
  const buf = new Float32Array(centred.length * d);
  centred.forEach((r, k) => buf.set(rows.subarray(r * d, (r + 1) * d), k * d));
  l2(buf, d);
  centred.forEach((r, k) => rows.set(buf.subarray(k * d, (k + 1) * d), r * d));
}

/**
 * The embed path's post-processing of an encoder's rows, in place: L2-normalised (when `normalize`
 * or centred, unless the encoder already did: `normalized`), each row's mean (mus[r]; null: none)
 * subtracted and the centred rows normalised again (when `normalize`).
 */
export function finishRows(
  rows: Float32Array,
  d: number,
  mus: (Float32Array | null)[] | null,
  normalize: boolean,
  normalized = false,
  l2: RowNormalizer = normalizeRows,
): void {
  if (!normalized && (normalize || mus)) l2(rows, d);
  if (mus) centerEachRow(rows, d, mus, normalize, l2);
}

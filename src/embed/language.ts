// Language codes and the one centring rule of every command and the server:
//  - the language is given (normalised to the model's spelling, or refused), or
//  - identified by the model's language identifier (lid.json, src/text/lid.ts) with a confidence
//    of at least LID_CONFIDENCE — over a spread sample of a whole input ('auto'), or for each
//    sentence on its own ('auto-per-sentence');
//  - otherwise the vectors are not centred, and the caller says so.
// Centring is also skipped by default when the model's mean vectors are too small to matter
// (meansNegligible).
import { readNWayTsv } from '../data/corpus.js';
import { LanguageIdentifier, LID_CONFIDENCE } from '../text/lid.js';
import { SpreadSample } from './centering.js';

export { LID_CONFIDENCE };

/** Identify the language of a whole input from a spread sample of its lines. */
export const AUTO = 'auto';
/** Identify (and centre) each sentence on its own: inputs that mix languages. */
export const PER_SENTENCE = 'auto-per-sentence';

/** Lower case with '_' between subtags (`pt-BR`, `pt_BR`, `PT_br` → `pt_br`). */
export function canonicalLang(code: string): string { return code.trim().toLowerCase().replace(/-/g, '_'); }

const CODE = /^[a-z]{2,3}(_[a-z0-9]{2,8})*$/;

/** Whether a string is a language code in any BCP-47 spelling (`de`, `pt-BR`, `pt_br`); 'auto' is not. */
export function isLangCode(given: string): boolean { return CODE.test(canonicalLang(given)); }

/**
 * The entry of `known` a language code names, compared as BCP-47 spellings (`pt-BR` = `pt_br`), a
 * region falling back to its bare language when that is known (`de-AT` → `de`); null when none is
 * (or `given` is not a code).
 */
export function matchLangCode(given: string, known: Iterable<string>): string | null {
  const c = canonicalLang(given);
  if (!CODE.test(c)) return null;
  const langs = [...known];
  const exact = langs.find((l) => canonicalLang(l) === c);
  if (exact !== undefined) return exact;
  const primary = c.split('_')[0]!;
  return c.includes('_') ? langs.find((l) => canonicalLang(l) === primary) ?? null : null;
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
  const list = langs.length > 24 ? `${langs.slice(0, 24).join(' ')} … (${langs.length})` : langs.join(' ');
  if (!CODE.test(c)) throw new Error(`${what} '${given}': not a language code (expected e.g. de, pt_br or pt-BR${langs.length ? `; the model knows ${list}` : ''})`);
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

export { CENTER_MIN_NORM, meanNorm, meansNegligible } from '../util/center-rule.js';

/**
 * Sentences of each language of training sources (N-way TSVs, optionally .gz), at most `cap` per
 * language spread over the whole file (SpreadSample), for LanguageIdentifier.train.
 */
export async function lidTrainingText(files: string[], o: { langs?: string[]; cap?: number } = {}): Promise<Map<string, string[]>> {
  const by = new Map<string, SpreadSample>();
  const want = o.langs && new Set(o.langs);
  for (const f of files) {
    const it = readNWayTsv(f, { onBad: 'skip', maxChars: 100000 });
    let r = await it.next();
    while (!r.done) {
      for (const [l, t] of r.value.cells) {
        if (want && !want.has(l)) continue;
        let s = by.get(l);
        if (!s) by.set(l, (s = new SpreadSample(o.cap ?? 5000)));
        s.add(t);
      }
      r = await it.next();
    }
    for (const l of want ?? []) if (!r.value.langs.includes(l) && !by.has(l)) throw new Error(`--langs: '${l}' is not a column of ${f} (columns: ${r.value.langs.join(' ')})`);
  }
  return new Map([...by].map(([l, s]) => [l, s.lines]));
}

/** Trains the identifier `xling train` stores with a model: every language of the corpus (null with fewer than two). */
export function trainModelIdentifier(byLang: Map<string, string[]>): LanguageIdentifier | null {
  return [...byLang.values()].filter((s) => s.length).length >= 2 ? LanguageIdentifier.train(byLang) : null;
}

// The input contract every command keeps, written once: how text is read (strict UTF-8 lines,
// `file:line: invalid UTF-8`; over-long lines cut at the one hard limit MAX_LINE_CHARS with one
// warning naming the file and the count; `-` is standard input; gzip by its magic bytes: all in
// lines.ts), how language codes are checked (an ISO 639 code, or one the model or the data knows;
// otherwise refused with a close match: "did you mean en?"), how LANG=FILE pairs are read, and how
// a command that would succeed with nothing says why and which option changes it. The default
// model (src/embed/default-model.ts) is the remaining part of the contract; it lives with the
// models it loads.
import { editDistance } from '../util/args.js';
import { canonicalLang, isLangCode } from '../util/embed-policy.js';

export { cutWarning, invalidUtf8Lines, isGzipFile, isStdin, MAX_LINE_CHARS, readablePath, readLines, readOnce, readUtf8File, shownPath } from './lines.js';

const displayNames: Intl.DisplayNames | null = (() => {
  try {
    return new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });
  } catch {
    return null; // a Node without ICU's language names: every well-formed code is taken as known
  }
})();

/** The English name of an ISO 639 language code's language (undefined: not a code ICU knows). */
export function languageName(code: string): string | undefined {
  const primary = canonicalLang(code).split('_')[0]!;
  if (!displayNames) return primary;
  try {
    const name = displayNames.of(primary);
    return name && name.toLowerCase() !== primary ? name : undefined;
  } catch {
    return undefined;
  }
}

let byName: Map<string, string> | null = null;

/** Language codes by lower-case English name ('german' → 'de'), two-letter codes first. */
function codesByName(): Map<string, string> {
  if (byName) return byName;
  byName = new Map();
  const a = 'abcdefghijklmnopqrstuvwxyz';
  for (const x of a)
    for (const y of a) {
      const n = languageName(x + y);
      if (n && !byName.has(n.toLowerCase())) byName.set(n.toLowerCase(), x + y);
    }
  return byName;
}

/** A close match for something given as a language code: the code of a language name, or a known code one edit away. */
export function suggestLanguage(given: string, known: Iterable<string> = []): string | undefined {
  const g = given.trim().toLowerCase();
  const named = codesByName().get(g) ?? codesByName().get(g.replace(/[_-].*/, ''));
  if (named) return named;
  let best: string | undefined;
  let bestD = Infinity;
  for (const k of known) {
    const dist = editDistance(canonicalLang(g), canonicalLang(k));
    if (dist < bestD) [best, bestD] = [k, dist];
  }
  return bestD <= 1 ? best : undefined;
}

/**
 * A language code given by the user (an option, a LANG=FILE pair), checked before any work: an
 * ISO 639 code (its region or script subtags are free: pt_br, sr_latn, kok_roman) or one of
 * `known` (the model's or the data's codes). Anything else is an error naming `what`, with a close
 * match or the known codes. Returns the code as given.
 */
export function checkLanguageCode(code: string, what: string, known: readonly string[] = []): string {
  const knownSet = new Set(known.map(canonicalLang));
  if (knownSet.has(canonicalLang(code))) return code;
  if (isLangCode(code) && languageName(code) !== undefined) return code;
  const hint = suggestLanguage(code, known);
  const list = known.length ? `; known here: ${[...new Set(known)].sort().slice(0, 24).join(' ')}${known.length > 24 ? ' …' : ''}` : '';
  const why = isLangCode(code) ? 'is not an ISO 639 language code' : 'is not a language code';
  throw new Error(`${what}: '${code}' ${why}${hint ? ` (did you mean ${hint}?)` : ` (e.g. en, de, pt_br${list})`}`);
}

/** A LANG=FILE argument: the code (checked, see checkLanguageCode) and the file; a plain FILE has no language. */
export function parseLangFile(arg: string, what: string, known: readonly string[] = []): { lang?: string; file: string } {
  const m = /^([^=/\\.]+)=(.+)$/.exec(arg);
  if (!m) return { file: arg };
  return { lang: checkLanguageCode(m[1]!, `${what} ${arg}`, known), file: m[2]! };
}

// Language codes of translation files normalised to the corpus's codes: lower case, '_' between
// language and region, the region kept only where the written language differs (pt_br, zh_tw),
// scripts and modifiers folded in where they change the writing (sr@latin -> sr_latn).
// pt_BR -> pt_br, zh_CN -> zh, zh_Hans -> zh, zh_TW / zh_HK / zh_Hant -> zh_tw, es_ES -> es,
// de-DE -> de, en_US -> en, nb_NO -> nb.
import { LANG_CODE } from '../train-data/corpus.js';
import { chineseCode } from '../util/embed-policy.js';

/** ISO 15924 script subtags that locale names carry. */
const SCRIPTS = new Set([
  'latn',
  'cyrl',
  'hans',
  'hant',
  'arab',
  'deva',
  'beng',
  'grek',
  'hebr',
  'jpan',
  'kore',
  'thai',
  'taml',
  'telu',
  'mlym',
  'knda',
  'gujr',
  'guru',
  'orya',
  'sinh',
  'khmr',
  'laoo',
  'mymr',
  'ethi',
  'geor',
  'armn',
  'tibt',
  'mong',
  'olck',
  'tfng',
  'adlm',
  'cher',
  'syrc',
  'thaa',
  'vaii',
]);

/** English variants (en_GB, en_AU, ...) are spelling adaptations of the English source, not translations. */
export function isEnglishVariant(code: string): boolean {
  return code.startsWith('en_');
}

/**
 * The corpus's code for a locale name as found in paths, headers and attributes (`pt_BR`,
 * `pt-BR`, `zh_CN.UTF-8`, `sr@latin`, `de_DE@euro`), or undefined when it is not a language code
 * or not one a corpus header may carry (LANG_CODE: what the corpus reader accepts).
 */
export function normalizeLang(raw: string): string | undefined {
  const code = corpusCode(raw);
  return code !== undefined && LANG_CODE.test(code) ? code : undefined;
}

function corpusCode(raw: string): string | undefined {
  let s = raw.trim();
  if (s === '') return undefined;
  const at = s.indexOf('@');
  let modifier = '';
  if (at >= 0) {
    modifier = s.slice(at + 1).toLowerCase();
    s = s.slice(0, at);
  }
  const dot = s.indexOf('.');
  if (dot >= 0) s = s.slice(0, dot); // encoding
  s = s.replace(/-/g, '_').toLowerCase();
  const parts = s.split('_');
  const lang = parts[0]!;
  if (!/^[a-z]{2,3}$/.test(lang)) return undefined;
  if (lang === 'c' || lang === 'posix') return undefined;
  if (!parts.slice(1).every((p) => /^[a-z0-9]{2,16}$/.test(p))) return undefined;
  // script subtags (Latn, Cyrl, Hans, Hant) and regions
  const rest = parts.slice(1);
  const script = rest.find((p) => SCRIPTS.has(p));
  const region = rest.find((p) => p.length === 2 || /^[0-9]{3}$/.test(p));
  if (lang === 'zh') return chineseCode(script, region);
  if (lang === 'pt' && region === 'br') return 'pt_br';
  if (lang === 'no') return 'nb'; // CLDR's Norwegian is Bokmål, gettext's nb
  if (lang === 'en' && region !== undefined && region !== 'us') return `en_${region}`;
  if (modifier === 'latin' || script === 'latn') return lang === 'sr' || lang === 'uz' ? `${lang}_latn` : lang;
  // a variant subtag already in the corpus's form (kok_roman, ks_devanagari, sr_ije from sr@ije:
  // lower case in the input, unlike a locale's region): kept, so that codes normalise to themselves
  const rawRest = raw
    .trim()
    .replace(/[@.].*$/, '')
    .split(/[-_]/)
    .slice(1);
  const variant = rest.find((p, i) => p.length >= 3 && !SCRIPTS.has(p) && /^[a-z]+$/.test(p) && rawRest[i] === p);
  if (variant !== undefined && modifier === '') return `${lang}_${variant}`;
  if (rest.some((p) => p !== script && p !== region && p !== variant)) return undefined; // LC_MESSAGES, de_XYZ12345
  // en@quot, en@boldquot: English with typographic quotes (a variant, dropped); ca@valencia,
  // be@tarask: their own columns
  if (modifier !== '' && modifier !== 'euro' && modifier !== 'cyrillic') return /^[a-z]+$/.test(modifier) ? `${lang}_${modifier}` : undefined;
  return lang;
}

/** Names of languages as games and stores spell them (Steam's language names) where they are not English names of languages. */
const NAME_ALIASES = new Map<string, string>([
  ['schinese', 'zh'],
  ['tchinese', 'zh_tw'],
  ['koreana', 'ko'],
  ['brazilian', 'pt_br'],
  ['latam', 'es'],
  ['simplified chinese', 'zh'],
  ['chinese simplified', 'zh'],
  ['traditional chinese', 'zh_tw'],
  ['chinese traditional', 'zh_tw'],
  ['brazilian portuguese', 'pt_br'],
  ['portuguese brazilian', 'pt_br'],
  ['portuguese brazil', 'pt_br'],
  ['chinese china', 'zh'],
  ['chinese taiwan', 'zh_tw'],
  ['gaelic', 'gd'], // games' "Gaelic" is Scottish Gaelic; Irish is "Irish"
  ['nko', 'nqo'],
]);

/** Withdrawn ISO 639-1 codes that Intl still names (in → id, iw → he, …): the current code wins. */
const WITHDRAWN = new Set(['in', 'iw', 'ji', 'jw', 'mo', 'sh']);

const nameKey = (s: string) =>
  s
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/\P{L}+/gu, ' ')
    .trim();

let byName: Map<string, string> | undefined;
let englishDisplay: Intl.DisplayNames | undefined;

/** ICU's English names of languages (made once). */
const englishLanguageNames = () => (englishDisplay ??= new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' }));

/** Language names (ICU's, through Intl.DisplayNames: the English name and the language's own) → the corpus's codes. */
function languageNames(): Map<string, string> {
  if (byName) return byName;
  const english = englishLanguageNames();
  const m = new Map<string, string>();
  const own = new Map<string, string>();
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  for (const a of letters)
    for (const b of letters) {
      const code = a + b;
      const norm = normalizeLang(code);
      const name = WITHDRAWN.has(code) ? undefined : english.of(code);
      if (!name || !norm) continue;
      if (!m.has(nameKey(name))) m.set(nameKey(name), norm);
      const autonym = new Intl.DisplayNames([code], { type: 'language', fallback: 'none' }).of(code);
      if (autonym && !own.has(nameKey(autonym))) own.set(nameKey(autonym), norm);
    }
  for (const [k, v] of own) if (!m.has(k)) m.set(k, v); // an English name wins over another language's own name
  byName = m;
  return m;
}

/**
 * The corpus's code for a language named in English or in itself (`french`, `Simplified Chinese`,
 * `norwegian_bokmal`, `Deutsch`, `Русский`), as games name their translation folders and tables,
 * or for a code; undefined when it is neither.
 */
export function langFromName(name: string): string | undefined {
  const k = nameKey(name);
  return NAME_ALIASES.get(k) ?? languageNames().get(k) ?? normalizeLang(name);
}

/** Whether ICU names the language of a corpus code (`xx` and `qq` are well-formed codes of no language). */
export function knownLanguage(code: string): boolean {
  const base = code.split('_')[0]!;
  return englishLanguageNames().of(base) !== undefined;
}

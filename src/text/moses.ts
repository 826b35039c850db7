// LASER's text preprocessing (laser_encoders/laser_tokenizer.py, LaserTokenizer.tokenize):
// characters of Unicode category C → space; sacremoses' MosesPunctNormalizer(lang, penn=True,
// perl_parity=True) — the substitutions of Moses' normalize-punctuation.perl, in order, with
// LaserTokenizer's two overrides (‘ and ‚ → ") — then lower-casing. Python's `re` semantics are
// kept: \d is any Unicode decimal digit (\p{Nd}); str.strip() strips Python's whitespace set.

type Rule = [RegExp, string];
const r = (pattern: string, replacement: string): Rule => [new RegExp(pattern, 'gu'), replacement];

const EXTRA_WHITESPACE: Rule[] = [
  r('\\r', ''),
  r('\\(', ' ('),
  r('\\)', ') '),
  r(' +', ' '),
  r('\\) ([.!:?;,])', ')$1'),
  r('\\( ', '('),
  r(' \\)', ')'),
  r('(\\p{Nd}) %', '$1%'),
  r(' :', ':'),
  r(' ;', ';'),
];
const PENN: Rule[] = [r('`', "'"), r("''", ' " ')];
const NORMALIZE_UNICODE: Rule[] = [
  r('„', '"'),
  r('“', '"'),
  r('”', '"'),
  r('–', '-'),
  r('—', ' - '),
  r(' +', ' '),
  r('´', "'"),
  r('([a-zA-Z])‘([a-zA-Z])', "$1'$2"),
  r('([a-zA-Z])’([a-zA-Z])', "$1'$2"),
  // perl parity: ’ → " (sacremoses), and LASER's overrides of ‘ and ‚ (release-4.0 parity)
  r('‘', '"'),
  r('‚', '"'),
  r('’', '"'),
  r("''", '"'),
  r('´´', '"'),
  r('…', '...'),
];
const FRENCH_QUOTES: Rule[] = [r('\u00a0«\u00a0', ' "'), r('«\u00a0', '"'), r('«', '"'), r('\u00a0»\u00a0', '" '), r('\u00a0»', '"'), r('»', '"')];
const PSEUDO_SPACES: Rule[] = [
  r('\u00a0%', '%'),
  r('nº\u00a0', 'nº '),
  r('\u00a0:', ':'),
  r('\u00a0ºC', ' ºC'),
  r('\u00a0cm', ' cm'),
  r('\u00a0\\?', '?'),
  r('\u00a0!', '!'),
  r('\u00a0;', ';'),
  r(',\u00a0', ', '),
  r(' +', ' '),
];
const EN_QUOTE_COMMA: Rule[] = [r('"([,.]+)', '$1"')];
const DE_ES_FR_QUOTE_COMMA: Rule[] = [r(',"', '",'), r('(\\.+)"(\\s*[^<])', '"$1$2')];
const NUMBERS_COMMA: Rule[] = [r('(\\p{Nd})\u00a0(\\p{Nd})', '$1,$2')];
const NUMBERS_DOT: Rule[] = [r('(\\p{Nd})\u00a0(\\p{Nd})', '$1.$2')];

/** The substitution list of MosesPunctNormalizer(lang, perl_parity=True) as LASER uses it. */
export function mosesRules(lang = 'en'): Rule[] {
  const rules = [...EXTRA_WHITESPACE, ...PENN, ...NORMALIZE_UNICODE, ...FRENCH_QUOTES, ...PSEUDO_SPACES];
  if (lang === 'en') rules.push(...EN_QUOTE_COMMA);
  else if (['de', 'es', 'fr'].includes(lang)) rules.push(...DE_ES_FR_QUOTE_COMMA);
  rules.push(...(['de', 'es', 'cz', 'cs', 'fr'].includes(lang) ? NUMBERS_COMMA : NUMBERS_DOT));
  return rules;
}

// Python's str.isspace() set (bidirectional classes WS, B, S and category Zs)
const PY_SPACE = '\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const PY_STRIP = new RegExp(`^[${PY_SPACE}]+|[${PY_SPACE}]+$`, 'gu');
/** Python's str.split() with no argument: runs of Python whitespace. */
export function pySplit(s: string): string[] {
  return s.split(new RegExp(`[${PY_SPACE}]+`, 'u')).filter((x) => x.length > 0);
}

const EN_RULES = mosesRules('en');
const NON_PRINTING = /\p{C}/gu;

/** Moses punctuation normalisation (sacremoses normalize(): the substitutions, then strip()). */
export function mosesNormalize(text: string, rules: Rule[] = EN_RULES): string {
  for (const [re, rep] of rules) text = text.replace(re, rep);
  return text.replace(PY_STRIP, '');
}

/** LaserTokenizer.tokenize before SentencePiece: non-printing → space, Moses, lower-case. */
export function laserPreprocess(text: string, o: { lowerCase?: boolean; rules?: Rule[] } = {}): string {
  const t = mosesNormalize(text.replace(NON_PRINTING, ' '), o.rules ?? EN_RULES);
  return o.lowerCase === false ? t : t.toLowerCase();
}

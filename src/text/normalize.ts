// Text normalisation, the same at training and embedding time (recorded in the model config):
// NFKC, Moses-style punctuation unification, whitespace clean-up, optional lowercasing and
// optional romanisation of Cyrillic and Greek (the research romanises for its vocabulary analysis).

export interface NormalizeOptions {
  lowercase?: boolean; // default true (as the reference)
  romanize?: boolean; // default false
}

const PUNCT: [RegExp, string][] = [
  [/[\u2018\u2019\u201A\u201B\u2032\u00B4`]/g, "'"],
  [/[\u201C\u201D\u201E\u201F\u2033\u00AB\u00BB]/g, '"'],
  [/[\u2010\u2011\u2012\u2013\u2014\u2015\u2212]/g, '-'],
  [/\u2026/g, '...'],
  [/[\u00A0\u2000-\u200A\u202F\u205F\u3000]/g, ' '],
  [/[\u200B-\u200D\u2060\uFEFF]/g, ''],
];

// Control characters except tab/newline (collapsed below anyway).
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g;

const CYRILLIC: Record<string, string> = {
  а: 'a',
  б: 'b',
  в: 'v',
  г: 'g',
  ґ: 'g',
  д: 'd',
  ђ: 'dj',
  е: 'e',
  ё: 'yo',
  є: 'ye',
  ж: 'zh',
  з: 'z',
  ѕ: 'dz',
  и: 'i',
  і: 'i',
  ї: 'yi',
  й: 'y',
  ј: 'j',
  к: 'k',
  л: 'l',
  љ: 'lj',
  м: 'm',
  н: 'n',
  њ: 'nj',
  о: 'o',
  п: 'p',
  р: 'r',
  с: 's',
  т: 't',
  ћ: 'c',
  у: 'u',
  ў: 'u',
  ф: 'f',
  х: 'kh',
  ц: 'ts',
  ч: 'ch',
  џ: 'dz',
  ш: 'sh',
  щ: 'shch',
  ъ: '',
  ы: 'y',
  ь: '',
  э: 'e',
  ю: 'yu',
  я: 'ya',
};
const GREEK: Record<string, string> = {
  α: 'a',
  ά: 'a',
  β: 'v',
  γ: 'g',
  δ: 'd',
  ε: 'e',
  έ: 'e',
  ζ: 'z',
  η: 'i',
  ή: 'i',
  θ: 'th',
  ι: 'i',
  ί: 'i',
  ϊ: 'i',
  ΐ: 'i',
  κ: 'k',
  λ: 'l',
  μ: 'm',
  ν: 'n',
  ξ: 'x',
  ο: 'o',
  ό: 'o',
  π: 'p',
  ρ: 'r',
  σ: 's',
  ς: 's',
  τ: 't',
  υ: 'y',
  ύ: 'y',
  ϋ: 'y',
  ΰ: 'y',
  φ: 'f',
  χ: 'ch',
  ψ: 'ps',
  ω: 'o',
  ώ: 'o',
};

/** Latin transliteration of Cyrillic and Greek letters (case preserved on the first letter). */
export function romanize(s: string): string {
  let out = '';
  for (const ch of s) {
    const lower = ch.toLowerCase();
    const r = CYRILLIC[lower] ?? GREEK[lower];
    if (r === undefined) {
      out += ch;
      continue;
    }
    out += ch !== lower && r ? r[0]!.toUpperCase() + r.slice(1) : r;
  }
  return out;
}

/**
 * 0: the text is unchanged by the control, punctuation and whitespace rules below (and ASCII
 * only, so NFKC leaves it too); 1: unchanged by those rules, not ASCII; 2: a rule may apply.
 * Conservative: 2 for any character of U+2000–U+2060 (where several rules' characters lie).
 */
function plainness(s: string): 0 | 1 | 2 {
  const n = s.length;
  let ascii = true,
    prevSpace = true;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === 32) {
      if (prevSpace) return 2;
      prevSpace = true;
      continue;
    }
    prevSpace = false;
    if (c < 0x80) {
      if (c < 0x20 || c === 0x60 || c === 0x7f) return 2;
      continue;
    }
    ascii = false;
    if (
      c <= 0x9f ||
      c === 0xa0 ||
      c === 0xab ||
      c === 0xb4 ||
      c === 0xbb ||
      c === 0x1680 ||
      (c >= 0x2000 && c <= 0x2060) ||
      c === 0x2212 ||
      c === 0x3000 ||
      c === 0xfeff
    )
      return 2;
  }
  if (prevSpace && n > 0) return 2;
  return ascii ? 0 : 1;
}

export function normalize(s: string, o: NormalizeOptions = {}): string {
  // most text needs none of the rules: one scan instead of eight regular-expression passes
  // (test/text/ngram-tokenizer.test.ts holds this to the plain pipeline)
  const p = plainness(s);
  let t = p === 0 ? s : s.normalize('NFKC');
  if (p === 2 || (t !== s && plainness(t) === 2)) {
    t = t.replace(CONTROL, ' ');
    for (const [re, rep] of PUNCT) t = t.replace(re, rep);
    t = t.replace(/\s+/g, ' ').trim();
  }
  if (o.lowercase ?? true) t = t.toLowerCase();
  if (o.romanize) t = romanize(t);
  return t;
}

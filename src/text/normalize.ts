// Text normalisation, the same at training and embedding time (recorded in the model config):
// NFKC, Moses-style punctuation unification, whitespace clean-up, optional lowercasing and
// optional romanisation of Cyrillic and Greek (the research romanises for its vocabulary analysis).

export interface NormalizeOptions {
  lowercase?: boolean;   // default true (as the reference)
  romanize?: boolean;    // default false
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
  а: 'a', б: 'b', в: 'v', г: 'g', ґ: 'g', д: 'd', ђ: 'dj', е: 'e', ё: 'yo', є: 'ye', ж: 'zh', з: 'z', ѕ: 'dz', и: 'i', і: 'i', ї: 'yi',
  й: 'y', ј: 'j', к: 'k', л: 'l', љ: 'lj', м: 'm', н: 'n', њ: 'nj', о: 'o', п: 'p', р: 'r', с: 's', т: 't', ћ: 'c', у: 'u', ў: 'u',
  ф: 'f', х: 'kh', ц: 'ts', ч: 'ch', џ: 'dz', ш: 'sh', щ: 'shch', ъ: '', ы: 'y', ь: '', э: 'e', ю: 'yu', я: 'ya',
};
const GREEK: Record<string, string> = {
  α: 'a', ά: 'a', β: 'v', γ: 'g', δ: 'd', ε: 'e', έ: 'e', ζ: 'z', η: 'i', ή: 'i', θ: 'th', ι: 'i', ί: 'i', ϊ: 'i', ΐ: 'i', κ: 'k',
  λ: 'l', μ: 'm', ν: 'n', ξ: 'x', ο: 'o', ό: 'o', π: 'p', ρ: 'r', σ: 's', ς: 's', τ: 't', υ: 'y', ύ: 'y', ϋ: 'y', ΰ: 'y', φ: 'f',
  χ: 'ch', ψ: 'ps', ω: 'o', ώ: 'o',
};

/** Latin transliteration of Cyrillic and Greek letters (case preserved on the first letter). */
export function romanize(s: string): string {
  let out = '';
  for (const ch of s) {
    const lower = ch.toLowerCase();
    const r = CYRILLIC[lower] ?? GREEK[lower];
    if (r === undefined) { out += ch; continue; }
    out += ch !== lower && r ? r[0]!.toUpperCase() + r.slice(1) : r;
  }
  return out;
}

export function normalize(s: string, o: NormalizeOptions = {}): string {
  let t = s.normalize('NFKC').replace(CONTROL, ' ');
  for (const [re, rep] of PUNCT) t = t.replace(re, rep);
  t = t.replace(/\s+/g, ' ').trim();
  if (o.lowercase ?? true) t = t.toLowerCase();
  if (o.romanize) t = romanize(t);
  return t;
}

// Features of a candidate sentence pair that the margin cannot see (Yang et al. 2019's second
// stage; the filters of Bicleaner-style pipelines): how the surface forms agree. Each extractor
// is a pure function of the two strings, so it is tested on hand-made pairs.

/** Numbers as written (digits with their inner separators normalised): "1,000.5" and "1 000,5" agree. */
export function numbersOf(s: string): string[] {
  const out: string[] = [];
  for (const m of s.matchAll(/\p{Nd}+(?:[.,\u00a0\u202f ]\p{Nd}+)*/gu)) {
    // digits of any script as ASCII; separators dropped (locales differ in them)
    out.push(
      [...m[0]]
        .filter((c) => /\p{Nd}/u.test(c))
        .map((c) => String(digitValue(c)))
        .join(''),
    );
  }
  return out;
}

function digitValue(c: string): number {
  // Unicode's decimal digits come in runs of ten, 0 to 9, some runs adjacent (mathematical digits)
  const cp = c.codePointAt(0)!;
  let start = cp;
  while (start > 0 && cp - start < 60 && /\p{Nd}/u.test(String.fromCodePoint(start - 1))) start--;
  return (cp - start) % 10;
}

/** URLs, e-mail addresses and file paths with an extension or a slash. */
export function urlsOf(s: string): string[] {
  return [...s.matchAll(/\b(?:https?|ftp):\/\/[^\s"'<>)]+|\bwww\.[^\s"'<>)]+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+/giu)].map((m) =>
    m[0].replace(/[.,;:]+$/, '').toLowerCase(),
  );
}

/**
 * Placeholders and markup that a translation must keep: printf (%s, %d, %1$s, %-10.3f, %%),
 * Python (%(name)s, {0}, {name}, {}), shell/template ($VAR, ${VAR}), HTML/XML tags (<b>, </a>,
 * <br/>), entities (&amp;), escapes (\n, \t) and accelerator-free ellipses are not placeholders.
 */
export function placeholdersOf(s: string): string[] {
  const re =
    /%(?:\([A-Za-z_][\w]*\))?(?:\d+\$)?[-+#0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|L|q|j|z|t|I64|I32)?[diouxXeEfFgGaAcspnCSm%@]|\{[A-Za-z_0-9.:!]*\}|\$\{?[A-Za-z_][A-Za-z_0-9]*\}?|<\/?[A-Za-z][\w:-]*(?:\s[^<>]*)?\/?>|&(?:[A-Za-z]+|#\d+|#x[0-9a-fA-F]+);|\\[ntr"\\]/g;
  return [...s.matchAll(re)].map((m) => {
    const t = m[0];
    // tags compare by name only (attributes are translated: title="…")
    const tag = /^<(\/?)([A-Za-z][\w:-]*)/.exec(t);
    return tag ? `<${tag[1]}${tag[2]!.toLowerCase()}>` : t;
  });
}

/** Multiset agreement of two lists: |A ∩ B| / |A ∪ B| (1 when both are empty). */
export function multisetJaccard(a: string[], b: string[]): number {
  if (!a.length && !b.length) return 1;
  const inter = multisetIntersection(a, b);
  return inter / (a.length + b.length - inter);
}

/** The size of the multiset intersection of two lists. */
function multisetIntersection(a: string[], b: string[]): number {
  const ca = new Map<string, number>();
  for (const x of a) ca.set(x, (ca.get(x) ?? 0) + 1);
  let inter = 0;
  const cb = new Map<string, number>();
  for (const x of b) cb.set(x, (cb.get(x) ?? 0) + 1);
  for (const [x, n] of ca) inter += Math.min(n, cb.get(x) ?? 0);
  return inter;
}

/** Sentence-final punctuation class: '.', '?', '!', ':', '…', or '' (none). Full-width and other scripts' marks map to these. */
export function finalPunctuation(s: string): string {
  const t = s.trimEnd();
  const c = t.slice(-1);
  if (/[.。।۔።]/u.test(c)) return t.endsWith('...') ? '…' : '.';
  if (/[?？؟;;]/u.test(c)) return c === ';' ? ';' : '?';
  if (/[!！]/u.test(c)) return '!';
  if (/[:：]/u.test(c)) return ':';
  if (c === '…') return '…';
  return '';
}

/** Character n-grams (lower-cased, spaces kept) of a string. */
function charGrams(s: string, n: number): string[] {
  const t = ` ${s.toLowerCase().replace(/\s+/g, ' ').trim()} `;
  const cps = [...t];
  const out: string[] = [];
  for (let i = 0; i + n <= cps.length; i++) out.push(cps.slice(i, i + n).join(''));
  return out;
}

/** Share of letters/marks among the non-space characters (0 for a string of numbers and punctuation). */
export function letterShare(s: string): number {
  let letters = 0,
    other = 0;
  for (const c of s) {
    if (/\s/u.test(c)) continue;
    if (/[\p{L}\p{M}]/u.test(c)) letters++;
    else other++;
  }
  return letters + other ? letters / (letters + other) : 0;
}

/** Tokens for length ratios: words of space-separated scripts, single characters of CJK/Thai-like scripts. */
export function tokenCount(s: string): number {
  let n = 0;
  for (const m of s.matchAll(
    /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]|[^\s\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]+/gu,
  ))
    if (m[0]) n++;
  return n;
}

/** Runs of Latin letters, digits and underscores, parts joined by inner dots kept whole (libfoo.so). */
const latinRuns = (s: string): string[] => [...s.matchAll(/[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*/g)].map((m) => m[0]);

/** Latin-script tokens: latinRuns, and the parts of those joined by dots. */
function latinTokens(s: string): string[] {
  return latinRuns(s).flatMap((t) => (t.includes('.') ? [t, ...t.split('.')] : [t]));
}

/**
 * Names and code that a translation keeps as written: Latin-script tokens with a capital after
 * the first letter (AutoCAD, IPv6, MOLD), letters and digits together (M68K, x86_64), underscores
 * or inner dots (gtk_widget, libfoo.so); and, in a sentence mostly written in another script,
 * any Latin token of two or more letters ("тег qemu" gives qemu). As written (case kept).
 */
export function codeTokensOf(s: string): string[] {
  let nonLatin = 0,
    latinLetters = 0;
  for (const c of s) {
    if (/[A-Za-z]/.test(c)) latinLetters++;
    else if (/\p{L}/u.test(c)) nonLatin++;
  }
  const foreign = nonLatin > latinLetters;
  return latinRuns(s).filter(
    (t) => /[A-Za-z]/.test(t) && (/[A-Z]/.test(t.slice(1)) || /\d/.test(t) || /[_.]/.test(t) || (foreign && (t.match(/[A-Za-z]/g)?.length ?? 0) >= 2)),
  );
}

/**
 * How the code tokens of each side (codeTokensOf) are found among the other side's Latin tokens,
 * case-insensitively: [share found (1 when neither has any), whether any, how many are missing].
 */
export function codeAgreement(src: string, trg: string): [number, number, number] {
  const cs = codeTokensOf(src),
    ct = codeTokensOf(trg);
  if (!cs.length && !ct.length) return [1, 0, 0];
  const ls = new Set(latinTokens(src).map((t) => t.toLowerCase())),
    lt = new Set(latinTokens(trg).map((t) => t.toLowerCase()));
  // found as written, or as a stem of 4+ letters of a token there (AutoCADs ↔ AutoCAD: case endings)
  const has = (set: Set<string>, t: string) => {
    const w = t.toLowerCase();
    if (set.has(w)) return true;
    for (const x of set) if (Math.min(x.length, w.length) >= 4 && (x.startsWith(w) || w.startsWith(x))) return true;
    return false;
  };
  const found = cs.filter((t) => has(lt, t)).length + ct.filter((t) => has(ls, t)).length;
  const n = cs.length + ct.length;
  return [found / n, 1, n - found];
}

/** The number of items of one list not matched in the other (multiset symmetric difference). */
export function multisetMismatch(a: string[], b: string[]): number {
  return a.length + b.length - 2 * multisetIntersection(a, b);
}

export const SURFACE_FEATURES = [
  'log_char_ratio',
  'abs_log_char_ratio',
  'log_token_ratio',
  'abs_log_token_ratio',
  'min_log_chars',
  'numbers_agree',
  'numbers_present',
  'urls_agree',
  'urls_present',
  'placeholders_agree',
  'placeholders_present',
  'final_punct_agree',
  'question_agree',
  'char3_overlap',
  'identical',
  'letter_share_min',
  'numbers_mismatch',
  'placeholders_mismatch',
  'code_found',
  'code_present',
  'code_missing',
] as const;

/** The surface features of a pair, in SURFACE_FEATURES order. */
export function surfaceFeatures(src: string, trg: string): number[] {
  const ls = [...src].length,
    lt = [...trg].length;
  const lr = Math.log((ls + 1) / (lt + 1));
  const ts = tokenCount(src),
    tt = tokenCount(trg);
  const tr = Math.log((ts + 1) / (tt + 1));
  const ns = numbersOf(src),
    nt = numbersOf(trg);
  const us = urlsOf(src),
    ut = urlsOf(trg);
  const ps = placeholdersOf(src),
    pt = placeholdersOf(trg);
  const fs = finalPunctuation(src),
    ft = finalPunctuation(trg);
  const code = codeAgreement(src, trg);
  const q = (s: string) => /[?？؟]/u.test(s);
  return [
    lr,
    Math.abs(lr),
    tr,
    Math.abs(tr),
    Math.log(Math.min(ls, lt) + 1),
    multisetJaccard(ns, nt),
    ns.length + nt.length > 0 ? 1 : 0,
    multisetJaccard(us, ut),
    us.length + ut.length > 0 ? 1 : 0,
    multisetJaccard(ps, pt),
    ps.length + pt.length > 0 ? 1 : 0,
    fs === ft ? 1 : 0,
    q(src) === q(trg) ? 1 : 0,
    multisetJaccard(charGrams(src, 3), charGrams(trg, 3)),
    src.trim() === trg.trim() ? 1 : 0,
    Math.min(letterShare(src), letterShare(trg)),
    Math.log1p(multisetMismatch(ns, nt)),
    Math.log1p(multisetMismatch(ps, pt)),
    code[0],
    code[1],
    Math.log1p(code[2]),
  ];
}

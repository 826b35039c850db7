// Synthetic siblings of a translation: the pair with one number, name or code token changed on one
// side. Software catalogues are full of such neighbours ("Generate code for a 68060." / "… 68010.",
// "gfctranscode(): …" / "gfctransompworkshare(): …"), and a mined pair of siblings is a wrong pair
// that the sentence vectors can hardly see. Bicleaner-style classifiers learn from synthetic noise of
// this kind (word replacement); the scorer's training sets and the pair model's examples get it too.
// Also partial translations (truncated), the other noise of crawled corpora that the vectors miss.
import { Rng } from '../util/rng.js';

const TOKEN = /[A-Za-z0-9_]+/g;

/**
 * The tokens a translation copies: ASCII letters, digits and underscores found on both sides (names
 * and code compared without case, numbers as written) that are numbers, or have a capital, an
 * underscore or a digit (two characters at least), or are at least 4 long (identifiers in another
 * script's sentence).
 * As written on side `a`, each once.
 */
export function copiedTokens(a: string, b: string): string[] {
  const other = new Set([...b.matchAll(TOKEN)].map((m) => m[0].toLowerCase()));
  const out = new Set<string>();
  for (const m of a.matchAll(TOKEN)) {
    const t = m[0];
    if (!other.has(t.toLowerCase())) continue;
    if (/^\d+$/.test(t) || (t.length >= 2 && (/\d/.test(t) || /[A-Z_]/.test(t))) || t.length >= 4) out.add(t);
  }
  return [...out];
}

/** Replaces the first whole-token occurrence of `tok` (any case) in `s`; null when absent. */
function replaceToken(s: string, tok: string, by: string): string | null {
  const lower = tok.toLowerCase();
  for (const m of s.matchAll(TOKEN)) if (m[0].toLowerCase() === lower) return s.slice(0, m.index!) + by + s.slice(m.index! + m[0].length);
  return null;
}

/** A number with one digit changed (the same length; never a leading zero of a longer number). */
function otherNumber(t: string, rng: Rng): string {
  const i = rng.int(t.length), d = Number(t[i]);
  let e = (d + 1 + rng.int(9)) % 10;
  if (i === 0 && e === 0 && t.length > 1) e = d === 1 ? 2 : 1;
  return t.slice(0, i) + String(e) + t.slice(i + 1);
}

/**
 * A sibling of the translation (a, b): one copied token (copiedTokens) changed on side `side` —
 * a number gets another digit, a name or code token becomes another one of `pool` (the names and
 * code tokens of other translations, no numbers: copiedPool). Null when the pair copies nothing or
 * the change is not possible.
 */
export function sibling(a: string, b: string, side: 'a' | 'b', rng: Rng, pool: string[]): string | null {
  const toks = copiedTokens(a, b);
  if (!toks.length) return null;
  const tok = toks[rng.int(toks.length)]!;
  let by: string;
  if (/^\d+$/.test(tok)) by = otherNumber(tok, rng);
  else {
    if (!pool.length) return null;
    by = pool[rng.int(pool.length)]!;
    if (by.toLowerCase() === tok.toLowerCase()) return null;
  }
  return replaceToken(side === 'a' ? a : b, tok, by);
}

/** The copied tokens of many translations (names and code only, no numbers), for sibling's pool. */
export function copiedPool(rows: [string, string][], max = 5000): string[] {
  const out = new Set<string>();
  for (const [a, b] of rows) {
    for (const t of copiedTokens(a, b)) if (!/^\d+$/.test(t)) out.add(t);
    if (out.size >= max) break;
  }
  return [...out];
}

const WORDS = new Intl.Segmenter(undefined, { granularity: 'word' });

/**
 * A partial translation: the first 40–70% of the sentence's words (Unicode word boundaries, so
 * also for scripts written without spaces), cut at a word's end; null for sentences of fewer than
 * four words. Bicleaner's synthetic noise has it too: crawled corpora hold many such pairs, which
 * the sentence vectors rate almost as high as the translation.
 */
export function truncated(s: string, rng: Rng): string | null {
  const ends = [...WORDS.segment(s)].filter((w) => w.isWordLike).map((w) => w.index + w.segment.length);
  if (ends.length < 4) return null;
  const keep = Math.max(1, Math.round(ends.length * (0.4 + 0.3 * rng.next())));
  return s.slice(0, ends[keep - 1]!);
}

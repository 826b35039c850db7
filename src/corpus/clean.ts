// Cleaning of translation texts, as the shared gettext corpus was cleaned: markup tags,
// accelerator marks and line breaks removed, strings with format placeholders dropped, whitespace
// collapsed, NFC. Then the writer's rules: length limits on the English side by kind, a
// translation identical to the English dropped, multi-sentence texts split into sentence pairs
// when both sides have as many sentences.

import { hashSeed } from '../util/rng.js';
import { TextKind, TranslationUnit } from './types.js';

// tags of the markup catalogs carry (Pango, HTML, Mallard/DocBook inline): removed, their text kept
const MARKUP = new Set([
  'a',
  'b',
  'i',
  'u',
  's',
  'tt',
  'big',
  'small',
  'span',
  'em',
  'strong',
  'sub',
  'sup',
  'br',
  'p',
  'markup',
  'link',
  'gui',
  'guilabel',
  'cmd',
  'code',
  'key',
  'keyseq',
  'app',
  'file',
  'var',
  'sys',
  'input',
  'output',
  'font',
  'color',
  'c',
  'q',
  'cite',
  'emphasis',
  'literal',
  'command',
  'filename',
  'replaceable',
  'ulink',
  'quote',
  'small',
  'center',
  'nobr',
  'kbd',
  'mark',
  'abbr',
]);

const TAG = /<\/?([a-zA-Z][a-zA-Z0-9_-]*)(\s[^<>]*)?\/?>/g;

/** printf, Python, .NET, shell and Qt placeholders: a string holding one is dropped. */
const PLACEHOLDER =
  /%(\d+\$)?[-+#0']*(\d+|\*)?(\.(\d+|\*))?(hh|h|ll|l|L|q|j|z|t|I64|I32)?[diouxXeEfFgGaAcspn@]|%\(\w+\)[sdifr]|%[1-9]|\{\d*\}|\{[A-Za-z_][\w.]*(:[^{}]*)?\}|\$\{?[A-Za-z_]\w*\}?|\[\[[^\]]*\]\]/;

/**
 * Removes markup: a tag is markup when its name is known or when it is closed in the same string
 * (`<color_red>…</color>`); an unpaired unknown tag (`<npcname>`) is a placeholder: undefined.
 */
export function stripMarkup(s: string): string | undefined {
  const names = new Set<string>();
  const closed = new Set<string>();
  for (const m of s.matchAll(TAG)) {
    names.add(m[1]!.toLowerCase());
    if (m[0].startsWith('</')) closed.add(m[1]!.toLowerCase());
  }
  for (const n of names) {
    const base = n.replace(/_.*$/, '');
    if (!MARKUP.has(n) && !MARKUP.has(base) && !closed.has(n) && !closed.has(base)) return undefined;
  }
  return s.replace(TAG, (m) => (/^<br\b/i.test(m) ? ' ' : ''));
}

/** Removes one accelerator mark (GTK `_`, Qt/Windows `&`, LibreOffice `~`, the CJK `(_F)` suffix). */
export function stripAccelerators(s: string): string {
  let t = s.replace(/\s*[(（]\s*[_&~]?[A-Za-z0-9]\s*[)）]/g, (m) => (/[_&~]/.test(m) ? '' : m));
  for (const mark of ['_', '&', '~']) {
    const count = t.split(mark).length - 1;
    if (count !== 1 || (mark === '&' && /&(amp|lt|gt|quot|apos|nbsp|#\d+);/.test(t))) {
      if (mark === '&') t = t.replace(/&&/g, '&');
      continue;
    }
    t = t.replace(new RegExp(`${mark === '_' ? '_' : mark === '&' ? '&' : '~'}(?=[\\p{L}\\p{N}])`, 'u'), '');
  }
  return t;
}

const ENTITY: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/**
 * A software message cleaned for the corpus, or undefined when it is to be dropped. Prose (no
 * accelerators: `accelerators` false) keeps its `&` and `_`.
 */
export function cleanMessage(raw: string, accelerators = true): string | undefined {
  if (PLACEHOLDER.test(raw)) return undefined;
  let s = stripMarkup(raw);
  if (s === undefined) return undefined;
  if (accelerators) s = stripAccelerators(s); // before the entities: `&amp;` is an ampersand, `&A` an accelerator
  s = s.replace(/&(amp|lt|gt|quot|apos|nbsp);/g, (_, n: string) => ENTITY[n]!);
  return normalizeSpace(s);
}

/**
 * A catalog message (gettext, Qt) as a translation unit: the English and its translation cleaned
 * (undefined when the translation is blank or either side is dropped). Its document, for holding
 * out dev rows the same in every language's catalog: `doc` (the program file or context of the
 * message), else one of 1,000 slices by the English text.
 */
export function messageUnit(en: string, tr: string, lang: string, source: string, doc: string | undefined): TranslationUnit | undefined {
  if (!tr.trim()) return undefined;
  const a = cleanMessage(en),
    b = cleanMessage(tr);
  if (a === undefined || b === undefined) return undefined;
  return pairUnit(a, b, lang, source, doc ? doc : `#${hashSeed(en) % 1000}`);
}

/**
 * A keyed message's English and translation, both cleaned, as a translation unit; undefined when
 * either was dropped or the translation is the English (a message left untranslated).
 */
export function keyedMessageUnit(en: string | undefined, tr: string | undefined, lang: string, source: string, doc: string): TranslationUnit | undefined {
  if (!en || !tr || en === tr) return undefined;
  return pairUnit(en, tr, lang, source, doc);
}

/** An English message and its translation (both cleaned) as a translation unit of one document. */
function pairUnit(en: string, tr: string, lang: string, source: string, doc: string): TranslationUnit {
  return {
    texts: new Map([
      ['en', en],
      [lang, tr],
    ]),
    source,
    doc,
    kind: 'message',
  };
}

/** NFC, control characters and line breaks to spaces, whitespace collapsed. */
export function normalizeSpace(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s
    .normalize('NFC')
    .replace(/[\u0000-\u001f\u007f\u00a0\u2028\u2029]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

export interface LengthRules {
  /** English words, inclusive. */
  minWords: number;
  maxWords: number;
}

/** The default length rules by kind: the shared corpus kept messages of 4–60 English words. */
export function lengthRules(kind: TextKind, o: { minWords?: number; maxWords?: number } = {}): LengthRules {
  const d =
    kind === 'row'
      ? { minWords: 0, maxWords: Number.POSITIVE_INFINITY }
      : kind === 'phrase'
        ? { minWords: 1, maxWords: 12 }
        : kind === 'prose'
          ? { minWords: 3, maxWords: 80 }
          : { minWords: 3, maxWords: 60 };
  return { minWords: o.minWords ?? d.minWords, maxWords: o.maxWords ?? d.maxWords };
}

export function wordCount(s: string): number {
  return s.split(' ').filter((w) => /[\p{L}\p{N}]/u.test(w)).length;
}

const segmenters = new Map<string, Intl.Segmenter>();

/** Sentences of a text by Intl.Segmenter with the language's rules, trimmed, non-empty. */
export function sentences(text: string, lang: string): string[] {
  let seg = segmenters.get(lang);
  if (!seg) {
    const tag = lang.replace(/_/g, '-');
    try {
      seg = new Intl.Segmenter(tag, { granularity: 'sentence' });
    } catch {
      seg = new Intl.Segmenter(tag.split('-')[0], { granularity: 'sentence' });
    }
    segmenters.set(lang, seg);
  }
  const out: string[] = [];
  for (const s of seg.segment(text)) {
    const t = s.segment.trim();
    if (t) out.push(t);
  }
  return out;
}

/** A string with letters in it (not only digits, punctuation or symbols). */
export function hasLetters(s: string): boolean {
  return /\p{L}/u.test(s);
}

// Partial translations: the first part of a translation's words, a synthetic wrong candidate. Crawled
// corpora hold many such pairs, which the sentence vectors rate almost as high as the translation;
// Bicleaner's synthetic noise has them too. xling scorer train's 'truncated' setting adds them to its
// --parallel sets, for a scorer that cleans corpora (bench/RESULTS.md, "Cleaning a parallel corpus").
import { Rng } from '../util/rng.js';

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

// Documents with a known alignment, made from parallel sentences (rows of an N-way corpus taken in
// order): a benchmark for sentence alignment as vecalign's authors build theirs from parallel
// text. Each step takes the next row(s) and, by chance, keeps them 1:1, merges two target
// sentences into one (a 2:1 group), splits by merging two source sentences (1:2), deletes a
// source sentence (1:0) or inserts a target one (0:1). Deterministic for a seed.
import { Rng } from '../util/rng.js';
import type { Group } from './score.js';

export interface SyntheticDocument {
  src: string[];
  trg: string[];
  gold: Group[];
}

export interface SyntheticOptions {
  /** Chance of a 2:1 group (two source sentences, their targets joined into one). */
  merge?: number;
  /** Chance of a 1:2 group (two source sentences joined into one, their targets kept apart). */
  split?: number;
  /** Chance of a source sentence with no target. */
  deletion?: number;
  /** Chance of a target sentence with no source. */
  insertion?: number;
  seed?: number;
  /** What joins two source sentences into one (default a space; '' for Chinese and Japanese). */
  srcJoiner?: string;
  /** What joins two target sentences into one (default a space). */
  trgJoiner?: string;
}

/** A document pair of the rows' sentences [src, trg] in order, with its gold alignment. */
export function syntheticDocument(rows: readonly (readonly [string, string])[], o: SyntheticOptions = {}): SyntheticDocument {
  const merge = o.merge ?? 0.1,
    split = o.split ?? 0.1,
    del = o.deletion ?? 0.05,
    ins = o.insertion ?? 0.05,
    sj = o.srcJoiner ?? ' ',
    tj = o.trgJoiner ?? ' ';
  if (merge + split + del + ins > 1) throw new Error('syntheticDocument: the chances add up to more than 1');
  const rng = new Rng(o.seed ?? 1);
  const src: string[] = [],
    trg: string[] = [],
    gold: Group[] = [];
  let r = 0;
  while (r < rows.length) {
    const u = rng.next(),
      two = r + 1 < rows.length;
    const [s, t] = rows[r]!;
    if (two && u < merge) {
      const [s2, t2] = rows[r + 1]!;
      gold.push({ src: [src.length, src.length + 1], trg: [trg.length] });
      src.push(s, s2);
      trg.push(t + tj + t2);
      r += 2;
    } else if (two && u < merge + split) {
      const [s2, t2] = rows[r + 1]!;
      gold.push({ src: [src.length], trg: [trg.length, trg.length + 1] });
      src.push(s + sj + s2);
      trg.push(t, t2);
      r += 2;
    } else if (u < merge + split + del) {
      gold.push({ src: [src.length], trg: [] });
      src.push(s);
      r++;
    } else if (u < merge + split + del + ins) {
      gold.push({ src: [], trg: [trg.length] });
      trg.push(t);
      r++;
    } else {
      gold.push({ src: [src.length], trg: [trg.length] });
      src.push(s);
      trg.push(t);
      r++;
    }
  }
  return { src, trg, gold };
}

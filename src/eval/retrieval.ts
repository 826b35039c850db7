// Retrieval evaluation: P@1/3/10 of finding the aligned row (or the row with the same id),
// forward (src → trg) and backward, by exact search or through an index.
import { SearchResult } from '../index/faiss.js';

export interface PAtK {
  p1: number;
  p3: number;
  p10: number;
  n: number;
}

/** Fraction of queries whose gold row is among the first 1/3/10 labels. gold[i] = row of trg aligned with query i (-1 = none, skipped). */
export function precisionAtK(r: SearchResult, gold: Int32Array): PAtK {
  let n = 0;
  const hits = [0, 0, 0];
  const ks = [1, 3, 10];
  for (let i = 0; i < r.n; i++) {
    const g = gold[i]!;
    if (g < 0) continue;
    n++;
    for (let j = 0; j < r.k; j++) {
      if (Number(r.labels[i * r.k + j]!) === g) {
        ks.forEach((kk, t) => {
          if (j < kk) hits[t]!++;
        });
        break;
      }
    }
  }
  return { p1: n ? hits[0]! / n : NaN, p3: n ? hits[1]! / n : NaN, p10: n ? hits[2]! / n : NaN, n };
}

/** Gold alignment by ids (document or sentence ids); by row order when ids are absent. */
export function alignByIds(srcIds: string[] | null, trgIds: string[] | null, ns: number, nt: number): { fwd: Int32Array; bwd: Int32Array } {
  if (!srcIds || !trgIds) {
    if (ns !== nt) throw new Error(`row-aligned retrieval needs equal row counts (${ns} vs ${nt}); give ids to align by`);
    const a = Int32Array.from({ length: ns }, (_, i) => i);
    return { fwd: a, bwd: a };
  }
  const t = new Map(trgIds.map((id, i) => [id, i])),
    s = new Map(srcIds.map((id, i) => [id, i]));
  return { fwd: Int32Array.from(srcIds, (id) => t.get(id) ?? -1), bwd: Int32Array.from(trgIds, (id) => s.get(id) ?? -1) };
}

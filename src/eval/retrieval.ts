// Retrieval evaluation: P@1/3/10 of finding the aligned row (or the row with the same id),
// forward (src → trg) and backward, by exact search or through an index (xling eval retrieval
// over two vector files).
import { exactSearch, recallVsExact } from '../index/exact.js';
import { faissMessage, openIndex, SearchResult } from '../index/faiss.js';
import { readLines } from '../io/input.js';
import { readVectors } from '../io/vectors.js';

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

/** What xling eval retrieval measures over two vector files (its options checked by the command). */
export interface VectorRetrievalRun {
  /** .npy rows; target row i aligned with source row i, or (with both id files) the rows of the same id. */
  srcVectors: string;
  trgVectors: string;
  /** One id per row, one a line. */
  srcIds?: string;
  trgIds?: string;
  /** Also search forward through this faiss index over the target vectors (nprobe for an IVF index). */
  index?: string;
  nprobe?: number;
}

/** P@1/3/10 of one direction; with an index, also its recall@10 against exact search. */
export type RetrievalFigures = PAtK & { recallVsExact?: number };

async function readIds(f: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const { line } of readLines(f)) if (line.length) ids.push(line);
  return ids;
}

/** P@k forward and backward by exact search (and forward through the index): { forward, backward, forwardIndex? }. */
export async function vectorRetrieval(o: VectorRetrievalRun): Promise<Record<string, RetrievalFigures>> {
  const s = readVectors(o.srcVectors),
    t = readVectors(o.trgVectors);
  if (s.d !== t.d) throw new Error(`dimension mismatch: ${o.srcVectors} has ${s.d} columns, ${o.trgVectors} ${t.d}`);
  const sIds = o.srcIds ? await readIds(o.srcIds) : null,
    tIds = o.trgIds ? await readIds(o.trgIds) : null;
  if (sIds && sIds.length !== s.n) throw new Error(`${o.srcIds}: ${sIds.length} ids for ${s.n} vectors`);
  if (tIds && tIds.length !== t.n) throw new Error(`${o.trgIds}: ${tIds.length} ids for ${t.n} vectors`);
  const gold = alignByIds(sIds, tIds, s.n, t.n);
  const fwdExact = exactSearch(s.data, t.data, s.d, 10);
  const out: Record<string, RetrievalFigures> = {
    forward: precisionAtK(fwdExact, gold.fwd),
    backward: precisionAtK(exactSearch(t.data, s.data, s.d, 10), gold.bwd),
  };
  if (!o.index) return out;
  const idx = openIndex('--index', o.index, o.nprobe);
  try {
    if (idx.d !== s.d) throw new Error(`dimension mismatch: --index ${o.index} has ${idx.d}, --src-vectors ${o.srcVectors} has ${s.d}`);
    if (idx.ntotal !== t.n)
      throw new Error(`--index ${o.index} holds ${idx.ntotal} vectors, but --trg-vectors ${o.trgVectors} has ${t.n}: it must index the target vectors`);
    let approx: SearchResult;
    try {
      approx = idx.search(s.data, Math.min(10, t.n));
    } catch (e) {
      throw new Error(`searching --index ${o.index}: ${faissMessage(e)}`);
    }
    out.forwardIndex = { ...precisionAtK(approx, gold.fwd), recallVsExact: recallVsExact(fwdExact, approx) };
  } finally {
    idx.dispose();
  }
  return out;
}

/** The summary of vectorRetrieval's figures: a line per direction (P in %). */
export function retrievalSummary(out: Record<string, RetrievalFigures>): string {
  const pct = (x: number) => (100 * x).toFixed(2);
  return Object.entries(out)
    .map(([k, p]) => {
      const recall = p.recallVsExact !== undefined ? `  recall@10 vs exact ${p.recallVsExact.toFixed(3)}` : '';
      return `${k.padEnd(13)} P@1 ${pct(p.p1)}  P@3 ${pct(p.p3)}  P@10 ${pct(p.p10)}  (n=${p.n})${recall}\n`;
    })
    .join('');
}

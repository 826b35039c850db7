// One xling mine run: both corpora read, embedded with the model (or their vectors read), identical
// lines unified if asked, both directions' k-NN (exact, off the main thread, or src→trg through a
// faiss index), the pairs by margin or by a second-stage scorer (mined-pairs.ts), then what is
// written of them (mined-files.ts). The command parses and checks its options and writes the files.
import { readSentences } from '../data/corpus.js';
import { EmbedSettings, vectorsFor } from '../embed/input.js';
import { readIndex } from '../index/faiss.js';
import { Progress } from '../util/progress.js';
import { AutoThreshold } from './auto-threshold.js';
import { FilterOptions } from './filters.js';
import { MinedFiles, minedFiles } from './mined-files.js';
import { minedPairs } from './mined-pairs.js';
import { gatherRows, MarginKind, mineTables, mineTablesAsync, Retrieval, unify } from './mine.js';
import { Assignment, pairLogitsFor, ScorerModel, SelfTables } from './scorer/index.js';
import type { WordAligner } from './align-features.js';

export interface MineRun {
  src: string;
  trg: string;
  /** Vectors of each side (.npy); a side without is embedded with `model`. */
  srcVectors?: string;
  trgVectors?: string;
  model?: string;
  /** How each side is embedded with the model (its language, centring, batches). */
  srcEmbed: EmbedSettings;
  trgEmbed: EmbedSettings;
  srcLang?: string;
  trgLang?: string;
  k: number;
  margin: MarginKind;
  retrieval: Retrieval;
  /** Deduplicate identical lines before the search. */
  unify: boolean;
  /** Search src→trg through this faiss index over the target vectors (ids: target line numbers). */
  index?: { path: string; nprobe?: number };
  /** Keep pairs scoring at least this; 'auto' with a scorer. */
  threshold?: number | 'auto';
  /** A scorer opened for the run (openScorer). */
  scorer?: {
    dir: string;
    model: ScorerModel;
    aligner: WordAligner | null;
    selfTables: SelfTables | null;
    wordTables: () => string;
    assignment: Assignment;
    onCandidates?: (done: number, total: number, pass: number) => void;
  };
  filters: FilterOptions;
  header: boolean;
  /** Lines said on the way (unified counts, the automatic threshold). */
  say: (line: string) => void;
}

/** The files of a mining run, and the k and threshold it used. */
export async function mineCorpora(o: MineRun): Promise<MinedFiles & { k: number; threshold: number | undefined; auto: AutoThreshold | null }> {
  const S = await readSentences(o.src),
    T = await readSentences(o.trg);
  let sv = vectorsFor(S.sentences, o.srcVectors, o.model, `--src ${o.src}`, o.srcEmbed);
  let tv = vectorsFor(T.sentences, o.trgVectors, o.model, `--trg ${o.trg}`, o.trgEmbed);
  if (sv.d !== tv.d)
    throw new Error(
      `dimension mismatch: ${o.srcVectors ? `--src-vectors ${o.srcVectors}` : '--model'} gives ${sv.d} columns, ${o.trgVectors ? `--trg-vectors ${o.trgVectors}` : '--model'} ${tv.d}`,
    );
  let sMap: Int32Array | null = null,
    tMap: Int32Array | null = null;
  if (o.unify) {
    const us = unify(S.sentences),
      ut = unify(T.sentences);
    sv = { data: gatherRows(sv.data, sv.d, us.first), n: us.first.length, d: sv.d };
    tv = { data: gatherRows(tv.data, tv.d, ut.first), n: ut.first.length, d: tv.d };
    sMap = us.first;
    tMap = ut.first;
    o.say(`unified ${S.sentences.length}→${sv.n} source and ${T.sentences.length}→${tv.n} target lines`);
  }
  const index = o.index ? openIndex(o.index.path, o.index.nprobe) : undefined;
  try {
    if (index) {
      if (index.d !== tv.d) throw new Error(`--index ${o.index!.path}: dimension ${index.d}, but the target vectors have ${tv.d}`);
      if (index.ntotal !== tv.n) throw new Error(`--index ${o.index!.path}: holds ${index.ntotal} vectors, --trg ${o.trg} has ${tv.n} lines`);
    }
    const want = o.scorer ? o.scorer.model.k : o.k,
      k = Math.min(want, sv.n, tv.n);
    if (k < want) o.say(`warning: -k ${want} is more than the ${Math.min(sv.n, tv.n)} ${sv.n <= tv.n ? 'source' : 'target'} sentences; using k=${k}`);
    const su = sMap ? Array.from(sMap, (i) => S.sentences[i]!) : S.sentences,
      tu = tMap ? Array.from(tMap, (i) => T.sentences[i]!) : T.sentences;
    const sc = o.scorer;
    const pairLogits = sc?.model.pairModel ? pairLogitsFor(sc.model.pairModel, o.model!, su, tu, o.srcLang, o.trgLang) : undefined;
    // both directions' k-NN: the exact search off the main thread, so that Ctrl-C stops it between chunks
    const prog = new Progress({ label: 'mine k-NN (both directions)', unit: 'rows', total: sv.n + tv.n });
    const opts = { k, trgIndex: index, chunk: 16384, onProgress: (done: number) => prog.set(done) };
    let tables;
    try {
      tables = await (index ? Promise.resolve(mineTables(sv.data, tv.data, sv.d, opts)) : mineTablesAsync(sv.data, tv.data, sv.d, opts));
    } catch (e) {
      throw index ? new Error(`searching --index ${o.index!.path}: ${(e as Error).message}`) : e;
    }
    prog.done();
    const picked = await minedPairs(tables.fwd, tables.bwd, su, tu, {
      margin: o.margin,
      retrieval: o.retrieval,
      threshold: o.threshold,
      say: o.say,
      scorer: sc
        ? { model: sc.model, aligner: sc.aligner, selfTables: sc.selfTables, pairLogits, assignment: sc.assignment, onCandidates: sc.onCandidates }
        : undefined,
    });
    const files = minedFiles(
      picked.rows,
      S,
      T,
      o.filters,
      {
        model: o.model ?? null,
        margin: o.margin,
        retrieval: sc ? 'scorer' : o.retrieval,
        k,
        scorer: sc?.dir ?? null,
        wordTables: sc?.wordTables(),
        threshold: picked.threshold,
        auto: picked.auto,
      },
      { header: o.header, sMap, tMap },
    );
    return { ...files, k, threshold: picked.threshold, auto: picked.auto };
  } finally {
    index?.dispose();
  }
}

/** A faiss index read for the search, with its nprobe set (an IVF index only). */
function openIndex(path: string, nprobe?: number) {
  let index;
  try {
    index = readIndex(path);
  } catch (e) {
    throw new Error(`--index ${path}: cannot read it as a faiss index: ${(e as Error).message}`);
  }
  if (nprobe !== undefined) {
    if (!index.info.ivf) {
      index.dispose();
      throw new Error(`nprobe: --index ${path} is not an IVF index (nprobe is how many IVF lists a search visits)`);
    }
    index.setNprobe(nprobe);
  }
  return index;
}

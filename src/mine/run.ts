// One xling mine run: both corpora read, embedded with the model (or their vectors read), identical
// lines unified if asked, both directions' k-NN (exact, off the main thread, or src→trg through a
// faiss index), the pairs by margin or by a second-stage scorer (pipeline.ts), then what is
// written of them (mined-files.ts). The command parses and checks its options and writes the files.
import { readSentences } from '../train-data/corpus.js';
import { EmbedSettings, vectorsFor } from '../embed/input.js';
import { openIndex } from '../index/faiss.js';
import { AutoThreshold } from './auto-threshold.js';
import { FilterOptions } from './filters.js';
import { MinedFiles, minedFiles } from './mined-files.js';
import { gatherRows, MarginKind, Retrieval, unify } from './mine.js';
import { minePairs } from './pipeline.js';
import { Assignment, ScorerModel, SelfTables } from './scorer/index.js';
import type { WordAligner } from './scorer/word-align/features.js';

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
  const index = o.index ? openIndex('--index', o.index.path, o.index.nprobe, { nprobeName: 'nprobe' }) : undefined;
  try {
    if (index && sv.d === tv.d) {
      // (a dimension mismatch between the sides is said by minePairs)
      if (index.d !== tv.d) throw new Error(`--index ${o.index!.path}: dimension ${index.d}, but the target vectors have ${tv.d}`);
      if (index.ntotal !== tv.n) throw new Error(`--index ${o.index!.path}: holds ${index.ntotal} vectors, --trg ${o.trg} has ${tv.n} lines`);
    }
    const su = sMap ? Array.from(sMap, (i) => S.sentences[i]!) : S.sentences,
      tu = tMap ? Array.from(tMap, (i) => T.sentences[i]!) : T.sentences;
    const sc = o.scorer;
    const picked = await minePairs(
      { vectors: sv, texts: su, what: o.srcVectors ? `--src-vectors ${o.srcVectors}` : '--model' },
      { vectors: tv, texts: tu, what: o.trgVectors ? `--trg-vectors ${o.trgVectors}` : '--model' },
      {
        k: o.k,
        margin: o.margin,
        retrieval: o.retrieval,
        threshold: o.threshold,
        scorer: sc && { ...sc, encoder: o.model, srcLang: o.srcLang, trgLang: o.trgLang },
        index: index && { index, name: `--index ${o.index!.path}` },
        chunk: 16384,
        // both directions' k-NN: the exact search off the main thread, so that Ctrl-C stops it between chunks
        progress: 'mine k-NN (both directions)',
        say: o.say,
      },
    );
    const files = minedFiles(
      picked.rows,
      S,
      T,
      o.filters,
      {
        model: o.model ?? null,
        margin: o.margin,
        retrieval: sc ? 'scorer' : o.retrieval,
        k: picked.k,
        scorer: sc?.dir ?? null,
        wordTables: sc?.wordTables(),
        threshold: picked.threshold,
        auto: picked.auto,
      },
      { header: o.header, sMap, tMap },
    );
    return { ...files, k: picked.k, threshold: picked.threshold, auto: picked.auto };
  } finally {
    index?.dispose();
  }
}

// Document vectors (the mean of a document's sentence vectors, L2-normalised) and document
// retrieval with P@1/3/10 in both directions, by cosine or by the ratio margin of the mining
// research (each candidate's cosine divided by the mean cosine of both sides' k nearest
// neighbours: hub documents close to everything lose their advantage). documentRetrievalRun is
// xling eval retrieval --docs.
import { spreadSample } from '../embed/centering.js';
import { InputEmbedder } from '../embed/input.js';
import { canonicalLang } from '../embed/language.js';
import { EmbedOptions, SentenceEncoderModel } from '../embed/model.js';
import { loadSentenceEncoder } from '../embed/model-dir.js';
import { SearchResult } from '../index/faiss.js';
import { marginScore } from '../mine/mine.js';
import { knnChunked } from '../index/exact.js';
import { readLines } from '../io/input.js';
import { splitSentences } from '../text/sentences.js';
import { PAtK, precisionAtK } from './retrieval.js';
import { DocumentVectors } from '../embed/vectors.js';

/** [docs.length, dim] document vectors: each document's sentences embedded, averaged, normalised. */
export function documentVectors(model: SentenceEncoderModel, docs: string[], o: EmbedOptions = {}): Float32Array {
  const owner: number[] = [],
    sents: string[] = [];
  docs.forEach((doc, i) => {
    for (const s of splitSentences(doc)) {
      owner.push(i);
      sents.push(s);
    }
  });
  const out = new DocumentVectors(model.dim, docs.length);
  out.add(model.embed(sents, o), owner);
  return out.matrix();
}

export interface DocRetrieval {
  forward: PAtK;
  backward: PAtK;
  n: number;
}

/**
 * P@k of finding row i of Y for row i of X (and back), by cosine or (margin) by the ratio margin
 * over each query's `candidates` cosine neighbours, with neighbourhoods of k = 4.
 */
export function documentRetrieval(X: Float32Array, Y: Float32Array, d: number, o: { margin?: boolean; candidates?: number; k?: number } = {}): DocRetrieval {
  const n = X.length / d;
  if (Y.length / d !== n) throw new Error(`document retrieval: ${n} source but ${Y.length / d} target documents`);
  const K = Math.min(n, Math.max(10, o.candidates ?? 16)),
    k = Math.min(n, o.k ?? 4);
  const xy = knnChunked(X, Y, d, K),
    yx = knnChunked(Y, X, d, K);
  const gold = Int32Array.from({ length: n }, (_, i) => i);
  if (!o.margin) return { forward: precisionAtK(xy, gold), backward: precisionAtK(yx, gold), n };
  const mean = (r: SearchResult) =>
    Float32Array.from({ length: r.n }, (_, i) => {
      let s = 0;
      for (let j = 0; j < k; j++) s += r.distances[i * r.k + j]!;
      return s / k;
    });
  const mx = mean(xy),
    my = mean(yx);
  const rerank = (r: SearchResult, mq: Float32Array, mb: Float32Array): SearchResult => {
    const labels = new BigInt64Array(r.labels.length),
      distances = new Float32Array(r.distances.length);
    for (let i = 0; i < r.n; i++) {
      const c = Array.from({ length: r.k }, (_, j) => ({
        l: r.labels[i * r.k + j]!,
        s: marginScore('ratio', r.distances[i * r.k + j]!, mq[i]!, mb[Number(r.labels[i * r.k + j]!)]!),
      }));
      c.sort((a, b) => b.s - a.s);
      c.forEach((x, j) => {
        labels[i * r.k + j] = x.l;
        distances[i * r.k + j] = x.s;
      });
    }
    return { ...r, labels, distances };
  };
  return { forward: precisionAtK(rerank(xy, mx, my), gold), backward: precisionAtK(rerank(yx, my, mx), gold), n };
}

/** Parallel documents of a TSV(.gz) file: id<TAB>source text<TAB>target text per line. */
export async function readParallelDocs(path: string): Promise<{ ids: string[]; src: string[]; trg: string[] }> {
  const ids: string[] = [],
    src: string[] = [],
    trg: string[] = [];
  for await (const { line, no } of readLines(path)) {
    if (!line.trim()) continue;
    const c = line.split('\t');
    if (c.length !== 3) throw new Error(`${path}:${no}: expected id<TAB>source text<TAB>target text, got ${c.length} field${c.length === 1 ? '' : 's'}`);
    ids.push(c[0]!);
    src.push(c[1]!);
    trg.push(c[2]!);
  }
  if (!ids.length) throw new Error(`${path}: no documents`);
  return { ids, src, trg };
}

/** The languages of a docs.dev.xx-yy.tsv(.gz) file name, when it has that form. */
export function docsFileLangs(path: string): { src: string; trg: string } | null {
  const m = /(?:^|[/.])([a-z]{2,3}(?:_[a-z]{2})?)-([a-z]{2,3}(?:_[a-z]{2})?)\.tsv(?:\.gz)?$/i.exec(path);
  return m ? { src: m[1]!, trg: m[2]! } : null;
}

/** What xling eval retrieval --docs measures (its options checked by the command). */
export interface DocumentRetrievalRun {
  /** id<TAB>source text<TAB>target text per line (readParallelDocs). */
  docs: string;
  /** The model directory that embeds both sides. */
  model: string;
  /** The sides' languages for centring (default: from a name like docs.dev.de-en.tsv.gz when the model knows them, else 'auto'). */
  srcLang?: string;
  trgLang?: string;
}

/** Both sides embedded as document vectors, P@k by cosine and by margin: the --json report and the summary line. */
export async function documentRetrievalRun(o: DocumentRetrievalRun): Promise<{ report: Record<string, unknown>; summary: string }> {
  const model = loadSentenceEncoder(o.model);
  // a language taken from the file name is used only when the model knows it (a given one must be known)
  const fromName = docsFileLangs(o.docs);
  const known = (l: string | undefined) => (l && model.languages.some((m) => canonicalLang(m) === canonicalLang(l)) ? l : undefined);
  const srcLang = o.srcLang ?? known(fromName?.src) ?? 'auto',
    trgLang = o.trgLang ?? known(fromName?.trg) ?? 'auto';
  const sj = new InputEmbedder(model, { lang: srcLang, langFlag: '--src-lang', center: true, label: 'retrieval' }, `${o.docs} (source side)`);
  const tj = new InputEmbedder(model, { lang: trgLang, langFlag: '--trg-lang', center: true, label: 'retrieval' }, `${o.docs} (target side)`);
  const docs = await readParallelDocs(o.docs);
  sj.identify(spreadSample(docs.src));
  tj.identify(spreadSample(docs.trg));
  const X = documentVectors(model, docs.src, sj.embedOptions()),
    Y = documentVectors(model, docs.trg, tj.embedOptions());
  const cosine = documentRetrieval(X, Y, model.dim),
    margin = documentRetrieval(X, Y, model.dim, { margin: true });
  const report = {
    documents: docs.ids.length,
    src_lang: srcLang,
    trg_lang: trgLang,
    centring: { src: sj.centring, trg: tj.centring },
    cosine: { forward: cosine.forward, backward: cosine.backward },
    margin: { forward: margin.forward, backward: margin.backward },
  };
  const p = (x: number) => (100 * x).toFixed(2);
  const summary = `${docs.ids.length} documents, ${srcLang}→${trgLang} and back, P@1: cosine ${p(cosine.forward.p1)} / ${p(cosine.backward.p1)}, margin ${p(margin.forward.p1)} / ${p(margin.backward.p1)}\n`;
  return { report, summary };
}

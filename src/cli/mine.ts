// xling mine: parallel sentences out of two unaligned corpora, by margin-scored k-NN.
import { readSentences } from '../data/corpus.js';
import { readIndex } from '../index/faiss.js';
import { gatherRows, MarginKind, mine, Retrieval, unify } from '../mine/mine.js';
import { writeFileAtomicSync } from '../util/atomic.js';
import { Progress } from '../util/progress.js';
import { command, usage } from './command.js';
import { vectorsFor } from './vectors.js';

export const MINE_OPTIONS = {
  k: { type: 'number', alias: 'k', default: 4, range: { int: true, min: 1 }, help: 'neighbours per direction for the margin' },
  margin: { type: 'string', default: 'ratio', choices: ['ratio', 'distance', 'absolute', 'eq9', 'eq10'], help: 'candidate scoring' },
  retrieval: { type: 'string', default: 'max', choices: ['fwd', 'bwd', 'intersect', 'max'], help: 'candidate selection' },
} as const;

export const mineCommand = command(['mine'], {
  name: 'xling mine',
  summary: 'mine parallel sentences from two monolingual corpora',
  options: {
    src: { type: 'string', required: true, metavar: 'FILE', help: 'source sentences: plain lines or BUCC id<TAB>sentence' },
    trg: { type: 'string', required: true, metavar: 'FILE', help: 'target sentences, same formats' },
    srcVectors: { type: 'string', metavar: 'NPY', help: 'vectors of --src (one row per line)' },
    trgVectors: { type: 'string', metavar: 'NPY', help: 'vectors of --trg' },
    model: { type: 'string', metavar: 'DIR', help: 'embed both sides with this model instead' },
    ...MINE_OPTIONS,
    threshold: { type: 'number', range: {}, help: 'keep pairs scoring at least T' },
    unify: { type: 'boolean', default: false, help: 'deduplicate identical lines before search' },
    index: { type: 'string', metavar: 'FAISS', help: 'search src→trg through this index over the trg vectors (ids = trg line numbers from 0)' },
    nprobe: { type: 'number', range: { int: true, min: 1 }, help: 'nprobe for --index' },
    output: { type: 'string', alias: 'o', required: true, metavar: 'TSV', help: 'score<TAB>src<TAB>trg (BUCC input: score<TAB>src_id<TAB>trg_id), best first' },
  },
}, async (a) => {
  if (!a.model && !(a.srcVectors && a.trgVectors)) usage('give --src-vectors and --trg-vectors, or --model');
  if (a.unify && a.index) usage('--unify and --index cannot be combined (index rows are the original lines)');
  const t0 = performance.now();
  const S = await readSentences(a.src), T = await readSentences(a.trg);
  let sv = vectorsFor(S.sentences, a.srcVectors, a.model, a.src);
  let tv = vectorsFor(T.sentences, a.trgVectors, a.model, a.trg);
  if (sv.d !== tv.d) throw new Error(`dimension mismatch: source vectors have ${sv.d} columns, target vectors ${tv.d}`);
  let sMap: Int32Array | null = null, tMap: Int32Array | null = null;
  if (a.unify) {
    const us = unify(S.sentences), ut = unify(T.sentences);
    sv = { data: gatherRows(sv.data, sv.d, us.first), n: us.first.length, d: sv.d };
    tv = { data: gatherRows(tv.data, tv.d, ut.first), n: ut.first.length, d: tv.d };
    sMap = us.first; tMap = ut.first;
    process.stderr.write(`[mine] unified ${S.sentences.length}→${sv.n} source and ${T.sentences.length}→${tv.n} target lines\n`);
  }
  const index = a.index ? readIndex(a.index) : undefined;
  if (index) {
    if (index.d !== tv.d) throw new Error(`${a.index}: dimension ${index.d}, vectors have ${tv.d}`);
    if (index.ntotal !== tv.n) throw new Error(`${a.index}: holds ${index.ntotal} vectors, ${a.trg} has ${tv.n} lines`);
    if (a.nprobe) index.setNprobe(a.nprobe);
  }
  const prog = new Progress({ label: 'mine k-NN (both directions)', unit: 'rows', total: sv.n + tv.n });
  const cands = mine(sv.data, tv.data, sv.d, {
    k: a.k, margin: a.margin as MarginKind, retrieval: a.retrieval as Retrieval, threshold: a.threshold, trgIndex: index,
    chunk: 16384, onProgress: (done) => prog.set(done),
  });
  prog.done();
  index?.dispose();
  const bucc = S.bucc && T.bucc;
  const lines = cands.map((c) => {
    const s = sMap ? sMap[c.src]! : c.src, t = tMap ? tMap[c.trg]! : c.trg;
    return bucc ? `${c.score.toFixed(6)}\t${S.ids[s]}\t${T.ids[t]}` : `${c.score.toFixed(6)}\t${S.sentences[s]}\t${T.sentences[t]}`;
  });
  writeFileAtomicSync(a.output, lines.length ? lines.join('\n') + '\n' : '');
  process.stderr.write(`[mine] ${cands.length} pairs (${a.margin}, ${a.retrieval}, k=${a.k}) in ${((performance.now() - t0) / 1000).toFixed(1)}s → ${a.output}\n`);
});

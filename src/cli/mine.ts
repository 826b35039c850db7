// xling mine: parallel sentences out of two unaligned corpora, by margin-scored k-NN.
import { readSentences } from '../data/corpus.js';
import { formatPairs, gatherRows, MarginKind, mine, Retrieval, unify } from '../mine/mine.js';
import { setNumThreads } from '../tensor/tensor.js';
import { Progress } from '../util/progress.js';
import { command, usage } from './command.js';
import { openIndex } from './index-cmds.js';
import { checkPaths, inContext, writeTextOutput } from './io.js';
import { EMBED_OPTIONS, EmbedSettings, LANG_HELP, vectorsFor } from './vectors.js';

export const MINE_OPTIONS = {
  k: { type: 'number', alias: 'k', default: 4, range: { int: true, min: 1 }, help: 'neighbours per direction for the margin' },
  margin: { type: 'string', default: 'ratio', choices: ['ratio', 'distance', 'absolute', 'eq9', 'eq10'], help: 'candidate scoring' },
  retrieval: { type: 'string', default: 'max', choices: ['fwd', 'bwd', 'intersect', 'max'], help: 'candidate selection' },
} as const;

/** With --model: both sides are embedded as xling embed embeds a file (same options and defaults). */
export const MINE_EMBED_OPTIONS = {
  srcLang: { type: 'string', help: `with --model, language of --src: ${LANG_HELP}` },
  trgLang: { type: 'string', help: 'with --model, language of --trg (as --src-lang)' },
  ...EMBED_OPTIONS,
  threads: { type: 'number', range: { int: true, min: 1 }, help: 'intra-op threads (default: all cores)' },
} as const;

/** How --src and --trg are embedded with --model (as xling embed would, for the same vectors). */
export function embedSettingsOf(a: { center: boolean; batchTokens?: number; batchSentences?: number }, lang: string | undefined, langFlag: string, label: string): EmbedSettings {
  return { lang, langFlag, center: a.center, batchTokens: a.batchTokens, batchSentences: a.batchSentences, label };
}

/** k for ns sources and nt targets: never more than either side has; said on stderr when capped. */
export function effectiveK(k: number, ns: number, nt: number, label: string): number {
  const used = Math.min(k, ns, nt);
  if (used < k) process.stderr.write(`[${label}] warning: -k ${k} is more than the ${Math.min(ns, nt)} ${ns <= nt ? 'source' : 'target'} sentences; using k=${used}\n`);
  return used;
}

/** The corpora and their vectors, and the score threshold: xling mine's, shared with xling cluster mine. */
export const MINE_INPUT_OPTIONS = {
  src: { type: 'string', required: true, metavar: 'FILE', help: 'source sentences: plain lines or BUCC id<TAB>sentence' },
  trg: { type: 'string', required: true, metavar: 'FILE', help: 'target sentences, same formats' },
  srcVectors: { type: 'string', metavar: 'NPY', help: 'vectors of --src (one row per line)' },
  trgVectors: { type: 'string', metavar: 'NPY', help: 'vectors of --trg' },
  threshold: { type: 'number', range: {}, help: 'keep pairs scoring at least T' },
} as const;

export const mineCommand = command(['mine'], {
  name: 'xling mine',
  summary: 'mine parallel sentences from two monolingual corpora',
  options: {
    ...MINE_INPUT_OPTIONS,
    model: { type: 'string', metavar: 'DIR', help: 'embed both sides with this model instead' },
    ...MINE_OPTIONS,
    unify: { type: 'boolean', default: false, help: 'deduplicate identical lines before search' },
    index: { type: 'string', metavar: 'FAISS', help: 'search src→trg through this index over the trg vectors (ids = trg line numbers from 0)' },
    nprobe: { type: 'number', range: { int: true, min: 1 }, help: 'nprobe for --index' },
    output: { type: 'string', alias: 'o', required: true, metavar: 'TSV', help: 'score<TAB>src<TAB>trg (BUCC input: score<TAB>src_id<TAB>trg_id), best first; - for standard output' },
    ...MINE_EMBED_OPTIONS,
  },
}, async (a) => {
  if (!a.model && !(a.srcVectors && a.trgVectors)) usage('give --src-vectors and --trg-vectors, or --model');
  if (a.unify && a.index) usage('--unify and --index cannot be combined (index rows are the original lines)');
  checkPaths([['--src', a.src, 'in-text'], ['--trg', a.trg, 'in-text'], ['--src-vectors', a.srcVectors, 'in'], ['--trg-vectors', a.trgVectors, 'in'], ['--model', a.model, 'in-dir'], ['--index', a.index, 'in'], ['--output', a.output, 'out-text']]);
  if (a.threads) setNumThreads(a.threads);
  const t0 = performance.now();
  const S = await readSentences(a.src), T = await readSentences(a.trg);
  let sv = vectorsFor(S.sentences, a.srcVectors, a.model, `--src ${a.src}`, embedSettingsOf(a, a.srcLang, '--src-lang', 'mine'));
  let tv = vectorsFor(T.sentences, a.trgVectors, a.model, `--trg ${a.trg}`, embedSettingsOf(a, a.trgLang, '--trg-lang', 'mine'));
  if (sv.d !== tv.d) throw new Error(`dimension mismatch: ${a.srcVectors ? `--src-vectors ${a.srcVectors}` : '--model'} gives ${sv.d} columns, ${a.trgVectors ? `--trg-vectors ${a.trgVectors}` : '--model'} ${tv.d}`);
  let sMap: Int32Array | null = null, tMap: Int32Array | null = null;
  if (a.unify) {
    const us = unify(S.sentences), ut = unify(T.sentences);
    sv = { data: gatherRows(sv.data, sv.d, us.first), n: us.first.length, d: sv.d };
    tv = { data: gatherRows(tv.data, tv.d, ut.first), n: ut.first.length, d: tv.d };
    sMap = us.first; tMap = ut.first;
    process.stderr.write(`[mine] unified ${S.sentences.length}→${sv.n} source and ${T.sentences.length}→${tv.n} target lines\n`);
  }
  const index = a.index ? openIndex('--index', a.index, a.nprobe) : undefined;
  if (index) {
    if (index.d !== tv.d) throw new Error(`--index ${a.index}: dimension ${index.d}, but the target vectors have ${tv.d}`);
    if (index.ntotal !== tv.n) throw new Error(`--index ${a.index}: holds ${index.ntotal} vectors, --trg ${a.trg} has ${tv.n} lines`);
  }
  const k = effectiveK(a.k, sv.n, tv.n, 'mine');
  const prog = new Progress({ label: 'mine k-NN (both directions)', unit: 'rows', total: sv.n + tv.n });
  const run = () => mine(sv.data, tv.data, sv.d, {
    k, margin: a.margin as MarginKind, retrieval: a.retrieval as Retrieval, threshold: a.threshold, trgIndex: index,
    chunk: 16384, onProgress: (done) => prog.set(done),
  });
  const cands = index ? inContext(`searching --index ${a.index}`, run) : run();
  prog.done();
  index?.dispose();
  writeTextOutput(a.output, formatPairs(cands, S, T, sMap, tMap));
  process.stderr.write(`[mine] ${cands.length} pairs (${a.margin}, ${a.retrieval}, k=${k}) in ${((performance.now() - t0) / 1000).toFixed(1)}s → ${a.output === '-' ? 'standard output' : a.output}\n`);
});

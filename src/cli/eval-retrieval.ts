// xling eval retrieval: P@1/3/10 of finding the aligned row (or same-id row), both directions —
// over two vector files, or (--docs) over parallel documents embedded with a model, by cosine and
// by margin.
import { spreadSample } from '../embed/centering.js';
import { InputEmbedder } from './vectors.js';
import { canonicalLang } from '../embed/language.js';
import { loadSentenceEncoder } from '../embed/model-dir.js';
import { docsFileLangs, documentRetrieval, documentVectors, readParallelDocs } from '../eval/documents.js';
import { alignByIds, precisionAtK } from '../eval/retrieval.js';
import { exactSearch, recallVsExact } from '../index/exact.js';
import { kebab } from '../util/args.js';
import { modelOrDefault } from './default-model.js';
import { command, usage } from './command.js';
import { openIndex } from '../index/faiss.js';
import { readLines } from '../io/input.js';
import { checkPaths, inContext, summaryWriter, writeJsonOutput } from './io.js';
import { readVectors } from './vectors.js';

async function readIds(f: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const { line } of readLines(f)) if (line.length) ids.push(line);
  return ids;
}

export const evalRetrievalCommand = command(
  ['eval', 'retrieval'],
  {
    name: 'xling eval retrieval',
    summary: 'P@1/3/10 of finding aligned sentences or documents',
    options: {
      srcVectors: { type: 'string', metavar: 'NPY', help: 'source vectors (required unless --docs)' },
      trgVectors: { type: 'string', metavar: 'NPY', help: 'target vectors, row i aligned with source row i (required unless --docs)' },
      docs: {
        type: 'string',
        metavar: 'TSV',
        help: 'parallel documents (id<TAB>source text<TAB>target text, .gz allowed, - for standard input) embedded with --model: document vector = mean of its sentence vectors; P@k by cosine and by ratio margin',
      },
      model: { type: 'string', metavar: 'DIR', help: 'model directory (with --docs; default: the model that comes with xling, models/default)' },
      srcLang: {
        type: 'string',
        metavar: 'LANG',
        help: "language of the --docs source side for per-language centring (default: from a name like docs.dev.de-en.tsv.gz, else 'auto')",
      },
      trgLang: { type: 'string', metavar: 'LANG', help: 'language of the --docs target side (default as --src-lang)' },
      srcIds: { type: 'string', metavar: 'FILE', help: 'one id per row (e.g. OUTPUT.ids of `xling embed --docs`); align by id instead of row' },
      trgIds: { type: 'string', metavar: 'FILE', help: 'ids of the target rows, one a line (as --src-ids)' },
      index: { type: 'string', metavar: 'FAISS', help: 'forward search through this index over the target vectors (recall vs exact is reported)' },
      nprobe: { type: 'number', range: { int: true, min: 1 }, help: 'nprobe for --index (IVF indexes)' },
      json: { type: 'string', metavar: 'FILE', help: 'write the figures as JSON (fractions; - for standard output, the summary then goes to standard error)' },
    },
    examples: ['xling eval retrieval --docs docs.de-en.tsv.gz --json r.json', 'xling eval retrieval --src-vectors de.npy --trg-vectors en.npy'],
  },
  async (a) => {
    if (a.docs !== undefined) return evalDocs(a);
    for (const flag of ['model', 'srcLang', 'trgLang'] as const) if (a[flag] !== undefined) usage(`--${kebab(flag)} applies to --docs`);
    if (a.srcVectors === undefined || a.trgVectors === undefined) usage('give --src-vectors and --trg-vectors, or --docs with --model');
    if (a.nprobe !== undefined && !a.index) usage('--nprobe applies to --index');
    checkPaths([
      ['--src-vectors', a.srcVectors, 'in'],
      ['--trg-vectors', a.trgVectors, 'in'],
      ['--src-ids', a.srcIds, 'in-text'],
      ['--trg-ids', a.trgIds, 'in-text'],
      ['--index', a.index, 'in'],
      ['--json', a.json, 'out-text'],
    ]);
    const s = readVectors(a.srcVectors),
      t = readVectors(a.trgVectors);
    if (s.d !== t.d) throw new Error(`dimension mismatch: ${a.srcVectors} has ${s.d} columns, ${a.trgVectors} ${t.d}`);
    const sIds = a.srcIds ? await readIds(a.srcIds) : null,
      tIds = a.trgIds ? await readIds(a.trgIds) : null;
    if (sIds && sIds.length !== s.n) throw new Error(`${a.srcIds}: ${sIds.length} ids for ${s.n} vectors`);
    if (tIds && tIds.length !== t.n) throw new Error(`${a.trgIds}: ${tIds.length} ids for ${t.n} vectors`);
    const gold = alignByIds(sIds, tIds, s.n, t.n);
    const fwdExact = exactSearch(s.data, t.data, s.d, 10);
    const out: Record<string, unknown> = { forward: precisionAtK(fwdExact, gold.fwd), backward: precisionAtK(exactSearch(t.data, s.data, s.d, 10), gold.bwd) };
    if (a.index) {
      const idx = openIndex('--index', a.index, a.nprobe);
      if (idx.d !== s.d) throw new Error(`dimension mismatch: --index ${a.index} has ${idx.d}, --src-vectors ${a.srcVectors} has ${s.d}`);
      if (idx.ntotal !== t.n)
        throw new Error(`--index ${a.index} holds ${idx.ntotal} vectors, but --trg-vectors ${a.trgVectors} has ${t.n}: it must index the target vectors`);
      const approx = inContext(`searching --index ${a.index}`, () => idx.search(s.data, Math.min(10, t.n)));
      out.forwardIndex = { ...precisionAtK(approx, gold.fwd), recallVsExact: recallVsExact(fwdExact, approx) };
      idx.dispose();
    }
    const fmt = (p: { p1: number; p3: number; p10: number; n: number }) =>
      `P@1 ${(100 * p.p1).toFixed(2)}  P@3 ${(100 * p.p3).toFixed(2)}  P@10 ${(100 * p.p10).toFixed(2)}  (n=${p.n})`;
    const say = summaryWriter(a.json);
    for (const [k, v] of Object.entries(out))
      say(
        `${k.padEnd(13)} ${fmt(v as never)}${(v as { recallVsExact?: number }).recallVsExact !== undefined ? `  recall@10 vs exact ${(v as { recallVsExact: number }).recallVsExact.toFixed(3)}` : ''}\n`,
      );
    if (a.json) writeJsonOutput(a.json, out);
  },
);

async function evalDocs(a: {
  docs?: string;
  model?: string;
  srcLang?: string;
  trgLang?: string;
  srcVectors?: string;
  trgVectors?: string;
  srcIds?: string;
  trgIds?: string;
  index?: string;
  nprobe?: number;
  json?: string;
}): Promise<void> {
  for (const flag of ['srcVectors', 'trgVectors', 'srcIds', 'trgIds', 'index', 'nprobe'] as const)
    if (a[flag] !== undefined) usage(`--${kebab(flag)} does not apply to --docs (documents are aligned by line)`);
  const modelDir = modelOrDefault(a.model);
  checkPaths([
    ['--docs', a.docs, 'in-text'],
    ['--model', modelDir, 'in-dir'],
    ['--json', a.json, 'out-text'],
  ]);
  const fromName = docsFileLangs(a.docs!);
  let srcLang = a.srcLang ?? fromName?.src ?? 'auto',
    trgLang = a.trgLang ?? fromName?.trg ?? 'auto';
  const model = loadSentenceEncoder(modelDir);
  // a language taken from the file name is used only when the model knows it (a given one must be known)
  const known = (l: string | undefined) => (l && model.languages.some((m) => canonicalLang(m) === canonicalLang(l)) ? l : undefined);
  if (a.srcLang === undefined) srcLang = known(fromName?.src) ?? 'auto';
  if (a.trgLang === undefined) trgLang = known(fromName?.trg) ?? 'auto';
  const sj = new InputEmbedder(model, { lang: srcLang, langFlag: '--src-lang', center: true, label: 'retrieval' }, `${a.docs} (source side)`);
  const tj = new InputEmbedder(model, { lang: trgLang, langFlag: '--trg-lang', center: true, label: 'retrieval' }, `${a.docs} (target side)`);
  const docs = await readParallelDocs(a.docs!);
  sj.identify(spreadSample(docs.src));
  tj.identify(spreadSample(docs.trg));
  const X = documentVectors(model, docs.src, sj.embedOptions()),
    Y = documentVectors(model, docs.trg, tj.embedOptions());
  const cosine = documentRetrieval(X, Y, model.dim),
    margin = documentRetrieval(X, Y, model.dim, { margin: true });
  const out = {
    documents: docs.ids.length,
    src_lang: srcLang,
    trg_lang: trgLang,
    centring: { src: sj.centring, trg: tj.centring },
    cosine: { forward: cosine.forward, backward: cosine.backward },
    margin: { forward: margin.forward, backward: margin.backward },
  };
  const p = (x: number) => (100 * x).toFixed(2);
  summaryWriter(a.json)(
    `${docs.ids.length} documents, ${srcLang}→${trgLang} and back, P@1: cosine ${p(cosine.forward.p1)} / ${p(cosine.backward.p1)}, margin ${p(margin.forward.p1)} / ${p(margin.backward.p1)}\n`,
  );
  if (a.json) writeJsonOutput(a.json, out);
}

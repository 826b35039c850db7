// xling embed: one sentence per line in, one vector per line out (same order), streamed with
// bounded memory; documents (doc_id<TAB>sentence) averaged into one vector each.
import { closeSync, openSync, renameSync, rmSync, writeSync, statSync } from 'node:fs';
import { loadSentenceEncoder } from '../embed/model-dir.js';
import { float32ToFloat16 } from '../io/half.js';
import { readLines } from '../io/lines.js';
import { NpyWriter, writeNpy } from '../io/npy.js';
import { setNumThreads } from '../tensor/tensor.js';
import { tempPathFor, writeFileAtomicSync } from '../util/atomic.js';
import { Progress } from '../util/progress.js';
import { command, usage } from './command.js';

/** Vector sink: .npy (float32 or float16) or LASER's raw float32. Atomic: temp file, rename on close. */
interface Sink { append(rows: Float32Array): void; close(): void; abort(): void }

function openSink(path: string, dim: number, fp16: boolean, raw: boolean): Sink {
  if (raw) {
    if (fp16) usage('--raw-f32 and --fp16 exclude each other');
    const tmp = tempPathFor(path);
    const fd = openSync(tmp, 'w');
    return {
      append(rows) { writeSync(fd, new Uint8Array(rows.buffer, rows.byteOffset, rows.byteLength)); },
      close() { closeSync(fd); renameSync(tmp, path); },
      abort() { try { closeSync(fd); } catch { /* closed */ } rmSync(tmp, { force: true }); },
    };
  }
  const w = NpyWriter.open(path, dim, fp16 ? 'float16' : 'float32');
  return {
    append(rows) { w.append(fp16 ? float32ToFloat16(rows) : rows); },
    close() { w.close(); },
    abort() { w.abort(); },
  };
}

export const embedCommand = command(['embed'], {
  name: 'xling embed',
  summary: 'embed sentences (or documents) into vectors (.npy)',
  options: {
    model: { type: 'string', required: true, metavar: 'DIR', help: 'model directory (xling train / xling export)' },
    input: { type: 'string', required: true, metavar: 'FILE', help: 'one sentence per line (or doc_id<TAB>sentence with --docs); .gz allowed' },
    output: { type: 'string', required: true, alias: 'o', metavar: 'FILE', help: 'vectors: .npy (default) or raw float32 with --raw-f32' },
    lang: { type: 'string', help: "language of the input: the model's mean vector of that language is subtracted (per-language centring; the encoder itself never sees it). Default 'auto': identified from the first sentences of the input (a vote of nearest mean vectors; inputs of one language)" },
    center: { type: 'boolean', default: true, help: 'apply per-language centring (--no-center: plain LASER vectors)' },
    fp16: { type: 'boolean', default: false, help: 'write float16 .npy' },
    rawF32: { type: 'boolean', default: false, help: 'write headerless little-endian float32 rows (LASER format)' },
    normalize: { type: 'boolean', default: true, help: 'L2-normalise vectors (--no-normalize to keep raw)' },
    docs: { type: 'boolean', default: false, help: 'input is doc_id<TAB>sentence; output one averaged vector per document (ids in OUTPUT.ids)' },
    batchTokens: { type: 'number', default: 32000, range: { int: true, min: 1 }, help: 'max padded tokens per batch' },
    batchSentences: { type: 'number', default: 4096, range: { int: true, min: 1 }, help: 'max sentences per batch' },
    chunk: { type: 'number', default: 50000, range: { int: true, min: 1 }, help: 'sentences read and length-sorted at a time (memory bound)' },
    threads: { type: 'number', range: { int: true, min: 1 }, help: 'intra-op threads (default: all cores)' },
    quiet: { type: 'boolean', default: false },
  },
}, async (a) => {
  if (a.threads) setNumThreads(a.threads);
  const m = loadSentenceEncoder(a.model);
  const d = m.dim;
  try { statSync(a.input); } catch { throw new Error(`--input: no such file ${a.input}`); }
  const prog = new Progress({ label: 'embed', unit: 'sents', silent: a.quiet });
  let lang: string | undefined = a.lang && a.lang !== 'auto' ? a.lang : undefined;
  if (lang && a.center && m.centers.size && !m.centers.has(lang)) process.stderr.write(`[embed] warning: the model has no mean vector for --lang ${lang} (it has ${[...m.centers.keys()].join(' ')}); vectors are not centred\n`);
  // 'auto' (the default): decided once, on the first chunk, so every row of the output is centred alike
  let decided = !!lang || !a.center || !m.centers.size;
  const emb = (sents: string[]) => {
    if (!decided) {
      decided = true;
      const id = m.identifyLanguage(sents);
      lang = id?.lang;
      if (id && !a.quiet) process.stderr.write(`[embed] input language identified as ${id.lang} (${(100 * id.share).toFixed(0)}% of ${Math.min(sents.length, 2000)} sentences nearest its mean vector); centring with it (--lang to set, --no-center for plain vectors)\n`);
    }
    return m.embed(sents, { maxTokens: a.batchTokens, maxSentences: a.batchSentences, normalize: a.docs ? true : a.normalize, lang, center: a.center });
  };

  if (a.docs) {
    const ids: string[] = [];
    const index = new Map<string, number>();
    const sums: Float32Array[] = [];
    let buf: { doc: number; s: string }[] = [];
    const flush = () => {
      const v = emb(buf.map((b) => b.s));
      buf.forEach((b, i) => { const acc = sums[b.doc]!; for (let j = 0; j < d; j++) acc[j]! += v[i * d + j]!; });
      prog.tick(buf.length);
      buf = [];
    };
    for await (const { line, no } of readLines(a.input)) {
      const tab = line.indexOf('\t');
      if (tab <= 0) throw new Error(`${a.input}:${no}: expected doc_id<TAB>sentence`);
      const id = line.slice(0, tab);
      let k = index.get(id);
      if (k === undefined) { k = ids.length; index.set(id, k); ids.push(id); sums.push(new Float32Array(d)); }
      buf.push({ doc: k, s: line.slice(tab + 1) });
      if (buf.length >= a.chunk) flush();
    }
    if (buf.length) flush();
    if (!ids.length) throw new Error(`${a.input}: empty input`);
    const out = new Float32Array(ids.length * d);
    sums.forEach((s, i) => {
      let n = 0;
      for (let j = 0; j < d; j++) n += s[j]! * s[j]!;
      const inv = a.normalize && n > 0 ? 1 / Math.sqrt(n) : 1;
      for (let j = 0; j < d; j++) out[i * d + j] = s[j]! * inv;
    });
    if (a.rawF32) { const sink = openSink(a.output, d, false, true); sink.append(out); sink.close(); }
    else writeNpy(a.output, a.fp16 ? float32ToFloat16(out) : out, [ids.length, d], a.fp16 ? 'float16' : 'float32');
    writeFileAtomicSync(`${a.output}.ids`, ids.join('\n') + '\n');
    prog.done();
    return;
  }

  const sink = openSink(a.output, d, a.fp16, a.rawF32);
  try {
    let buf: string[] = [];
    let n = 0;
    for await (const { line } of readLines(a.input)) {
      buf.push(line);
      if (buf.length >= a.chunk) { sink.append(emb(buf)); n += buf.length; prog.tick(buf.length); buf = []; await new Promise((r) => setImmediate(r)); }
    }
    if (buf.length) { sink.append(emb(buf)); n += buf.length; prog.tick(buf.length); }
    if (!n) throw new Error(`${a.input}: empty input`);
    sink.close();
    prog.done();
  } catch (e) {
    sink.abort();
    throw e;
  }
});

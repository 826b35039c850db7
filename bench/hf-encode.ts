// A BERT-base-sized Hugging Face encoder (12 layers, 768 wide, 12 heads, random weights, mean
// pooling) on dev sentences of 12 languages: xling (`xling import hf`, length-sorted batches) vs
// transformers.js on onnxruntime-node (the same weights exported to ONNX by python3-torch, fp32)
// vs PyTorch (the same batches), all with the same number of threads. Sentences/s of each; also
// transformers.js on tight groups of ≤ 16 sentences (its best batching) and xling with bfloat16
// matrices (`--precision bf16`) with the distance of its vectors from fp32's.
//   node dist/bench/hf-encode.js [--threads 2] [--per-lang 50] [--max-sentences N] [--json]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { lengthBatches } from '../src/train-data/batch.js';
import { loadSentenceEncoder } from '../src/embed/model-dir.js';
import { HfSentenceEncoder } from '../src/models/hf/model.js';
import { cpuHasBf16 } from '../src/tensor/kernels.js';
import { setNumThreads } from '../src/tensor/index.js';
import { benchRoot, jsonMode, python, threadsArg } from './common.js';

const LANGS = ['en', 'de', 'fr', 'es', 'it', 'pt', 'ru', 'ar', 'tr', 'zh', 'ja', 'ko'];

function devSentences(perLang: number): string[] {
  const repo = join(benchRoot, '..');
  const shared = join(repo, '..', 'shared', 'data', 'gettext', 'dev.tsv.gz');
  const file = existsSync(shared) ? shared : join(repo, 'data', 'sample', 'gettext.dev.tsv.gz');
  const [head, ...rows] = gunzipSync(readFileSync(file)).toString('utf8').trimEnd().split('\n');
  const cols = head!.split('\t');
  const out: string[] = [];
  for (const l of LANGS) {
    const c = cols.indexOf(l);
    out.push(
      ...rows
        .map((r) => r.split('\t')[c] ?? '')
        .filter((s) => s.trim())
        .slice(0, perLang),
    );
  }
  return out;
}

function py(args: string[]): Record<string, number> {
  const r = spawnSync(python, [join(benchRoot, 'py', 'hf_encode.py'), ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`hf_encode.py ${args[0]} failed (${r.status}): ${r.stderr.slice(-2000)}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, number>;
}

export async function run() {
  const threads = threadsArg();
  const i = process.argv.indexOf('--per-lang');
  const perLang = i > 0 ? Number(process.argv[i + 1]) : 50;
  setNumThreads(threads);
  const repo = join(benchRoot, '..');
  const tmp = mkdtempSync(join(tmpdir(), 'xling-bench-hf-'));
  try {
    const snap = join(tmp, 'snapshot');
    py(['make', snap, join(repo, 'test', 'fixtures', 'hf', 'bert', 'tokenizer.json')]);
    const imp = spawnSync(process.execPath, [join(repo, 'dist', 'src', 'cli', 'main.js'), 'import', 'hf', '--from', snap, '-o', join(tmp, 'xling')], {
      encoding: 'utf8',
    });
    if (imp.status !== 0) throw new Error(`xling import hf failed: ${imp.stderr}`);
    const sentences = devSentences(perLang);
    const m = loadSentenceEncoder(join(tmp, 'xling'));
    const ids = m.tokenize(sentences);
    // xling's batches (its encoder's limits, as embed() makes them), or tighter ones with --max-sentences N
    const lim = m.encoder.batchLimits!;
    const j = process.argv.indexOf('--max-sentences');
    const maxSentences = j > 0 ? Number(process.argv[j + 1]) : lim.maxSentences;
    if (!Number.isInteger(maxSentences) || maxSentences < 1) throw new Error(`--max-sentences: a positive integer, got ${process.argv[j + 1]}`);
    const batches = lengthBatches(ids, lim.maxTokens, maxSentences);
    const tokens = ids.reduce((a, s) => a + s.length, 0);

    // xling: tokenising included (embed() does it), as for the others
    m.embed(sentences.slice(0, 16), { maxSentences });
    let t0 = performance.now();
    const xv = m.embed(sentences, { normalize: false, maxSentences });
    const xling = sentences.length / ((performance.now() - t0) / 1000);
    const dim = m.dim;

    // xling with bfloat16 matrices (--precision bf16): the same batches; how far its normalised
    // vectors are from fp32's (cosine, max abs)
    const net = (m.encoder as HfSentenceEncoder).net;
    net.precision = 'bf16';
    m.embed(sentences.slice(0, 16), { maxSentences });
    t0 = performance.now();
    const bv = m.embed(sentences, { normalize: false, maxSentences });
    const xlingBf16 = sentences.length / ((performance.now() - t0) / 1000);
    net.precision = 'fp32';
    let bf16MinCos = 1,
      bf16MaxDiff = 0;
    for (let k = 0; k < sentences.length; k++) {
      const a = xv.subarray(k * dim, (k + 1) * dim),
        b = bv.subarray(k * dim, (k + 1) * dim);
      const na = Math.hypot(...a),
        nb = Math.hypot(...b);
      let c = 0;
      for (let j = 0; j < dim; j++) {
        c += a[j]! * b[j]!;
        bf16MaxDiff = Math.max(bf16MaxDiff, Math.abs(a[j]! / na - b[j]! / nb));
      }
      bf16MinCos = Math.min(bf16MinCos, c / (na * nb));
    }

    // PyTorch: the same batches of ids
    writeFileSync(join(tmp, 'ids.json'), JSON.stringify({ batches: batches.map((b) => b.map((k) => Array.from(ids[k]!))) }));
    const torch = py(['time', snap, join(tmp, 'ids.json'), String(threads)]).sents_per_s!;
    process.stderr.write(`[hf_encode] xling ${xling.toFixed(2)}/s, PyTorch ${torch.toFixed(2)}/s (${sentences.length} sentences)\n`);

    // transformers.js on onnxruntime-node: the same groups of sentences, its own tokenizer and mean
    // pooling; its vectors are compared with xling's (the same model: they must agree)
    // and, as its users would batch it at best, groups of ≤ 16 length-sorted sentences (little padding)
    let js = NaN,
      jsTight = NaN,
      jsError: string | null = null,
      maxAbsDiff = NaN;
    try {
      const tjs = await import('@huggingface/transformers');
      tjs.env.allowRemoteModels = false;
      tjs.env.localModelPath = tmp;
      const extractor = await tjs.pipeline('feature-extraction', 'snapshot', {
        dtype: 'fp32',
        session_options: { intraOpNumThreads: threads, interOpNumThreads: 1 },
      } as never);
      const groups = batches.map((b) => b.map((k) => sentences[k]!));
      await extractor(groups[0]!.slice(0, 16), { pooling: 'mean' });
      const outs: Float32Array[] = [];
      t0 = performance.now();
      for (const g of groups) outs.push((await extractor(g, { pooling: 'mean' })).data as Float32Array);
      js = sentences.length / ((performance.now() - t0) / 1000);
      const tight = lengthBatches(ids, lim.maxTokens, 16).map((b) => b.map((k) => sentences[k]!));
      t0 = performance.now();
      for (const g of tight) await extractor(g, { pooling: 'mean' });
      jsTight = sentences.length / ((performance.now() - t0) / 1000);
      maxAbsDiff = 0;
      batches.forEach((b, i) =>
        b.forEach((k, r) => {
          for (let j = 0; j < dim; j++) maxAbsDiff = Math.max(maxAbsDiff, Math.abs(outs[i]![r * dim + j]! - xv[k * dim + j]!));
        }),
      );
      await extractor.dispose();
    } catch (e) {
      // recorded, not fatal: the other two figures stand
      jsError = (e as Error).message;
    }
    const padded = batches.reduce((a, b) => a + b.length * Math.max(...b.map((k) => ids[k]!.length)), 0);
    return {
      name: 'hf_encode',
      model: 'BERT-base shape (12×768, 12 heads, FFN 3072), mean pooling',
      sentences: sentences.length,
      languages: LANGS.length,
      tokens,
      padded_tokens: padded,
      batches: batches.length,
      max_sentences: maxSentences,
      threads,
      xling_sents_per_s: xling,
      transformers_js_sents_per_s: js,
      torch_sents_per_s: torch,
      ratio_vs_transformers_js: xling / js,
      ratio_vs_torch: xling / torch,
      max_abs_diff_vs_transformers_js: maxAbsDiff,
      transformers_js_error: jsError,
      // each engine at its best batching: xling's packed batches against transformers.js on groups of ≤ 16
      transformers_js_tight_sents_per_s: jsTight,
      ratio_vs_transformers_js_tight: xling / jsTight,
      // bfloat16 matrices (xling embed --precision bf16): speed and distance from the fp32 vectors
      xling_bf16_sents_per_s: xlingBf16,
      ratio_bf16_vs_transformers_js: xlingBf16 / js,
      ratio_bf16_vs_transformers_js_tight: xlingBf16 / jsTight,
      ratio_bf16_vs_torch: xlingBf16 / torch,
      ratio_bf16_vs_fp32: xlingBf16 / xling,
      bf16_min_cosine_vs_fp32: bf16MinCos,
      bf16_max_abs_diff_vs_fp32: bf16MaxDiff,
      cpu_bf16_native: cpuHasBf16(),
    };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith('hf-encode.js')) {
  const r = await run();
  console.log(
    jsonMode()
      ? JSON.stringify(r)
      : `${r.model}, ${r.sentences} sentences of ${r.languages} languages, ${r.threads} threads: xling ${r.xling_sents_per_s.toFixed(1)}/s, transformers.js ${r.transformers_js_sents_per_s.toFixed(1)}/s, PyTorch ${r.torch_sents_per_s.toFixed(1)}/s → ${r.ratio_vs_transformers_js.toFixed(2)}× transformers.js, ${r.ratio_vs_torch.toFixed(2)}× PyTorch; transformers.js in groups of ≤ 16 ${r.transformers_js_tight_sents_per_s.toFixed(1)}/s (${r.ratio_vs_transformers_js_tight.toFixed(2)}×); xling bf16 ${r.xling_bf16_sents_per_s.toFixed(1)}/s (${r.ratio_bf16_vs_transformers_js_tight.toFixed(2)}× the tight transformers.js, min cosine to fp32 ${r.bf16_min_cosine_vs_fp32.toFixed(5)})`,
  );
  process.exit(0);
}

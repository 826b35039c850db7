// An imported LASER2-sized BiLSTM (5 layers × 512 per direction, 320-d embeddings, 50,004 rows,
// random weights, in LASER's checkpoint layout) embedding the shared dev sentences of 12 languages:
// xling (`xling import laser`, then the embed path every command uses: LASER's tokenisation,
// length-sorted batches, the BiLSTM kernels) vs PyTorch as laser_encoders runs it (bench/py/
// laser_import.py: its tokenisation, max_tokens=12000 batches, LaserLstmEncoder). Both include
// tokenisation. Also checks that both give the same vectors (max abs difference of the rows).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { loadSentenceEncoder } from '../src/embed/model-dir.js';
import { readNpy } from '../src/io/npy.js';
import { convertLaserCheckpoint } from '../src/models/laser-lstm/convert.js';
import { setNumThreads } from '../src/tensor/index.js';
import { benchRoot, jsonMode, runPython, threadsArg } from './common.js';

const LANGS = ['en', 'de', 'fr', 'es', 'ru', 'ar', 'zh', 'ja', 'ko', 'hu', 'ta', 'tr'];

function devSentences(perLang: number): string[] {
  const repo = join(benchRoot, '..');
  const shared = join(repo, '..', 'shared', 'data', 'gettext', 'dev.tsv.gz');
  const file = existsSync(shared) ? shared : join(repo, 'data', 'sample', 'gettext.dev.tsv.gz');
  const [head, ...rows] = gunzipSync(readFileSync(file))
    .toString('utf8')
    .trimEnd()
    .split('\n')
    .map((l) => l.split('\t'));
  const out: string[] = [];
  for (const l of LANGS) {
    const j = head!.indexOf(l);
    if (j < 0) continue;
    for (const r of rows.slice(0, perLang)) if (r[j]) out.push(r[j]!);
  }
  return out;
}

export async function run(perLang = Number(process.argv.find((a) => a.startsWith('--laser-per-lang='))?.slice(17) ?? 25), rounds = 2) {
  const threads = threadsArg();
  setNumThreads(threads);
  const dir = mkdtempSync(join(tmpdir(), 'xling-bench-laser-'));
  try {
    const spm = join(benchRoot, '..', 'test', 'fixtures', 'laser', 'spm-unigram.model');
    const ckpt = join(dir, 'laser2-sized.pt');
    runPython('laser_import.py', ['make', ckpt, spm]);
    const modelDir = join(dir, 'model');
    mkdirSync(modelDir);
    convertLaserCheckpoint({ checkpoint: ckpt, spm }, modelDir);
    const m = loadSentenceEncoder(modelDir);
    const sents = devSentences(perLang);
    m.embed(sents.slice(0, 24), { center: false }); // warm-up
    writeFileSync(join(dir, 'cfg.json'), JSON.stringify({ threads, checkpoint: ckpt, spm, sents, out: join(dir, 'torch.npy') }));
    // xling and PyTorch alternate, best of `rounds` each: on a shared machine the load drifts
    // (CPU seconds of each side too: on a loaded machine they say more than the wall clock)
    let secs = Infinity,
      cpu = Infinity,
      v: Float32Array = new Float32Array(0);
    let py: Record<string, number> = { sents_per_s: 0 };
    let pyCpu = Infinity;
    for (let r = 0; r < rounds; r++) {
      const t0 = performance.now(),
        c0 = process.cpuUsage();
      v = m.embed(sents, { center: false });
      const c = process.cpuUsage(c0);
      secs = Math.min(secs, (performance.now() - t0) / 1000);
      cpu = Math.min(cpu, (c.user + c.system) / 1e6);
      const p = runPython('laser_import.py', ['run', join(dir, 'cfg.json')]);
      if (p.sents_per_s! > py.sents_per_s!) py = p;
      pyCpu = Math.min(pyCpu, p.cpu_seconds!);
    }
    const ref = readNpy(join(dir, 'torch.npy')).data as Float32Array;
    let worst = 0;
    const d = m.dim;
    for (let i = 0; i < sents.length; i++) {
      const r = ref.subarray(i * d, (i + 1) * d),
        n = Math.hypot(...r);
      for (let j = 0; j < d; j++) worst = Math.max(worst, Math.abs(v[i * d + j]! - r[j]! / n));
    }
    return {
      name: 'laser_import',
      model: 'BiLSTM 5×512×2, 320-d embeddings, 50004 rows',
      sentences: sents.length,
      languages: LANGS.length,
      threads,
      rounds,
      xling_sents_per_s: sents.length / secs,
      torch_sents_per_s: py.sents_per_s!,
      torch_tokenize_seconds: py.tokenize_seconds!,
      ratio: sents.length / secs / py.sents_per_s!,
      xling_cpu_seconds: cpu,
      torch_cpu_seconds: pyCpu,
      max_abs_diff_normalised: worst,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith('laser-import.js')) {
  const r = await run();
  console.log(
    jsonMode()
      ? JSON.stringify(r)
      : `imported LASER2-sized BiLSTM, ${r.sentences} sentences of ${r.languages} languages (${r.threads} threads): xling ${r.xling_sents_per_s.toFixed(1)}/s vs PyTorch (laser_encoders) ${r.torch_sents_per_s.toFixed(1)}/s → ${r.ratio.toFixed(2)}× (CPU seconds ${r.xling_cpu_seconds.toFixed(2)} vs ${r.torch_cpu_seconds.toFixed(2)}; max abs difference ${r.max_abs_diff_normalised.toExponential(1)})`,
  );
}

// Shared helpers for the side-by-side benchmarks.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dualFamily, DualTrainConfig } from '../src/models/dual/family.js';
import { createTask } from '../src/models/dual/train.js';
import { loadConfig } from '../src/models/config.js';
import { TrainingTask } from '../src/models/family.js';
import { TextTokenizer } from '../src/text/text-tokenizer.js';
import { manualSeed } from '../src/tensor/index.js';
import { encodeTable, loadTable } from '../src/train/prepare.js';

export const benchRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bench');

/**
 * The Python with torch and faiss for the side scripts: $XLING_PYTHON, by default Debian's
 * /usr/bin/python3 (python3-torch / python3-faiss; a `python3` on PATH may be another one).
 */
export const python = process.env.XLING_PYTHON || '/usr/bin/python3';

/** Runs a Python side script (see `python`); parses its JSON line. */
export function runPython(script: string, args: string[]): Record<string, number> {
  const r = spawnSync(python, [join(benchRoot, 'py', script), ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`python ${script} failed (${r.status}): ${r.stderr.slice(-2000)}`);
  const line = r.stdout.trim().split('\n').pop()!;
  return JSON.parse(line) as Record<string, number>;
}

export function threadsArg(): number {
  const i = process.argv.indexOf('--threads');
  return i > 0 ? Number(process.argv[i + 1]) : 2;
}

export function jsonMode(): boolean {
  return process.argv.includes('--json');
}

/** Deterministic small PRNG for synthetic batches (identical on both sides via JSON). */
export function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

/**
 * The model directory for benchmarks that run the CLI: --model DIR when given, else a model of
 * configs/fast-1h.json's shape trained for a few steps on the bundled sample in `tmp` (speed
 * does not depend on the weights).
 */
export function benchModel(tmp: string): string {
  const i = process.argv.indexOf('--model');
  if (i > 0) return process.argv[i + 1]!;
  const repo = join(benchRoot, '..');
  const out = join(tmp, 'model');
  const t = spawnSync(
    process.execPath,
    [
      join(repo, 'dist', 'src', 'cli', 'main.js'),
      'train',
      '--config',
      join(repo, 'configs', 'fast-1h.json'),
      '--data',
      join(repo, 'data', 'sample', 'gettext.train.tsv.gz'),
      '--out',
      out,
      '--budget-pairs',
      '8192',
      '--quiet',
    ],
    { encoding: 'utf8' },
  );
  if (t.status !== 0) throw new Error(`training the bench model failed: ${t.stderr.slice(-2000)}`);
  return out;
}

/**
 * The averaging dual encoder of configs/fast-1h.json with its initial (seeded, untrained) weights,
 * and every sentence of the bundled sample: the model and input the embedding benches time.
 */
export async function fastDualOnSample(): Promise<{ cfg: DualTrainConfig; tok: TextTokenizer; task: TrainingTask; sentences: string[] }> {
  const cfg = loadConfig<DualTrainConfig>(join(benchRoot, '..', 'configs', 'fast-1h.json'));
  const table = await loadTable(join(benchRoot, '..', 'data', 'sample', 'gettext.train.tsv.gz'));
  const sentences = table.rows.flatMap((r) => [...r.values()]);
  const tok = dualFamily.fixedTokenizer!(cfg)!;
  manualSeed(1);
  const task = createTask(cfg, tok, encodeTable({ langs: table.langs, rows: table.rows.slice(0, 10) }, tok), () => {});
  return { cfg, tok, task, sentences };
}

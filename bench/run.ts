// All side-by-side benchmarks: `npm run bench` (text) or `npm run bench -- --json` (one JSON object).
// Each figure is a ratio against the reference (PyTorch / Python faiss) measured in the same run.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { benchGemm } from './gemm.js';
import { benchTrainStep } from './train-step.js';
import { benchTrainDual } from './train-dual.js';
import { benchRoot, jsonMode, threadsArg } from './common.js';

const only = process.argv
  .find((a) => a.startsWith('--only='))
  ?.slice(7)
  .split(',');
const want = (n: string) => !only || only.includes(n);
const results: Record<string, unknown> = { threads: threadsArg(), date: new Date().toISOString() };
const say = (s: string) => {
  if (!jsonMode()) console.log(s);
};

if (want('gemm')) {
  const r = benchGemm();
  results.gemm = r;
  say(`GEMM ${r.shape}: xling ${r.xling_gflops.toFixed(1)} GFLOPS vs PyTorch ${r.torch_gflops.toFixed(1)} → ${r.ratio.toFixed(3)}×`);
}
if (want('train_laser')) {
  const r = await benchTrainStep('laser');
  results.train_laser = r;
  say(`train step laser: xling ${r.xling_pairs_per_s.toFixed(1)} pairs/s vs PyTorch ${r.torch_pairs_per_s.toFixed(1)} → ${r.ratio.toFixed(3)}×`);
}
for (const k of ['averaging', 'transformer'] as const) {
  if (!want(`train_dual_${k}`)) continue;
  const r = await benchTrainDual(k);
  results[`train_dual_${k}`] = r;
  say(
    `train step dual (${k}, configs/fast-1h.json sizes): xling ${r.xling_pairs_per_s.toFixed(0)} pairs/s vs PyTorch ${r.torch_pairs_per_s.toFixed(0)} → ${r.ratio.toFixed(3)}×`,
  );
}
// Benchmarks of other capabilities register themselves as modules exporting `run()`.
for (const [name, file] of [
  ['faiss_flat', 'faiss-flat.js'],
  ['embed', 'embed.js'],
  ['embed_dual', 'embed-dual.js'],
  ['mine_knn', 'mine-knn.js'],
  ['ivfpq_search', 'ivfpq-search.js'],
  ['serve_load', 'serve-load.js'],
  ['cluster_embed', 'cluster-embed.js'],
  ['laser_import', 'laser-import.js'],
  ['hf_encode', 'hf-encode.js'],
  ['lite', 'lite.js'],
  ['binary_search', 'binary-search.js'],
] as const) {
  const path = join(benchRoot, '..', 'dist', 'bench', file);
  if (!want(name) || !existsSync(path)) continue;
  const mod = (await import(path)) as { run: () => Promise<Record<string, unknown>> };
  const r = await mod.run();
  results[name] = r;
  say(`${name}: ${JSON.stringify(r)}`);
}
// the CLI's start-up against an xling/lite script, and its throughput against the machine's roof
if (want('cold_start') || want('embed_roof')) {
  const { coldStart, embedRoof } = await import('./cold-start.js');
  for (const [name, f] of [
    ['cold_start', coldStart],
    ['embed_roof', embedRoof],
  ] as const) {
    if (!want(name)) continue;
    const r = await f();
    results[name] = r;
    say(`${name}: ${JSON.stringify(r)}`);
  }
}
if (jsonMode()) console.log(JSON.stringify(results));

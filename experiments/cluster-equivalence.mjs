// The queue's equivalence acceptance at full size: embed + index + graph of an N-sentence corpus
// (default 100,000 lines of the gettext training cells) through W local `xling worker`s on a
// private Redis, against the single-process commands on the same input. Prints one JSON object:
// the max abs difference of the vectors and whether the index and graph files are byte-identical.
//   node experiments/cluster-equivalence.mjs --model runs/fast [--n 100000] [--workers 4] [--shards 8] [--dir DIR]
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { readNpy, startLocalRedis } from 'xling';

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : def;
};
const model = opt('--model'),
  n = Number(opt('--n', '100000')),
  workers = Number(opt('--workers', '4')),
  shards = opt('--shards', '8');
const dir = opt('--dir', join(tmpdir(), `xling-equivalence-${process.pid}`));
if (!model) {
  console.error('usage: node experiments/cluster-equivalence.mjs --model DIR [--n 100000] [--workers 4] [--shards 8] [--dir DIR]');
  process.exit(2);
}
const cli = join(import.meta.dirname, '..', 'dist', 'src', 'cli', 'main.js');
const p = (f) => join(dir, f);
const log = (l) => process.stderr.write(`[equivalence] ${l}\n`);
const run = (argv) => {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [cli, ...argv], { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`xling ${argv.slice(0, 2).join(' ')} failed (${r.status}):\n${r.stderr.slice(-3000)}`);
  return (performance.now() - t0) / 1000;
};

rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
// the corpus: every non-empty cell of the training TSV, row by row, up to n lines
const lines = [];
for (const row of gunzipSync(readFileSync('../shared/data/gettext/train.tsv.gz')).toString('utf8').split('\n').slice(1)) {
  for (const cell of row.split('\t')) if (cell.trim() && lines.length < n) lines.push(cell.trim());
  if (lines.length >= n) break;
}
writeFileSync(p('corpus.txt'), lines.join('\n') + '\n');
log(`${lines.length} sentences`);

const redis = await startLocalRedis(p('redis'));
const procs = Array.from({ length: workers }, (_, i) =>
  spawn(process.execPath, [cli, 'worker', '--redis', redis.url, '--threads', '1', '--name', `w${i}`, '--quiet'], { stdio: 'ignore' }),
);
const out = { sentences: lines.length, workers, shards: Number(shards) };
try {
  const q = ['--redis', redis.url, '--shards', shards];
  // embed
  out.embed_single_s = run(['embed', '--model', model, '--lang', 'en', '--input', p('corpus.txt'), '-o', p('single.npy')]);
  out.embed_cluster_s = run([
    'cluster',
    'embed',
    '--model',
    model,
    '--lang',
    'en',
    '--input',
    p('corpus.txt'),
    '-o',
    p('cluster.npy'),
    ...q,
    '--work',
    p('work-embed'),
    '--quiet',
  ]);
  const a = readNpy(p('single.npy')),
    b = readNpy(p('cluster.npy'));
  let maxDiff = 0,
    same = 0;
  for (let i = 0; i < a.data.length; i++) {
    const d = Math.abs(a.data[i] - b.data[i]);
    if (d > maxDiff) maxDiff = d;
    if (d === 0) same++;
  }
  Object.assign(out, { embed_shape_equal: a.shape.join() === b.shape.join(), embed_max_abs_diff: maxDiff, embed_identical_share: same / a.data.length });
  log(`embed: max abs difference ${maxDiff}`);
  // index (from the single-process vectors)
  const ix = ['--factory', 'OPQ16,IVF256,PQ16', '--metric', 'ip'];
  out.index_single_s = run(['index', 'build', ...ix, p('single.npy'), '-o', p('single.faiss')]);
  out.index_cluster_s = run(['cluster', 'index', ...ix, p('single.npy'), '-o', p('cluster.faiss'), ...q, '--work', p('work-index'), '--quiet']);
  out.index_identical = readFileSync(p('single.faiss')).equals(readFileSync(p('cluster.faiss')));
  log(`index: identical ${out.index_identical}`);
  // graph
  const gr = ['--model', model, '--data', `en=${p('corpus.txt')}`];
  out.graph_single_s = run(['graph', 'build', ...gr, '--out', p('graph-single'), '--quiet']);
  out.graph_cluster_s = run(['cluster', 'graph', ...gr, '--out', p('graph-cluster'), ...q, '--work', p('work-graph'), '--quiet']);
  for (const f of ['vectors.npy', 'index.faiss', 'neighbours.npy', 'distances.npy', 'sentences.txt'])
    out[`graph_${f}_identical`] = readFileSync(join(p('graph-single'), f)).equals(readFileSync(join(p('graph-cluster'), f)));
  log('graph: compared');
} finally {
  for (const w of procs) w.kill('SIGTERM');
  await redis.stop();
}
console.log(JSON.stringify(out, null, 1));
if (!args.includes('--keep')) rmSync(dir, { recursive: true, force: true });

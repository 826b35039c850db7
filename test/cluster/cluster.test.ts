// xling worker / xling cluster on a private Redis (redis-server on a free loopback port, from
// scripts/setup.sh): a sharded embed through several workers gives xling embed's vectors; the same
// command again reuses the finished flow; a worker killed with SIGKILL mid-shard loses the shard to
// another worker and the result is unchanged; a Redis restarted mid-flow (append-only file on)
// does not lose the flow; a shard whose input turns bad fails the flow at once, naming the shard
// and the line, with no output; a worker killed inside a shard of a staged (graph) flow loses it to
// another worker and the graph is unchanged; cancel removes a queued flow.
import assert from 'node:assert/strict';
import { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { flowStatus, listFlows } from '../../src/cluster/flow.js';
import { LocalRedis, startLocalRedis } from '../../src/cluster/local-redis.js';
import { stagedFlowStatus } from '../../src/cluster/stages.js';
import { float16ToFloat32 } from '../../src/io/half.js';
import { readNpy, writeNpy } from '../../src/io/npy.js';
import { cli, cliAsync, devColumn, tinyDualModel } from '../fixtures/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'xling-cluster-'));
const p = (f: string) => join(dir, f);
/** A settings file (--config) holding `s`. */
const settings = (name: string, s: unknown) => {
  writeFileSync(p(`cfg-${name}.json`), JSON.stringify(s));
  return p(`cfg-${name}.json`);
};
const model = p('m');
tinyDualModel(dir, model);
const children: ChildProcess[] = [];

/** Resolves when the child's stderr (or stdout) has printed a line matching re; rejects if it exits first. */
function waitFor(c: ChildProcess, re: RegExp, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const on = (b: Buffer) => {
      seen += b.toString();
      if (re.test(seen)) {
        c.stderr?.off('data', on);
        c.stdout?.off('data', on);
        resolve();
      }
    };
    c.stderr?.on('data', on);
    c.stdout?.on('data', on);
    c.once('exit', (code) => reject(new Error(`${what} exited (${code}) before printing ${re}: ${seen.slice(-2000)}`)));
  });
}

let redis: LocalRedis | null = null;
let port = 0;
let url = '';
async function startRedis(): Promise<void> {
  redis = await startLocalRedis(p('redis'), port);
  ({ port, url } = redis);
}
async function stopRedis(): Promise<void> {
  await redis?.stop();
  redis = null;
}

async function startWorker(name: string): Promise<ChildProcess> {
  const w = cliAsync(['worker', '--redis', url, '--name', name, '--lock-seconds', '2', '--threads', '1']);
  children.push(w);
  await waitFor(w, /ready on/, `worker ${name}`);
  return w;
}
async function stop(c: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (c.exitCode !== null || c.signalCode !== null) return;
  const gone = new Promise((resolve) => c.once('exit', resolve));
  c.kill(signal);
  await gone;
}

before(startRedis);
after(async () => {
  for (const c of children) await stop(c, 'SIGKILL');
  await stopRedis();
  rmSync(dir, { recursive: true, force: true });
});

/** Lines of the dev sample in several languages, repeated (with a counter) to `n` lines. */
function corpus(file: string, n: number): void {
  const base = [...devColumn('de'), ...devColumn('fr'), '', ...devColumn('en')];
  writeFileSync(
    p(file),
    Array.from({ length: n }, (_, i) => (base[i % base.length] ? `${base[i % base.length]} ${Math.floor(i / base.length)}` : '')).join('\n') + '\n',
  );
}
function single(input: string, out: string): Float32Array {
  const r = cli(['embed', '--model', model, '--input', p(input), '-o', p(out), '--quiet']);
  assert.equal(r.status, 0, r.stderr);
  return readNpy(p(out)).data as Float32Array;
}
function assertSame(a: Float32Array, b: Float32Array, what: string): void {
  assert.equal(a.length, b.length, `${what}: sizes`);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  assert.ok(worst <= 1e-5, `${what}: max abs difference ${worst}`);
}
const clusterEmbed = (input: string, out: string, extra: string[] = []) => [
  'cluster',
  'embed',
  '--model',
  model,
  '--input',
  p(input),
  '-o',
  p(out),
  '--redis',
  url,
  '--work',
  p('work'),
  ...extra,
];

describe('xling cluster embed on BullMQ + Redis', () => {
  it("three workers give xling embed's vectors; the same command again reuses the completed flow", async () => {
    corpus('small.txt', 5000);
    const want = single('small.txt', 'small-single.npy');
    const ws = [await startWorker('a1'), await startWorker('a2'), await startWorker('a3')];
    const r = await runAsync(clusterEmbed('small.txt', 'small.npy', ['--shards', '5', '--chunk', '300']));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /5 shards of 5000 lines submitted/);
    assert.match(r.stderr, /done in/);
    assertSame(readNpy(p('small.npy')).data as Float32Array, want, 'cluster vs single');
    const flow = /flow (embed-[0-9a-f]+)/.exec(r.stderr)![1]!;
    const st = (await flowStatus(url, flow))!;
    assert.equal(st.state, 'completed');
    assert.deepEqual(
      st.shards.map((s) => [s.state, s.done, s.attempts]),
      [1000, 1000, 1000, 1000, 1000].map((n) => ['completed', n, 1]),
    );
    for (const s of st.shards) assert.match(s.worker ?? '', /^a[123]$/);
    const mtime = statSync(p('small.npy')).mtimeMs;
    const again = await runAsync(clusterEmbed('small.txt', 'small.npy', ['--shards', '5', '--chunk', '300']));
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, new RegExp(`flow ${flow}: already completed`));
    assert.equal(statSync(p('small.npy')).mtimeMs, mtime, 'not written again');
    for (const w of ws) await stop(w);
  });

  it("--dtype float16 writes xling embed --dtype float16's vectors (the float32 ones rounded); --fp16 is gone", async () => {
    corpus('half.txt', 600);
    const one = cli(['embed', '--model', model, '--input', p('half.txt'), '-o', p('half-single.npy'), '--dtype', 'float16', '--quiet']);
    assert.equal(one.status, 0, one.stderr);
    const w = await startWorker('h1');
    const r = await runAsync(clusterEmbed('half.txt', 'half.npy', ['--shards', '2', '--dtype', 'float16']));
    assert.equal(r.code, 0, r.stderr);
    const got = readNpy(p('half.npy')),
      want = readNpy(p('half-single.npy'));
    assert.equal(got.dtype, 'float16');
    assert.deepEqual(got.shape, want.shape);
    // the float32 vectors agree within 1e-5: rounded to float16 (< 1 in magnitude), within one step of 2^-11
    const a = float16ToFloat32(got.data as Uint16Array),
      b = float16ToFloat32(want.data as Uint16Array);
    let worst = 0;
    for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
    assert.ok(worst <= 2 ** -11, `max abs difference ${worst}`);
    const old = cli(clusterEmbed('half.txt', 'half-old.npy', ['--shards', '2', '--fp16']));
    assert.equal(old.status, 2, old.stderr);
    assert.match(old.stderr, /--fp16/);
    assert.equal(existsSync(p('half-old.npy')), false);
    await stop(w);
  });

  it('a worker killed mid-shard: another takes the shard, the result is unchanged; a Redis restart mid-flow loses nothing', async () => {
    corpus('big.txt', 120000);
    const want = single('big.txt', 'big-single.npy');
    const w1 = await startWorker('k1');
    const sub = await runAsync(clusterEmbed('big.txt', 'big.npy', ['--shards', '3', '--chunk', '200', '--detach']));
    assert.equal(sub.code, 0, sub.stderr);
    const flow = sub.stdout.trim();
    // kill k1 while it is inside a shard
    for (let t = 0; ; t++) {
      const s = (await flowStatus(url, flow))!;
      if (s.shards.some((x) => x.state === 'active' && x.done > 0 && x.done < x.total)) break;
      assert.ok(t < 3000 && !s.shards.every((x) => x.state === 'completed'), 'k1 never got inside a shard');
      await new Promise((r) => setTimeout(r, 10));
    }
    await stop(w1, 'SIGKILL');
    const killed = (await flowStatus(url, flow))!.shards.find((x) => x.state === 'active')!;
    // k2 takes over once k1's lock expires; Redis goes down and comes back (its append-only file
    // keeps the queue) while k2 works and the submitter follows
    const k2 = await startWorker('k2');
    const follower = runAsync(clusterEmbed('big.txt', 'big.npy', ['--shards', '3', '--chunk', '200']));
    await follower.started(/already queued, following it/);
    await stopRedis();
    await new Promise((r) => setTimeout(r, 1000));
    await startRedis();
    const r = await follower;
    assert.equal(r.code, 0, r.stderr);
    assertSame(readNpy(p('big.npy')).data as Float32Array, want, 'after the kill and the restart');
    const st = (await flowStatus(url, flow))!;
    assert.equal(st.shards[killed.shard]!.worker, 'k2', 'the killed shard was finished by k2');
    const flowDir = join(p('work'), flow);
    assert.deepEqual(
      readdirSync(flowDir).filter((f) => f.includes('.tmp-')),
      [],
      'no temporaries left after the merge',
    );
    await stop(k2);
  });

  it('a shard whose input turns bad fails the flow at once, naming the shard and the line; no output', async () => {
    corpus('bad.txt', 3000);
    const follower = runAsync(clusterEmbed('bad.txt', 'bad.npy', ['--shards', '2']));
    for (let t = 0; !(await listFlows(url)).some((f) => f.state === 'waiting-children' || f.state === 'waiting'); t++) {
      assert.ok(t < 500, 'the flow was never submitted');
      await new Promise((r) => setTimeout(r, 20));
    }
    // the file changes under the queued flow: invalid UTF-8 on line 2500 (in shard 2)
    const lines = readFileSync(p('bad.txt'));
    let at = 0;
    for (let k = 0; k < 2499; k++) at = lines.indexOf(10, at) + 1;
    writeFileSync(p('bad.txt'), Buffer.concat([lines.subarray(0, at), Buffer.from([0xc3, 0x28]), lines.subarray(at + 2)]));
    const w = await startWorker('b1');
    const r = await follower;
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /shard 2\/2 \(.*bad\.txt lines 1501–3000\): .*bad\.txt:2500: invalid UTF-8/);
    assert.equal(existsSync(p('bad.npy')), false, 'no output');
    const flow = /flow (embed-[0-9a-f]+)/.exec(r.stderr)![1]!;
    assert.equal((await flowStatus(url, flow))!.shards[1]!.attempts, 1, 'an input error is not retried');
    await stop(w);
  });

  it('xling cluster graph through two workers builds the graph xling graph build builds: same vectors, index and neighbours', async () => {
    corpus('g.txt', 3000);
    const common = ['--model', model, '--data', `de=${p('g.txt')}`, '--factory', 'IVF8,Flat', '--min-words', '1', '-k', '5'];
    const one = cli(['graph', 'build', ...common, '--out', p('g-single'), '--quiet']);
    assert.equal(one.status, 0, one.stderr);
    const ws = [await startWorker('g1'), await startWorker('g2')];
    const r = await runAsync(['cluster', 'graph', ...common, '--out', p('g-cluster'), '--redis', url, '--work', p('work'), '--shards', '3']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /submitted from the store stage, 3 shards per sharded stage/);
    assert.match(r.stderr, /done in .*\n.*\d+ sentences, recall@10/);
    const flow = /flow (graph-[0-9a-f]+)/.exec(r.stderr)![1]!;
    const st = cli(['cluster', 'status', '--redis', url, '--flow', flow, '--json', '-']);
    assert.equal(st.status, 0, st.stderr);
    assert.equal((JSON.parse(st.stdout) as { state: string }).state, 'completed');
    const a = readNpy(p('g-single/vectors.npy')),
      b = readNpy(p('g-cluster/vectors.npy'));
    assert.deepEqual(b.shape, a.shape);
    assert.deepEqual(Buffer.from((b.data as Uint16Array).buffer), Buffer.from((a.data as Uint16Array).buffer), 'float16 vectors bit-identical');
    assert.ok(readFileSync(p('g-cluster/index.faiss')).equals(readFileSync(p('g-single/index.faiss'))), 'index files identical');
    for (const f of ['neighbours.npy', 'distances.npy'])
      assert.ok(readFileSync(p(`g-cluster/${f}`)).equals(readFileSync(p(`g-single/${f}`))), `${f} identical`);
    const meta = JSON.parse(readFileSync(p('g-cluster/graph.json'), 'utf8')) as {
      recall_at_10: number;
      nprobe: number;
      steps: Record<string, { shards?: number }>;
    };
    assert.equal(meta.nprobe, (JSON.parse(readFileSync(p('g-single/graph.json'), 'utf8')) as { nprobe: number }).nprobe);
    assert.ok(meta.recall_at_10 > 0.9, `recall ${meta.recall_at_10}`);
    assert.equal(meta.steps.query?.shards, 3);
    const again = await runAsync(['cluster', 'graph', ...common, '--out', p('g-cluster'), '--redis', url, '--work', p('work'), '--shards', '3']);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, new RegExp(`flow ${flow}: already completed`));
    for (const w of ws) await stop(w);
  });

  it("xling cluster graph with the default (exact search below the crossover) gives xling graph build's graph", async () => {
    corpus('ge.txt', 2500);
    const common = ['--model', model, '--data', `de=${p('ge.txt')}`, '--min-words', '1', '-k', '5'];
    const one = cli(['graph', 'build', ...common, '--out', p('ge-single'), '--quiet']);
    assert.equal(one.status, 0, one.stderr);
    const ws = [await startWorker('e1'), await startWorker('e2')];
    const r = await runAsync(['cluster', 'graph', ...common, '--out', p('ge-cluster'), '--redis', url, '--work', p('work'), '--shards', '3']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((JSON.parse(readFileSync(p('ge-cluster/graph.json'), 'utf8')) as { factory: string }).factory, 'exact');
    for (const f of ['vectors.npy', 'neighbours.npy', 'distances.npy'])
      assert.ok(readFileSync(p(`ge-cluster/${f}`)).equals(readFileSync(p(`ge-single/${f}`))), `${f} identical`);
    for (const w of ws) await stop(w);
  });

  it('a worker killed inside a shard of a graph stage: another finishes the flow, the graph is unchanged', async () => {
    corpus('gk.txt', 20000);
    const common = ['--model', model, '--data', `de=${p('gk.txt')}`, '--factory', 'IVF16,Flat', '--min-words', '1', '-k', '5'];
    const one = cli(['graph', 'build', ...common, '--out', p('gk-single'), '--quiet']);
    assert.equal(one.status, 0, one.stderr);
    const w1 = await startWorker('gk1');
    const sub = await runAsync(['cluster', 'graph', ...common, '--out', p('gk-cluster'), '--redis', url, '--work', p('work'), '--shards', '4', '--detach']);
    assert.equal(sub.code, 0, sub.stderr);
    const flow = sub.stdout.trim();
    // kill gk1 while it runs a shard of a sharded stage (embed, add or query)
    let killedIn = '';
    for (let t = 0; !killedIn; t++) {
      const st = (await stagedFlowStatus(url, flow))!;
      assert.ok(t < 3000 && st.state !== 'completed', 'gk1 never got inside a shard');
      const active = st.stage > 0 ? st.jobs.find((j) => j.shard !== null && j.state === 'active') : undefined;
      if (active) {
        await stop(w1, 'SIGKILL');
        killedIn = active.id;
      } else await new Promise((r) => setTimeout(r, 10));
    }
    const w2 = await startWorker('gk2');
    const r = await runAsync(['cluster', 'graph', ...common, '--out', p('gk-cluster'), '--redis', url, '--work', p('work'), '--shards', '4']);
    assert.equal(r.code, 0, `killed in ${killedIn}: ${r.stderr}`);
    for (const f of ['vectors.npy', 'index.faiss', 'neighbours.npy', 'distances.npy', 'sentences.txt']) {
      assert.ok(readFileSync(p(`gk-cluster/${f}`)).equals(readFileSync(p(`gk-single/${f}`))), `${f} identical (killed in ${killedIn})`);
    }
    await stop(w2);
  });

  it('xling cluster index gives the index file xling index build writes (train once, add in shards, merge)', async () => {
    const n = 6000,
      d = 32;
    let seed = 7;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648 - 0.5;
    };
    writeNpy(p('iv.npy'), Float32Array.from({ length: n * d }, rand), [n, d]);
    const common = ['--factory', 'IVF16,PQ8', '--train-sample', '3000'];
    const one = cli(['index', 'build', p('iv.npy'), ...common, '-o', p('iv-single.faiss')]);
    assert.equal(one.status, 0, one.stderr);
    const ws = [await startWorker('i1'), await startWorker('i2')];
    const r = await runAsync(['cluster', 'index', p('iv.npy'), ...common, '-o', p('iv-cluster.faiss'), '--redis', url, '--work', p('work'), '--shards', '4']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /submitted from the train stage, 4 shards/);
    assert.ok(readFileSync(p('iv-cluster.faiss')).equals(readFileSync(p('iv-single.faiss'))), 'index files identical');
    const flow = /flow (index-[0-9a-f]+)/.exec(r.stderr)![1]!;
    assert.deepEqual(
      readdirSync(join(p('work'), flow))
        .filter((f) => f !== 'flow.json')
        .sort(),
      ['trained.faiss'],
      'shard files removed after the merge',
    );
    for (const w of ws) await stop(w);
  });

  it('xling cluster mine writes the pairs xling mine writes (k-NN of both directions in shards, one margin-scoring merge)', async () => {
    writeFileSync(p('m-de.txt'), devColumn('de').join('\n') + '\n');
    // the targets shuffled (a fixed rotation) and with extra lines, so that mining has work to do
    const en = devColumn('en');
    writeFileSync(p('m-en.txt'), [...en.slice(37), 'Ein ganz anderer Satz.', ...en.slice(0, 37)].join('\n') + '\n');
    for (const l of ['de', 'en']) assert.equal(cli(['embed', '--model', model, '--input', p(`m-${l}.txt`), '-o', p(`m-${l}.npy`), '--quiet']).status, 0);
    const common = ['--src', p('m-de.txt'), '--trg', p('m-en.txt'), '--src-vectors', p('m-de.npy'), '--trg-vectors', p('m-en.npy'), '-k', '4'];
    const one = cli(['mine', ...common, '-o', p('m-single.tsv')]);
    assert.equal(one.status, 0, one.stderr);
    const w = await startWorker('m1');
    const r = await runAsync(['cluster', 'mine', ...common, '-o', p('m-cluster.tsv'), '--redis', url, '--work', p('work'), '--shards', '3']);
    assert.equal(r.code, 0, r.stderr);
    const want = readFileSync(p('m-single.tsv'), 'utf8');
    assert.ok(want.split('\n').length > devColumn('de').length / 2, 'pairs mined');
    assert.equal(readFileSync(p('m-cluster.tsv'), 'utf8'), want);
    // xling mine's filters (the language identifier by filters.lidModel: no --model here), a threshold
    // calibrated on a dev pair, the header, --stats and --keep-all: the same files from the merge
    writeFileSync(p('m-calib.json'), JSON.stringify({ threshold: 1.01, margin: 'ratio', k: 4 }));
    const filtered = [
      '--config',
      settings('filters', {
        header: true,
        filters: { minChars: 25, maxLengthRatio: 2, dedup: 'all', dropIdentical: true, minLetterShare: 0.6, lid: true, lidModel: model },
      }),
      '--src-lang',
      'de',
      '--trg-lang',
      'en',
      '--threshold-from',
      p('m-calib.json'),
    ];
    const files = (tag: string) => ['-o', p(`mf-${tag}.tsv`), '--stats', p(`mf-${tag}.json`), '--keep-all', p(`mf-${tag}.rejected.tsv`)];
    const oneF = cli(['mine', ...common, ...filtered, ...files('single')]);
    assert.equal(oneF.status, 0, oneF.stderr);
    const rf = await runAsync(['cluster', 'mine', ...common, ...filtered, ...files('cluster'), '--redis', url, '--work', p('work'), '--shards', '3']);
    assert.equal(rf.code, 0, rf.stderr);
    for (const ext of ['tsv', 'json', 'rejected.tsv'])
      assert.equal(readFileSync(p(`mf-cluster.${ext}`), 'utf8'), readFileSync(p(`mf-single.${ext}`), 'utf8'), ext);
    const stats = JSON.parse(readFileSync(p('mf-cluster.json'), 'utf8')) as {
      pairs: number;
      candidates_before_filters: number;
      threshold: number;
      rejected: Record<string, number>;
    };
    assert.equal(stats.threshold, 1.01);
    for (const reason of ['too_short', 'length_ratio', 'src_language']) assert.ok(stats.rejected[reason]! > 0, JSON.stringify(stats));
    assert.ok(stats.pairs > 0 && stats.pairs < stats.candidates_before_filters, JSON.stringify(stats));
    assert.match(readFileSync(p('mf-cluster.tsv'), 'utf8'), /^# xling mine: model=vectors margin=ratio retrieval=max k=4 scorer=none threshold=1.01\n/);
    assert.equal(readFileSync(p('mf-cluster.rejected.tsv'), 'utf8').trimEnd().split('\n').length, stats.candidates_before_filters - stats.pairs);
    // with a second-stage scorer (its pair model reading the words through --model): the merge scores the candidates as xling mine --scorer
    writeFileSync(
      p('m-par.tsv'),
      'de\ten\n' +
        devColumn('de')
          .map((d, i) => `${d}\t${en[i]}`)
          .join('\n') +
        '\n',
    );
    const sc = cli([
      'scorer',
      'train',
      '--model',
      model,
      '--parallel',
      p('m-par.tsv'),
      '--rows',
      '150',
      '--pair-model',
      '--config',
      settings('pm', { pairModel: { rows: 200, hidden: 16, pca: 16, epochs: 1 } }),
      '-o',
      p('m-scorer'),
    ]);
    assert.equal(sc.status, 0, sc.stderr);
    const scored = ['--scorer', p('m-scorer'), '--model', model, '--src-lang', 'de', '--trg-lang', 'en'];
    for (const [tag, extra] of [
      ['s', ['--config', settings('header', { header: true })]],
      ['auto', ['--threshold', 'auto', '--config', settings('exchange', { header: true, assignment: 'exchange' })]],
    ] as const) {
      const oneS = cli(['mine', ...common, ...scored, ...extra, '-o', p(`ms-${tag}-single.tsv`), '--stats', p(`ms-${tag}-single.json`)]);
      assert.equal(oneS.status, 0, oneS.stderr);
      const rs = await runAsync([
        'cluster',
        'mine',
        ...common,
        ...scored,
        ...extra,
        '-o',
        p(`ms-${tag}-cluster.tsv`),
        '--stats',
        p(`ms-${tag}-cluster.json`),
        '--redis',
        url,
        '--work',
        p('work'),
        '--shards',
        '3',
      ]);
      assert.equal(rs.code, 0, rs.stderr);
      for (const ext of ['tsv', 'json'])
        assert.equal(readFileSync(p(`ms-${tag}-cluster.${ext}`), 'utf8'), readFileSync(p(`ms-${tag}-single.${ext}`), 'utf8'), `${tag}.${ext}`);
    }
    const withScorer = readFileSync(p('ms-s-cluster.tsv'), 'utf8').trimEnd().split('\n');
    assert.equal(
      withScorer[0],
      `# xling mine: model=${model} margin=ratio retrieval=scorer k=4 scorer=${p('m-scorer')} word_tables=scorer threshold=0.5 columns=probability,margin,src,trg`,
    );
    const de = devColumn('de'),
      right = withScorer.slice(1).filter((l) => {
        const c = l.split('\t');
        return de.indexOf(c[2]!) === en.indexOf(c[3]!);
      }).length;
    assert.ok(withScorer.length > 20 && withScorer.slice(1).every((l) => Number(l.split('\t')[0]) >= 0.5), `${withScorer.length} rows`);
    assert.ok(right >= 0.8 * (withScorer.length - 1), `${right} of ${withScorer.length - 1} pairs translations`);
    assert.ok(JSON.parse(readFileSync(p('ms-auto-cluster.json'), 'utf8')).threshold_auto.threshold > 0);
    // refused before anything is queued: a threshold only a scorer gives, a stats file on standard output, a filter without its language, a pair model without its encoder
    for (const [extra, msg] of [
      [['--threshold', 'auto'], /--threshold auto goes with --scorer/],
      [['--stats', '-'], /--stats -: only text outputs/],
      [['--config', settings('lid', { filters: { lid: true } }), '--src-lang', 'de'], /cfg-lid\.json: 'filters\.lid' needs 'filters\.lidModel'/],
      [['--scorer', p('m-scorer')], /has a pair model, which reads the sentences' words through the sentence encoder: give --model/],
      [['--config', settings('exchange-only', { assignment: 'exchange' })], /'assignment' goes with --scorer/],
    ] as const) {
      const bad = await runAsync(['cluster', 'mine', ...common, ...extra, '-o', p('m-bad.tsv'), '--redis', url, '--work', p('work'), '--shards', '2']);
      assert.equal(bad.code, 2, bad.stderr);
      assert.match(bad.stderr, msg);
      assert.equal(existsSync(p('m-bad.tsv')), false);
    }
    await stop(w);
  });

  it('a graph flow whose sentences are bad fails in its store stage, naming the file and line, without retrying', async () => {
    writeFileSync(p('gbad.txt'), Buffer.concat([Buffer.from('ein guter Satz hier\nnoch ein Satz hier\n'), Buffer.from([0xc3, 0x28, 10])]));
    const w = await startWorker('gb');
    const r = await runAsync([
      'cluster',
      'graph',
      '--model',
      model,
      '--data',
      `de=${p('gbad.txt')}`,
      '--out',
      p('g-bad'),
      '--redis',
      url,
      '--work',
      p('work'),
      '--shards',
      '2',
    ]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /failed in its store stage: graph store: .*gbad\.txt:3: invalid UTF-8\n$/);
    const flow = /flow (graph-[0-9a-f]+)/.exec(r.stderr)![1]!;
    const st = cli(['cluster', 'status', '--redis', url, '--flow', flow, '--json', '-']);
    assert.deepEqual(
      (JSON.parse(st.stdout) as { jobs: { attempts: number }[] }).jobs.map((j) => j.attempts),
      [1],
    );
    assert.equal(existsSync(p('g-bad')), false, 'no graph directory left');
    await stop(w);
  });

  it('cancel removes a queued flow; status and cancel name what is missing', async () => {
    corpus('c.txt', 100);
    const sub = await runAsync(clusterEmbed('c.txt', 'c.npy', ['--shards', '2', '--detach']));
    assert.equal(sub.code, 0, sub.stderr);
    const flow = sub.stdout.trim();
    const st = cli(['cluster', 'status', '--redis', url, '--flow', flow, '--json', '-']);
    assert.equal(st.status, 0, st.stderr);
    assert.deepEqual(
      (JSON.parse(st.stdout) as { shards: { state: string }[] }).shards.map((s) => s.state),
      ['waiting', 'waiting'],
    );
    const c = cli(['cluster', 'cancel', '--redis', url, '--flow', flow]);
    assert.equal(c.status, 0, c.stderr);
    assert.match(c.stderr, /cancelled and removed/);
    const gone = cli(['cluster', 'status', '--redis', url, '--flow', flow]);
    assert.equal(gone.status, 1);
    assert.match(gone.stderr, new RegExp(`--flow ${flow}: no such flow`));
    const noRedis = cli(['cluster', 'status', '--redis', 'redis://127.0.0.1:1']);
    assert.equal(noRedis.status, 1);
    assert.match(noRedis.stderr, /cannot reach Redis at redis:\/\/127\.0\.0\.1:1/);
    const badUrl = cli(['worker', '--redis', 'http://x']);
    assert.equal(badUrl.status, 1);
    assert.match(badUrl.stderr, /--redis http:\/\/x: expected a redis:\/\/ or rediss:\/\/ URL/);
  });
});

/** Starts `xling …args`; the promise resolves when it exits, `started(re)` when it has printed re. */
function runAsync(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> & { started(re: RegExp): Promise<void> } {
  const c = cliAsync(args);
  children.push(c);
  let stdout = '',
    stderr = '';
  c.stdout!.on('data', (b: Buffer) => {
    stdout += b.toString();
  });
  c.stderr!.on('data', (b: Buffer) => {
    stderr += b.toString();
  });
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => c.once('exit', (code) => resolve({ code, stdout, stderr })));
  return Object.assign(done, { started: (re: RegExp) => waitFor(c, re, args.slice(0, 2).join(' ')) });
}

// xling cluster embed on the imported LASER fixture (`cluster` works with an imported
// model unchanged): a private Redis, two workers, the input in shards; the vectors equal xling
// embed's and LASER's own reference vectors (L2-normalised), row for row.
import assert from 'node:assert/strict';
import { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LocalRedis, startLocalRedis } from '../../src/cluster/local-redis.js';
import { readNpy } from '../../src/io/npy.js';
import { cli, cliAsync, root } from '../fixtures/cli.js';

const fx = join(root, 'test', 'fixtures', 'laser');
const dir = mkdtempSync(join(tmpdir(), 'xling-laser-cluster-'));
const p = (f: string) => join(dir, f);
const children: ChildProcess[] = [];
let redis: LocalRedis | null = null;

function run(c: ChildProcess): Promise<{ code: number | null; stderr: string }> {
  let stderr = '';
  c.stderr!.on('data', (b: Buffer) => {
    stderr += b.toString();
  });
  return new Promise((resolve) => c.once('exit', (code) => resolve({ code, stderr })));
}
function startWorker(name: string): Promise<void> {
  const w = cliAsync(['worker', '--redis', redis!.url, '--name', name, '--lock-seconds', '5', '--threads', '1']);
  children.push(w);
  return new Promise((resolve, reject) => {
    let seen = '';
    w.stderr!.on('data', (b: Buffer) => {
      seen += b.toString();
      if (/ready on/.test(seen)) resolve();
    });
    w.once('exit', (code) => reject(new Error(`worker ${name} exited (${code}): ${seen.slice(-2000)}`)));
  });
}

before(async () => {
  const r = cli(['import', 'laser', '--checkpoint', join(fx, 'tiny.pt'), '--spm', join(fx, 'spm-unigram.model'), '-o', p('model')]);
  assert.equal(r.status, 0, r.stderr);
  redis = await startLocalRedis(p('redis'));
});
after(async () => {
  for (const c of children) {
    if (c.exitCode !== null || c.signalCode !== null) continue;
    const gone = new Promise((resolve) => c.once('exit', resolve));
    c.kill('SIGKILL');
    await gone;
  }
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('xling cluster embed with an imported LASER model', () => {
  it("two workers over three shards give xling embed's vectors and LASER's reference vectors", async () => {
    const ref = JSON.parse(readFileSync(join(fx, 'ref.json'), 'utf8')) as { sentences: string[] };
    const refVecs = readNpy(join(fx, 'ref-vectors.npy'));
    const D = refVecs.shape[1]!;
    // one sentence a line: the reference sentences that are one non-blank line each
    const idx = ref.sentences.map((s, i) => [s, i] as const).filter(([s]) => s.trim() && !/[\t\n\r]/.test(s));
    writeFileSync(p('in.txt'), idx.map(([s]) => s).join('\n') + '\n');
    const single = cli(['embed', '--model', p('model'), '--input', p('in.txt'), '-o', p('single.npy'), '--quiet']);
    assert.equal(single.status, 0, single.stderr);

    await Promise.all([startWorker('w1'), startWorker('w2')]);
    const sub = cliAsync([
      'cluster',
      'embed',
      '--model',
      p('model'),
      '--input',
      p('in.txt'),
      '-o',
      p('cluster.npy'),
      '--redis',
      redis!.url,
      '--work',
      p('work'),
      '--shards',
      '3',
      '--chunk',
      '16',
    ]);
    children.push(sub);
    const r = await run(sub);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`3 shards of ${idx.length} lines submitted`));

    const got = readNpy(p('cluster.npy'));
    assert.deepEqual(got.shape, [idx.length, D]);
    const a = got.data as Float32Array,
      b = readNpy(p('single.npy')).data as Float32Array,
      want = refVecs.data as Float32Array;
    let vsSingle = 0,
      vsRef = 0;
    idx.forEach(([, i], row) => {
      const w = want.subarray(i * D, (i + 1) * D),
        n = Math.hypot(...w);
      for (let j = 0; j < D; j++) {
        vsSingle = Math.max(vsSingle, Math.abs(a[row * D + j]! - b[row * D + j]!));
        vsRef = Math.max(vsRef, Math.abs(a[row * D + j]! - w[j]! / n));
      }
    });
    assert.ok(vsSingle <= 1e-6, `cluster vs xling embed: max abs difference ${vsSingle}`);
    assert.ok(vsRef <= 1e-5, `cluster vs LASER's reference: max abs difference ${vsRef}`);
  });
});

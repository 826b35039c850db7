// Every CLI command on a model imported with `xling import hf` (the random XLM-R fixture): embed,
// eval xsim|bucc|retrieval, mine, graph build/neighbours, classify train/eval, serve (/info names
// the imported model) and cluster embed (a local Redis and one worker). The vectors of every path
// equal the model's own.
import assert from 'node:assert/strict';
import { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { LocalRedis, startLocalRedis } from '../../src/cluster/local-redis.js';
import { loadSentenceEncoder } from '../../src/embed/model-dir.js';
import { readNpy } from '../../src/io/npy.js';
import { cli, cliAsync, devColumn, root } from '../fixtures/cli.js';

let dir: string;
const p = (n: string) => join(dir, n);
const model = () => p('model');
const children: ChildProcess[] = [];

function ok(args: string[]): { stdout: string; stderr: string } {
  const r = cli(args);
  assert.equal(r.status, 0, `xling ${args.join(' ')}: ${r.stderr}`);
  return r;
}

function waitFor(c: ChildProcess, re: RegExp, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let err = '';
    c.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = re.exec(err);
      if (m) resolve(m[1] ?? m[0]);
    });
    c.on('exit', (code) => reject(new Error(`${what} exited ${code}: ${err}`)));
  });
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'xling-hf-cli-'));
  ok(['import', 'hf', '--from', join(root, 'test/fixtures/hf/xlmr'), '-o', model()]);
  const de = devColumn('de').slice(0, 40),
    en = devColumn('en').slice(0, 40);
  writeFileSync(p('s.txt'), de.join('\n') + '\n');
  writeFileSync(p('t.txt'), en.join('\n') + '\n');
  writeFileSync(p('s.bucc'), de.map((s, i) => `de-${i}\t${s}`).join('\n') + '\n');
  writeFileSync(p('t.bucc'), en.map((s, i) => `en-${i}\t${s}`).join('\n') + '\n');
  writeFileSync(p('gold'), de.map((_, i) => `de-${i}\ten-${i}`).join('\n') + '\n');
  writeFileSync(p('nway.tsv'), 'en\tde\n' + en.map((s, i) => `${s}\t${de[i]}`).join('\n') + '\n');
  writeFileSync(p('docs-en.tsv'), en.map((s, i) => `${i % 2 ? 'net' : 'text'}\t${i}\t${s}`).join('\n') + '\n');
  writeFileSync(p('docs-de.tsv'), de.map((s, i) => `${i % 2 ? 'net' : 'text'}\t${i}\t${s}`).join('\n') + '\n');
  writeFileSync(p('docs.de-en.tsv'), de.map((s, i) => `${i}\t${s}\t${en[i]}`).join('\n') + '\n');
});
after(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

describe('every command on an imported Hugging Face model', () => {
  test("embed: the model's own vectors (L2-normalised), no centring by default", () => {
    ok(['embed', '--model', model(), '--input', p('s.txt'), '-o', p('s.npy')]);
    ok(['embed', '--model', model(), '--input', p('t.txt'), '-o', p('t.npy')]);
    const v = readNpy(p('s.npy'));
    const m = loadSentenceEncoder(model());
    const want = m.embed(readFileSync(p('s.txt'), 'utf8').trimEnd().split('\n'));
    assert.deepEqual(v.shape, [40, 32]);
    let worst = 0;
    (v.data as Float32Array).forEach((x, i) => {
      worst = Math.max(worst, Math.abs(x - want[i]!));
    });
    assert.ok(worst <= 1e-6, `embed vs in-process: ${worst}`);
    assert.equal(m.centers.size, 0);
  });

  test('eval xsim, eval bucc, eval retrieval', () => {
    const x = ok(['eval', 'xsim', '--model', model(), '--data', 'data/sample/gettext.dev.tsv.gz', '--langs', 'en,de', '--json', p('x.json')]);
    assert.ok(existsSync(p('x.json')), x.stderr);
    ok(['eval', 'bucc', '--src', p('s.bucc'), '--trg', p('t.bucc'), '--gold', p('gold'), '--model', model(), '--json', p('b.json')]);
    assert.ok(JSON.parse(readFileSync(p('b.json'), 'utf8')));
    ok(['eval', 'retrieval', '--docs', p('docs.de-en.tsv'), '--model', model(), '--json', p('r.json')]);
    assert.ok(JSON.parse(readFileSync(p('r.json'), 'utf8')));
  });

  test("mine: with the model; each pair's score is the cosine of the embed command's vectors", () => {
    const out = ok(['mine', '--src', p('s.txt'), '--trg', p('t.txt'), '--model', model(), '--margin', 'absolute', '-o', '-']).stdout;
    const src = readFileSync(p('s.txt'), 'utf8').trimEnd().split('\n'),
      trg = readFileSync(p('t.txt'), 'utf8').trimEnd().split('\n');
    const sv = readNpy(p('s.npy')).data as Float32Array,
      tv = readNpy(p('t.npy')).data as Float32Array;
    const lines = out.trimEnd().split('\n');
    assert.ok(lines.length >= 5, out);
    for (const line of lines) {
      const [score, a, b] = line.split('\t');
      const i = src.indexOf(a!),
        j = trg.indexOf(b!);
      assert.ok(i >= 0 && j >= 0, line);
      let dot = 0;
      for (let k = 0; k < 32; k++) dot += sv[i * 32 + k]! * tv[j * 32 + k]!;
      assert.ok(Math.abs(dot - Number(score)) < 1e-4, `${line}: cosine ${dot}`);
    }
  });

  test('graph build and neighbours', () => {
    ok(['graph', 'build', '--model', model(), '--data', p('nway.tsv'), '--out', p('graph'), '--min-words', '0', '-k', '5', '--quiet']);
    const r = ok(['graph', 'neighbours', '--graph', p('graph'), '#3', '--json']);
    assert.ok(JSON.parse(r.stdout));
  });

  test('classify train and eval', () => {
    ok(['classify', 'train', '--model', model(), '--data', p('docs-en.tsv'), '-o', p('clf'), '--epochs', '2']);
    ok(['classify', 'eval', '--model', model(), '--classifier', p('clf'), '--data', p('docs-de.tsv'), '--json', p('c.json')]);
    assert.ok(JSON.parse(readFileSync(p('c.json'), 'utf8')));
  });

  test("serve: /info names the imported model, /embed gives the embed command's vectors", async () => {
    const s = cliAsync(['serve', '--model', model(), '--port', '0']);
    children.push(s);
    const url = await waitFor(s, /listening on (http:\/\/\S+)/, 'serve');
    const info = (await (await fetch(url + '/info')).json()) as Record<string, unknown>;
    assert.match(JSON.stringify(info), /hf-xlm-roberta/);
    const first = readFileSync(p('s.txt'), 'utf8').split('\n')[0]!;
    const r = await fetch(url + '/embed', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ inputs: [first], truncate: true }),
    });
    assert.equal(r.status, 200);
    const [v] = (await r.json()) as number[][];
    const want = (readNpy(p('s.npy')).data as Float32Array).subarray(0, 32);
    v!.forEach((x, i) => assert.ok(Math.abs(x - want[i]!) <= 1e-5));
    assert.equal(info.model_dtype, 'float32');
    const gone = new Promise((resolve) => s.once('exit', resolve));
    s.kill('SIGTERM');
    await gone;
  });

  test('--precision bf16: serve says bfloat16 in /info and answers as xling embed --precision bf16 does (not as fp32)', async () => {
    ok(['embed', '--model', model(), '--input', p('s.txt'), '-o', p('s16.npy'), '--precision', 'bf16']);
    const s = cliAsync(['serve', '--model', model(), '--port', '0', '--precision', 'bf16']);
    children.push(s);
    const url = await waitFor(s, /listening on (http:\/\/\S+)/, 'serve');
    const info = (await (await fetch(url + '/info')).json()) as Record<string, unknown>;
    assert.equal(info.model_dtype, 'bfloat16');
    const first = readFileSync(p('s.txt'), 'utf8').split('\n')[0]!;
    const r = await fetch(url + '/embed', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ inputs: [first], truncate: true }),
    });
    const [v] = (await r.json()) as number[][];
    const b16 = (readNpy(p('s16.npy')).data as Float32Array).subarray(0, 32),
      f32 = (readNpy(p('s.npy')).data as Float32Array).subarray(0, 32);
    v!.forEach((x, i) => assert.ok(Math.abs(x - b16[i]!) <= 1e-5));
    assert.ok(
      f32.some((x, i) => Math.abs(x - b16[i]!) > 1e-5),
      'the bf16 vectors equal the fp32 ones',
    );
    const gone = new Promise((resolve) => s.once('exit', resolve));
    s.kill('SIGTERM');
    await gone;
  });

  test("cluster embed: a worker gives the embed command's vectors, at --precision bf16 too", async () => {
    let redis: LocalRedis | null = null;
    try {
      redis = await startLocalRedis(p('redis'), 0);
      const w = cliAsync(['worker', '--redis', redis.url, '--name', 'hf1', '--threads', '1']);
      children.push(w);
      await waitFor(w, /ready on/, 'worker');
      ok(['cluster', 'embed', '--model', model(), '--input', p('s.txt'), '-o', p('c.npy'), '--redis', redis.url, '--work', p('work'), '--shards', '2']);
      const a = readNpy(p('c.npy')).data as Float32Array,
        b = readNpy(p('s.npy')).data as Float32Array;
      let worst = 0;
      a.forEach((x, i) => {
        worst = Math.max(worst, Math.abs(x - b[i]!));
      });
      assert.ok(worst <= 1e-5, `cluster vs embed: ${worst}`);
      // --precision bf16 travels with the flow's jobs: the worker (started without it) answers as
      // xling embed --precision bf16 does, not with its fp32 model
      if (!existsSync(p('s16.npy'))) ok(['embed', '--model', model(), '--input', p('s.txt'), '-o', p('s16.npy'), '--precision', 'bf16']);
      ok([
        'cluster',
        'embed',
        '--model',
        model(),
        '--input',
        p('s.txt'),
        '-o',
        p('c16.npy'),
        '--redis',
        redis.url,
        '--work',
        p('work'),
        '--shards',
        '2',
        '--precision',
        'bf16',
      ]);
      const c16 = readNpy(p('c16.npy')).data as Float32Array,
        s16 = readNpy(p('s16.npy')).data as Float32Array;
      let worst16 = 0;
      c16.forEach((x, i) => {
        worst16 = Math.max(worst16, Math.abs(x - s16[i]!));
      });
      assert.ok(worst16 <= 1e-5, `cluster bf16 vs embed bf16: ${worst16}`);
      assert.ok(
        c16.some((x, i) => Math.abs(x - a[i]!) > 1e-5),
        'the bf16 flow gave the fp32 vectors',
      );
      const gone = new Promise((resolve) => w.once('exit', resolve));
      w.kill('SIGTERM');
      await gone;
    } finally {
      await redis?.stop();
    }
  });
});

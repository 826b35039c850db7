// xling import hf NAME: a model fetched by name from a local Hub (test/fixtures/hub-server.ts serves
// the BERT fixture the way the Hub does) into the Hugging Face cache layout, the same model as
// --from on the same files; then from the cache alone (HF_HUB_OFFLINE=1, the server stopped); and
// one-line errors for an unknown repository, revision or file, a short download and no network.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadSentenceEncoder } from '../../src/embed/model-dir.js';
import { readSafetensors, writeSafetensors } from '../../src/io/safetensors.js';
import { CliResult, mainJs, root } from '../fixtures/cli.js';
import { HubServer, startHubServer } from '../fixtures/hub-server.js';

const NAME = 'xling-test/tiny-bert';
let dir: string;
let hub: HubServer;
const p = (n: string) => join(dir, n);
const cacheDir = () => p('hf-home/hub');

/** `xling ...args` in a child process with the Hub's variables (the server answers meanwhile). */
function xling(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [mainJs, ...args], {
      cwd: root,
      env: { ...process.env, HF_ENDPOINT: hub.url, HF_HOME: p('hf-home'), HF_TOKEN: 'hf_test_token', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '',
      stderr = '';
    c.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    c.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

function ok(r: CliResult, what: string): CliResult {
  assert.equal(r.status, 0, `${what}: ${r.stderr}`);
  return r;
}

/** A failure (exit 1, no stack trace) said in one line that matches re (after `lines - 1` lines of progress). */
function failsWith(r: CliResult, re: RegExp, lines = 1): void {
  assert.equal(r.status, 1, r.stderr);
  const all = r.stderr.trim().split('\n');
  assert.equal(all.length, lines, r.stderr);
  assert.match(all.at(-1)!.replace(/^xling import hf: /, ''), re);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
}

/** Every file of the model directory but config.json's record of where it came from. */
function modelFiles(d: string): Record<string, unknown> {
  const cfg = JSON.parse(readFileSync(join(d, 'config.json'), 'utf8')) as { model: { source?: string } };
  delete cfg.model.source;
  return { config: cfg, weights: readFileSync(join(d, 'model.safetensors')), tokenizer: readFileSync(join(d, 'tokenizer.json'), 'utf8') };
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'xling-hf-hub-'));
  // the BERT fixture, its weights file made large (an unused 9 MB tensor) to be fetched with a progress line
  cpSync(join(root, 'test/fixtures/hf/bert'), p('snap/tiny-bert'), { recursive: true });
  const w = p('snap/tiny-bert/model.safetensors');
  const st = readSafetensors(w);
  st.tensors['unused.padding'] = { dtype: 'F32', shape: [9 << 18], data: new Uint8Array(9 << 20) };
  writeSafetensors(w, st.tensors, st.metadata);
  cpSync(p('snap/tiny-bert'), p('snap/no-tokenizer'), { recursive: true });
  rmSync(p('snap/no-tokenizer/tokenizer.json'));
  hub = await startHubServer([
    { name: NAME, dir: p('snap/tiny-bert') },
    { name: 'xling-test/no-tokenizer', dir: p('snap/no-tokenizer') },
    { name: 'xling-test/lost-file', dir: p('snap/tiny-bert'), missing: ['tokenizer.json'] },
    { name: 'xling-test/short-file', dir: p('snap/tiny-bert'), short: { 'config.json': 10 } },
  ]);
});
after(async () => {
  await hub?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('xling import hf NAME through a local Hub', () => {
  let commit = '';
  test("the same model as --from on the same files; the cache in huggingface_hub's layout", async () => {
    const r = ok(await xling(['import', 'hf', NAME, '-o', p('by-name')]), 'import hf NAME');
    assert.equal(r.stdout, '', 'nothing on standard output');
    assert.match(r.stderr, /download model\.safetensors: .*\(100\.0%\)/, 'a progress line for the large file');
    ok(await xling(['import', 'hf', '--from', p('snap/tiny-bert'), '-o', p('from-dir')]), 'import hf --from');
    assert.deepEqual(modelFiles(p('by-name')), modelFiles(p('from-dir')));
    const source = (JSON.parse(readFileSync(p('by-name/config.json'), 'utf8')) as { model: { source: string } }).model.source;
    assert.equal(source, `${NAME} (bert)`);
    const sents = ['Guten Morgen.', 'Good morning.'];
    assert.deepEqual(loadSentenceEncoder(p('by-name')).embed(sents), loadSentenceEncoder(p('from-dir')).embed(sents));

    const repo = join(cacheDir(), 'models--xling-test--tiny-bert');
    commit = readFileSync(join(repo, 'refs/main'), 'utf8');
    assert.match(commit, /^[0-9a-f]{40}$/);
    const snap = join(repo, 'snapshots', commit);
    assert.ok(existsSync(join(snap, 'config.json')));
    // snapshot files are relative links into blobs/, named by the git oid or (LFS) the sha256
    assert.ok(lstatSync(join(snap, 'config.json')).isSymbolicLink());
    assert.match(readlinkSync(join(snap, 'model.safetensors')), /^\.\.\/\.\.\/blobs\/[0-9a-f]{64}$/);
    assert.match(readlinkSync(join(snap, '1_Pooling/config.json')), /^\.\.\/\.\.\/\.\.\/blobs\/[0-9a-f]{40}$/);
    // only what the import reads: not the fixture's reference vectors
    assert.deepEqual(readdirSync(snap).sort(), [
      '1_Pooling',
      '2_Dense',
      'config.json',
      'config_sentence_transformers.json',
      'model.safetensors',
      'modules.json',
      'sentence_bert_config.json',
      'tokenizer.json',
    ]);
    assert.ok(
      hub.requests.filter((q) => q.url.startsWith('/api/')).every((q) => q.auth === 'Bearer hf_test_token'),
      'HF_TOKEN is sent',
    );
  });

  test('again: the cached files are reused (nothing downloaded), by --revision COMMIT too', async () => {
    const before = hub.requests.length;
    ok(await xling(['import', 'hf', NAME, '--revision', commit, '-o', p('again')]), 'import hf --revision');
    assert.deepEqual(modelFiles(p('again')), modelFiles(p('from-dir')));
    assert.deepEqual(
      hub.requests.slice(before).filter((q) => /\/resolve\/|\/cdn\//.test(q.url)),
      [],
    );
  });

  test('unknown repository, revision or file, a short download: one line naming what failed, exit 1', async () => {
    failsWith(await xling(['import', 'hf', 'xling-test/nope', '-o', p('x')]), /^xling-test\/nope: no such repository at http:\/\/127\.0\.0\.1:\d+ /);
    failsWith(await xling(['import', 'hf', NAME, '--revision', 'v9', '-o', p('x')]), /^xling-test\/tiny-bert@v9: no such revision/);
    failsWith(await xling(['import', 'hf', 'xling-test/lost-file', '-o', p('x')]), /^xling-test\/lost-file: tokenizer\.json: no such file in the repository/);
    failsWith(await xling(['import', 'hf', 'xling-test/no-tokenizer', '-o', p('x')]), /^xling-test\/no-tokenizer: no tokenizer\.json/);
    failsWith(
      await xling(['import', 'hf', 'xling-test/short-file', '-o', p('x')]),
      /^xling-test\/short-file: config\.json: 404 bytes received, the Hub lists 414$/,
      2,
    );
    failsWith(await xling(['import', 'hf', 'not a name', '-o', p('x')]), /not a Hugging Face model name/);
    assert.ok(!existsSync(p('x')), 'no partial output');
  });

  test('the server stopped: HF_HUB_OFFLINE=1 (or no answer) imports from the cache; nothing cached and no network: one line', async () => {
    await hub.close();
    const r = ok(await xling(['import', 'hf', NAME, '-o', p('offline')], { HF_HUB_OFFLINE: '1' }), 'offline import');
    assert.deepEqual(modelFiles(p('offline')), modelFiles(p('from-dir')));
    assert.match(r.stderr, /cached snapshot/);
    // online but the Hub unreachable: the cached snapshot of the revision, said on standard error
    const fb = ok(await xling(['import', 'hf', NAME, '-o', p('fallback')]), 'import with the Hub unreachable');
    assert.match(fb.stderr, /cannot reach http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\): the cached snapshot [0-9a-f]{40}/);
    assert.deepEqual(modelFiles(p('fallback')), modelFiles(p('from-dir')));
    failsWith(
      await xling(['import', 'hf', NAME, '-o', p('x')], { HF_HOME: p('empty-home') }),
      /^xling-test\/tiny-bert: cannot reach http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/,
    );
    failsWith(await xling(['import', 'hf', NAME, '-o', p('x')], { HF_HOME: p('empty-home'), HF_HUB_OFFLINE: '1' }), /^xling-test\/tiny-bert: not in the cache/);
  });
});

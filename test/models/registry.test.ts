// The registry of model kinds: reading and checking a model directory's config.json (its model
// shape and training configuration), loading it and embedding with it import the families'
// plug-ins alone, never their training code; a run imports the training module of its own family
// when it builds its task. What a process imports is recorded by a module resolution hook in a
// child process.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TrainConfig } from '../../src/models/family.js';
import { nativeAvailable } from '../../src/native.js';
import { createTask, familyKinds, getFamily } from '../../src/models/registry.js';
import { mainJs, root } from '../fixtures/cli.js';

/** Modules of training code: a family's training module and what only training needs. */
const TRAINING = /\/dist\/src\/(models\/[^/]+\/(train|task|loss|negatives|skipgram)|nn\/optim|train-data\/examples|mine\/scorer\/word-align\/[^/]+)\.js$/;

const HOOKS = `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  if (r.url.startsWith('file:')) appendFileSync(process.env.XLING_TEST_IMPORTS, r.url + '\\n');
  return r;
}
`;

describe('model registry', () => {
  let dir = '',
    hooks = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'xling-registry-'));
    hooks = join(dir, 'hooks.mjs');
    writeFileSync(hooks, `import { register } from 'node:module';\nregister(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOKS)}`)});\n`);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** Runs node with args, its imports recorded: the imported files, in order, with the lines the script marks ('#…'). */
  function imports(args: string[]): string[] {
    const log = join(dir, 'imports.txt');
    writeFileSync(log, '');
    const r = spawnSync(process.execPath, ['--import', hooks, ...args], { encoding: 'utf8', cwd: root, env: { ...process.env, XLING_TEST_IMPORTS: log } });
    assert.equal(r.status, 0, r.stderr);
    return readFileSync(log, 'utf8').split('\n').filter(Boolean);
  }

  it('xling embed with the default model imports no training code', () => {
    const input = join(dir, 'small.txt');
    writeFileSync(input, 'Open the file\nDatei öffnen\n');
    const seen = imports([mainJs, 'embed', '--input', input, '-o', join(dir, 'v.npy'), '--quiet']);
    assert.ok(
      seen.some((u) => u.endsWith('/dist/src/models/registry.js')),
      'the registry was imported',
    );
    assert.deepEqual(
      seen.filter((u) => TRAINING.test(u)),
      [],
    );
  });

  it("checking every family's configuration and loading a model import no training code; building a task imports its family's", () => {
    const script = join(dir, 'check.mjs');
    const dist = join(root, 'dist', 'src');
    writeFileSync(
      script,
      `import { appendFileSync } from 'node:fs';
const mark = (m) => appendFileSync(process.env.XLING_TEST_IMPORTS, '#' + m + '\\n');
const { parseConfig } = await import(${JSON.stringify(join(dist, 'models', 'config.js'))});
const { readModelConfig, loadSentenceEncoder } = await import(${JSON.stringify(join(dist, 'embed', 'model-dir.js'))});
const { createTask, familyKinds, getFamily } = await import(${JSON.stringify(join(dist, 'models', 'registry.js'))});
for (const kind of familyKinds()) parseConfig({ model: kind }, kind + '.json');
readModelConfig(${JSON.stringify(join(root, 'models', 'default'))});
${nativeAvailable() ? `loadSentenceEncoder(${JSON.stringify(join(root, 'models', 'default'))}).embed(['Open the file']);` : ''}
mark('loaded');
${
  nativeAvailable()
    ? `const cfg = parseConfig({ model: 'dual', features: { buckets: 64, dim: 8 }, encoder: { outDim: 8 } }, 'dual.json');
const ids = [Int32Array.of(1, 2), Int32Array.of(3)];
await createTask(cfg, getFamily('dual').fixedTokenizer(cfg), { langs: ['de', 'en'], rows: 2, ids: new Map([['de', ids], ['en', ids]]) }, () => {});
mark('dual task');`
    : ''
}
`,
    );
    const seen = imports([script]);
    const at = seen.indexOf('#loaded');
    assert.ok(at > 0, 'the script ran to its mark');
    assert.deepEqual(
      seen.slice(0, at).filter((u) => TRAINING.test(u)),
      [],
    );
    if (!nativeAvailable()) return;
    const then = seen.slice(at, seen.indexOf('#dual task'));
    assert.ok(
      then.some((u) => u.endsWith('/dist/src/models/dual/train.js')),
      'the dual family’s training module is imported by its task',
    );
    assert.ok(!then.some((u) => /\/models\/(laser|jmt)\/train\.js$/.test(u)), 'no other family’s training module');
  });

  it('a kind that is imported or unknown has no training task; the error names the kinds that train', async () => {
    assert.deepEqual(familyKinds(), ['laser', 'dual', 'jmt']);
    const corpus = { langs: [], rows: 0, ids: new Map() };
    await assert.rejects(
      createTask({ model: 'hf-bert' } as TrainConfig, undefined as never, corpus, () => {}),
      /model: model kind "hf-bert" is imported, not trained from scratch \(trainable: laser, dual, jmt\)/,
    );
    assert.throws(() => getFamily('nope', 'c.json'), /c\.json: unknown model kind "nope" \(known: laser, dual, jmt\)/);
  });
});

// Installing the package where the native backend cannot be built: `npm pack`, then `npm install`
// of the tarball into an empty project with XLING_SKIP_NATIVE=1 (what a machine without libtorch
// gets: the install script skips the build and exits 0). The installed CLI embeds with the default
// model on the portable runtime (the native path's vectors), refuses train with the one-line
// message, and `import('xling/lite')` embeds with the default model. npm takes the dependencies from
// its cache where it has them (--prefer-offline), else from the registry.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readNpy } from '../src/io/npy.js';
import { devColumn, mainJs, root } from './fixtures/cli.js';

const maxDiff = (a: Float32Array, b: Float32Array) => {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
};
// no variable of this process's own set-up leaks into the installed package's runs
const { XLING_SKIP_NATIVE: _skip, XLING_ADDON: _addon, ...baseEnv } = process.env;
const npmEnv = { ...baseEnv, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };

function sh(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = npmEnv) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', cwd, env, maxBuffer: 1 << 26 });
  return { status: r.status, stdout: r.stdout ?? '', stderr: (r.stderr ?? '') + (r.error ? String(r.error) : '') };
}

describe('npm install of the packed package without the native backend', { timeout: 600_000 }, () => {
  let dir = '',
    project = '',
    input = '';
  const sents = [...devColumn('de').slice(0, 30), ...devColumn('zh').slice(0, 30), 'Open the file'];
  before(() => {
    assert.ok(existsSync(join(root, 'models/default/config.json')), 'models/default is missing: the package ships it');
    dir = mkdtempSync(join(tmpdir(), 'xling-install-'));
    const t0 = performance.now();
    const pack = sh('npm', ['pack', '--pack-destination', dir, '--silent'], root);
    assert.equal(pack.status, 0, pack.stderr);
    const tarball = join(dir, pack.stdout.trim().split('\n').pop()!);
    assert.ok(existsSync(tarball), pack.stdout);
    const t1 = performance.now();
    project = join(dir, 'project');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'xling-install-test', version: '1.0.0', private: true }));
    const inst = sh('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', tarball], project, {
      ...npmEnv,
      XLING_SKIP_NATIVE: '1',
    });
    assert.equal(inst.status, 0, `npm install failed: ${inst.stderr}`);
    console.log(`# npm pack ${((t1 - t0) / 1000).toFixed(1)} s, npm install ${((performance.now() - t1) / 1000).toFixed(1)} s`);
    input = join(dir, 'in.txt');
    writeFileSync(input, sents.join('\n') + '\n');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('installs without building the addon, with the default model in the package', () => {
    const pkg = join(project, 'node_modules/xling');
    assert.ok(existsSync(join(pkg, 'dist/src/cli/main.js')));
    assert.deepEqual(readdirSync(join(pkg, 'models/default')).sort(), ['README.md', 'config.json', 'lid.json', 'model.safetensors']);
    assert.ok(!existsSync(join(pkg, 'build/Release/xling.node')), 'the addon was built despite XLING_SKIP_NATIVE=1');
  });

  it('npx xling embed (no --model) runs on the portable runtime with the default model: the native vectors within the bound', () => {
    const out = join(dir, 'portable.npy');
    const r = sh('npx', ['--no-install', 'xling', 'embed', '--input', input, '-o', out], project, baseEnv);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /using the default model .*node_modules\/xling\/models\/default/);
    // the default model runs on the portable runtime whether or not the addon is there: nothing to say
    assert.doesNotMatch(r.stderr, /native backend|portable runtime/);
    const ref = join(dir, 'native.npy');
    const n = sh(process.execPath, [mainJs, 'embed', '--model', join(root, 'models/default'), '--input', input, '-o', ref, '--quiet'], root, baseEnv);
    assert.equal(n.status, 0, n.stderr);
    const d = maxDiff(readNpy(out).data as Float32Array, readNpy(ref).data as Float32Array);
    console.log(`# installed portable vs native: max |Δ| ${d.toExponential(2)}`);
    assert.ok(d <= 1e-5, String(d));
  });

  it('npx xling train exits 1 with one line naming the missing backend and how to add it', () => {
    const r = sh(
      'npx',
      [
        '--no-install',
        'xling',
        'train',
        '--config',
        join(project, 'node_modules/xling/configs/tiny-sample.json'),
        '--data',
        join(root, 'data/sample/gettext.train.tsv.gz'),
        '-o',
        join(dir, 'model'),
      ],
      project,
      baseEnv,
    );
    assert.equal(r.status, 1, r.stderr);
    assert.match(
      r.stderr,
      /^xling train: this needs xling's native backend \(libtorch \+ faiss\), which is not available \(the addon was not built: no build\/Release\/xling\.node\); .*apt install libtorch-dev libfaiss-dev.*npm rebuild xling/,
    );
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.ok(!existsSync(join(dir, 'model')) && !existsSync(join(dir, 'model.partial')));
  });

  it("import('xling/lite') embeds with the default model: the native vectors within the bound", () => {
    const script = `import('xling/lite').then(async (l) => { const m = await l.loadModel(); const v = await m.embed(${JSON.stringify(sents)}, { lang: null }); process.stdout.write(JSON.stringify(Array.from(v))); await m.close(); })`;
    const r = sh(process.execPath, ['-e', script], project, baseEnv);
    assert.equal(r.status, 0, r.stderr);
    const lite = Float32Array.from(JSON.parse(r.stdout) as number[]);
    const ref = join(dir, 'native-nc.npy');
    const n = sh(
      process.execPath,
      [mainJs, 'embed', '--model', join(root, 'models/default'), '--input', input, '-o', ref, '--no-center', '--quiet'],
      root,
      baseEnv,
    );
    assert.equal(n.status, 0, n.stderr);
    const d = maxDiff(lite, readNpy(ref).data as Float32Array);
    console.log(`# installed xling/lite vs native: max |Δ| ${d.toExponential(2)}`);
    assert.ok(d <= 1e-5, String(d));
  });
});

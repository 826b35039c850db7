// The npm package's contents (`npm pack --dry-run --json`): what a user needs and nothing else.
// In it: the compiled library and CLI with their types (no source maps: they point at src/*.ts,
// which is not shipped), every package.json entry point (main, types, bin, each "exports" target,
// each with its types), the browser bundle and its example page, the default model, the training
// configs, the built web explorer, and what building the addon takes (binding.gyp, native/, and the
// scripts that the install step, binding.gyp and those scripts name, transitively). Not in it:
// compiled tests or benchmarks, test data, sources of what is shipped built, experiment scripts,
// build outputs of the addon, compiled modules whose source is gone. Under 40 MB unpacked, most of
// it the default model. (Installing from the tarball is another test's.)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { root } from './fixtures/cli.js';

interface PackFile {
  path: string;
  size: number;
}
interface Pack {
  files: PackFile[];
  size: number;
  unpackedSize: number;
  entryCount: number;
}

const MB = 1024 * 1024;
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  main: string;
  types: string;
  bin: Record<string, string>;
  engines?: { node?: string };
  exports: Record<string, unknown>;
  scripts: Record<string, string>;
};
const rel = (p: string) => p.replace(/^\.\//, '');

/** Every target of an "exports" entry (conditions nested), and whether each object of conditions with a default has its types. */
function targets(entry: unknown, out: { files: string[]; untyped: string[] }, at: string): void {
  if (typeof entry === 'string') {
    out.files.push(rel(entry));
    return;
  }
  const o = entry as Record<string, unknown>;
  if ('default' in o && typeof o.types !== 'string') out.untyped.push(at);
  for (const [k, v] of Object.entries(o)) targets(v, out, `${at}.${k}`);
}

/** The files of scripts/ that these texts name ('scripts/x.mjs', './x.cjs', join('scripts', 'x.mjs')), existing ones only. */
function scriptsNamed(texts: string[]): string[] {
  const names = new Set(readdirSync(join(root, 'scripts')));
  const out = new Set<string>();
  for (const t of texts) for (const m of t.matchAll(/['"/]([\w.-]+\.(?:mjs|cjs|js))\b/g)) if (names.has(m[1]!)) out.add(`scripts/${m[1]}`);
  return [...out];
}

describe('the npm package (npm pack --dry-run)', () => {
  let pack: Pack, files: Set<string>;
  before(() => {
    // what the build makes and the tarball ships: the browser bundle (fast), the explorer if not built yet
    for (const [script, made] of [
      ['scripts/build-browser.mjs', 'dist/browser/xling-lite.js'],
      ['scripts/build-web.mjs', 'dist/web/app.js'],
    ] as const) {
      if (script.endsWith('browser.mjs') || !existsSync(join(root, made))) {
        const b = spawnSync(process.execPath, [script], { cwd: root, encoding: 'utf8' });
        assert.equal(b.status, 0, `${script}: ${b.stderr}`);
      }
    }
    const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8', maxBuffer: 1 << 26 });
    assert.equal(r.status, 0, `npm pack --dry-run failed: ${r.stderr}`);
    pack = (JSON.parse(r.stdout) as Pack[])[0]!;
    files = new Set(pack.files.map((f) => f.path));
  });

  it('holds every entry point of package.json, each "exports" entry with its types, and says which Node it needs', () => {
    assert.ok(pkg.engines?.node, 'engines.node');
    const out = { files: [] as string[], untyped: [] as string[] };
    for (const [k, v] of Object.entries(pkg.exports)) {
      targets(v, out, k);
      if (typeof v === 'string') out.untyped.push(k);
    }
    assert.deepEqual(out.untyped, [], 'every exports entry has types');
    for (const f of [rel(pkg.main), rel(pkg.types), ...Object.values(pkg.bin).map(rel), ...out.files])
      assert.ok(files.has(f), `${f} (named by package.json) is in the package`);
    assert.ok(
      out.files.includes('dist/browser/xling-lite.js') && out.files.includes('dist/src/lite/browser.d.ts'),
      'the browser bundle is exported with its types',
    );
    for (const f of ['package.json', 'README.md', ...['LICENSE', 'LICENSE.md'].filter((l) => existsSync(join(root, l)))]) assert.ok(files.has(f), f);
  });

  it('holds the browser bundle and its example, the default model, the configs and the built explorer', () => {
    const want = [
      'dist/browser/xling-lite.js',
      'examples/browser/index.html',
      'examples/browser/main.js',
      'examples/browser/style.css',
      'examples/browser/README.md',
      'models/default/config.json',
      'models/default/model.safetensors',
      'models/default/lid.json',
      'dist/web/index.html',
      'dist/web/app.js',
      'dist/src/lite/index.js',
      'dist/src/lite/index.d.ts',
      'dist/src/lite/load.js',
      'dist/src/lite/model.js',
      'dist/src/lite/worker.js',
      ...readdirSync(join(root, 'configs')).map((f) => `configs/${f}`),
    ];
    for (const f of want) assert.ok(files.has(f), `${f} is in the package`);
  });

  it('holds what building the addon takes: binding.gyp, its sources, native/, the scripts the install step and binding.gyp name (transitively)', () => {
    const gyp = readFileSync(join(root, 'binding.gyp'), 'utf8');
    assert.ok(files.has('binding.gyp'));
    for (const m of gyp.matchAll(/"(native\/[^"]+)"/g)) assert.ok(files.has(m[1]!), `${m[1]} (a source in binding.gyp)`);
    for (const f of readdirSync(join(root, 'native'))) assert.ok(files.has(`native/${f}`), `native/${f}`);
    // the scripts npm runs at install, those binding.gyp runs, and every script they name, to a fixed point
    const life = ['preinstall', 'install', 'postinstall'].map((k) => pkg.scripts[k] ?? '');
    let need = scriptsNamed([...life, gyp, pkg.scripts['build:native'] ?? '']);
    assert.ok(need.includes('scripts/build-native.mjs') && need.includes('scripts/gyp-flags.cjs'), need.join(' '));
    for (let grown = true; grown; ) {
      const more = scriptsNamed(need.map((f) => readFileSync(join(root, f), 'utf8'))).filter((f) => !need.includes(f));
      grown = more.length > 0;
      need = need.concat(more);
    }
    for (const f of need) assert.ok(files.has(f), `${f} (needed to build the addon) is in the package`);
    // and no other script: experiments, fixtures' generators, the set-up of a checkout, builds of what ships built
    const others = [...files].filter((f) => f.startsWith('scripts/') && !need.includes(f));
    assert.deepEqual(others, [], 'scripts that building the addon does not need');
  });

  it('holds no tests, benchmarks, test data, sources of what ships built, source maps, build outputs or stale modules', () => {
    const banned = [
      /^dist\/(test|bench)\//,
      /^(test|bench|data|src|web|assembly|docs|runs|build|node_modules|test-output)\//,
      /\.map$/,
      /\.tsbuildinfo$/,
      /\.py$/,
      /\.node$/,
      /(^|\/)\.git\//,
    ];
    const bad = [...files].filter((f) => banned.some((re) => re.test(f)));
    assert.deepEqual(bad, [], 'files a user does not need');
    // every compiled module comes from a source of today (a module whose .ts was removed or moved is not shipped)
    const stale = [...files]
      .filter((f) => f.startsWith('dist/src/') && /\.(js|d\.ts)$/.test(f))
      .filter((f) => !existsSync(join(root, f.replace(/^dist\//, '').replace(/(\.d)?\.ts$|\.js$/, '.ts'))));
    assert.deepEqual(stale, [], 'compiled modules without a source');
  });

  it('is under 40 MB unpacked, most of it the default model, itself at most 32 MB', () => {
    const model = pack.files.filter((f) => f.path.startsWith('models/default/')).reduce((s, f) => s + f.size, 0);
    const dist = pack.files.filter((f) => f.path.startsWith('dist/')).reduce((s, f) => s + f.size, 0);
    console.log(
      `# ${pack.entryCount} files, ${(pack.unpackedSize / MB).toFixed(1)} MB unpacked (the default model ${(model / MB).toFixed(1)} MB, dist/ ${(dist / MB).toFixed(1)} MB), tarball ${(pack.size / MB).toFixed(1)} MB`,
    );
    assert.ok(pack.unpackedSize < 40 * MB, `${pack.unpackedSize} bytes`);
    assert.ok(model > pack.unpackedSize / 2, 'the default model is most of it');
    assert.ok(model <= 32e6, `the default model is ${model} bytes: over its budget of 32 MB (10^6 bytes each)`);
  });
});

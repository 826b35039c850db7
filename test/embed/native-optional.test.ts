// The native backend is optional: importing the library and the CLI needs no addon, a native-only
// capability throws NativeBackendMissing (the CLI: exit 1 with its one line), xling embed runs
// bag-of-n-grams models on the portable runtime (xling/lite's model) with the native path's vectors
// whether or not the addon is there, commands default to the
// package's models/default, and the install script skips the build with one line where libtorch
// or faiss is missing. XLING_SKIP_NATIVE=1 makes this process's children behave as without the addon.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { exportEncoder } from '../../src/embed/model-dir.js';
import { readNpy } from '../../src/io/npy.js';
import { loadModel } from '../../src/lite/index.js';
import { devColumn, mainJs, root, tinyDualModel } from '../fixtures/cli.js';
import { nativeEmbed, ReferenceOptions } from '../fixtures/native-reference.js';

const DEFAULT_MODEL = join(root, 'models/default');
const SKIP = { XLING_SKIP_NATIVE: '1' };

function run(args: string[], env: Record<string, string> = {}, cwd = root) {
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', cwd, env: { ...process.env, ...env }, maxBuffer: 1 << 26 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
const xling = (args: string[], env: Record<string, string> = {}) => run([mainJs, ...args], env);
const rows = (file: string) => readNpy(file).data as Float32Array;
const maxDiff = (a: Float32Array, b: Float32Array) => {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
};
/** The one-line message of a missing native backend: what is missing and the install line, no stack. */
function assertMissingMessage(stderr: string, cmd: string): void {
  assert.match(
    stderr,
    new RegExp(
      `^xling ${cmd}: this needs xling's native backend \\(libtorch \\+ faiss\\), which is not available \\(XLING_SKIP_NATIVE is set\\); .*apt install libtorch-dev libfaiss-dev.*npm rebuild xling`,
      'm',
    ),
    stderr,
  );
  assert.doesNotMatch(stderr, /\n\s+at |Error:|require\(/, stderr);
}

describe('the native backend is optional', () => {
  let dir = '',
    input = '',
    tiny = '';
  before(() => {
    assert.ok(existsSync(join(DEFAULT_MODEL, 'config.json')), `${DEFAULT_MODEL}: the default model is missing`);
    dir = mkdtempSync(join(tmpdir(), 'xling-native-'));
    input = join(dir, 'in.txt');
    writeFileSync(input, [...devColumn('de').slice(0, 40), ...devColumn('ja').slice(0, 40), '', 'Ünïcödé “quotes” — ﬁ'].join('\n') + '\n');
    const model = join(dir, 'tiny');
    tinyDualModel(dir, model);
    tiny = join(dir, 'tiny-export');
    exportEncoder(model, tiny);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('importing the library and the CLI needs no addon; a native capability throws NativeBackendMissing naming it', () => {
    const script = `
      const lib = await import(${JSON.stringify(join(root, 'dist/src/index.js'))});
      await import(${JSON.stringify(join(root, 'dist/src/cli/commands.js'))});
      const { fromArray } = await import(${JSON.stringify(join(root, 'dist/src/tensor/tensor.js'))});
      const { NativeBackendMissing } = await import(${JSON.stringify(join(root, 'dist/src/util/native-missing.js'))});
      try { fromArray(new Float32Array(4), [2, 2]); console.log('no error'); }
      catch (e) { console.log(e instanceof NativeBackendMissing, e.name, e.message); }
      console.log(Object.keys(lib).length > 0);`;
    const r = run(['--input-type=module', '-e', script], SKIP);
    assert.equal(r.status, 0, r.stderr);
    const [first, second] = r.stdout.trim().split('\n');
    assert.match(first!, /^true NativeBackendMissing this needs xling's native backend .*XLING_SKIP_NATIVE is set.*apt install libtorch-dev libfaiss-dev/);
    assert.equal(second, 'true');
  });

  it('xling embed without --model uses the default model (said once on stderr): the same vectors as --model models/default', () => {
    const a = join(dir, 'default.npy'),
      b = join(dir, 'given.npy');
    const r = xling(['embed', '--input', input, '-o', a]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr.split('\n').filter((l) => l.includes('using the default model')).length, 1, r.stderr);
    assert.ok(r.stderr.includes(DEFAULT_MODEL), r.stderr);
    assert.equal(xling(['embed', '--model', DEFAULT_MODEL, '--input', input, '-o', b, '--quiet']).status, 0);
    assert.deepEqual(rows(a), rows(b));
    // the option is no longer required; its help names the default
    assert.match(xling(['embed', '--help']).stdout, /--model DIR[\s\S]*default: the model that comes with xling/);
  });

  it("xling embed runs bag-of-n-grams models on the portable runtime, with the addon or without (nothing said): the native vectors within the export's bound", () => {
    const cases: [string, string[], ReferenceOptions, string, number][] = [
      // the default model: a product-quantised table (xling/lite's bound for pq: 1e-5)
      ['default', [], {}, DEFAULT_MODEL, 1e-5],
      [
        'default, forced centring per sentence, not normalised',
        ['--lang', 'auto-per-sentence', '--force-center', '--no-normalize'],
        { lang: 'auto-per-sentence', forceCenter: true, normalize: false },
        DEFAULT_MODEL,
        1e-5,
      ],
      // an fp32 export centred with one language (centring divides by |v − μ|: 1e-6 before it)
      ['tiny fp32, de', ['--model', tiny, '--lang', 'de', '--force-center'], { lang: 'de', forceCenter: true }, tiny, 1e-5],
    ];
    for (const [what, args, o, model, bound] of cases) {
      const n = join(dir, 'with-addon.npy'),
        p = join(dir, 'portable.npy');
      const rn = xling(['embed', '--input', input, '-o', n, ...args]);
      assert.equal(rn.status, 0, rn.stderr);
      const rp = xling(['embed', '--input', input, '-o', p, ...args], SKIP);
      assert.equal(rp.status, 0, rp.stderr);
      for (const r of [rn, rp]) assert.doesNotMatch(r.stderr, /portable runtime|native backend/);
      assert.deepEqual(rows(p), rows(n), what);
      const d = maxDiff(rows(p), nativeEmbed(model, input, o));
      console.log(`# ${what}: max |Δ| portable vs native ${d.toExponential(2)}`);
      assert.ok(d <= bound, `${what}: ${d}`);
    }
    // --docs and a quantised output go through the same path
    const docs = join(dir, 'docs.tsv');
    writeFileSync(docs, 'a\tGuten Morgen\na\tWie geht es?\nb\tDatei öffnen\n');
    const rd = xling(['embed', '--docs', '--input', docs, '-o', join(dir, 'docs.npy'), '--quiet'], SKIP);
    assert.equal(rd.status, 0, rd.stderr);
    assert.deepEqual(readNpy(join(dir, 'docs.npy')).shape, [2, 512]);
    const rq = xling(['embed', '--input', input, '-o', join(dir, 'q.npy'), '--dtype', 'ubinary', '--quiet'], SKIP);
    assert.equal(rq.status, 0, rq.stderr);
    // what only the native backend runs is refused with its message (bfloat16 inference)
    const rb = xling(['embed', '--input', input, '-o', join(dir, 'bf.npy'), '--precision', 'bf16', '--quiet'], SKIP);
    assert.equal(rb.status, 1);
    assert.match(rb.stderr, /--precision bf16/);
    assert.ok(!existsSync(join(dir, 'bf.npy')));
  });

  it('xling eval xsim (default model) with and without the addon: one error matrix', () => {
    const errors = (env: Record<string, string>, json: string) => {
      const r = xling(['eval', 'xsim', '--data', join(root, 'data/sample/gettext.dev.tsv.gz'), '--langs', 'de,en,ja,ru', '--json', json], env);
      assert.equal(r.status, 0, r.stderr);
      return { stderr: r.stderr, errors: (JSON.parse(readFileSync(json, 'utf8')) as { errors: number[][] }).errors };
    };
    // with the addon the products (4 languages × 1,000 rows) run on it; without, in TypeScript
    const n = errors({}, join(dir, 'xsim-native.json')),
      p = errors(SKIP, join(dir, 'xsim-portable.json'));
    assert.deepEqual(p.errors, n.errors);
  });

  it('without the addon, train, index build and search exit 1 with one line naming the backend and the install line, and write nothing', () => {
    const out = join(dir, 'out');
    const before = readdirSync(dir).sort();
    const cases: [string, string[]][] = [
      ['train', ['train', '--config', join(root, 'configs/tiny-sample.json'), '--data', join(root, 'data/sample/gettext.train.tsv.gz'), '-o', out]],
      ['index build', ['index', 'build', '--vectors', join(dir, 'default.npy'), '-o', join(out, 'x.faiss')]],
      ['search', ['search', '--base', join(dir, 'default.npy'), '--queries', join(dir, 'default.npy'), '-o', join(out, 'hits.tsv')]],
    ];
    for (const [cmd, args] of cases) {
      const r = xling(args, SKIP);
      assert.equal(r.status, 1, `${cmd}: ${r.stderr}`);
      assertMissingMessage(r.stderr, cmd);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
    assert.deepEqual(readdirSync(dir).sort(), before);
  });

  it('the install script skips the build with one line where libtorch or faiss is missing (exit 0), and on XLING_SKIP_NATIVE', () => {
    const script = join(root, 'scripts/install-native.mjs');
    let r = run([script], { LIBTORCH: join(dir, 'no-libtorch'), FAISS_HOME: join(dir, 'no-faiss') });
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stderr,
      /^xling: native backend not built: missing libtorch \(no .*no-libtorch.*\), faiss \(no libfaiss in .*no-faiss.*\)\. To add it: apt install libtorch-dev libfaiss-dev \(or set LIBTORCH \/ FAISS_HOME\), then `npm rebuild xling`\. xling embed, xling eval xsim and xling\/lite work without it/,
    );
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    r = run([script], SKIP);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /^xling: XLING_SKIP_NATIVE is set: the native backend \(libtorch \+ faiss\) is not built/);
  });

  it("xling/lite's loadModel() without a source loads the default model: the vectors of loadModel('models/default')", async () => {
    const sents = devColumn('fr').slice(0, 20);
    const a = await loadModel(),
      b = await loadModel(DEFAULT_MODEL);
    assert.equal(a.dim, b.dim);
    assert.deepEqual(await a.embed(sents), await b.embed(sents));
  });
});

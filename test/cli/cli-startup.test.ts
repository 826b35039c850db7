// What a command loads at start-up: the command table names every command (words and summary)
// without importing it, and only the command that runs is imported; a bag-of-n-grams model (the
// default one) embeds on the portable runtime, so that xling embed, eval xsim, mine and align with
// it never load the native addon (libtorch, faiss), and its vectors are those of the native embed
// path (test/fixtures/native-reference.ts) within 1e-5, whether or not the addon is there and on
// any number of threads; xling serve with it answers JSON without loading the addon, its numbers
// written as the addon writes them. What a process has loaded is read from /proc/self/maps when it exits.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { COMMAND_TABLE } from '../../src/cli/command-table.js';
import { readNpy } from '../../src/io/npy.js';
import { native, nativeAvailable } from '../../src/native.js';
import { devColumn, mainJs, root } from '../fixtures/cli.js';
import { maxAbsDiff, nativeEmbed } from '../fixtures/native-reference.js';

const DEFAULT_MODEL = join(root, 'models/default');
const HAS_MAPS = existsSync('/proc/self/maps');

describe('CLI start-up', () => {
  let dir = '',
    probe = '',
    small = '',
    large = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'xling-startup-'));
    // a module run before the CLI in the child: on exit, which of the native libraries are mapped
    probe = join(dir, 'probe.mjs');
    writeFileSync(
      probe,
      `import { readFileSync, writeFileSync } from 'node:fs';
process.on('exit', () => {
  const maps = readFileSync('/proc/self/maps', 'utf8');
  writeFileSync(process.env.XLING_TEST_MAPS, ['xling.node', 'libtorch'].filter((l) => maps.includes(l)).join(','));
});
`,
    );
    small = join(dir, 'small.txt');
    writeFileSync(small, ['Open the file', 'Datei öffnen', 'Ouvrir le fichier', '', 'ファイルを開く', 'Сохранить как…'].join('\n') + '\n');
    // more lines than the portable runtime encodes on the calling thread alone: its worker threads run too
    large = join(dir, 'large.txt');
    writeFileSync(large, [...devColumn('de').slice(0, 300), ...devColumn('en').slice(0, 300), ...devColumn('ja').slice(0, 100)].join('\n') + '\n');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** Runs xling with args; its status, stderr and the native libraries it had loaded when it exited. */
  function xling(args: string[], env: Record<string, string> = {}) {
    const maps = join(dir, 'maps.txt');
    rmSync(maps, { force: true });
    const r = spawnSync(process.execPath, ['--import', probe, mainJs, ...args], {
      encoding: 'utf8',
      cwd: root,
      env: { ...process.env, XLING_TEST_MAPS: maps, ...env },
    });
    const loaded = existsSync(maps) ? readFileSync(maps, 'utf8').split(',').filter(Boolean) : null;
    return { status: r.status, stdout: r.stdout, stderr: r.stderr, loaded };
  }

  it('the command table gives each command its spec’s words and summary, and loads it', async () => {
    const seen = new Set<string>();
    for (const e of COMMAND_TABLE) {
      const c = await e.load();
      assert.deepEqual(c.path, e.path);
      assert.equal(c.spec.summary, e.summary, e.path.join(' '));
      seen.add(e.path.join(' '));
    }
    assert.equal(seen.size, COMMAND_TABLE.length, 'a command is listed twice');
  });

  it('xling --help lists every command without loading the addon', { skip: !HAS_MAPS }, () => {
    const r = xling(['--help']);
    assert.equal(r.status, 0, r.stderr);
    for (const e of COMMAND_TABLE)
      assert.match(r.stdout, new RegExp(`xling ${e.path.join(' ')} +${e.summary.slice(0, 20).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    assert.deepEqual(r.loaded, []);
  });

  it('embed, eval xsim, mine and align with the default model load neither the addon nor libtorch; a search does', { skip: !HAS_MAPS }, () => {
    const v = join(dir, 'v.npy');
    const en = join(dir, 'en.txt'),
      de = join(dir, 'de.txt');
    writeFileSync(en, devColumn('en').slice(0, 40).join('\n') + '\n');
    writeFileSync(de, devColumn('de').slice(0, 40).join('\n') + '\n');
    const xsim = join(dir, 'xsim.tsv');
    writeFileSync(
      xsim,
      [
        'en\tde',
        ...devColumn('en')
          .slice(0, 30)
          .map((s, i) => `${s}\t${devColumn('de')[i]}`),
      ].join('\n') + '\n',
    );
    const runs: [string, string[]][] = [
      ['embed', ['embed', '--input', small, '-o', v]],
      ['eval xsim', ['eval', 'xsim', '--data', xsim, '--min-rows', '20']],
      ['mine', ['mine', '--src', de, '--trg', en, '--src-lang', 'de', '--trg-lang', 'en', '-o', join(dir, 'mined.tsv')]],
      ['align', ['align', '--src', de, '--trg', en, '-o', join(dir, 'aligned.txt')]],
    ];
    for (const [what, args] of runs) {
      const r = xling(args);
      assert.equal(r.status, 0, `${what}: ${r.stderr}`);
      assert.deepEqual(r.loaded, [], `${what} loaded ${r.loaded}`);
    }
    // the probe sees the addon where a command needs it (faiss's exact search)
    const s = xling(['search', '--base', v, '--queries', v, '-o', join(dir, 'hits.tsv')]);
    assert.equal(s.status, 0, s.stderr);
    assert.ok(s.loaded?.includes('xling.node'), `search loaded ${s.loaded}`);
  });

  it('xling serve with the default model answers JSON without loading the addon, in the addon’s number text', { skip: !HAS_MAPS }, async () => {
    const maps = join(dir, 'serve-maps.txt');
    rmSync(maps, { force: true });
    const child = spawn(process.execPath, ['--import', probe, mainJs, 'serve', '--port', '0', '--host', '127.0.0.1'], {
      cwd: root,
      env: { ...process.env, XLING_TEST_MAPS: maps },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    try {
      let err = '';
      const url = await new Promise<string>((resolve, reject) => {
        child.stderr.on('data', (b: Buffer) => {
          err += b.toString();
          const m = /listening on (http:\/\/\S+)/.exec(err);
          if (m) resolve(m[1]!);
        });
        child.on('exit', (code) => reject(new Error(`xling serve exited (${code}): ${err}`)));
      });
      const r = await fetch(`${url}/embed`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ inputs: ['Datei öffnen', 'Open the file'] }),
      });
      assert.equal(r.status, 200);
      const text = await r.text();
      const rows = JSON.parse(text) as number[][];
      assert.equal(rows.length, 2);
      if (nativeAvailable()) {
        const v = Float32Array.from(rows.flat());
        assert.equal((native.format.joinRows!(v, rows[0]!.length, ['[', ',', ']']) as Buffer).toString(), text);
      }
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    assert.equal(readFileSync(maps, 'utf8'), '');
  });

  it("xling embed's vectors with the default model are the native embed path's (≤ 1e-5): with and without the addon, on 1 thread and on workers", () => {
    const cases: [string, string, string[], { lang?: string; forceCenter?: boolean; normalize?: boolean }][] = [
      ['small input, language identified', small, [], {}],
      ['worker threads, language identified', large, [], {}],
      [
        'worker threads, each line identified, forced centring, not normalised',
        large,
        ['--lang', 'auto-per-sentence', '--force-center', '--no-normalize'],
        { lang: 'auto-per-sentence', forceCenter: true, normalize: false },
      ],
      ['worker threads, de', large, ['--lang', 'de'], { lang: 'de' }],
    ];
    for (const [what, input, args, o] of cases) {
      const ref = nativeEmbed(DEFAULT_MODEL, input, o);
      const out = (name: string, extra: string[], env: Record<string, string> = {}) => {
        const f = join(dir, `${name}.npy`);
        const r = xling(['embed', '--input', input, '-o', f, '--quiet', ...args, ...extra], env);
        assert.equal(r.status, 0, `${what}: ${r.stderr}`);
        assert.doesNotMatch(r.stderr, /native backend|portable runtime/);
        return readNpy(f).data as Float32Array;
      };
      const cli = out('cli', []);
      const d = maxAbsDiff(cli, ref);
      console.log(`# ${what}: max |Δ| CLI vs native ${d.toExponential(2)}`);
      assert.ok(d <= 1e-5, `${what}: ${d}`);
      // one thread computes the same bits as the workers, and so do chunks spread over two workers
      // and the calling thread (rows in input order; a third worker idle, which must not keep the
      // process alive); without the addon the same vectors
      assert.deepEqual(out('one', ['--threads', '1']), cli, what);
      assert.deepEqual(out('chunks', ['--threads', '4', '--chunk', '256']), cli, what);
      assert.deepEqual(out('skip', [], { XLING_SKIP_NATIVE: '1' }), cli, what);
    }
  });
});

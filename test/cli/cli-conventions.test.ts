// The CLI's conventions, table-driven over every command, with one tiny dual-encoder model shared
// by the table: `--json -` / `--svg -` put only the JSON or SVG on standard output (the summary
// goes to standard error) and JSON keys are snake_case; every command group lists its commands;
// `--version`, `xling help CMD`, suggestions for mistyped commands; `--input -` (and pipes,
// process substitution) for every text input, gzip by its bytes, an empty input as a (0, d)
// array; one output spelling (-o, --output, --out); missing output parents created (and removed
// again when the command fails); eval xsim refuses fewer than two languages; macro-F1 over the
// union of gold and predicted classes.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, describe, it } from 'node:test';
import { evaluate } from '../../src/classify/classifier.js';
import { commands } from '../../src/cli/commands.js';
import { runCli } from '../../src/cli/run.js';
import { kebab, longNames, parseArgs } from '../../src/util/args.js';
import { readNpy, writeNpy } from '../../src/io/npy.js';
import { Rng } from '../../src/util/rng.js';
import { cli, CliResult, devColumn, mainJs, root, TINY_DUAL, tinyDualModel } from '../fixtures/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'xling-cli-conventions-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const f = (name: string) => join(dir, name);

/** `xling ...args` with `input` on standard input. */
function cliIn(args: string[], input: string | Buffer): CliResult {
  const r = spawnSync(process.execPath, [mainJs, ...args], { input, encoding: 'utf8', cwd: root, maxBuffer: 1 << 26 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
/** `xling ...args` in this process (help, version, groups, and command lines refused before any work). */
async function inProcess(args: string[]): Promise<CliResult> {
  let stdout = '',
    stderr = '';
  const status = await runCli(args, {
    out: (t) => {
      stdout += t;
    },
    err: (t) => {
      stderr += t;
    },
  });
  return { status, stdout, stderr };
}
/** cli(), once per distinct command line (the table's runs are shared by its checks). */
const memo = new Map<string, CliResult>();
function cliOnce(args: string[]): CliResult {
  const key = JSON.stringify(args);
  if (!memo.has(key)) memo.set(key, cli(args));
  return memo.get(key)!;
}
function ok(r: CliResult, what: string): CliResult {
  assert.equal(r.status, 0, `${what}: exit ${r.status}\n${r.stderr}`);
  return r;
}

// one fixture for the whole table: a tiny model, 30 aligned sentences, a classifier, a graph
const model = f('model');
tinyDualModel(dir, model);
const n = 30;
const de = devColumn('de').slice(0, n),
  en = devColumn('en').slice(0, n),
  fr = devColumn('fr').slice(0, n);
const text = (lines: string[]) => lines.join('\n') + '\n';
writeFileSync(f('de.txt'), text(de));
writeFileSync(f('en.txt'), text(en));
writeFileSync(f('s.bucc'), text(de.map((s, i) => `de-${i}\t${s}`)));
writeFileSync(f('t.bucc'), text(en.map((s, i) => `en-${i}\t${s}`)));
writeFileSync(f('gold'), text(de.map((_, i) => `de-${i}\ten-${i}`)));
writeFileSync(f('ids'), text(de.map((_, i) => `id${i}`)));
writeFileSync(f('nway.tsv'), text(['en\tde\tfr', ...en.map((s, i) => `${s}\t${de[i]}\t${fr[i]}`)]));
writeFileSync(f('docs-en.tsv'), text(en.map((s, i) => `${i % 2 ? 'net' : 'text'}\t${i}\t${s}`)));
writeFileSync(f('docs-de.tsv'), text(de.map((s, i) => `${i % 2 ? 'net' : 'text'}\t${i}\t${s}`)));
writeFileSync(f('docs.de-en.tsv'), text(de.map((s, i) => `d${i}\t${s}\t${en[i]}`)));
writeFileSync(f('labelled.tsv'), text(de.map((s, i) => `${s}\t${i % 2 ? en[(i + 3) % n] : en[i]}\t${i % 2 ? 0 : 1}`)));
{
  const rng = new Rng(3),
    d = 16;
  const v = Float32Array.from({ length: n * d }, () => rng.normal());
  writeNpy(f('a.npy'), v, [n, d]);
  writeNpy(
    f('b.npy'),
    v.map((x) => x + 0.1 * rng.normal()),
    [n, d],
  );
  writeNpy(f('q1.npy'), v.subarray(0, d), [1, d]);
}
ok(cli(['classify', 'train', '--model', model, '--data', f('docs-en.tsv'), '-o', f('clf'), '--epochs', '2']), 'classify train');
ok(cli(['graph', 'build', '--model', model, '--data', f('nway.tsv'), '--out', f('graph'), '--min-words', '0', '-k', '5', '--quiet']), 'graph build');

const bucc = ['--src', f('s.bucc'), '--trg', f('t.bucc'), '--gold', f('gold'), '--src-vectors', f('a.npy'), '--trg-vectors', f('b.npy')];
const xsim = ['--model', model, '--data', f('nway.tsv'), '--min-rows', '5'];
const probe = ['--model', model, '--data', f('nway.tsv'), '--langs', 'de,fr', '--sentences', '5', '--switch-langs', '1', '--rates', '0.2', '--quiet'];

/** Every command with a --json (and --svg) output, run with it on standard output. */
const jsonTable: { cmd: string[]; args: string[]; svg?: boolean }[] = [
  { cmd: ['eval', 'retrieval'], args: ['--src-vectors', f('a.npy'), '--trg-vectors', f('b.npy')] },
  { cmd: ['eval', 'retrieval'], args: ['--docs', f('docs.de-en.tsv'), '--src-lang', 'de', '--trg-lang', 'en', '--model', model] },
  { cmd: ['eval', 'xsim'], args: xsim, svg: true },
  { cmd: ['eval', 'bucc'], args: bucc, svg: true },
  { cmd: ['classify', 'eval'], args: ['--model', model, '--classifier', f('clf'), '--data', f('docs-de.tsv')], svg: true },
  { cmd: ['analyze', 'vocab'], args: ['--model', model, '--data', f('nway.tsv'), '--min-sentences', '5'], svg: true },
  { cmd: ['probe', 'code-switch'], args: probe, svg: true },
  { cmd: ['graph', 'stats'], args: ['--graph', f('graph')], svg: true },
  { cmd: ['graph', 'neighbours'], args: ['--graph', f('graph'), '#3'] },
  { cmd: ['graph', 'path'], args: ['--graph', f('graph'), '#3', '#7', '--undirected'] },
  { cmd: ['scorer', 'train'], args: ['--model', model, '--parallel', f('nway.tsv'), '--rows', '20', '-o', f('scorer')] },
  { cmd: ['search'], args: ['--base', f('b.npy'), '--queries', f('q1.npy'), '-k', '3'] },
  { cmd: ['scorer', 'score'], args: ['--input', f('labelled.tsv'), '--label-col', '3', '--model', model, '-o', f('labelled.scored.tsv')], svg: true },
];
/** Commands with --json that need a Redis queue (their --json - is tested in test/cluster/cluster.test.ts). */
const needsRedis = ['cluster status'];

const CAMEL = /^[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+$/;
function camelKeys(v: unknown, at = ''): string[] {
  if (Array.isArray(v)) return v.flatMap((x, i) => camelKeys(x, `${at}[${i}]`));
  if (v && typeof v === 'object') return Object.entries(v).flatMap(([k, x]) => [...(CAMEL.test(k) ? [`${at}.${k}`] : []), ...camelKeys(x, `${at}.${k}`)]);
  return [];
}

describe('CLI conventions: --json - and --svg -', () => {
  it('the table covers every command with a --json option', () => {
    const withJson = commands.filter((c) => 'json' in c.spec.options).map((c) => c.path.join(' '));
    assert.deepEqual([...new Set([...jsonTable.map((t) => t.cmd.join(' ')), ...needsRedis])].sort(), withJson.sort());
  });

  for (const t of jsonTable) {
    it(`xling ${t.cmd.join(' ')} --json -: standard output is only the JSON, with snake_case keys${t.svg ? '; --svg - only the SVG' : ''}`, async () => {
      const r = ok(cliOnce([...t.cmd, ...t.args, '--json', '-']), t.cmd.join(' '));
      const j = JSON.parse(r.stdout) as unknown;
      assert.deepEqual(camelKeys(j), [], 'JSON keys are snake_case');
      if (t.svg) {
        const s = ok(cli([...t.cmd, ...t.args, '--svg', '-']), t.cmd.join(' '));
        assert.match(s.stdout, /^<svg[\s\S]*<\/svg>\s*$/, 'standard output is one SVG document');
        const both = await inProcess([...t.cmd, ...t.args, '--svg', '-', '--json', '-']);
        assert.equal(both.status, 2, both.stderr);
        assert.match(both.stderr, /both write to standard output/);
      }
    });
  }

  it('the human summary still goes to standard output when the JSON goes to a file', () => {
    const r = ok(cliOnce(['eval', 'xsim', ...xsim, '--json', f('x.json')]), 'xsim');
    assert.match(r.stdout, /overall average: \d+\.\d\d%/);
    const j = JSON.parse(readFileSync(f('x.json'), 'utf8')) as { errors: (number | null)[][]; overall: number; row_avg: (number | null)[] };
    const values = j.errors.flat().filter((x): x is number => x !== null);
    assert.equal(values.length, 6, 'three languages: six pairs');
    assert.ok(
      values.every((x) => x >= 0 && x <= 1),
      'error rates as fractions',
    );
    const shown = Number(/overall average: ([\d.]+)%/.exec(r.stdout)![1]);
    assert.ok(Math.abs(100 * j.overall - shown) < 0.006, `JSON ${j.overall} vs table ${shown}%`);
  });

  it('graph neighbours --json FILE writes a file; the old bare --json (before the query too) still means standard output', () => {
    ok(cli(['graph', 'neighbours', '--graph', f('graph'), '#3', '--json', f('nb.json')]), 'neighbours --json FILE');
    const file = JSON.parse(readFileSync(f('nb.json'), 'utf8')) as { query: string; neighbours: unknown[] };
    assert.equal(file.query, '#3');
    const bare = ok(cli(['graph', 'neighbours', '--graph', f('graph'), '--json', '#3']), 'neighbours --json #3');
    assert.deepEqual(JSON.parse(bare.stdout), file);
    const path = ok(cli(['graph', 'path', '--graph', f('graph'), '--json', '#3', '#7', '--undirected']), 'path --json #3 #7');
    assert.deepEqual((JSON.parse(path.stdout) as { from: number; to: number }).from, 3);
  });
});

describe('CLI conventions: help, version, command groups, suggestions', () => {
  const groups = [...new Set(commands.filter((c) => c.path.length > 1).map((c) => c.path[0]!))];
  it('the groups include graph, eval, cluster, classify and index', () => {
    for (const g of ['graph', 'eval', 'cluster', 'classify', 'index']) assert.ok(groups.includes(g), g);
  });
  for (const g of groups) {
    it(`xling ${g} (alone, --help, help ${g}) lists its commands with exit 0`, async () => {
      const subs = commands.filter((c) => c.path[0] === g && c.path.length > 1).map((c) => c.path.join(' '));
      for (const args of [[g], [g, '--help'], [g, '-h'], ['help', g]]) {
        const r = ok(await inProcess(args), args.join(' '));
        for (const s of subs) assert.ok(r.stdout.includes(`xling ${s} `), `xling ${args.join(' ')}: ${s} missing\n${r.stdout}`);
      }
    });
  }

  it('--version / -V print the package version; xling help CMD is CMD --help', async () => {
    const v = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
    assert.equal(ok(cli(['--version']), '--version').stdout.trim(), `xling ${v}`);
    assert.equal(ok(await inProcess(['-V']), '-V').stdout.trim(), `xling ${v}`);
    assert.equal(ok(cli(['help', 'eval', 'xsim']), 'help eval xsim').stdout, ok(cli(['eval', 'xsim', '--help']), 'eval xsim --help').stdout);
    assert.match(ok(await inProcess(['help']), 'help').stdout, /xling embed /);
  });

  it('a mistyped command suggests the nearest one (exit 2)', async () => {
    for (const [typed, want] of [
      [['embd'], 'xling embed'],
      [['eval', 'xsm'], 'xling eval xsim'],
      [['graph', 'neighbors'], 'xling graph neighbours'],
      [['grph'], 'xling graph'],
      [['help', 'serv'], 'xling serve'],
    ] as const) {
      const r = await inProcess([...typed, '--model', model]);
      assert.equal(r.status, 2, r.stderr);
      assert.ok(r.stderr.includes(`did you mean '${want}'?`), `${typed.join(' ')}: ${r.stderr}`);
    }
  });
});

describe('CLI conventions: standard input and output', () => {
  const vectors = (file: string) => readNpy(file).data as Float32Array;

  /** Every text input: the command with the input given as a file and as `-`; the outputs must match. */
  const stdinTable: { name: string; args: (input: string) => string[]; file: string; out?: string }[] = [
    { name: 'embed --input', args: (i) => ['embed', '--model', model, '--input', i, '-o', 'OUT', '--quiet'], file: f('de.txt'), out: '.npy' },
    { name: 'mine --src', args: (i) => ['mine', '--src', i, '--trg', f('en.txt'), '--model', model, '-o', '-'], file: f('de.txt') },
    { name: 'mine --trg', args: (i) => ['mine', '--src', f('de.txt'), '--trg', i, '--model', model, '-o', '-'], file: f('en.txt') },
    { name: 'eval bucc --gold', args: (i) => ['eval', 'bucc', ...bucc.map((x) => (x === f('gold') ? i : x)), '--json', '-'], file: f('gold') },
    {
      name: 'eval retrieval --src-ids',
      args: (i) => ['eval', 'retrieval', '--src-vectors', f('a.npy'), '--trg-vectors', f('b.npy'), '--src-ids', i, '--trg-ids', f('ids'), '--json', '-'],
      file: f('ids'),
    },
    {
      name: 'eval retrieval --docs',
      args: (i) => ['eval', 'retrieval', '--docs', i, '--src-lang', 'de', '--trg-lang', 'en', '--model', model, '--json', '-'],
      file: f('docs.de-en.tsv'),
    },
    { name: 'eval xsim --data', args: (i) => ['eval', 'xsim', ...xsim.map((x) => (x === f('nway.tsv') ? i : x)), '--json', '-'], file: f('nway.tsv') },
    {
      name: 'classify eval --data',
      args: (i) => ['classify', 'eval', '--model', model, '--classifier', f('clf'), '--data', i, '--json', '-'],
      file: f('docs-de.tsv'),
    },
    {
      name: 'classify train --data',
      args: (i) => ['classify', 'train', '--model', model, '--data', i, '-o', 'OUT', '--epochs', '2'],
      file: f('docs-en.tsv'),
      out: '/weights.safetensors',
    },
    {
      name: 'analyze vocab --data',
      args: (i) => ['analyze', 'vocab', '--model', model, '--data', i, '--min-sentences', '5', '--json', '-'],
      file: f('nway.tsv'),
    },
    {
      name: 'probe code-switch --data',
      args: (i) => ['probe', 'code-switch', ...probe.map((x) => (x === f('nway.tsv') ? i : x)), '--json', '-'],
      file: f('nway.tsv'),
    },
    {
      name: 'graph build --data LANG=-',
      args: (i) => ['graph', 'build', '--model', model, '--data', `de=${i}`, '--out', 'OUT', '--min-words', '0', '-k', '3', '--quiet', '--factory', 'Flat'],
      file: f('de.txt'),
      out: '/neighbours.npy',
    },
  ];
  let k = 0;
  for (const t of stdinTable) {
    it(`${t.name} -: the same output as from the file`, () => {
      const outs = [0, 1].map(() => f(`stdin-${k++}${t.out?.startsWith('.') ? t.out : ''}`));
      const a = ok(t.out ? cli(t.args(t.file).map((x) => (x === 'OUT' ? outs[0]! : x))) : cliOnce(t.args(t.file)), `${t.name} FILE`);
      const b = ok(
        cliIn(
          t.args('-').map((x) => (x === 'OUT' ? outs[1]! : x)),
          readFileSync(t.file),
        ),
        `${t.name} -`,
      );
      if (t.out) {
        const [x, y] = outs.map((o) => readFileSync(t.out!.startsWith('/') ? o + t.out : o));
        assert.ok(x!.equals(y!), `${t.name}: outputs differ`);
      } else {
        // (a JSON that names its input names it '-')
        assert.equal(b.stdout, a.stdout.split(JSON.stringify(t.file)).join('"-"'));
        assert.ok(a.stdout.length > 0);
      }
    });
  }

  it('pipes and process substitution (/dev/fd/N) are read like files, even when read twice (language sample, then lines)', () => {
    const r = spawnSync(
      'bash',
      [
        '-c',
        `"${process.execPath}" "${mainJs}" embed --model "${model}" --input <(cat "${f('de.txt')}") -o "${f('psub.npy')}" && cat "${f('de.txt')}" | "${process.execPath}" "${mainJs}" embed --model "${model}" --input /dev/stdin -o "${f('pipe.npy')}"`,
      ],
      { encoding: 'utf8' },
    );
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /input language identified as/);
    ok(cli(['embed', '--model', model, '--input', f('de.txt'), '-o', f('file.npy'), '--quiet']), 'embed file');
    assert.deepEqual(vectors(f('psub.npy')), vectors(f('file.npy')));
    assert.deepEqual(vectors(f('pipe.npy')), vectors(f('file.npy')));
  });

  it('gzip is recognised by its bytes, not the file name', () => {
    writeFileSync(f('gz-named.txt'), gzipSync(readFileSync(f('de.txt'))));
    writeFileSync(f('plain-named.gz'), readFileSync(f('de.txt')));
    if (!existsSync(f('file.npy'))) ok(cli(['embed', '--model', model, '--input', f('de.txt'), '-o', f('file.npy'), '--quiet']), 'embed file');
    ok(cli(['embed', '--model', model, '--input', f('gz-named.txt'), '-o', f('g1.npy'), '--quiet']), 'gzip named .txt');
    ok(cli(['embed', '--model', model, '--input', f('plain-named.gz'), '-o', f('g2.npy'), '--quiet']), 'plain named .gz');
    assert.deepEqual(vectors(f('g1.npy')), vectors(f('file.npy')));
    assert.deepEqual(vectors(f('g2.npy')), vectors(f('file.npy')));
    // standard input, gzip-compressed
    ok(cliIn(['embed', '--model', model, '--input', '-', '-o', f('g3.npy'), '--quiet'], gzipSync(readFileSync(f('de.txt')))), 'gzip on stdin');
    assert.deepEqual(vectors(f('g3.npy')), vectors(f('file.npy')));
  });

  it('an empty input gives a (0, d) array (with --docs too: no ids)', () => {
    ok(cliIn(['embed', '--model', model, '--input', '-', '-o', f('e.npy')], ''), 'empty stdin');
    const e = readNpy(f('e.npy'));
    assert.deepEqual(e.shape, [0, 32]);
    writeFileSync(f('empty.txt'), '');
    ok(cli(['embed', '--model', model, '--input', f('empty.txt'), '--docs', '-o', f('ed.npy')]), 'empty --docs');
    assert.deepEqual(readNpy(f('ed.npy')).shape, [0, 32]);
    assert.equal(readFileSync(f('ed.npy.ids'), 'utf8'), '');
  });

  it('standard input is refused where it cannot be read (binary inputs, two inputs at once)', async () => {
    const two = await inProcess(['mine', '--src', '-', '--trg', '-', '--model', model, '-o', '-']);
    assert.equal(two.status, 2);
    assert.match(two.stderr, /--src and --trg both read standard input/);
    const bin = await inProcess(['eval', 'retrieval', '--src-vectors', '-', '--trg-vectors', f('b.npy')]);
    assert.equal(bin.status, 2);
    assert.match(bin.stderr, /--src-vectors -: only text inputs/);
  });
});

describe('CLI conventions: outputs', () => {
  it('one spelling: every output option is -o, --output, and --out is accepted', () => {
    for (const c of commands) {
      for (const key of ['out', 'output'] as const) {
        const d = c.spec.options[key];
        if (!d) continue;
        const names = longNames(key, d);
        assert.equal(names[0], 'output', `xling ${c.path.join(' ')}: shown as --${names[0]}`);
        assert.ok(names.includes('out'), `xling ${c.path.join(' ')}: --out accepted`);
        if (!Object.entries(c.spec.options).some(([k, o]) => k !== key && o.alias === 'o')) assert.equal(d.alias, 'o', `xling ${c.path.join(' ')}: -o`);
        const rest = (c.spec.positionals ?? []).filter((p) => p.required).map(() => 'x');
        for (const flag of ['--output', '--out', ...(d.alias ? [`-${d.alias}`] : [])]) {
          assert.equal(parseArgs(c.spec, [flag, 'X', ...rest, '--help'])[key], 'X', `xling ${c.path.join(' ')} ${flag}`);
        }
      }
    }
    // and the help shows it so
    assert.match(ok(cli(['train', '--help']), 'train --help').stdout, /-o, --output DIR[\s\S]*also --out/);
  });

  it('missing parent directories of outputs are created (classify train -o a/b/clf), before any work is refused', async () => {
    ok(cli(['classify', 'train', '--model', model, '--data', f('docs-en.tsv'), '-o', f('new/a/b/clf'), '--epochs', '2']), 'classify train into new parents');
    assert.ok(existsSync(f('new/a/b/clf/classifier.json')));
    // a parent that is a file: refused at once (usage error), nothing embedded
    const r = await inProcess(['classify', 'train', '--model', model, '--data', f('docs-en.tsv'), '-o', f('de.txt/clf')]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /de\.txt is not a directory/);
    assert.doesNotMatch(r.stderr, /\[classify\]/);
    // a command that fails after the check leaves no directory it created
    writeFileSync(f('bad.txt'), Buffer.from([0x61, 0xc3, 0x28, 0x0a]));
    const bad = cli(['embed', '--model', model, '--input', f('bad.txt'), '-o', f('gone/x/v.npy')]);
    assert.equal(bad.status, 1, bad.stderr);
    assert.ok(!existsSync(f('gone')), 'the created parents are removed again');
    mkdirSync(f('kept'));
    cli(['embed', '--model', model, '--input', f('bad.txt'), '-o', f('kept/x/v.npy')]);
    assert.ok(existsSync(f('kept')), 'a directory that existed before stays');
  });
});

describe('CLI conventions: one process writes an output at a time', () => {
  // OUT.lock as a running xling process leaves it: this test process is alive, and not the command's
  const held = (out: string, pid = process.pid) => writeFileSync(`${out}.lock`, JSON.stringify({ pid, host: hostname(), started: 'then', command: 'xling …' }));
  const refused = (r: CliResult, flag: string, out: string) => {
    assert.equal(r.status, 1, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(
        `${flag} \\S*${out.split('/').at(-1)!.replace(/\./g, '\\.')} is being written by another process \\(pid ${process.pid}, since then: xling …\\)`,
      ),
    );
  };
  it('train, distill, scorer train and scorer score refuse an output that a running process writes, before any work', () => {
    writeFileSync(f('tiny.json'), JSON.stringify(TINY_DUAL));
    held(f('busy-model'));
    let r = cli(['train', '--config', f('tiny.json'), '--data', f('nway.tsv'), '--out', f('busy-model')]);
    refused(r, '--out', 'busy-model');
    assert.ok(!existsSync(f('busy-model.partial')) && !existsSync(f('busy-model')));
    r = cli(['distill', '--teacher', model, '--student-config', 'configs/student-64mb.json', '--parallel', f('nway.tsv'), '--out', f('busy-model')]);
    refused(r, '--out', 'busy-model');
    assert.ok(!existsSync(f('busy-model.partial')));
    held(f('busy-scorer'));
    r = cli(['scorer', 'train', '--model', model, '--parallel', f('nway.tsv'), '-o', f('busy-scorer')]);
    refused(r, '--output', 'busy-scorer');
    assert.ok(!existsSync(f('busy-scorer.partial')));
    held(f('busy.tsv.partial'));
    r = cli(['scorer', 'score', '--input', f('docs.de-en.tsv'), '--src-col', '2', '--trg-col', '3', '--model', model, '-o', f('busy.tsv')]);
    refused(r, '--output \\(its work directory\\)', 'busy.tsv.partial');
    assert.ok(!existsSync(f('busy.tsv')));
  });
  it('a lock whose process is gone (killed: no exit hook ran) is taken over; a finished run leaves none', () => {
    const gone = Number(spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' }).stdout);
    held(f('scored.tsv.partial'), gone);
    const r = ok(
      cli(['scorer', 'score', '--input', f('docs.de-en.tsv'), '--src-col', '2', '--trg-col', '3', '--model', model, '-o', f('scored.tsv')]),
      'scorer score over a stale lock',
    );
    assert.equal(readFileSync(f('scored.tsv'), 'utf8').trim().split('\n').length, n, r.stderr);
    assert.ok(!existsSync(f('scored.tsv.partial.lock')) && !existsSync(f('scored.tsv.partial')));
  });
});

describe('CLI conventions: eval xsim and classify eval figures', () => {
  it('eval xsim --langs en (fewer than two languages) is a usage error, never "NaN%"', async () => {
    for (const langs of ['en', 'en,en']) {
      const r = await inProcess(['eval', 'xsim', ...xsim, '--langs', langs]);
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, /--langs: give two or more languages/);
      assert.doesNotMatch(r.stdout + r.stderr, /NaN/);
    }
    writeFileSync(f('one.tsv'), text(['en', ...en]));
    const one = cli(['eval', 'xsim', '--model', model, '--data', f('one.tsv'), '--min-rows', '5']);
    assert.equal(one.status, 1, one.stderr);
    assert.match(one.stderr, /needs two or more/);
  });

  it("eval xsim --data LANG=FILE (line-aligned files, as LASER's xsim) gives the N-way TSV's matrix", () => {
    writeFileSync(f('fr.txt'), text(fr));
    const tsv = ok(cliOnce(['eval', 'xsim', ...xsim, '--json', '-']), 'xsim TSV');
    const files = ok(
      cli([
        'eval',
        'xsim',
        '--model',
        model,
        '--data',
        `en=${f('en.txt')}`,
        '--data',
        `de=${f('de.txt')}`,
        '--data',
        `fr=${f('fr.txt')}`,
        '--min-rows',
        '5',
        '--json',
        '-',
      ]),
      'xsim LANG=FILE',
    );
    assert.deepEqual(JSON.parse(files.stdout), JSON.parse(tsv.stdout));
    writeFileSync(f('en-short.txt'), text(en.slice(0, 10)));
    const bad = cli(['eval', 'xsim', '--model', model, '--data', `en=${f('en-short.txt')}`, '--data', `de=${f('de.txt')}`, '--min-rows', '5']);
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /must be line-aligned/);
  });

  it('macro-F1 averages over the union of gold and predicted classes (scikit-learn), by hand', () => {
    // gold a a b b, predicted a c b b; d neither gold nor predicted
    const r = evaluate(Int32Array.from([0, 0, 1, 1]), Int32Array.from([0, 2, 1, 1]), ['a', 'b', 'c', 'd']);
    // F1: a = 2·1·½/(1+½) = ⅔, b = 1, c (predicted, never gold) = 0; d is left out → (⅔ + 1 + 0) / 3 = 5/9
    // (gold classes only would give (⅔ + 1) / 2 = 5/6)
    assert.ok(Math.abs(r.macro_f1 - 5 / 9) < 1e-12, String(r.macro_f1));
    assert.equal(r.macro_classes, 3);
    assert.equal(r.accuracy, 3 / 4);
  });

  it('classify eval reports it and its JSON carries macro_f1 and per_class', () => {
    const r = ok(cliOnce(['classify', 'eval', '--model', model, '--classifier', f('clf'), '--data', f('docs-de.tsv'), '--json', '-']), 'classify eval');
    const j = JSON.parse(r.stdout) as {
      macro_f1: number;
      macro_classes: number;
      per_class: { f1: number; support: number; label: string }[];
      confusion: number[][];
    };
    const predicted = j.per_class.map((_, c) => j.confusion.reduce((s, row) => s + row[c]!, 0));
    const used = j.per_class.filter((p, c) => p.support > 0 || predicted[c]! > 0);
    assert.equal(j.macro_classes, used.length);
    assert.ok(Math.abs(j.macro_f1 - used.reduce((s, p) => s + p.f1, 0) / used.length) < 1e-12);
    assert.match(r.stderr, /macro-F1/);
  });
});

describe('argument parser: long aliases and implicit values', () => {
  const spec = {
    name: 'xling t',
    options: {
      out: { type: 'string', long: 'output', aliases: ['out-file'], alias: 'o' },
      json: { type: 'string', implicit: '-' },
    },
    positionals: [{ name: 'a', required: true }, { name: 'b' }],
  } as const;
  it('accepts every long name and names the shown one', () => {
    for (const f of ['--output', '--out', '--out-file', '-o']) assert.equal(parseArgs(spec, [f, 'x', 'p']).out, 'x');
    assert.equal(kebab('srcVectors'), 'src-vectors');
    assert.throws(() => parseArgs(spec, ['--outptu', 'x', 'p']), /did you mean --output\?/);
  });
  it('a bare flag with an implicit value; a value taken from a required positional goes back', () => {
    assert.deepEqual([parseArgs(spec, ['p', '--json']).json, parseArgs(spec, ['p', '--json'])._], ['-', ['p']]);
    assert.deepEqual([parseArgs(spec, ['p', '--json', 'f.json']).json, parseArgs(spec, ['p', '--json', 'f.json'])._], ['f.json', ['p']]);
    assert.deepEqual([parseArgs(spec, ['--json', 'p']).json, parseArgs(spec, ['--json', 'p'])._], ['-', ['p']]);
    assert.deepEqual([parseArgs(spec, ['--json', '-o', 'x', 'p']).json, parseArgs(spec, ['--json', '-o', 'x', 'p'])._], ['-', ['p']]);
    assert.equal(parseArgs(spec, ['--json=f.json', 'p']).json, 'f.json');
  });
});

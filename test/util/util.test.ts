import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { writeFileAtomic, writeFileAtomicSync, atomicOutput, atomicOutputSync, tempPathFor } from '../../src/util/atomic.js';
import { Progress, formatDuration, formatCount } from '../../src/util/progress.js';
import { lockOutput, lockPathOf, withOutputLock } from '../../src/util/lock.js';
import { spawnSync } from 'node:child_process';
import { Rng, hashSeed } from '../../src/util/rng.js';
import { Set64, hash64 } from '../../src/util/set64.js';
import { parseArgs, formatHelp, defineCommand, UsageError } from '../../src/util/args.js';
import { lineChart, heatmap, prCurve, histogram, niceTicks, escapeXml, binValues, formatTick } from '../../src/util/svg.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'xling-util-'));
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));
const temps = (): string[] => fs.readdirSync(tmp).filter((f) => f.includes('.tmp-'));

// ---------------------------------------------------------------- atomic

test('atomic writes: success renames, failure leaves nothing', async () => {
  const f = path.join(tmp, 'a.txt');
  const t = tempPathFor(f);
  assert.equal(path.dirname(t), tmp);
  assert.match(path.basename(t), new RegExp(`^a\\.txt\\.tmp-${process.pid}-[0-9a-f]{8}$`));
  assert.notEqual(tempPathFor(f), t);

  await writeFileAtomic(f, 'hello');
  assert.equal(fs.readFileSync(f, 'utf8'), 'hello');
  writeFileAtomicSync(f, new Uint8Array([104, 105]));
  assert.equal(fs.readFileSync(f, 'utf8'), 'hi');

  const r = await atomicOutput(f, async (p) => {
    fs.writeFileSync(p, 'v3');
    return 7;
  });
  assert.equal(r, 7);
  assert.equal(fs.readFileSync(f, 'utf8'), 'v3');

  await assert.rejects(
    atomicOutput(f, async (p) => {
      fs.writeFileSync(p, 'partial');
      throw new Error('boom');
    }),
    /boom/,
  );
  assert.equal(fs.readFileSync(f, 'utf8'), 'v3', 'target untouched on failure');
  assert.throws(
    () =>
      atomicOutputSync(path.join(tmp, 'b.txt'), (p) => {
        fs.writeFileSync(p, 'x');
        throw new Error('sync boom');
      }),
    /sync boom/,
  );
  assert.ok(!fs.existsSync(path.join(tmp, 'b.txt')));
  await assert.rejects(writeFileAtomic(path.join(tmp, 'no-such-dir', 'c.txt'), 'x'), /ENOENT/);
  assert.deepEqual(temps(), []);
});

// ---------------------------------------------------------------- output locks

test('output lock: one holder at a time; released on release and when the holder returns or throws', async () => {
  const out = path.join(tmp, 'locked-model');
  const lock = lockOutput(out, '--out');
  assert.equal(lock.path, lockPathOf(out));
  const info = JSON.parse(fs.readFileSync(lock.path, 'utf8'));
  assert.equal(info.pid, process.pid);
  assert.equal(info.host, os.hostname());
  // a second taker (here this same process) is refused, naming the output and the holder
  assert.throws(() => lockOutput(out, '--out'), /--out .*locked-model is already being written by this process/);
  lock.release();
  assert.ok(!fs.existsSync(lock.path));
  lock.release(); // idempotent
  // withOutputLock releases however its function ends
  assert.equal(
    await withOutputLock(out, '--out', async () => {
      assert.ok(fs.existsSync(lockPathOf(out)));
      return 7;
    }),
    7,
  );
  assert.ok(!fs.existsSync(lockPathOf(out)));
  await assert.rejects(
    withOutputLock(out, '--out', async () => {
      throw new Error('boom');
    }),
    /boom/,
  );
  assert.ok(!fs.existsSync(lockPathOf(out)));
  // the parent directory is made when missing; no temporary is left beside the lock
  const deep = path.join(tmp, 'new', 'dir', 'model');
  lockOutput(deep, '--out').release();
  assert.deepEqual(fs.readdirSync(path.dirname(deep)), []);
  assert.deepEqual(temps(), []);
});

test('output lock: a live process of another pid is refused; a dead one is stale and taken over; a foreign file is kept', () => {
  const out = path.join(tmp, 'other-model');
  const child = (code: string) => spawnSync(process.execPath, ['-e', code], { encoding: 'utf8' });
  // a process that has exited: its pid runs no more (the child's pid, read after it ended)
  const dead = Number(child('console.log(process.pid)').stdout.trim());
  assert.ok(dead > 0);
  fs.writeFileSync(lockPathOf(out), JSON.stringify({ pid: dead, host: os.hostname(), started: 'then', command: 'xling train' }));
  const lock = lockOutput(out, '--out');
  assert.equal(JSON.parse(fs.readFileSync(lock.path, 'utf8')).pid, process.pid);
  lock.release();
  // this pid's lock that this process never took (left before a reboot gave the pid out again): stale too
  fs.writeFileSync(lock.path, JSON.stringify({ pid: process.pid, host: os.hostname(), started: 'before the reboot', command: 'xling train' }));
  const again = lockOutput(out, '--out');
  assert.notEqual(JSON.parse(fs.readFileSync(lock.path, 'utf8')).started, 'before the reboot');
  again.release();
  const third = lockOutput(out, '--out');
  // released only by its holder: another process's lock file is not removed by this one's release
  fs.writeFileSync(lock.path, JSON.stringify({ pid: process.ppid, host: os.hostname(), started: 'now', command: 'xling train --out x' }));
  third.release();
  assert.ok(fs.existsSync(lock.path));
  // the parent of this process runs: refused, with its pid and command
  assert.throws(
    () => lockOutput(out, '--out'),
    new RegExp(`--out .*other-model is being written by another process \\(pid ${process.ppid}, since now: xling train --out x\\)`),
  );
  // another host's lock cannot be checked: refused, with how to remove it
  fs.writeFileSync(lockPathOf(out), JSON.stringify({ pid: 1, host: 'elsewhere', started: 'now', command: 'xling train' }));
  assert.throws(() => lockOutput(out, '--out'), /locked by process 1 of host elsewhere .* remove .*other-model\.lock if it no longer runs/);
  // a file that is not a lock: refused and left alone
  fs.writeFileSync(lockPathOf(out), 'notes\n');
  assert.throws(() => lockOutput(out, '--out'), /other-model\.lock exists and is not a lock of xling/);
  assert.equal(fs.readFileSync(lockPathOf(out), 'utf8'), 'notes\n');
  fs.rmSync(lockPathOf(out));
  // a process that exits without releasing (an error thrown out of a command) leaves no lock behind
  const lockJs = new URL('../../src/util/lock.js', import.meta.url).href;
  const r = child(`import(${JSON.stringify(lockJs)}).then((m) => { m.lockOutput(${JSON.stringify(out)}, '--out'); process.exitCode = 3; })`);
  assert.equal(r.status, 3, r.stderr);
  assert.ok(!fs.existsSync(lockPathOf(out)));
});

// ---------------------------------------------------------------- progress

function fakeStream(tty: boolean): { isTTY: boolean; out: string[]; write(s: string): boolean } {
  return {
    isTTY: tty,
    out: [],
    write(s: string) {
      this.out.push(s);
      return true;
    },
  };
}

test('formatDuration / formatCount', () => {
  assert.equal(formatDuration(0.42), '0.4s');
  assert.equal(formatDuration(42), '42s');
  assert.equal(formatDuration(75), '1m15s');
  assert.equal(formatDuration(3725), '1h02m');
  assert.equal(formatDuration(200000), '2d07h');
  assert.equal(formatDuration(NaN), '?');
  assert.equal(formatCount(999), '999');
  assert.equal(formatCount(12345), '12.3k');
  assert.equal(formatCount(4.5e6), '4.50M');
  assert.equal(formatCount(2.5), '2.50');
});

test('Progress: throttled periodic lines when not a TTY, with rate/percent/ETA', () => {
  let now = 0;
  const s = fakeStream(false);
  const p = new Progress({ total: 1000, label: 'embed', unit: 'sents', stream: s, intervalMs: 1000, now: () => now });
  now = 500;
  p.tick(100);
  assert.equal(s.out.length, 0, 'throttled');
  now = 1000;
  p.tick(100);
  assert.equal(s.out.length, 1);
  assert.equal(s.out[0], 'embed: 200/1000 sents (20.0%) 200 sents/s ETA 4.0s elapsed 1.0s\n');
  now = 1500;
  p.tick(100);
  assert.equal(s.out.length, 1);
  now = 2000;
  p.set(500);
  assert.match(s.out[1]!, /^embed: 500\/1000 sents \(50\.0%\) 250 sents\/s ETA 2\.0s/);
  p.done();
  p.done();
  assert.equal(s.out.length, 3);
  assert.equal(s.out[2], 'embed: 500/1000 sents (50.0%) 250 sents/s in 2.0s\n');
  assert.equal(p.count, 500);
});

test('Progress: TTY redraws one line with \\r; unknown total; silent', () => {
  let now = 0;
  const s = fakeStream(true);
  const p = new Progress({ label: 'mine', unit: 'pairs', stream: s, now: () => now });
  now = 1000;
  p.tick(12000);
  now = 2000;
  p.tick(1);
  assert.equal(s.out.length, 2);
  assert.ok(s.out.every((l) => l.startsWith('\r') && !l.includes('\n')));
  assert.match(s.out[0]!, /^\rmine: 12\.0k pairs 12\.0k pairs\/s elapsed 1\.0s$/);
  assert.ok(!s.out[0]!.includes('%') && !s.out[0]!.includes('ETA'));
  p.done();
  assert.ok(s.out[2]!.startsWith('\r') && s.out[2]!.endsWith('\n'));

  const q = fakeStream(true);
  const sp = new Progress({ total: 10, stream: q, silent: true, intervalMs: 0, now: () => now });
  sp.tick(5);
  sp.done();
  assert.deepEqual(q.out, []);
});

// ---------------------------------------------------------------- rng

test('Rng is deterministic and well-behaved', () => {
  const a = new Rng(42);
  const b = new Rng(42);
  const xs = Array.from({ length: 5 }, () => a.nextU32());
  assert.deepEqual(
    xs,
    Array.from({ length: 5 }, () => b.nextU32()),
  );
  assert.notDeepEqual(
    xs,
    Array.from({ length: 5 }, () => new Rng(43).nextU32()),
  );
  assert.deepEqual(new Rng('bucc').next(), new Rng(hashSeed('bucc')).next());

  const r = new Rng(1);
  let sum = 0;
  const counts = new Array(10).fill(0);
  for (let i = 0; i < 20000; i++) {
    const u = r.next();
    assert.ok(u >= 0 && u < 1);
    sum += u;
    counts[r.int(10)]++;
  }
  assert.ok(Math.abs(sum / 20000 - 0.5) < 0.01);
  for (const c of counts) assert.ok(c > 1800 && c < 2200, `int(10) bucket ${c}`);

  let m = 0;
  let v = 0;
  const n = 20000;
  const zs = Array.from({ length: n }, () => r.normal());
  for (const z of zs) m += z / n;
  for (const z of zs) v += (z - m) ** 2 / n;
  assert.ok(Math.abs(m) < 0.03, `mean ${m}`);
  assert.ok(Math.abs(v - 1) < 0.05, `var ${v}`);

  const arr = Array.from({ length: 50 }, (_, i) => i);
  const sh = new Rng(7).shuffle([...arr]);
  assert.deepEqual(
    [...sh].sort((x, y) => x - y),
    arr,
  );
  assert.notDeepEqual(sh, arr);
  assert.deepEqual(new Rng(7).shuffle([...arr]), sh);

  const s = new Rng(3).sample(1000, 20);
  assert.equal(new Set(s).size, 20);
  assert.ok(s.every((x) => x >= 0 && x < 1000));
  assert.equal(new Rng(3).sample(10, 10).length, 10);
  assert.throws(() => r.int(0), RangeError);
  assert.throws(() => r.sample(3, 4), RangeError);
  assert.ok(r.range(5, 8) >= 5);
  const f1 = new Rng(9).fork();
  const f2 = new Rng(9).fork();
  assert.equal(f1.nextU32(), f2.nextU32());
});

// ---------------------------------------------------------------- args

const spec = defineCommand({
  name: 'xling search',
  summary: 'k-nearest-neighbour search over embeddings.',
  options: {
    topK: { type: 'number', alias: 'k', default: 10, range: { int: true, min: 1 }, help: 'neighbours per query' },
    output: { type: 'string', alias: 'o', required: true, help: 'output file', metavar: 'FILE' },
    langs: { type: 'list', help: 'languages (repeat or comma-separate)' },
    gpu: { type: 'boolean', default: true, help: 'use the GPU' },
    verbose: { type: 'boolean', alias: 'v' },
    quiet: { type: 'boolean', alias: 'q' },
    metric: { type: 'string', choices: ['ip', 'l2'], default: 'ip' },
    batchSize: { type: 'number', range: {} },
  },
  positionals: [
    { name: 'queries', required: true, help: 'query embeddings (.npy)' },
    { name: 'index', help: 'index file' },
  ],
  examples: ['xling search q.npy idx.faiss -k 4 -o out.tsv'],
});

test('parseArgs: forms, defaults and typed results', () => {
  const a = parseArgs(spec, ['q.npy', '--top-k', '5', '-o=out.tsv', '--langs', 'de,fr', '--langs=en', '--no-gpu', '-vq', '--batch-size=-3', 'idx']);
  const k: number = a.topK;
  const o: string = a.output;
  const bs: number | undefined = a.batchSize;
  assert.equal(k, 5);
  assert.equal(o, 'out.tsv');
  assert.equal(bs, -3);
  assert.deepEqual(a.langs, ['de', 'fr', 'en']);
  assert.equal(a.gpu, false);
  assert.equal(a.verbose, true);
  assert.equal(a.quiet, true);
  assert.equal(a.metric, 'ip');
  assert.deepEqual(a._, ['q.npy', 'idx']);
  assert.equal(a.help, false);

  const b = parseArgs(spec, ['-k', '3', '--output', 'x', '--gpu=false', '--topK=4', '--', '--weird-name']);
  assert.equal(b.topK, 4, 'camelCase key accepted; last wins');
  assert.equal(b.gpu, false);
  assert.deepEqual(b._, ['--weird-name']);
  assert.deepEqual(b.langs, []);
  assert.equal(b.batchSize, undefined);
  assert.equal(b.verbose, false);
  assert.equal(parseArgs(spec, ['-o', 'x', 'q', '--metric', 'l2']).metric, 'l2');
  assert.equal(parseArgs(spec, ['-o', '-', 'q']).output, '-');
  assert.equal(parseArgs(spec, ['--help']).help, true, 'help skips required checks');
  assert.equal(parseArgs(spec, ['-h']).help, true);
});

test('parseArgs: UsageError names the argument', () => {
  const err = (argv: string[], re: RegExp): void => {
    assert.throws(
      () => parseArgs(spec, argv),
      (e: unknown) => e instanceof UsageError && re.test(e.message),
    );
  };
  err(['q', '-o', 'x', '--top-kk', '3'], /unknown option '--top-kk' \(did you mean --top-k\?\)/);
  err(['q', '-o', 'x', '-z'], /unknown option '-z'/);
  err(['q', '-o', 'x', '--top-k', 'abc'], /--top-k expects a number, got 'abc'/);
  err(['q', '-o', 'x', '-k'], /-k requires a value/);
  err(['q', '-o', 'x', '--top-k', '--gpu'], /--top-k requires a value/);
  err(['q', '-o', 'x', '--gpu=maybe'], /--gpu expects true or false, got 'maybe'/);
  err(['q', '-o', 'x', '--no-top-k'], /--no-top-k: --top-k is not a boolean option/);
  err(['q', '-o', 'x', '--metric', 'cos'], /--metric must be one of ip, l2; got 'cos'/);
  err(['q'], /missing required option --output/);
  err(['-o', 'x'], /missing required argument <queries>/);
  err(['a', 'b', 'c', '-o', 'x'], /unexpected argument 'c'/);
  err(['q', '-o', 'x', '-vk'], /-k in '-vk' needs a value and cannot be bundled/);
  err(['q', '-o', 'x', '-k', '0'], /-k must be an integer >= 1, got '0'/);
  err(['q', '-o', 'x', '--top-k=2.5'], /--top-k must be an integer >= 1, got '2.5'/);
});

test('formatHelp lists usage, arguments, options with defaults', () => {
  const h = formatHelp(spec);
  assert.match(h, /^Usage: xling search \[options\] <queries> \[index\]\n/);
  assert.match(h, /k-nearest-neighbour search over embeddings\./);
  assert.match(h, /\n {2}-k, --top-k N +neighbours per query \(default: 10\)\n/);
  assert.match(h, /-o, --output FILE +output file \(required\)/);
  assert.match(h, /--gpu +use the GPU \(default: true; --no-gpu to disable\)/);
  assert.match(h, /--metric \{ip\|l2\} +\(default: ip\)/);
  assert.match(h, /--langs A,B,\.\.\./);
  assert.match(h, /-h, --help +show this help/);
  assert.match(h, /Arguments:\n {2}queries +query embeddings \(\.npy\)/);
  assert.match(h, /Examples:\n {2}xling search q\.npy/);
  assert.ok(
    h.split('\n').every((l) => l.length <= 80),
    'fits 80 columns',
  );
  assert.throws(() => defineCommand({ name: 'x', options: { a: { type: 'string', alias: 'ab' } } }), /alias must be one character/);
  assert.throws(() => defineCommand({ name: 'x', options: { n: { type: 'number' } } }), /a number option needs a range/);
  assert.throws(() => defineCommand({ name: 'x', options: { n: { type: 'number', default: 0, range: { min: 1 } } } }), /default 0 is outside its range/);
});

// ---------------------------------------------------------------- svg

function wellFormed(svg: string): void {
  assert.ok(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'));
  assert.ok(svg.trimEnd().endsWith('</svg>'));
  assert.ok(!/NaN|undefined|Infinity/.test(svg), 'no NaN/undefined/Infinity in output');
  // crude tag balance check
  const stack: string[] = [];
  for (const m of svg.matchAll(/<(\/?)([a-zA-Z]+)[^>]*?(\/?)>/g)) {
    if (m[3]) continue;
    if (m[1]) assert.equal(stack.pop(), m[2]);
    else stack.push(m[2]!);
  }
  assert.deepEqual(stack, []);
}

test('niceTicks and formatTick', () => {
  assert.deepEqual(niceTicks(0, 1, 5).values, [0, 0.2, 0.4, 0.6, 0.8, 1]);
  assert.deepEqual(niceTicks(3, 97, 5).values, [0, 20, 40, 60, 80, 100]);
  const t = niceTicks(0.013, 0.0171, 4);
  assert.ok(t.lo <= 0.013 && t.hi >= 0.0171 && t.values.length >= 3);
  assert.deepEqual(niceTicks(5, 5).values.length > 1, true);
  assert.equal(formatTick(0.25, 0.05), '0.25');
  assert.equal(formatTick(20000, 5000), '20k');
  assert.equal(escapeXml(`<a & "b">`), '&lt;a &amp; &quot;b&quot;&gt;');
});

test('charts render well-formed, escaped SVG', () => {
  const lc = lineChart({
    title: 'loss <train & dev>',
    xLabel: 'step',
    yLabel: 'loss',
    series: [
      {
        name: 'train',
        points: [
          [0, 3],
          [100, 2],
          [200, NaN],
          [300, 1],
        ],
      },
      {
        name: 'dev "x"',
        points: [
          [0, 3.5],
          [300, 1.5],
        ],
      },
    ],
    hlines: [{ y: 1.2, label: 'baseline' }],
  });
  wellFormed(lc);
  assert.ok(lc.includes('loss &lt;train &amp; dev&gt;'));
  assert.ok(lc.includes('dev &quot;x&quot;'));
  assert.equal((lc.match(/<path /g) ?? []).length, 2, 'NaN breaks the train line: 1 path + lone point, plus dev');

  const hm = heatmap({
    rows: ['en', 'de'],
    cols: ['en', 'd<e'],
    values: [
      [0, 0.25],
      [0.5, NaN],
    ],
    title: 'xsim',
    colors: 'reds',
  });
  wellFormed(hm);
  assert.equal((hm.match(/<rect x="[^"]+" y="[^"]+" width="\d+" height="\d+" fill="#[0-9a-f]{6}" stroke/g) ?? []).length, 4);
  assert.ok(hm.includes('>.25<') && hm.includes('>.50<') && hm.includes('>–<'));
  assert.ok(hm.includes('d&lt;e'));
  assert.ok(hm.includes('fill="#fff5f0"'), 'reds scale starts at white for 0');
  const big = Array.from({ length: 50 }, (_, i) => `l${i}`);
  const hb = heatmap({ rows: big, cols: big, values: big.map((_, i) => big.map((_, j) => i * j)) });
  wellFormed(hb);
  assert.ok(!/text-anchor="middle" font-size="[\d.]+" fill="#(111111|ffffff)">\d/.test(hb), 'no cell values above 40×40');
  assert.throws(() => heatmap({ rows: ['a'], cols: ['b', 'c'], values: [[1]] }), /values must be 1×2/);
  const custom = heatmap({ rows: ['a'], cols: ['b'], values: [[0.123]], format: (v) => `${(v * 100).toFixed(1)}%` });
  assert.ok(custom.includes('>12.3%<'));

  const pr = prCurve({
    points: [
      [0, 1],
      [0.5, 0.9],
      [1, 0.4],
    ],
    ap: 0.8123,
    title: 'PR',
    mark: { recall: 0.5, precision: 0.9, label: 't=1.05' },
  });
  wellFormed(pr);
  assert.ok(pr.includes('AP = 0.812'));

  const hg = histogram({ values: [1, 2, 2, 3, 3, 3, NaN], bins: 3, title: 'h', markers: [{ x: 2.5, label: 'thr' }] });
  wellFormed(hg);
  assert.ok(hg.includes('n = 6'));
  assert.deepEqual(binValues([1, 2, 2, 3, 3, 3], 3).counts, [1, 2, 3]);
  assert.deepEqual(binValues([0, 0.5, 1, 1.5, 2, 5], [0, 1, 2]).counts, [2, 3]);
});

// ---------------------------------------------------------------- Set64

test('Set64: a set of 64-bit keys as a JavaScript Set of them holds them, through growth, with the key 0', () => {
  const s = new Set64(),
    ref = new Set<bigint>();
  const rng = new Rng('set64');
  // random keys, some repeated, small and large, and 0
  for (let i = 0; i < 20000; i++) {
    const k = i % 7 === 0 ? BigInt(i % 50) : (BigInt(Math.floor(rng.next() * 2 ** 32)) << 32n) | BigInt(Math.floor(rng.next() * 2 ** 32));
    assert.equal(s.has(k), ref.has(k));
    s.add(k);
    ref.add(k);
  }
  assert.equal(s.size, ref.size);
  for (const k of ref) assert.ok(s.has(k));
  for (let i = 0; i < 2000; i++) {
    const k = BigInt(1e6 + i) << 20n;
    assert.equal(s.has(k), ref.has(k));
  }
  // hash64: the same text the same key, another text another
  assert.equal(hash64('Datei öffnen'), hash64('Datei öffnen'));
  assert.notEqual(hash64('Datei öffnen'), hash64('Datei öffnen!'));
});

// The test suite (`npm test`): every dist/test/**/*.test.js through node:test's run(), longest files
// first. `node --test DIR` starts the files in name order, so a long file whose name sorts late
// starts while the other slots are nearly done and runs on alone at the end; starting the longest
// first (longest-processing-time-first list scheduling, Graham 1969) lets the slots finish
// together. The lengths are test/durations.json, keyed by file name (names are unique across the
// folders of test/): the CPU seconds each file's process and the commands it ran used (measured
// with --record; unlike wall time, the same on a shared machine);
// a file not in it (a new one) counts as DEFAULT_SECONDS, so it starts among the long ones.
//
//   node --expose-gc scripts/run-tests.mjs [--concurrency N] [--record FILE] [FILE…]
//
// --record FILE: also writes the CPU seconds each file used in this run (measured by
// scripts/test-timing.mjs in each test process; wall seconds where /proc is missing) as the new
// durations list.
// Reporter: spec on a terminal, TAP otherwise (as node --test). Exit 1 when a test fails.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { run } from 'node:test';
import { spec, tap } from 'node:test/reporters';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DEFAULT_SECONDS = 30;

const argv = process.argv.slice(2);
let concurrency = 2,
  record = null;
const given = [];
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--concurrency') concurrency = Number(argv[++i]);
  else if (a === '--record') record = resolve(argv[++i] ?? '');
  else given.push(resolve(a));
}
if (!(Number.isInteger(concurrency) && concurrency >= 1)) {
  console.error(`--concurrency: expected an integer >= 1`);
  process.exit(2);
}

const dir = join(root, 'dist', 'test');
// dist/test mirrors test/: a folder per capability of src/, a few whole-package tests at the top
const files = given.length
  ? given
  : readdirSync(dir, { recursive: true })
      .filter((f) => f.endsWith('.test.js'))
      .map((f) => join(dir, f));
const byName = new Map();
for (const f of files) {
  const other = byName.get(basename(f));
  if (other) {
    console.error(
      `two test files named ${basename(f)} (${other}, ${f}): test/durations.json keys them by name (an old build? remove dist/test and build again)`,
    );
    process.exit(2);
  }
  byName.set(basename(f), f);
}
const durationsFile = join(root, 'test', 'durations.json');
const known = existsSync(durationsFile) ? JSON.parse(readFileSync(durationsFile, 'utf8')) : {};
const seconds = (f) => known[basename(f).replace(/\.js$/, '.ts')] ?? DEFAULT_SECONDS;
files.sort((a, b) => seconds(b) - seconds(a) || a.localeCompare(b));

let timings = null;
if (record) {
  // each test process appends its file's seconds here (the preload skips every other node process)
  timings = join(mkdtempSync(join(tmpdir(), 'xling-test-timing-')), 'timings.jsonl');
  process.env.XLING_TEST_TIMINGS = timings;
  process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --import ${JSON.stringify(join(root, 'scripts', 'test-timing.mjs'))}`.trim();
}

const stream = run({ files, concurrency });
stream.on('test:fail', () => {
  process.exitCode = 1;
});
stream.compose(process.stdout.isTTY ? spec : tap).pipe(process.stdout);
stream.on('end', () => {
  if (!timings) return;
  const lines = existsSync(timings)
    ? readFileSync(timings, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];
  const cost = (t) => t.cpu ?? t.seconds;
  const out = Object.fromEntries(lines.sort((a, b) => cost(b) - cost(a)).map((t) => [t.file.replace(/\.js$/, '.ts'), +cost(t).toFixed(1)]));
  writeFileSync(record, JSON.stringify(out, null, 2) + '\n');
  rmSync(dirname(timings), { recursive: true, force: true });
  console.error(`[run-tests] the CPU seconds of ${lines.length} files → ${record}`);
});

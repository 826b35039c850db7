// Loaded into every node process by scripts/run-tests.mjs --record (NODE_OPTIONS=--import): a test
// file's process (dist/test/**/*.test.js) appends its file name, the seconds from its start to its exit
// and the CPU seconds it and the processes it waited for used (/proc/self/stat, Linux) to
// $XLING_TEST_TIMINGS. Any other process (the xling commands the tests run) is left alone.
import { appendFileSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';

const file = process.argv[1] ?? '';
const out = process.env.XLING_TEST_TIMINGS;
if (out && /\.test\.js$/.test(file)) {
  const t0 = performance.timeOrigin;
  process.on('exit', () => {
    let cpu = null;
    try {
      // fields after the command name: utime, stime, cutime, cstime are the 12th–15th, in clock ticks (100 a second)
      const f = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
      cpu = +([11, 12, 13, 14].reduce((s, i) => s + Number(f[i]), 0) / 100).toFixed(1);
    } catch {
      /* not Linux */
    }
    appendFileSync(out, JSON.stringify({ file: basename(file), seconds: (Date.now() - t0) / 1000, cpu }) + '\n');
  });
}

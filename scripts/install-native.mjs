// npm's install step of the package: builds the native backend (the N-API addon over libtorch and
// faiss, scripts/build-native.mjs) when libtorch, faiss and a C++ toolchain are there; otherwise
// says in one line what is missing and how to add it, and exits 0: xling installs all the same and
// runs `xling embed` and xling/lite on its portable runtime (TypeScript/WebAssembly). A build that
// fails here is a warning too (scripts/setup.sh, the checkout's set-up, builds with build:native,
// where a failure stays an error). XLING_SKIP_NATIVE=1 skips the build on purpose.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);
const require = createRequire(import.meta.url);
const HOW = 'apt install libtorch-dev libfaiss-dev (or set LIBTORCH / FAISS_HOME), then `npm rebuild xling`';
const PORTABLE = 'xling embed, xling eval xsim and xling/lite work without it (portable runtime)';
const say = (line) => process.stderr.write(`xling: ${line}\n`);

const skip = process.env.XLING_SKIP_NATIVE;
if (skip && skip !== '0' && skip.toLowerCase() !== 'false') {
  say(`XLING_SKIP_NATIVE is set: the native backend (libtorch + faiss) is not built; ${PORTABLE}`);
  process.exit(0);
}

/** Whether a command runs (exit 0) with these arguments. */
const runs = (cmd, args) => {
  const r = spawnSync(cmd, args, { stdio: 'ignore' });
  return !r.error && r.status === 0;
};

const missing = [];
const cxx = process.env.CXX || 'g++';
if (!runs(cxx, ['--version'])) missing.push(`a C++ compiler (${cxx})`);
if (!runs('make', ['--version'])) missing.push('make');
if (!runs(process.env.npm_config_python || 'python3', ['--version'])) missing.push('python3 (for node-gyp)');
missing.push(...require('./gyp-flags.cjs').missing());
let gypFound = !!process.env.npm_config_node_gyp;
try {
  require.resolve('node-gyp/bin/node-gyp.js');
  gypFound = true;
} catch {
  /* npm's own, if any */
}
if (!gypFound) missing.push('node-gyp (run this through npm: npm rebuild xling)');
if (missing.length) {
  say(`native backend not built: missing ${missing.join(', ')}. To add it: ${HOW}. ${PORTABLE}`);
  process.exit(0);
}

// the build's output goes to a log, shown (its end) only when it fails
const logDir = mkdtempSync(join(tmpdir(), 'xling-build-'));
const log = join(logDir, 'build.log');
const r = spawnSync(process.execPath, [join('scripts', 'build-native.mjs')], { stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 28 });
writeFileSync(log, Buffer.concat([r.stdout ?? Buffer.alloc(0), r.stderr ?? Buffer.alloc(0)]));
if (r.status === 0 && existsSync(join('build', 'Release', 'xling.node'))) {
  rmSync(logDir, { recursive: true, force: true });
  say('native backend built (libtorch + faiss)');
  process.exit(0);
}
const tail = readFileSync(log, 'utf8').trimEnd().split('\n').slice(-15).join('\n');
process.stderr.write(`${tail}\n`);
say(`the native backend failed to build (log: ${log}); ${PORTABLE}. To retry: npm rebuild xling`);
process.exit(0);

// Builds the N-API addon with node-gyp (no downloads: Node's headers come from the system install).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// node-gyp: the dev dependency in a checkout; in an installed package (no dev dependencies) the one
// npm runs lifecycle scripts with (npm_config_node_gyp)
function nodeGyp() {
  try {
    return require.resolve('node-gyp/bin/node-gyp.js');
  } catch (e) {
    if (process.env.npm_config_node_gyp && existsSync(process.env.npm_config_node_gyp)) return process.env.npm_config_node_gyp;
    throw e;
  }
}
const gyp = nodeGyp();
// Incremental by default once configured; `--rebuild` (or a changed LIBTORCH/FAISS_HOME) starts over.
const rebuild = process.argv.includes('--rebuild') || !existsSync('build/Makefile');
const args = [gyp, rebuild ? 'rebuild' : 'build', `--jobs=${process.env.JOBS ?? 'max'}`];
// Debian's nodejs ships its headers in /usr/include/node; point node-gyp there so it never downloads them.
if (!process.env.npm_config_nodedir && existsSync('/usr/include/node/node_api.h')) args.push('--nodedir=/usr');
const r = spawnSync(process.execPath, args, { stdio: 'inherit' });
process.exit(r.status ?? 1);

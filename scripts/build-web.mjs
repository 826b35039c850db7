// Builds the web explorer (web/) into dist/web: type-checks it (DOM types), bundles app.ts with
// esbuild (no framework, no CDN: everything is served by xling serve), copies index.html.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const tsc = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'web/tsconfig.json'], { stdio: 'inherit' });
if (tsc.status !== 0) process.exit(tsc.status ?? 1);
mkdirSync('dist/web', { recursive: true });
// xling/lite is bundled in ("embed in this tab"); its Node-only branches import node:* lazily, left external
await build({
  entryPoints: ['web/app.ts'],
  bundle: true,
  format: 'esm',
  target: 'es2020',
  outfile: 'dist/web/app.js',
  logLevel: 'warning',
  platform: 'browser',
  external: ['node:*'],
});
copyFileSync('web/index.html', 'dist/web/index.html');

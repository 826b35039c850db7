// The layering rules (.dependency-cruiser.cjs, run by `npm test` as lint:layers): the tree passes
// them, and planted violations of each kind of rule are caught.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const depcruise = join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

function cruise(cwd: string): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [depcruise, '--config', join(root, '.dependency-cruiser.cjs'), 'src'], { cwd, encoding: 'utf8' });
  return { status: r.status, out: r.stdout + r.stderr };
}

describe('layering rules', () => {
  it('the source tree has no violation', () => {
    const r = cruise(root);
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, /no dependency violations found/);
  });

  it('catches planted violations: a lower layer importing a higher one, the addon outside its wrappers, lite reaching native code, the encoder interface naming tensors, an import circle', () => {
    const dir = mkdtempSync(join(tmpdir(), 'xling-layers-'));
    try {
      copyFileSync(join(root, 'tsconfig.json'), join(dir, 'tsconfig.json'));
      const files: Record<string, string> = {
        'src/native.ts': 'export const native = {};\n',
        'src/kernels.ts': "import { native } from './native.js';\nexport const k = native;\n",
        'src/train/trainer.ts': 'export const t = 1;\n',
        'src/serve/server.ts': 'export const s = 1;\n',
        'src/tensor/tensor.ts': "import { native } from '../native.js';\nexport const x = native;\n",
        'src/embed/model.ts': "import { t } from '../train/trainer.js';\nexport const e = t;\n", // embed ↛ train
        'src/graph/build.ts': "import { s } from '../serve/server.js';\nexport const g = s;\n", // graph ↛ serve
        'src/text/normalize.ts': "import { x } from '../tensor/tensor.js';\nexport const n = x;\n", // text ↛ tensor
        'src/nn/layers.ts': "import { native } from '../native.js';\nexport const l = native;\n", // addon outside its wrappers
        'src/util/fmt.ts': "import { k } from '../kernels.js';\nexport const f = k;\n",
        'src/lite/model.ts': "import { f } from '../util/fmt.js';\nexport const m = f;\n", // lite → util → kernels → native
        'src/models/encoder.ts': "import { x } from '../tensor/tensor.js';\nexport type E = typeof x;\n", // the inference interface naming a tensor
        'src/newlayer/a.ts': "import { f } from '../util/fmt.js';\nexport const a = f;\n", // a folder without a rank
        'src/mine/x.ts': "import type { Y } from './y.js';\nexport type X = Y | 1;\n", // an import circle (type imports count)
        'src/mine/y.ts': "import type { X } from './x.js';\nexport type Y = X | 2;\n",
      };
      for (const [f, text] of Object.entries(files)) {
        mkdirSync(dirname(join(dir, f)), { recursive: true });
        writeFileSync(join(dir, f), text);
      }
      const r = cruise(dir);
      assert.notEqual(r.status, 0, r.out);
      for (const [rule, from, to] of [
        ['layer-embed', 'src/embed/model.ts', 'src/train/trainer.ts'],
        ['layer-graph', 'src/graph/build.ts', 'src/serve/server.ts'],
        ['layer-text', 'src/text/normalize.ts', 'src/tensor/tensor.ts'],
        ['native-behind-wrappers', 'src/nn/layers.ts', 'src/native.ts'],
        ['lite-without-native', 'src/lite/model.ts', 'src/kernels.ts'],
        ['encoder-interface-without-tensors', 'src/models/encoder.ts', 'src/tensor/tensor.ts'],
      ])
        assert.match(r.out, new RegExp(`${rule}: ${from.replace(/\./g, '\\.')} → ${to.replace(/\./g, '\\.')}`), `${rule} not reported:\n${r.out}`);
      assert.match(r.out, /no-unknown-layer: src\/newlayer\/a\.ts/, r.out);
      assert.match(r.out, /no-circular: src\/mine\/(x|y)\.ts/, r.out);
      // the allowed directions stay allowed
      assert.doesNotMatch(r.out, /src\/tensor\/tensor\.ts → src\/native\.ts/);
      assert.doesNotMatch(r.out, /src\/kernels\.ts → src\/native\.ts/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('experiment drivers', () => {
  it("import the library only through its public entry ('xling'), never dist/ or src/ internals", () => {
    const dir = join(root, 'experiments');
    const files = readdirSync(dir).filter((f) => f.endsWith('.mjs'));
    assert.ok(files.length >= 10, 'the drivers are there');
    const internal = /(?:from\s+|import\s*\()\s*[`'"][^`'"]*(?:\bdist\/|\bsrc\/|\$\{)/;
    const offenders = files.filter((f) => internal.test(readFileSync(join(dir, f), 'utf8')));
    assert.deepEqual(offenders, []);
    assert.ok(internal.test(`const S = await import(\`$\{D}/mine/scorer/index.js\`);`), 'the check catches a dynamic import of internals');
    assert.ok(internal.test("import { startLocalRedis } from '../dist/src/cluster/local-redis.js';"), 'and a static one');
  });
});

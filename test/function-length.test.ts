// The function-length check (scripts/check-function-length.mjs, run by `npm test` as
// lint:functions): the source tree passes it, and a planted long function is caught — counted with
// the closures nested in it — as is an entry of the list of long functions that is no longer long.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const script = join(root, 'scripts', 'check-function-length.mjs');

function checkTree(dir: string): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [script, dir], { encoding: 'utf8' });
  return { status: r.status, out: r.stdout + r.stderr };
}

const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');

describe('function-length check', () => {
  it('the source tree passes', () => {
    const r = checkTree(root);
    assert.equal(r.status, 0, r.out);
  });

  it('catches a long function (its nested closures counted), names methods and callbacks, and flags a listed function that is short now', () => {
    const dir = mkdtempSync(join(tmpdir(), 'xling-fnlen-'));
    try {
      mkdirSync(join(dir, 'src', 'a'), { recursive: true });
      mkdirSync(join(dir, 'scripts'));
      const files: Record<string, string> = {
        // 3 lines of its own, 98 in a closure: 101 in all
        'src/a/outer.ts': `export function outer() {\n  const inner = () => {\n${body(96)}\n  };\n  return inner;\n}\n`,
        'src/a/fine.ts': `export function fine() {\n${body(98)}\n}\n`, // 100 lines: at the limit
        'src/a/cls.ts': `export class K {\n  run() {\n${body(99)}\n  }\n}\n`,
        'src/a/cb.ts': `register('x', () => {\n${body(99)}\n});\n`,
        'src/a/listed.ts': `export function listed() {\n${body(120)}\n}\nexport function gone() {}\n`,
      };
      for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, f), text);
      writeFileSync(join(dir, 'scripts', 'long-functions.json'), JSON.stringify({ 'src/a/listed.ts': ['listed', 'gone'] }));
      const r = checkTree(dir);
      assert.equal(r.status, 1, r.out);
      assert.match(r.out, /src\/a\/outer\.ts:1: outer spans 101 lines/);
      assert.match(r.out, /src\/a\/cls\.ts:2: K\.run spans 101 lines/);
      assert.match(r.out, /src\/a\/cb\.ts:1: register callback spans 101 lines/);
      assert.match(r.out, /src\/a\/listed\.ts gone is no longer over 100 lines/);
      assert.doesNotMatch(r.out, /fine|inner|: listed spans/);
      assert.equal(r.out.trim().split('\n').length, 4, r.out);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('holds a command run body in src/cli to 40 lines, named by its words, and flags a listed one that is short now', () => {
    const dir = mkdtempSync(join(tmpdir(), 'xling-runlen-'));
    try {
      mkdirSync(join(dir, 'src', 'cli'), { recursive: true });
      mkdirSync(join(dir, 'scripts'));
      const run = (n: number) => `async (a) => {\n${body(n)}\n}`;
      writeFileSync(
        join(dir, 'src', 'cli', 'x.ts'),
        [
          `export const long = command(['eval', 'x'], {}, ${run(39)});`, // 41 lines
          `export const ok = command(['ok'], {}, ${run(38)});`, // 40 lines: at the limit
          `export const listed = command(['listed'], {}, ${run(50)});`,
          `export const was = command(['was'], {}, ${run(2)});`,
          '',
        ].join('\n'),
      );
      writeFileSync(join(dir, 'scripts', 'long-run-bodies.json'), JSON.stringify({ 'src/cli/x.ts': ['listed', 'was'] }));
      const r = checkTree(dir);
      assert.equal(r.status, 1, r.out);
      assert.match(r.out, /src\/cli\/x\.ts:1: eval x spans 41 lines \(at most 40 for a command run body/);
      assert.match(r.out, /long-run-bodies\.json: src\/cli\/x\.ts was is no longer over 40 lines/);
      assert.equal(r.out.trim().split('\n').length, 2, r.out);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

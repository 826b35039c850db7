// scripts/bucc-sets.mjs: BUCC-format mining sets dealt from an N-way parallel TSV (the out-of-domain
// and other-pair checks of the mining scorer in bench/RESULTS.md are made with it).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, describe, it } from 'node:test';

const dir = mkdtempSync(join(tmpdir(), 'xling-bucc-sets-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// 41 rows: en in every row, de in all but every fifth (33 rows with both), fr in every row
const rows: string[][] = [];
for (let i = 0; i < 41; i++) rows.push([`english ${i}`, i % 5 === 4 ? '' : `deutsch ${i}`, `français ${i}`]);
const tsv = join(dir, 'par.tsv.gz');
writeFileSync(tsv, gzipSync(['en\tde\tfr', ...rows.map((r) => r.join('\t'))].join('\n') + '\n'));
const run = (...a: string[]) => spawnSync(process.execPath, ['scripts/bucc-sets.mjs', ...a], { encoding: 'utf8' });
const read = (f: string) =>
  readFileSync(f, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split('\t') as [string, string]);

describe('scripts/bucc-sets.mjs', () => {
  it('deals the rows translated into both languages into gold pairs and sentences of one side only', () => {
    const out = join(dir, 'sets');
    const r = run(tsv, out, '--langs', 'de,fr', '--split', 'test');
    assert.equal(r.status, 0, r.stderr);
    for (const [xx, n] of [
      ['de', 33],
      ['fr', 41],
    ] as const) {
      const S = read(join(out, `${xx}-en.test.${xx}`)),
        T = read(join(out, `${xx}-en.test.en`)),
        G = read(join(out, `${xx}-en.test.gold`));
      const g = Math.floor(n / 4),
        u = Math.floor((n - g) / 2);
      assert.equal(G.length, g);
      assert.equal(S.length, g + u);
      assert.equal(T.length, g + u);
      // ids unique, files ordered by id
      for (const side of [S, T]) {
        assert.equal(new Set(side.map(([id]) => id)).size, side.length);
        assert.deepEqual(
          side.map(([id]) => id),
          side.map(([id]) => id).sort(),
        );
      }
      const src = new Map(S),
        trg = new Map(T);
      // a gold pair is one row's two sentences; every sentence comes from a row that has both
      const row = (s: string) => Number(s.split(' ').pop());
      for (const [s, t] of G) assert.equal(row(src.get(s)!), row(trg.get(t)!));
      const goldRows = new Set(G.map(([s]) => row(src.get(s)!)));
      const srcOnly = S.filter(([id]) => !G.some(([s]) => s === id)).map(([, x]) => row(x));
      const trgOnly = T.filter(([id]) => !G.some(([, t]) => t === id)).map(([, x]) => row(x));
      assert.equal(srcOnly.length, u);
      // no sentence without its translation has it on the other side, and no row is used twice
      const used = [...goldRows, ...srcOnly, ...trgOnly];
      assert.equal(new Set(used).size, used.length);
      if (xx === 'de') for (const i of used) assert.notEqual(i % 5, 4, `row ${i} has no German`);
    }
  });

  it('is deterministic and refuses a language the TSV lacks', () => {
    const a = join(dir, 'a'),
      b = join(dir, 'b');
    assert.equal(run(tsv, a, '--langs', 'de').status, 0);
    assert.equal(run(tsv, b, '--langs', 'de').status, 0);
    for (const f of ['de-en.dev.de', 'de-en.dev.en', 'de-en.dev.gold']) assert.equal(readFileSync(join(a, f), 'utf8'), readFileSync(join(b, f), 'utf8'));
    const r = run(tsv, join(dir, 'c'), '--langs', 'de,xx');
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--langs: xx is not a column/);
    assert.equal(existsSync(join(dir, 'c')), false, 'nothing written');
  });

  it('--pivot deals pairs with another language than English', () => {
    const out = join(dir, 'pivot');
    const r = run(tsv, out, '--langs', 'de', '--pivot', 'fr');
    assert.equal(r.status, 0, r.stderr);
    const S = new Map(read(join(out, 'de-fr.dev.de'))),
      T = new Map(read(join(out, 'de-fr.dev.fr'))),
      G = read(join(out, 'de-fr.dev.gold'));
    assert.equal(G.length, Math.floor(33 / 4));
    for (const [s, t] of G) {
      assert.match(S.get(s)!, /^deutsch /);
      assert.equal(T.get(t), `français ${S.get(s)!.split(' ')[1]}`);
    }
    const bad = run(tsv, join(dir, 'pivot-bad'), '--langs', 'de', '--pivot', 'xx');
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--pivot: .* has no 'xx' column/);
    assert.equal(existsSync(join(dir, 'pivot-bad')), false, 'nothing written');
    assert.equal(run(tsv, join(dir, 'pivot-same'), '--langs', 'fr', '--pivot', 'fr').status, 2);
  });
});

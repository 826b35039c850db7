// Partial translations (src/mine/truncated.ts), and the scorer's parallel sets with them (xling
// scorer train's 'truncated' setting).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parallelSets } from '../../src/mine/scorer/index.js';
import { truncated } from '../../src/mine/truncated.js';
import { Rng } from '../../src/util/rng.js';

const dir = mkdtempSync(join(tmpdir(), 'xling-truncated-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('partial translations', () => {
  it('a partial translation: the first 40–70% of the words, cut at a word end, in scripts with and without spaces', () => {
    const rng = new Rng('truncated');
    for (const [text, words] of [
      ['Save the current document under a new name.', 8],
      ['現在のドキュメントを新しい名前で保存します', 0],
      ['Сохранить текущий документ под новым именем.', 6],
    ] as const) {
      const n = words || [...new Intl.Segmenter(undefined, { granularity: 'word' }).segment(text)].filter((w) => w.isWordLike).length;
      for (let i = 0; i < 20; i++) {
        const t = truncated(text, rng)!;
        assert.ok(text.startsWith(t) && t.length < text.length, t);
        const kept = [...new Intl.Segmenter(undefined, { granularity: 'word' }).segment(t)].filter((w) => w.isWordLike).length;
        assert.ok(kept >= Math.round(0.4 * n) && kept <= Math.round(0.7 * n), `${kept} of ${n} words: ${t}`);
        assert.ok(!/\s$/.test(t), 'ends at a word');
      }
    }
    assert.equal(truncated('Open the file', rng), null, 'fewer than four words');
  });

  it('parallel sets with partial translations: more sentences, none gold, each a prefix of a translation of the corpus', async () => {
    const rows = Array.from({ length: 200 }, (_, i) => [`Le fichier numéro ${i} du programme a été ouvert`, `The file number ${i} of the program was opened`]);
    writeFileSync(join(dir, 't.tsv'), 'fr\ten\n' + rows.map((r) => r.join('\t')).join('\n') + '\n');
    const [plain] = await parallelSets(join(dir, 't.tsv'), [['fr', 'en']], 100, 1, 50);
    const [tr] = await parallelSets(join(dir, 't.tsv'), [['fr', 'en']], 100, 1, 50, { truncated: true });
    const gt = (s: typeof plain) =>
      [...s!.gold]
        .map((g) => g.split('\t').map(Number))
        .map(([a, b]) => `${s!.src[a!]}\t${s!.trg[b!]}`)
        .sort();
    assert.deepEqual(gt(tr), gt(plain), 'the same gold pairs');
    const extraSrc = tr!.src.filter((s) => !plain!.src.includes(s)),
      extraTrg = tr!.trg.filter((t) => !plain!.trg.includes(t));
    // every target-only row (20) gets a partial source, every source-only row a partial target, and about a quarter of the pairs one more
    assert.equal(extraSrc.length, 20);
    assert.ok(extraTrg.length >= 25 && extraTrg.length <= 45, `${extraTrg.length} partial targets`);
    for (const [side, extra] of [
      [0, extraSrc],
      [1, extraTrg],
    ] as const)
      for (const x of extra)
        assert.ok(
          rows.some((r) => r[side]!.startsWith(x) && r[side] !== x),
          x,
        );
  });
});

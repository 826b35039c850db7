// Synthetic siblings (src/mine/siblings.ts): the tokens a translation copies, and a sibling that
// changes exactly one of them on the side asked; partial translations; the scorer's parallel sets
// with siblings and with partial translations.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parallelSets } from '../src/cli/scorer.js';
import { copiedPool, copiedTokens, sibling, truncated } from '../src/mine/siblings.js';
import { Rng } from '../src/util/rng.js';

const dir = mkdtempSync(join(tmpdir(), 'xling-siblings-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The tokens (ASCII runs) in which two strings differ, as [in a, in b]; null when they differ elsewhere. */
function tokenDiff(a: string, b: string): [string, string] | null {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  while (i > 0 && /\w/.test(a[i - 1]!)) i--;
  let j = 0;
  while (j < a.length - i && j < b.length - i && a[a.length - 1 - j] === b[b.length - 1 - j]) j++;
  while (j > 0 && /\w/.test(a[a.length - j]!)) j--;
  const x = a.slice(i, a.length - j), y = b.slice(i, b.length - j);
  return /^\w+$/.test(x) && /^\w+$/.test(y) ? [x, y] : null;
}

describe('synthetic siblings', () => {
  it('copied tokens: numbers, names and code found on both sides; not one-letter words, not words of one side', () => {
    assert.deepEqual(copiedTokens('Генерировать код для 68060.', 'Generate code for a 68060.'), ['68060']);
    assert.deepEqual(copiedTokens('gfc_trans_code(): Некорректный код оператора в %L', 'gfc_trans_code(): Bad statement code at %L'), ['gfc_trans_code']);
    assert.deepEqual(copiedTokens('для CIRRUS размер videoram должен составлять 8 МБ', 'videoram must be at least 8MB for CIRRUS'), ['CIRRUS', 'videoram']);
    assert.deepEqual(copiedTokens('Datei öffnen', 'Open file'), []);
    assert.deepEqual(copiedTokens('Die Datei in GIMP öffnen', 'Open the file in Gimp'), ['GIMP']);
    assert.deepEqual(copiedTokens('ファイル A を開く', 'Open file A'), []);
  });

  it('a sibling changes one copied token on the side asked: a number by one digit, a name to one of the pool', () => {
    const rng = new Rng(1), pool = ['XML', 'RAM', 'gtk_widget'];
    for (let i = 0; i < 50; i++) {
      const t = sibling('Генерировать код для 68060.', 'Generate code for a 68060.', 'b', rng, pool)!;
      const [x, y] = tokenDiff('Generate code for a 68060.', t)!;
      assert.equal(x, '68060');
      assert.equal(y.length, 5);
      assert.notEqual(y, x);
      assert.equal([...x].filter((c, k) => c !== y[k]).length, 1, `${x} → ${y}`);
      assert.notEqual(y[0], '0');
    }
    const s = sibling('Экспортировать в файл SVG', 'Export to an SVG file', 'a', rng, pool)!;
    const [x, y] = tokenDiff('Экспортировать в файл SVG', s)!;
    assert.equal(x, 'SVG');
    assert.ok(pool.includes(y), y);
    assert.equal(sibling('Datei öffnen', 'Open file', 'a', rng, pool), null);
    assert.equal(sibling('Экспорт SVG', 'Export SVG', 'a', rng, []), null, 'a name and an empty pool');
    assert.equal(sibling('Экспорт SVG', 'Export SVG', 'a', rng, ['svg']), null, 'the pool has only the same name');
    // seeded
    const draw = () => { const r = new Rng(7); return Array.from({ length: 5 }, () => sibling('Ошибка 404 в XML', 'Error 404 in XML', 'b', r, pool)); };
    assert.deepEqual(draw(), draw());
    assert.deepEqual(copiedPool([['a XML 5', 'b XML 5'], ['c', 'd'], ['Ошибка gtk_widget', 'error in gtk_widget']]), ['XML', 'gtk_widget']);
  });

  it('parallel sets with siblings: more sentences, none gold, each a translation with one token changed', async () => {
    const rows = Array.from({ length: 200 }, (_, i) => [`Fichier ${i} de PROG${i % 7} ouvert`, `File ${i} of PROG${i % 7} opened`]);
    writeFileSync(join(dir, 'p.tsv'), 'fr\ten\n' + rows.map((r) => r.join('\t')).join('\n') + '\n');
    const [plain] = await parallelSets(join(dir, 'p.tsv'), [['fr', 'en']], 100, 1, 50);
    const [sib] = await parallelSets(join(dir, 'p.tsv'), [['fr', 'en']], 100, 1, 50, { siblings: true });
    assert.equal(plain!.gold.size, 60);
    assert.equal(sib!.gold.size, 60);
    const gt = (s: typeof plain) => [...s!.gold].map((g) => g.split('\t').map(Number)).map(([a, b]) => `${s!.src[a!]}\t${s!.trg[b!]}`).sort();
    assert.deepEqual(gt(sib), gt(plain), 'the same gold pairs');
    const extraSrc = sib!.src.filter((s) => !plain!.src.includes(s)), extraTrg = sib!.trg.filter((t) => !plain!.trg.includes(t));
    // every target-only row (20) gets a source sibling, every source-only row a target one, and a quarter of the pairs each
    assert.ok(extraSrc.length >= 20 && extraSrc.length <= 45, `${extraSrc.length} source siblings`);
    assert.ok(extraTrg.length >= 20 && extraTrg.length <= 45, `${extraTrg.length} target siblings`);
    const all = new Set(rows.flat());
    for (const s of [...extraSrc, ...extraTrg]) {
      assert.ok(!all.has(s), s);
      const near = rows.flat().find((r) => tokenDiff(r, s) !== null);
      assert.ok(near, `${s}: one token away from a sentence of the corpus`);
    }
  });

  it('a partial translation: the first 40–70% of the words, cut at a word end, in scripts with and without spaces', () => {
    const rng = new Rng('truncated');
    for (const [text, words] of [['Save the current document under a new name.', 8], ['現在のドキュメントを新しい名前で保存します', 0], ['Сохранить текущий документ под новым именем.', 6]] as const) {
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
    const gt = (s: typeof plain) => [...s!.gold].map((g) => g.split('\t').map(Number)).map(([a, b]) => `${s!.src[a!]}\t${s!.trg[b!]}`).sort();
    assert.deepEqual(gt(tr), gt(plain), 'the same gold pairs');
    const extraSrc = tr!.src.filter((s) => !plain!.src.includes(s)), extraTrg = tr!.trg.filter((t) => !plain!.trg.includes(t));
    // every target-only row (20) gets a partial source, every source-only row a partial target, and about a quarter of the pairs one more
    assert.equal(extraSrc.length, 20);
    assert.ok(extraTrg.length >= 25 && extraTrg.length <= 45, `${extraTrg.length} partial targets`);
    for (const [side, extra] of [[0, extraSrc], [1, extraTrg]] as const) for (const x of extra) assert.ok(rows.some((r) => r[side]!.startsWith(x) && r[side] !== x), x);
  });
});

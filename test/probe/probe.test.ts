// The code-switching probe on a toy language pair with a known lexicon: the aligner recovers the
// word translations, a switch replaces the asked share of words with them, and the probe finds
// the original sentence with an encoder that knows the lexicon — but not with one that does not.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { knn } from '../../src/index/faiss.js';
import { alignRows, codeSwitch, codeSwitchProbe, words } from '../../src/probe/code-switch.js';
import { probeLanguages } from '../../src/probe/code-switch-run.js';
import { UsageError } from '../../src/util/args.js';
import { Rng } from '../../src/util/rng.js';

// a lexicon of 40 concepts in English and two toy languages (same word order)
const N = 40;
const en = Array.from({ length: N }, (_, i) => `e${i}`),
  xa = Array.from({ length: N }, (_, i) => `a${i}`),
  xb = Array.from({ length: N }, (_, i) => `b${i}`);
function table(rows: number, seed: number): Map<string, string>[] {
  const rng = new Rng(seed);
  return Array.from({ length: rows }, () => {
    const c = Array.from({ length: 4 + rng.int(5) }, () => rng.int(N));
    return new Map([
      ['en', c.map((i) => en[i]).join(' ')],
      ['xa', c.map((i) => xa[i]).join(' ')],
      ['xb', c.map((i) => xb[i]).join(' ')],
    ]);
  });
}

/** Unit sentence vectors from word vectors: a concept part, plus (weight w) a part of the word itself. */
function encoder(w: number, dim = 64) {
  const rng = new Rng(5);
  const vec = () => Float32Array.from({ length: dim }, () => rng.normal());
  const concept = Array.from({ length: N }, vec);
  const own = new Map([...en, ...xa, ...xb].map((x) => [x, vec()]));
  return (texts: string[]) => {
    const out = new Float32Array(texts.length * dim);
    texts.forEach((t, i) => {
      for (const x of words(t)) {
        const c = Number(x.slice(1)),
          o = own.get(x)!;
        for (let j = 0; j < dim; j++) out[i * dim + j]! += concept[c]![j]! + w * o[j]!;
      }
      let s = 0;
      for (let j = 0; j < dim; j++) s += out[i * dim + j]! ** 2;
      for (let j = 0; j < dim; j++) out[i * dim + j]! /= Math.sqrt(s);
    });
    return out;
  };
}

describe('code-switching probe', () => {
  const rows = table(300, 1);

  it('aligns each English word with its translation, and switches the asked share of words', () => {
    const al = alignRows(rows, ['xa', 'xb'], { train: table(1500, 2) });
    let right = 0,
      all = 0;
    for (const l of ['xa', 'xb']) {
      for (const [r, byWord] of al.get(l)!) {
        const e = words(rows[r]!.get('en')!);
        for (const [j, t] of byWord) {
          all++;
          if (t.length === 1 && t[0] === `${l[1]}${e[j]!.slice(1)}`) right++;
        }
      }
    }
    assert.ok(all > 300 * 4 * 0.8, `links: ${all}`);
    assert.ok(right / all > 0.95, `correct links ${right}/${all}`);
    const rng = new Rng(3);
    const s = codeSwitch(rows[0]!.get('en')!, 0, al, ['xa', 'xb'], 2, 0.5, rng)!;
    const before = words(rows[0]!.get('en')!),
      after = words(s.text);
    assert.equal(after.length, before.length);
    assert.equal(after.filter((x, j) => x !== before[j]).length, s.replaced);
    assert.equal(s.replaced, Math.max(1, Math.round(0.5 * before.length)));
    assert.ok(after.every((x) => /^[eab]\d+$/.test(x)));
    assert.equal(codeSwitch(rows[0]!.get('en')!, 0, al, ['xa', 'xb'], 3, 0.5, rng), null, 'three languages asked, two exist');
  });

  it('an encoder that shares meaning across languages keeps the original nearest; a meaningless one does not', async () => {
    const run = async (embed: (texts: string[]) => Float32Array) =>
      codeSwitchProbe({
        rows,
        langs: ['xa', 'xb'],
        rates: [0.2, 0.4],
        switchLangs: [1, 2],
        sentences: 100,
        seed: 1,
        alignTrain: table(1500, 2),
        dim: 64,
        embed: async (texts) => embed(texts),
        knn: (q, base, d, k) => knn(q, base, d, k, 'ip'),
      });
    const shared = await run(encoder(0.3));
    assert.equal(shared.collection, 900);
    for (const c of shared.cells) {
      assert.equal(c.probes, 100);
      assert.ok(c.rowTop1 >= 0.97, `shared: rate ${c.rate}, ${c.langs} languages: its row nearest ${c.rowTop1}`);
      assert.ok(c.originalTop1 >= 0.8, `shared: rate ${c.rate}, ${c.langs} languages: original nearest ${c.originalTop1}`);
    }
    // a vector per text, unrelated to its words: the original is found by chance only (1 in 900)
    const random = await run((texts) => {
      const out = new Float32Array(texts.length * 64);
      texts.forEach((t, i) => {
        const rng = new Rng(t);
        for (let j = 0; j < 64; j++) out[i * 64 + j] = rng.normal() / 8;
      });
      return out;
    });
    for (const c of random.cells) assert.ok(c.originalTop1 <= 0.05 && c.rowTop1 <= 0.05, `random: ${JSON.stringify(c)}`);
  });
});

describe('probed languages', () => {
  it("default to the table's space-delimited languages besides en, and refuse what the table cannot give", () => {
    assert.deepEqual(probeLanguages('t.tsv', ['en', 'ja', 'fr', 'de', 'zh'], [], [1, 2]), ['de', 'fr']);
    assert.deepEqual(probeLanguages('t.tsv', ['en', 'ja', 'fr'], ['ja'], [1]), ['ja']);
    assert.throws(
      () => probeLanguages('t.tsv', ['de', 'fr'], [], [1]),
      (e: Error) => !(e instanceof UsageError) && /t\.tsv: no en column/.test(e.message),
    );
    assert.throws(
      () => probeLanguages('t.tsv', ['en', 'fr'], ['fr', 'en', 'xx'], [1]),
      (e: Error) => e instanceof UsageError && e.message === '--langs: en, xx are not a column of --data besides en',
    );
    assert.throws(
      () => probeLanguages('t.tsv', ['en', 'fr', 'de'], [], [2, 3]),
      (e: Error) => e instanceof UsageError && e.message === '--switch-langs: 3 languages asked, --langs has 2',
    );
  });
});

// The hashed n-gram tokenizer's fast paths (encodeBatch, the normaliser's shortcuts) give the ids
// of the plain algorithm, bit for bit: a reference copy of it below (normalisation, FNV-1a n-grams
// and words) against the tokenizer on every language of the bundled sample and on edge cases.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { HashedNgramTokenizer, NgramOptions } from '../../src/text/ngrams.js';
import { normalize, NormalizeOptions, romanize } from '../../src/text/normalize.js';
import { root } from '../fixtures/cli.js';

// ---- the reference: the algorithm as first written (src/text/normalize.ts, src/text/ngrams.ts) ----
const PUNCT: [RegExp, string][] = [
  [/[\u2018\u2019\u201A\u201B\u2032\u00B4`]/g, "'"],
  [/[\u201C\u201D\u201E\u201F\u2033\u00AB\u00BB]/g, '"'],
  [/[\u2010\u2011\u2012\u2013\u2014\u2015\u2212]/g, '-'],
  [/\u2026/g, '...'],
  [/[\u00A0\u2000-\u200A\u202F\u205F\u3000]/g, ' '],
  [/[\u200B-\u200D\u2060\uFEFF]/g, ''],
];
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g;
function refNormalize(s: string, o: NormalizeOptions): string {
  let t = s.normalize('NFKC').replace(CONTROL, ' ');
  for (const [re, rep] of PUNCT) t = t.replace(re, rep);
  t = t.replace(/\s+/g, ' ').trim();
  if (o.lowercase ?? true) t = t.toLowerCase();
  if (o.romanize) t = romanize(t);
  return t;
}
function fnv(s: string, start: number, end: number, h = 0x811c9dc5): number {
  for (let i = start; i < end; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
/** The i-th extra hash (hash embeddings) as specified: murmur3's finaliser of h XOR (i × 0x9E3779B9), in BigInt arithmetic. */
function refExtra(h: number, i: number): number {
  const M = (1n << 32n) - 1n;
  let x = (BigInt(h) ^ ((BigInt(i) * 0x9e3779b9n) & M)) & M;
  x = ((x ^ (x >> 16n)) * 0x85ebca6bn) & M;
  x = ((x ^ (x >> 13n)) * 0xc2b2ae35n) & M;
  return Number(x ^ (x >> 16n));
}
function refEncode(s: string, o: NgramOptions, norm: NormalizeOptions): number[] {
  const {
    ngrams: [lo, hi],
    buckets,
    words,
    maxFeatures,
  } = o;
  const hashes = o.hashes ?? 1;
  let text = refNormalize(s.length > 4 * maxFeatures ? s.slice(0, 4 * maxFeatures) : s, norm);
  if (text.length > maxFeatures) text = text.slice(0, maxFeatures);
  const t = ` ${text} `;
  const out: number[] = [];
  // a feature's ids: its FNV bucket, then its extra hashes' buckets (while there is room)
  const feature = (h: number) => {
    for (let j = 0; j < hashes && out.length < maxFeatures; j++) out.push(4 + ((j ? refExtra(h, j) : h) % buckets));
  };
  for (let i = 0; i < t.length && out.length < maxFeatures; i++) {
    for (let n = lo; n <= Math.min(hi, t.length - i) && out.length < maxFeatures; n++) feature(fnv(t, i, i + n));
  }
  if (words) {
    const w = fnv('w:', 0, 2);
    for (const word of text.split(' ')) if (word && out.length < maxFeatures) feature(fnv(word, 0, word.length, w));
  }
  return out;
}

/** Every cell of the bundled sample's dev TSV (13 languages) and, where it is present, of the first 2,000 rows of the shared gettext dev set (40 languages). */
function devCells(): string[] {
  const cells = (file: string, rows: number) =>
    gunzipSync(readFileSync(file))
      .toString('utf8')
      .trimEnd()
      .split('\n')
      .slice(1, 1 + rows)
      .flatMap((l) => l.split('\t'));
  const shared = resolve(root, '..', 'shared/data/gettext/dev.tsv.gz');
  return [...cells(join(root, 'data/sample/gettext.dev.tsv.gz'), Infinity), ...(existsSync(shared) ? cells(shared, 2000) : [])];
}

const EDGE = [
  '',
  ' ',
  '\t\n',
  'a',
  'A  B\tC\n\nd',
  '  leading and trailing  ',
  'don`t “quote” ‘single’ «guillemets» – dash — em … dots',
  'nbsp\u00A0thin\u2009ideo\u3000space',
  'zero\u200Bwidth\uFEFFjoin\u2060',
  'ctrl\u0001\u0007\u007F\u0085x',
  'ﬁ ligature ① ＡＢＣ ｶﾞ',
  'Ελληνικά ΚΕΦΑΛΑΙΑ Ωραία',
  'Русский ТЕКСТ ёжик',
  '日本語のテキスト、句読点。',
  '😀 emoji 𝔵𝔶𝔷 surrogates',
  'İstanbul ß ǅ',
  'x'.repeat(3000),
  'word '.repeat(700),
  'Tab\tseparated\tCOLUMNS',
  'e\u0301 combining',
  'Ǆ digraph',
  'ASCII only: Open the file (Ctrl+O) [100%] {x} ~/a_b-c.d?!',
];

describe('hashed n-gram tokenizer: fast paths = the plain algorithm', () => {
  const cells = [...devCells(), ...EDGE];
  const configs: [NgramOptions, NormalizeOptions][] = [
    [{ ngrams: [1, 5], buckets: 1 << 20, words: true, maxFeatures: 512 }, { lowercase: true }],
    [{ ngrams: [2, 4], buckets: 1000, words: false, maxFeatures: 64 }, { lowercase: false }],
    [
      { ngrams: [1, 3], buckets: 4096, words: true, maxFeatures: 9 },
      { lowercase: true, romanize: true },
    ],
    // hash embeddings: 2 and 3 ids per feature (a power-of-two table and another)
    [{ ngrams: [1, 5], buckets: 1 << 18, words: true, maxFeatures: 1024, hashes: 2 }, { lowercase: true }],
    [{ ngrams: [2, 4], buckets: 1000, words: true, maxFeatures: 64, hashes: 3 }, { lowercase: false }],
  ];

  it('normalize() = the reference normaliser on every sample cell and the edge cases', () => {
    for (const o of [{ lowercase: true }, { lowercase: false }, { lowercase: true, romanize: true }] as NormalizeOptions[]) {
      for (const s of cells) assert.equal(normalize(s, o), refNormalize(s, o), JSON.stringify(s.slice(0, 80)));
    }
  });

  it('encode() and encodeBatch() = the reference ids (and the same truncation counts)', () => {
    for (const [o, norm] of configs) {
      const a = new HashedNgramTokenizer(o, norm),
        b = new HashedNgramTokenizer(o, norm);
      const batch = b.encodeBatch(cells);
      assert.equal(batch.length, cells.length);
      cells.forEach((s, i) => {
        const want = refEncode(s, o, norm);
        assert.deepEqual(Array.from(a.encode(s)), want, `encode ${JSON.stringify(s.slice(0, 60))}`);
        assert.deepEqual(Array.from(batch[i]!), want, `encodeBatch ${JSON.stringify(s.slice(0, 60))}`);
      });
      assert.equal(a.truncated, b.truncated);
      assert.ok(o.maxFeatures > 100 || a.truncated > 0);
      assert.deepEqual(b.encodeBatch([]), []);
    }
  });

  it("hashes: each feature's first id is its one-hash id, the others differ from it; out-of-range counts refused", () => {
    const one = new HashedNgramTokenizer({ ngrams: [1, 5], buckets: 1 << 18, words: true, maxFeatures: 4096 }, {});
    const two = new HashedNgramTokenizer({ ngrams: [1, 5], buckets: 1 << 18, words: true, maxFeatures: 4096, hashes: 2 }, {});
    let differ = 0,
      total = 0;
    for (const s of cells.slice(0, 500)) {
      const a = one.encode(s),
        b = two.encode(s);
      assert.equal(b.length, 2 * a.length);
      a.forEach((id, i) => {
        assert.equal(b[2 * i], id);
        total++;
        if (b[2 * i + 1] !== id) differ++;
      });
    }
    assert.ok(total > 1000 && differ / total > 0.99, `${differ} of ${total} extra ids differ from the first`);
    for (const h of [0, 9, 1.5])
      assert.throws(
        () => new HashedNgramTokenizer({ ngrams: [1, 5], buckets: 8, words: true, maxFeatures: 8, hashes: h }, {}),
        /hashes must be an integer from 1 to 8/,
      );
  });
});

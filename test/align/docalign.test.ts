// Sentence alignment (src/align/, xling align): the DP on hand-made costs with known answers
// (2:1 merges, 1:2 splits, deletions, insertions; every path of small cases enumerated), the band
// and vecalign's coarse-to-fine search (the same path as the exact DP, cells linear in the
// documents), vecalign's strict and lax F1, synthetic documents of held-out rows of the bundled
// dev sample aligned with a small trained model against the length and in-order baselines, a
// translated GNOME help page checked against pairs verified by hand, the command end to end, and
// bad input.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { AlignedGroup, alignmentTypes, alignOptions, alignSentences, embedderOf, LevelInfo, SentenceEmbedder } from '../../src/align/align.js';
import { alignDp, bandAround, bandCells, CostModel, DpGroup, galeChurchCosts, pathRanges } from '../../src/align/dp.js';
import { formatAlignment, TSV_HEADER } from '../../src/align/files.js';
import { Group, inOrderAlignment, lengthAlignment, parseVecalign, scoreAlignments, vecalignLine } from '../../src/align/score.js';
import { syntheticDocument, SyntheticOptions } from '../../src/align/synthetic.js';
import { loadSentenceEncoder } from '../../src/embed/model-dir.js';
import { loadEncoderForRuntime } from '../../src/embed/portable.js';
import { hashSeed, Rng } from '../../src/util/rng.js';
import { cliInProcess, devColumn, root, temporariesIn, tinyDualModel } from '../fixtures/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'xling-docalign-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const f = (name: string) => join(dir, name);

const groupsOf = (g: readonly DpGroup[]) => g.map((x) => `${x.srcStart}-${x.srcEnd}:${x.trgStart}-${x.trgEnd}`);
const shown = (g: readonly Group[]) => g.map((x) => `${x.src.join(',')}-${x.trg.join(',')}`);

/** A cost model from a table of group costs `i,j,dx,dy` (others: 1:1 `one`, larger groups 5), deletions `del`. */
function tableCosts(n: number, m: number, table: Record<string, number>, one = 1, del = 0.6): CostModel {
  return {
    n,
    m,
    types: alignmentTypes(4),
    cost: (i, j, dx, dy) => table[`${i},${j},${dx},${dy}`] ?? (dx === 1 && dy === 1 ? one : 5),
    delSrc: () => del,
    delTrg: () => del,
  };
}

/** The cheapest total over every path (exhaustive), for small cost models. */
function bruteForce(c: CostModel): number {
  const memo = new Map<string, number>();
  const go = (i: number, j: number): number => {
    if (i === 0 && j === 0) return 0;
    const k = `${i},${j}`;
    if (memo.has(k)) return memo.get(k)!;
    let best = Infinity;
    for (const [dx, dy] of c.types) if (i >= dx && j >= dy) best = Math.min(best, go(i - dx, j - dy) + c.cost(i, j, dx, dy));
    if (i > 0) best = Math.min(best, go(i - 1, j) + c.delSrc(i - 1));
    if (j > 0) best = Math.min(best, go(i, j - 1) + c.delTrg(j - 1));
    memo.set(k, best);
    return best;
  };
  return go(c.n, c.m);
}

describe('alignment DP on hand-made costs', () => {
  it('finds a 2:1 merge, a 1:2 split, a deletion and an insertion where they are cheapest', () => {
    assert.deepEqual(groupsOf(alignDp(tableCosts(3, 2, { '2,1,2,1': 0.2, '3,2,1,1': 0.1 }))), ['0-2:0-1', '2-3:1-2']);
    assert.deepEqual(groupsOf(alignDp(tableCosts(2, 3, { '1,2,1,2': 0.2, '2,3,1,1': 0.1 }))), ['0-1:0-2', '1-2:2-3']);
    // source sentence 1 has no good partner: deleted (0.6) rather than forced into a 1:1 (1.0)
    assert.deepEqual(groupsOf(alignDp(tableCosts(3, 2, { '1,1,1,1': 0.1, '3,2,1,1': 0.1 }))), ['0-1:0-1', '1-2:1-1', '2-3:1-2']);
    // target sentence 1 inserted
    assert.deepEqual(groupsOf(alignDp(tableCosts(2, 3, { '1,1,1,1': 0.1, '2,3,1,1': 0.1 }))), ['0-1:0-1', '1-1:1-2', '1-2:2-3']);
    // a 2:2 and a 3:1 when they are cheaper than their parts
    assert.deepEqual(groupsOf(alignDp(tableCosts(5, 3, { '2,2,2,2': 0.3, '5,3,3,1': 0.2 }))), ['0-2:0-2', '2-5:2-3']);
    // the group costs add up to the path's total
    const g = alignDp(tableCosts(3, 2, { '2,1,2,1': 0.2, '3,2,1,1': 0.1 }));
    assert.deepEqual(
      g.map((x) => +x.cost.toFixed(9)),
      [0.2, 0.1],
    );
  });

  it('is the cheapest of all paths (every path of 60 random small cases enumerated)', () => {
    const rng = new Rng(7);
    for (let t = 0; t < 60; t++) {
      const n = rng.int(5),
        m = rng.int(5),
        table: Record<string, number> = {};
      for (let i = 1; i <= n; i++) for (let j = 1; j <= m; j++) for (const [dx, dy] of alignmentTypes(4)) table[`${i},${j},${dx},${dy}`] = rng.next() * dx * dy;
      const c = tableCosts(n, m, table, 1, 0.1 + rng.next());
      const g = alignDp(c);
      const total = g.reduce((s, x) => s + x.cost, 0);
      assert.ok(Math.abs(total - bruteForce(c)) < 1e-9, `case ${t} (${n}×${m}): DP ${total}, best ${bruteForce(c)}`);
      // the groups tile both documents in order
      if (g.length)
        assert.deepEqual(
          [g.map((x) => x.srcStart), g.map((x) => x.trgStart)],
          [
            [0, ...g.slice(0, -1).map((x) => x.srcEnd)],
            [0, ...g.slice(0, -1).map((x) => x.trgEnd)],
          ],
        );
      if (g.length) assert.deepEqual([g.at(-1)!.srcEnd, g.at(-1)!.trgEnd], [n, m]);
      else assert.deepEqual([n, m], [0, 0]);
    }
  });

  it('inside a band around the best path finds that path; a band around a wrong path still reaches the end', () => {
    const rng = new Rng(11),
      n = 80,
      m = 90,
      table: Record<string, number> = {};
    // a diagonal of cheap 1:1 pairs with a drift, the rest noisy
    for (let i = 1; i <= n; i++)
      for (let j = 1; j <= m; j++) table[`${i},${j},1,1`] = Math.abs(j - Math.round((i * m) / n)) < 1 ? 0.1 * rng.next() : 0.5 + rng.next();
    const c = tableCosts(n, m, table);
    const full = alignDp(c);
    const band = bandAround(pathRanges(full, n, m), n, m, 3);
    assert.ok(bandCells(band) < 0.2 * (n + 1) * (m + 1), `band of ${bandCells(band)} cells`);
    assert.deepEqual(groupsOf(alignDp(c, band)), groupsOf(full));
    // a band around the in-order path (1:1 then insertions): a path, never cheaper than the best
    const order: DpGroup[] = inOrderAlignment(n, m).map((x) => ({
      srcStart: x.src[0] ?? n,
      srcEnd: x.src.length ? x.src[0]! + 1 : n,
      trgStart: x.trg[0]!,
      trgEnd: x.trg[0]! + 1,
      cost: 0,
    }));
    const narrow = alignDp(c, bandAround(pathRanges(order, n, m), n, m, 1));
    assert.ok(narrow.reduce((s, x) => s + x.cost, 0) >= full.reduce((s, x) => s + x.cost, 0) - 1e-9);
    assert.throws(() => alignDp(c, { lo: new Int32Array(n + 1), hi: new Int32Array(n + 1) }), /must contain \(0, 0\) and \(n, m\)/);
  });

  it('Gale–Church: lengths alone find a merge and a split', () => {
    // 40+38 characters ↔ one of 80; 100 ↔ 48+50; the rest 1:1
    const src = [20, 40, 38, 100, 30],
      trg = [21, 80, 48, 50, 31];
    const g = alignDp(galeChurchCosts(src, trg));
    assert.deepEqual(groupsOf(g), ['0-1:0-1', '1-3:1-2', '3-4:2-4', '4-5:4-5']);
    assert.deepEqual(shown(lengthAlignment(['a'.repeat(20), 'b'.repeat(40), 'c'.repeat(38)], ['x'.repeat(21), 'y'.repeat(80)])), ['0-0', '1,2-1']);
  });
});

describe("vecalign's scores and line format", () => {
  it('strict and lax precision, recall and F1 as vecalign counts them', () => {
    const gold: Group[] = [
      { src: [0], trg: [0] },
      { src: [1, 2], trg: [1] },
      { src: [3], trg: [] },
      { src: [4], trg: [2] },
    ];
    const test: Group[] = [
      { src: [0], trg: [0] },
      { src: [1], trg: [1] },
      { src: [2], trg: [] },
      { src: [3], trg: [] },
      { src: [4], trg: [2] },
    ];
    const s = scoreAlignments([gold], [test]);
    // precision over the 5 test groups: 3 exact ([0]:[0], [3]:[], [4]:[2]), [1]:[1] lax, [2]:[] not
    assert.equal(s.precisionStrict, 3 / 5);
    assert.equal(s.precisionLax, 4 / 5);
    // recall over the 3 aligned gold groups, against the aligned test groups: 2 exact, [1,2]:[1] lax
    assert.equal(s.recallStrict, 2 / 3);
    assert.equal(s.recallLax, 1);
    assert.ok(Math.abs(s.f1Strict - (2 * 0.6 * (2 / 3)) / (0.6 + 2 / 3)) < 1e-12);
    const perfect = scoreAlignments([gold], [gold]);
    assert.deepEqual([perfect.f1Strict, perfect.f1Lax], [1, 1]);
    assert.throws(() => scoreAlignments([gold], []), /1 gold documents, 0 test/);
  });

  it('[0, 1]:[2]:0.123456 lines written and read back; bad lines named', () => {
    const g = [
      { src: [0, 1], trg: [2], cost: 0.1234564 },
      { src: [], trg: [3], cost: 0.5 },
    ];
    assert.deepEqual(g.map(vecalignLine), ['[0, 1]:[2]:0.123456', '[]:[3]:0.500000']);
    assert.deepEqual(parseVecalign(g.map(vecalignLine).join('\n') + '\n'), [
      { src: [0, 1], trg: [2] },
      { src: [], trg: [3] },
    ]);
    assert.deepEqual(parseVecalign('[0]:[0]\n[1,2]:[1]\n'), [
      { src: [0], trg: [0] },
      { src: [1, 2], trg: [1] },
    ]);
    assert.throws(() => parseVecalign('[0]:[0]\n[x]:[1]\n', 'gold.txt'), /gold\.txt:2: '\[x\]'/);
  });
});

/**
 * A deterministic embedder for tests of the search: source sentence `a17` and target sentence
 * `b17` are the same random direction plus their own noise; a text of several sentences is the
 * normalised sum of theirs (so an overlap of two sentences matches their merged translation).
 */
function tokenEmbedder(d = 24, noise = 0.35): SentenceEmbedder {
  const unit = (seed: number) => {
    const r = new Rng(seed);
    return Float32Array.from({ length: d }, () => r.normal());
  };
  return {
    dim: d,
    async embed(texts) {
      const out = new Float32Array(texts.length * d);
      texts.forEach((t, k) => {
        for (const tok of t.split(' ').filter(Boolean)) {
          const base = unit(hashSeed(tok.slice(1))),
            own = unit(hashSeed(tok));
          for (let x = 0; x < d; x++) out[k * d + x]! += base[x]! + noise * own[x]!;
        }
        let s = 0;
        for (let x = 0; x < d; x++) s += out[k * d + x]! ** 2;
        for (let x = 0; x < d; x++) out[k * d + x]! /= Math.sqrt(s) || 1;
      });
      return out;
    },
  };
}

const tokenDoc = (rows: number, seed: number, o: SyntheticOptions = {}) =>
  syntheticDocument(
    Array.from({ length: rows }, (_, i) => [`a${i}`, `b${i}`] as [string, string]),
    { seed, ...o },
  );

describe('vecalign search', () => {
  const emb = tokenEmbedder();

  it("long documents: the coarse-to-fine search gives the exact DP's alignment, searching cells linear in the length", async () => {
    const doc = tokenDoc(500, 3);
    const exactLevels: LevelInfo[] = [],
      fastLevels: LevelInfo[] = [];
    const exact = await alignSentences(doc.src, doc.trg, emb, { maxFullDp: 1000, levels: exactLevels });
    const fast = await alignSentences(doc.src, doc.trg, emb, { maxFullDp: 40, levels: fastLevels });
    assert.equal(exactLevels.length, 1);
    assert.ok(exactLevels[0]!.exact);
    assert.ok(fastLevels.length >= 4, `${fastLevels.length} levels`);
    assert.deepEqual(shown(fast), shown(exact));
    // (strict errors: vecalign prefers absorbing an unaligned sentence into its neighbour's group,
    // 1:2 at a cost of about 0.6 here, over a deletion at its 20th percentile of random pairs, about 0.8)
    const s = scoreAlignments([doc.gold], [fast]);
    assert.ok(s.f1Strict > 0.85 && s.f1Lax > 0.98, `F1 ${JSON.stringify(s)}`);
    const clean = tokenDoc(500, 3, { deletion: 0, insertion: 0 });
    assert.ok(scoreAlignments([clean.gold], [await alignSentences(clean.src, clean.trg, emb, { maxFullDp: 40 })]).f1Strict > 0.97);
    // a document of 6000 sentences: every level's band is linear in n + m (no n·m matrix)
    const big = tokenDoc(6000, 4),
      levels: LevelInfo[] = [];
    const t0 = performance.now();
    const g = await alignSentences(big.src, big.trg, emb, { levels });
    const top = levels.at(-1)!;
    assert.equal(top.n, big.src.length);
    assert.ok(top.cells < 40 * (top.n + top.m), `${top.cells} cells for ${top.n} × ${top.m}`);
    for (const l of levels) assert.ok(l.exact ? l.n * l.m <= 300 * 300 : l.cells < 40 * (l.n + l.m + 2), JSON.stringify(l));
    assert.ok(scoreAlignments([big.gold], [g]).f1Strict > 0.85);
    console.log(
      `# ${big.src.length} × ${big.trg.length} sentences aligned in ${((performance.now() - t0) / 1000).toFixed(1)}s; levels ${levels.map((l) => `${l.n}×${l.m}:${l.cells}`).join(' ')}`,
    );
  });

  it('is deterministic, returns normalised costs, and covers every sentence once', async () => {
    const doc = tokenDoc(120, 5);
    const a = await alignSentences(doc.src, doc.trg, emb),
      b = await alignSentences(doc.src, doc.trg, emb);
    assert.deepEqual(a, b);
    assert.deepEqual(
      a.flatMap((x) => x.src),
      doc.src.map((_, i) => i),
    );
    assert.deepEqual(
      a.flatMap((x) => x.trg),
      doc.trg.map((_, i) => i),
    );
    for (const x of a) assert.ok(x.cost >= 0 && Number.isFinite(x.cost));
    // groups of matching sentences cost less than deletions
    const dels = a.filter((x) => !x.src.length || !x.trg.length),
      pairs = a.filter((x) => x.src.length && x.trg.length);
    assert.ok(dels.length > 0 && pairs.length > 0);
    assert.ok(
      Math.max(
        ...pairs
          .map((x) => x.cost)
          .sort((p, q) => p - q)
          .slice(0, pairs.length >> 1),
      ) < dels[0]!.cost,
    );
    // 1:1 only (maxGroup 2): merges become a 1:1 and a deletion
    const ones = await alignSentences(doc.src, doc.trg, emb, { maxGroup: 2 });
    assert.ok(ones.every((x) => x.src.length <= 1 && x.trg.length <= 1));
    // empty documents: the other side's sentences unaligned
    assert.deepEqual(await alignSentences([], ['x', 'y'], emb), [
      { src: [], trg: [0], cost: 0 },
      { src: [], trg: [1], cost: 0 },
    ]);
    assert.deepEqual(await alignSentences([], [], emb), []);
  });
});

// a small model trained on the bundled sample's training rows (cached across test files under npm test)
const model = f('model');
tinyDualModel(dir, model, { features: { buckets: 65536, dim: 64 }, encoder: { outDim: 64 }, batch: { size: 128 }, budget: { pairs: 20000 } });

/** Sentences of the GNOME help page fixture, split with Intl.Segmenter. */
function pageSentences(lang: string): string[] {
  const seg = new Intl.Segmenter(lang, { granularity: 'sentence' });
  return readFileSync(join(root, `test/fixtures/align/user-goodpassword.${lang}.txt`), 'utf8')
    .trim()
    .split('\n')
    .flatMap((block) => [...seg.segment(block)].map((s) => s.segment.trim()).filter(Boolean));
}

describe('xling align with a trained model', () => {
  // the model as xling align opens it (a bag-of-n-grams model: the portable runtime), so that the library's groups are the command's
  const m = loadEncoderForRuntime(model);
  const emb = embedderOf(m);

  it('synthetic documents of held-out rows (merges, splits, deletions): F1 well above the length and in-order baselines', async () => {
    for (const [s, t] of [
      ['de', 'en'],
      ['fr', 'en'],
    ] as const) {
      const rows = devColumn(s).map((x, i) => [x, devColumn(t)[i]!] as [string, string]);
      const gold: Group[][] = [],
        ours: AlignedGroup[][] = [],
        len: Group[][] = [],
        order: Group[][] = [];
      for (let d = 0; d < 3; d++) {
        const doc = syntheticDocument(rows.slice(d * 100, d * 100 + 100), { seed: d });
        gold.push(doc.gold);
        ours.push(await alignSentences(doc.src, doc.trg, emb, { srcLang: s, trgLang: t }));
        len.push(lengthAlignment(doc.src, doc.trg));
        order.push(inOrderAlignment(doc.src.length, doc.trg.length));
      }
      const [v, l, o] = [ours, len, order].map((x) => scoreAlignments(gold, x));
      const pct = (x: number) => (100 * x).toFixed(1);
      console.log(
        `# ${s}-${t}: strict/lax F1 vecalign ${pct(v!.f1Strict)}/${pct(v!.f1Lax)}, length ${pct(l!.f1Strict)}/${pct(l!.f1Lax)}, in order ${pct(o!.f1Strict)}/${pct(o!.f1Lax)}`,
      );
      assert.ok(v!.f1Strict > 0.6 && v!.f1Lax > 0.9, `${s}-${t}: vecalign ${JSON.stringify(v)}`);
      assert.ok(v!.f1Strict > l!.f1Strict + 0.1 && v!.f1Lax > l!.f1Lax + 0.1, `${s}-${t}: length baseline ${JSON.stringify(l)}`);
      assert.ok(v!.f1Strict > o!.f1Strict + 0.3, `${s}-${t}: in order ${JSON.stringify(o)}`);
    }
  });

  it('a translated GNOME help page (English → German): the hand-verified groups', async () => {
    const en = pageSentences('en'),
      de = pageSentences('de');
    assert.deepEqual([en.length, de.length], [27, 30]);
    // verified by hand: the German splits three sentences in two (7, 15, 25), the rest is 1:1
    const expected: Group[] = [];
    for (let i = 0, j = 0; i < en.length; i++) {
      const two = i === 7 || i === 15 || i === 25;
      expected.push({ src: [i], trg: two ? [j, j + 1] : [j] });
      j += two ? 2 : 1;
    }
    assert.equal(de[expected[15]!.trg[1]!], 'Dies ist wirklich sehr schnell zu erraten!');
    const g = await alignSentences(en, de, emb, { srcLang: 'en', trgLang: 'de' });
    const key = (x: Group) => `${x.src.join(',')}-${x.trg.join(',')}`;
    const found = new Set(g.map(key));
    const hits = expected.filter((x) => found.has(key(x)));
    const s = scoreAlignments([expected], [g]),
      base = scoreAlignments([expected], [lengthAlignment(en, de)]);
    console.log(
      `# GNOME page: ${hits.length} of ${expected.length} hand-verified groups found; strict/lax F1 ${s.f1Strict.toFixed(3)}/${s.f1Lax.toFixed(3)} (length baseline ${base.f1Strict.toFixed(3)}/${base.f1Lax.toFixed(3)})`,
    );
    assert.ok(hits.length >= 20, `found ${shown(g).join(' ')}`);
    assert.ok(found.has('15-16,17'), 'the 1:2 split of “The most common password is …”');
    // (Gale–Church gets this page exactly right: a close translation of plain prose, where lengths say it all)
    assert.ok(s.f1Strict >= 0.7 && s.f1Lax >= 0.85, JSON.stringify({ s, base }));
  });

  it('the command: one pair as TSV (also from standard input), many pairs as vecalign lines, the same groups as the library', async () => {
    const rows = devColumn('de').map((x, i) => [x, devColumn('en')[i]!] as [string, string]);
    const docs = [0, 1].map((d) => syntheticDocument(rows.slice(200 + d * 40, 240 + d * 40), { seed: 10 + d }));
    docs.forEach((d, k) => {
      writeFileSync(f(`d${k}.de`), d.src.join('\n') + '\n');
      writeFileSync(f(`d${k}.en`), d.trg.join('\n') + '\n');
    });
    const lib = await Promise.all(docs.map((d) => alignSentences(d.src, d.trg, emb, { srcLang: 'de', trgLang: 'en' })));
    // in this process (runCli, as main.js runs it); standard input below as a real process
    const r = await cliInProcess([
      'align',
      '--src',
      f('d0.de'),
      '--trg',
      f('d0.en'),
      '--model',
      model,
      '--src-lang',
      'de',
      '--trg-lang',
      'en',
      '-o',
      f('one.tsv'),
    ]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /\d+ × \d+ sentences → \d+ groups, \d+ unaligned sentences/);
    const tsv = readFileSync(f('one.tsv'), 'utf8');
    assert.equal(tsv, formatAlignment(lib[0]!, docs[0]!.src, docs[0]!.trg, { format: 'tsv', deletions: false }));
    const lines = tsv.trimEnd().split('\n');
    assert.equal(lines[0], TSV_HEADER);
    const first = lines[1]!.split('\t'),
      g0 = lib[0]!.find((x) => x.src.length && x.trg.length)!;
    assert.deepEqual(first.slice(1, 3), [g0.src.join(','), g0.trg.join(',')]);
    assert.equal(first[3], g0.src.map((i) => docs[0]!.src[i]).join(' '));
    assert.ok(lines.slice(1).every((l) => l.split('\t').length === 5 && l.split('\t')[1] !== '' && l.split('\t')[2] !== ''));
    // --deletions keeps the rows of unaligned sentences; standard input for --src
    const p = spawnSync(
      process.execPath,
      [
        join(root, 'dist/src/cli/main.js'),
        'align',
        '--src',
        '-',
        '--trg',
        f('d0.en'),
        '--model',
        model,
        '--src-lang',
        'de',
        '--trg-lang',
        'en',
        '-o',
        '-',
        '--deletions',
      ],
      { input: readFileSync(f('d0.de')), encoding: 'utf8' },
    );
    assert.equal(p.status, 0, p.stderr);
    assert.equal(p.stdout, formatAlignment(lib[0]!, docs[0]!.src, docs[0]!.trg, { format: 'tsv', deletions: true }));
    assert.ok(p.stdout.split('\n').slice(1, -1).length === lib[0]!.length);
    // many pairs: a list relative to its folder, one named output, one default name
    writeFileSync(f('list.tsv'), `d0.de\td0.en\tfirst.align\n\n${f('d1.de')}\td1.en\n`);
    const many = await cliInProcess([
      'align',
      '--pairs',
      f('list.tsv'),
      '--model',
      model,
      '--src-lang',
      'de',
      '--trg-lang',
      'en',
      '--format',
      'vecalign',
      '-o',
      f('out/aligned'),
    ]);
    assert.equal(many.status, 0, many.stderr);
    assert.match(many.stderr, /2 document pairs/);
    for (const [k, name] of [
      [0, 'first.align'],
      [1, 'd1.de.align'],
    ] as const) {
      const text = readFileSync(f(`out/aligned/${name}`), 'utf8');
      assert.deepEqual(
        parseVecalign(text),
        lib[k]!.map((x) => ({ src: x.src, trg: x.trg })),
      );
      assert.equal(text, lib[k]!.map((x) => vecalignLine(x) + '\n').join(''));
    }
  });
});

describe('xling align: bad input', () => {
  const good = ['align', '--src', f('p.de'), '--trg', f('p.en'), '--model', model];
  writeFileSync(f('p.de'), devColumn('de').slice(0, 12).join('\n') + '\n');
  writeFileSync(f('p.en'), devColumn('en').slice(0, 12).join('\n') + '\n');
  writeFileSync(f('empty.txt'), '');

  const refused = async (args: string[], code: number, message: RegExp, out?: string) => {
    const r = await cliInProcess(args);
    assert.equal(r.status, code, `${args.join(' ')}: ${r.status}\n${r.stderr}`);
    assert.match(r.stderr, message);
    assert.doesNotMatch(r.stderr, /\n\s+at .*:\d+:\d+\)?\n/, 'a stack trace');
    if (out) assert.ok(!existsSync(out), `${out} written`);
  };

  it('missing files, empty documents, unknown languages and malformed lists are refused with a message naming them, writing nothing', async () => {
    await refused([...good.map((x) => (x === f('p.de') ? f('missing.de') : x)), '-o', f('x1.tsv')], 1, /--src .*missing\.de: no such file/, f('x1.tsv'));
    await refused([...good.map((x) => (x === f('p.en') ? f('empty.txt') : x)), '-o', f('x2.tsv')], 1, /--trg .*empty\.txt: empty document/, f('x2.tsv'));
    await refused([...good, '--src-lang', 'xx', '-o', f('x3.tsv')], 1, /--src-lang 'xx': the model has no language of that code/, f('x3.tsv'));
    await refused([...good, '--trg-lang', 'not a code', '-o', f('x3.tsv')], 1, /--trg-lang 'not a code': not a language code/, f('x3.tsv'));
    await refused([...good, '--pairs', f('list.tsv'), '-o', f('x4')], 2, /--src and --trg, or --pairs, not both/, f('x4'));
    await refused(['align', '--src', f('p.de'), '--model', model, '-o', f('x5.tsv')], 2, /give --trg too/, f('x5.tsv'));
    await refused([...good, '-o', f('p.de')], 2, /would overwrite the input --src/);
    await refused([...good, '--max-group', '1', '-o', f('x6.tsv')], 2, /--max-group must be/, f('x6.tsv'));
    writeFileSync(f('bad-list.tsv'), 'p.de\tp.en\np.de\n');
    await refused(
      ['align', '--pairs', f('bad-list.tsv'), '--model', model, '-o', f('x7')],
      1,
      /bad-list\.tsv:2: expected src_path<TAB>trg_path/,
      join(f('x7'), 'p.de.tsv'),
    );
    writeFileSync(f('gap-list.tsv'), 'p.de\tp.en\tone.tsv\np.de\tnowhere.en\ttwo.tsv\n');
    await refused(
      ['align', '--pairs', f('gap-list.tsv'), '--model', model, '-o', f('x8')],
      1,
      /gap-list\.tsv:2: target .*nowhere\.en: no such file/,
      join(f('x8'), 'one.tsv'),
    );
    writeFileSync(f('empty-list.tsv'), 'p.de\tp.en\tone.tsv\nempty.txt\tp.en\ttwo.tsv\n');
    await refused(
      ['align', '--pairs', f('empty-list.tsv'), '--model', model, '-o', f('x9')],
      1,
      /empty-list\.tsv:2: source .*empty\.txt: empty document/,
      join(f('x9'), 'one.tsv'),
    );
    mkdirSync(f('sub'), { recursive: true });
    writeFileSync(f('sub/p.de'), 'Hallo\n');
    writeFileSync(f('twin-list.tsv'), 'p.de\tp.en\nsub/p.de\tp.en\n');
    await refused(['align', '--pairs', f('twin-list.tsv'), '--model', model, '-o', f('x10')], 2, /name the same file/);
    assert.deepEqual(temporariesIn(dir), []);
  });

  it('embedderOf: vectors as xling embed makes them, whatever the chunk', async () => {
    const m = loadSentenceEncoder(model),
      texts = devColumn('de').slice(0, 50);
    const whole = await embedderOf(m).embed(texts, 'de');
    assert.deepEqual(whole, m.embed(texts, { lang: 'de' }));
    assert.deepEqual(await embedderOf(m, { chunk: 7 }).embed(texts, 'de'), whole);
    // 'auto' is decided once over all the texts: chunks are centred alike
    assert.deepEqual(await embedderOf(m, { chunk: 7 }).embed(texts, undefined), m.embed(texts, { lang: 'auto' }));
  });

  it('the library: an unknown language and bad options are errors naming them', async () => {
    const emb = embedderOf(loadSentenceEncoder(model));
    await assert.rejects(alignSentences(['a'], ['b'], emb, { srcLang: 'xx' }), /source document: language 'xx': the model has no language/);
    await assert.rejects(alignSentences(['a'], ['b'], emb, { trgLang: 'x y' }), /target document: language 'x y': not a language code/);
    assert.throws(() => alignOptions({ maxGroup: 1 }), /maxGroup must be an integer in \[2, 12\]/);
    assert.throws(() => alignOptions({ delPercentile: 2 }), /delPercentile must be in \[0, 1\]/);
  });
});

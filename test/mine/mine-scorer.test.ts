// Mining beyond the margin: the surface features on hand-made pairs, the second-stage scorer on
// a toy set that the margin cannot separate, the filters (each removes what it names and nothing
// else), threshold selection by target precision, and the commands end to end.
import assert from 'node:assert/strict';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { gunzipSync } from 'node:zlib';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { evaluateBucc } from '../../src/util/precision-recall.js';
import {
  codeAgreement,
  codeTokensOf,
  finalPunctuation,
  multisetJaccard,
  multisetMismatch,
  numbersOf,
  placeholdersOf,
  surfaceFeatures,
  SURFACE_FEATURES,
  urlsOf,
} from '../../src/mine/features.js';
import { filterPairs, thresholdForPrecision } from '../../src/mine/filters.js';
import { ALIGN_FEATURES, trainWordTables, WordAligner, wordsOf } from '../../src/mine/scorer/word-align/features.js';
import { marginOfPairs, mineTables } from '../../src/mine/mine.js';
import {
  addCompetitorFeatures,
  addPairFeatures,
  assignOneToOne,
  candidatePairs,
  COMPETITOR_FEATURES,
  enumerateCandidates,
  FEATURES,
  fitLogistic,
  KNN_FEATURES,
  loadScorer,
  mineWithScorer,
  realign,
  scoreGivenPairs,
  saveScorer,
  scoreCandidate,
  ScorerModel,
  scorerTables,
  selectByScorer,
  selfTablesFeatures,
  trainScorer,
  withSelfHead,
  crossFittedTables,
} from '../../src/mine/scorer/index.js';
import { Rng } from '../../src/util/rng.js';
import { blocksOf, DIGEST_LINES, linesOf, scanCorpus } from '../../src/mine/scorer/corpus-passes.js';
import { cli, cliAsync, devColumn, mainJs, root, tinyDualModel } from '../fixtures/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'xling-scorer-'));
after(() => rmSync(dir, { recursive: true, force: true }));
/** A settings file (--config) holding `s`, written into the test directory. */
const settings = (name: string, s: unknown) => {
  const f = join(dir, `cfg-${name}.json`);
  writeFileSync(f, JSON.stringify(s));
  return f;
};

describe('mining features', () => {
  it('placeholders: printf, Python, braces, shell, tags and entities, tags by name', () => {
    assert.deepEqual(placeholdersOf('Copy %s to %1$d of %-10.3f (%%)'), ['%s', '%1$d', '%-10.3f', '%%']);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell placeholder in a translated string, on purpose
    assert.deepEqual(placeholdersOf('Hello %(name)s, {0} and {user} in ${HOME} $PATH'), ['%(name)s', '{0}', '{user}', '${HOME}', '$PATH']);
    assert.deepEqual(placeholdersOf('<b>Bold</b> <a href="x">link</a> &amp; line\\n'), ['<b>', '</b>', '<a>', '</a>', '&amp;', '\\n']);
    assert.deepEqual(placeholdersOf('100% sure, 50 % off'), []);
    // a translation that keeps them agrees; one that drops one does not
    assert.equal(multisetJaccard(placeholdersOf('Datei %s nicht gefunden'), placeholdersOf('File %s not found')), 1);
    assert.ok(multisetJaccard(placeholdersOf('Datei nicht gefunden'), placeholdersOf('File %s not found')) < 1);
    assert.equal(multisetJaccard(placeholdersOf('<b>Fett</b>'), placeholdersOf('<B class="x">Bold</B>')), 1);
  });

  it('numbers: separators and scripts normalised, different numbers disagree', () => {
    assert.deepEqual(numbersOf('1,000.50 und 1 000,50'), ['100050', '100050']);
    assert.deepEqual(numbersOf('٣ ملفات'), ['3']);
    assert.deepEqual(numbersOf('３個のファイル'), ['3']);
    assert.equal(multisetJaccard(numbersOf('Version 2.4 von 2019'), numbersOf('Version 2,4 of 2019')), 1);
    assert.equal(multisetJaccard(numbersOf('5 Dateien'), numbersOf('6 files')), 0);
    assert.equal(multisetJaccard([], []), 1);
  });

  it('URLs and e-mail addresses; sentence-final punctuation across scripts', () => {
    assert.deepEqual(urlsOf('Siehe https://example.org/a?b=1. oder schreiben Sie an info@example.org'), ['https://example.org/a?b=1', 'info@example.org']);
    assert.deepEqual(urlsOf('Visit www.Example.org, now'), ['www.example.org']);
    assert.equal(finalPunctuation('Fertig.'), '.');
    assert.equal(finalPunctuation('完了。'), '.');
    assert.equal(finalPunctuation('Wirklich？'), '?');
    assert.equal(finalPunctuation('Loading...'), '…');
    assert.equal(finalPunctuation('Name:'), ':');
    assert.equal(finalPunctuation('Open'), '');
  });

  it('surface features: one value per name, agreement features 1 for a faithful pair', () => {
    const f = surfaceFeatures('Datei %s (%d Bytes) gespeichert.', 'File %s (%d bytes) saved.');
    assert.equal(f.length, SURFACE_FEATURES.length);
    const at = (name: string) => f[SURFACE_FEATURES.indexOf(name as (typeof SURFACE_FEATURES)[number])]!;
    assert.equal(at('placeholders_agree'), 1);
    assert.equal(at('final_punct_agree'), 1);
    assert.equal(at('identical'), 0);
    const g = surfaceFeatures('Datei gespeichert', 'File %s (%d bytes) saved?');
    assert.ok(g[SURFACE_FEATURES.indexOf('placeholders_agree')]! < 1);
    assert.equal(g[SURFACE_FEATURES.indexOf('question_agree')]!, 0);
  });
});

describe('content-word features', () => {
  it('code and name tokens: found on the other side or missing, by case, digits, script', () => {
    // names in capitals and identifiers are kept as written by a translation
    assert.deepEqual(codeTokensOf('IOMSG тег в %L'), ['IOMSG']);
    assert.deepEqual(codeTokensOf('Известные M68K микроархитектуры (опция -mtune=)'), ['M68K', 'mtune']);
    assert.deepEqual(codeTokensOf('Import AutoCAD files via gtk_widget or libfoo.so, not Files'), ['AutoCAD', 'gtk_widget', 'libfoo.so']);
    assert.deepEqual(codeTokensOf('Die Datei wurde gespeichert.'), []);
    // a sibling string with another identifier: nothing found, both missing
    assert.deepEqual(codeAgreement('IOMSG тег в %L', 'MOLD tag at %L'), [0, 1, 2]);
    assert.deepEqual(codeAgreement('MOLD тег в %L', 'MOLD tag at %L'), [1, 1, 0]);
    // Latin words of a Cyrillic sentence are found among the other side's tokens, case aside; stems of 4+ letters match
    assert.deepEqual(codeAgreement('Не задано имя окружения qemu', 'unable to find qemu-img'), [1, 1, 0]);
    assert.deepEqual(codeAgreement('AutoCADs Format importieren', "Import AutoCAD's format"), [1, 1, 0]);
    assert.deepEqual(codeAgreement('Datei speichern', 'Save file'), [1, 0, 0]);
  });

  it('number and placeholder mismatches count what one side has and the other lacks', () => {
    assert.equal(multisetMismatch(numbersOf('Генерировать код для 68060.'), numbersOf('Generate code for a 68010.')), 2);
    assert.equal(multisetMismatch(numbersOf('8 МБ für 2 Karten'), numbersOf('2 cards, 8 MB')), 0);
    assert.equal(multisetMismatch(['1', '1', '2'], ['1']), 2);
    const f = surfaceFeatures('Замедлить игру в 10× раз', 'Decrease Game Speed by 1×');
    const at = (name: string) => f[SURFACE_FEATURES.indexOf(name as (typeof SURFACE_FEATURES)[number])]!;
    assert.equal(at('numbers_mismatch'), Math.log1p(2));
    assert.equal(at('placeholders_mismatch'), 0);
    assert.equal(at('code_present'), 0);
  });

  it("best-translation hits: the share of each side's known words whose likeliest translation is on the other side", () => {
    // a tiny parallel text: each German word has one English translation
    const pairs: [string, string][] = [];
    const lex: [string, string][] = [
      ['mehr', 'more'],
      ['panzer', 'armor'],
      ['als', 'than'],
      ['kobra', 'cobra'],
      ['rache', 'vengeance'],
      ['schneller', 'faster'],
      ['die', 'the'],
    ];
    const rng = new Rng(5);
    for (let i = 0; i < 300; i++) {
      const words = rng.shuffle(lex.slice()).slice(0, 3);
      pairs.push([words.map((w) => w[0]).join(' '), words.map((w) => w[1]).join(' ')]);
    }
    const al = new WordAligner(trainWordTables(pairs));
    const at = (f: number[], name: string) => f[ALIGN_FEATURES.indexOf(name as (typeof ALIGN_FEATURES)[number])]!;
    const right = al.features('mehr panzer als rache', 'more armor than vengeance');
    const sibling = al.features('mehr panzer als kobra', 'more armor than vengeance');
    assert.equal(right.length, ALIGN_FEATURES.length);
    assert.equal(at(right, 'align_fwd_best_hit'), 1);
    assert.equal(at(right, 'align_bwd_best_hit'), 1);
    assert.equal(at(sibling, 'align_fwd_best_hit'), 3 / 4);
    assert.equal(at(sibling, 'align_bwd_best_hit'), 3 / 4);
    // unknown words lower the known share, not the hit rate
    const unknown = al.features('mehr panzer xyz', 'more armor');
    assert.equal(at(unknown, 'align_fwd_best_hit'), 1);
    assert.ok(Math.abs(at(unknown, 'align_fwd_known_share') - 2 / 3) < 1e-12);
  });

  it("competitor features: a candidate's content and alignment scores against the best other candidate of its source and of its target", () => {
    const base = KNN_FEATURES.length + SURFACE_FEATURES.length;
    const withAlign = (lp: number, cov: number) => {
      const f = new Array<number>(base).fill(0);
      // logprob both ways, coverage both ways, known, best hits both ways, known shares
      f.push(lp, lp, cov, cov, 1, cov, cov, 1, 1);
      return f;
    };
    // target 0 has two candidate sources: 0 (a sibling string, weaker words) and 1 (its translation); source 1 has one more target
    const cands = [
      { src: 0, trg: 0, features: withAlign(-6, 0.5) },
      { src: 1, trg: 0, features: withAlign(-2, 0.9) },
      { src: 1, trg: 1, features: withAlign(-5, 0.2) },
    ];
    addCompetitorFeatures(cands);
    const gap = (i: number, name: string) =>
      cands[i]!.features[base + ALIGN_FEATURES.length + COMPETITOR_FEATURES.indexOf(name as (typeof COMPETITOR_FEATURES)[number])]!;
    assert.equal(cands[0]!.features.length, FEATURES.length);
    assert.ok(Math.abs(gap(0, 'content_gap_trg') - (0.5 - 0.9)) < 1e-12);
    assert.ok(Math.abs(gap(1, 'content_gap_trg') - (0.9 - 0.5)) < 1e-12);
    assert.equal(gap(1, 'logprob_gap_trg'), 4);
    assert.equal(gap(0, 'logprob_gap_trg'), -4);
    assert.equal(gap(1, 'logprob_gap_src'), 3);
    assert.equal(gap(2, 'logprob_gap_src'), -3);
    // no other candidate: against an empty match (content 0, log-probability log 1e-4)
    assert.ok(Math.abs(gap(0, 'content_gap_src') - 0.5) < 1e-12);
    assert.ok(Math.abs(gap(2, 'logprob_gap_trg') - (-5 - Math.log(1e-4))) < 1e-12);
  });
});

describe('one-to-one assignment', () => {
  const c = (src: number, trg: number, prob: number) => ({ src, trg, prob, margin: prob });
  const pairs = (r: { src: number; trg: number }[]) => r.map((x) => `${x.src}-${x.trg}`).sort();

  it('greedy: each source and target at most once, best probability first', () => {
    const r = assignOneToOne([c(0, 0, 0.9), c(1, 0, 0.8), c(1, 1, 0.3), c(2, 1, 0.7), c(0, 1, 0.2)]);
    assert.deepEqual(pairs(r), ['0-0', '2-1']);
    assert.deepEqual(
      r.map((x) => x.prob),
      [0.9, 0.7],
    );
  });

  it("exchange: a sentence without a translation gives up the sibling's target when its own source has nowhere else to go", () => {
    // source 0 (no translation) is nearest to target 0 (0.9) and near target 1 (0.6); target 0's own source 1 has only it
    const cands = [c(0, 0, 0.9), c(0, 1, 0.6), c(1, 0, 0.55)];
    assert.deepEqual(pairs(assignOneToOne(cands, 'greedy')), ['0-0']);
    assert.deepEqual(pairs(assignOneToOne(cands, 'exchange')), ['0-1', '1-0']);
    // two assigned pairs swap their targets when that raises the sum (0.8 + 0.7 > 0.9 + 0.3)
    const swap = [c(0, 0, 0.9), c(1, 1, 0.3), c(0, 1, 0.8), c(1, 0, 0.7)];
    assert.deepEqual(pairs(assignOneToOne(swap, 'greedy')), ['0-0', '1-1']);
    assert.deepEqual(pairs(assignOneToOne(swap, 'exchange')), ['0-1', '1-0']);
    // and not when it lowers it
    const keep = [c(0, 0, 0.9), c(1, 1, 0.5), c(0, 1, 0.6), c(1, 0, 0.7)];
    assert.deepEqual(pairs(assignOneToOne(keep, 'exchange')), ['0-0', '1-1']);
  });
});

describe('word-alignment features', () => {
  it('tables trained on translations explain a true pair better than a wrong one, both ways', () => {
    const de = devColumn('de'),
      en = devColumn('en');
    const al = new WordAligner(trainWordTables(de.slice(0, 250).map((s, i) => [s, en[i]!])));
    let better = 0,
      n = 0;
    for (let i = 250; i < 300; i++) {
      const right = al.features(de[i]!, en[i]!),
        wrong = al.features(de[i]!, en[i === 299 ? 250 : i + 1]!);
      if (right[0]! + right[1]! > wrong[0]! + wrong[1]!) better++;
      n++;
    }
    assert.ok(better / n >= 0.8, `${better}/${n} held-out pairs scored above a wrong pairing`);
    assert.equal(al.features('Datei', 'file')[4], 1);
    assert.deepEqual(wordsOf('Öffne „Datei.txt“ 日本語'), ['öffne', 'datei', 'txt', '日', '本', '語']);
  });
});

describe('the second-stage scorer', () => {
  it('logistic regression separates a separable toy set', () => {
    const rng = new Rng(3);
    const x: number[][] = [],
      y: number[] = [];
    for (let i = 0; i < 400; i++) {
      const a = rng.normal(),
        b = rng.normal();
      x.push([a, b, rng.normal()]);
      y.push(a + 2 * b > 0.3 ? 1 : 0);
    }
    const m = fitLogistic(x, y, { l2: 1e-4 });
    const ok = x.filter((r, i) => (m.bias + r.reduce((s, v, j) => s + m.weights[j]! * ((v - m.mean[j]!) / m.std[j]!), 0) > 0 ? 1 : 0) === y[i]).length;
    assert.ok(ok >= 396, `${ok}/400 right`);
    // the irrelevant third feature gets a far smaller weight than the two that decide
    assert.ok(Math.abs(m.weights[2]!) < 0.1 * Math.abs(m.weights[1]!), JSON.stringify(m.weights));
  });

  // A toy mining set where the margin cannot tell the translation from a decoy (same cosine up to
  // noise) but the surface can: the true target carries the source's number and placeholder.
  function toySet(seed: number, n: number): { src: string[]; trg: string[]; sv: Float32Array; tv: Float32Array; d: number; gold: Set<string> } {
    const rng = new Rng(seed),
      d = 16;
    const src: string[] = [],
      trg: string[] = [],
      gold = new Set<string>();
    const sv = new Float32Array(n * d),
      tv = new Float32Array(2 * n * d);
    const unit = (v: Float32Array) => {
      let s = 0;
      for (const x of v) s += x * x;
      const k = 1 / Math.sqrt(s);
      return v.map((x) => x * k);
    };
    for (let i = 0; i < n; i++) {
      const base = Float32Array.from({ length: d }, () => rng.normal());
      const num = 10 + i,
        other = 500 + i;
      src.push(`Datei ${num} mit %s geöffnet.`);
      const t = 2 * i,
        dcy = 2 * i + 1,
        swap = rng.next() < 0.5;
      const [ti, di] = swap ? [dcy, t] : [t, dcy];
      trg[ti] = `File ${num} opened with %s.`;
      trg[di] = `File ${other} opened.`;
      gold.add(`${i}\t${ti}`);
      sv.set(unit(base.map((x) => x + 0.05 * rng.normal())), i * d);
      tv.set(unit(base.map((x) => x + 0.05 * rng.normal())), ti * d);
      tv.set(unit(base.map((x) => x + 0.05 * rng.normal())), di * d);
    }
    return { src, trg, sv, tv, d, gold };
  }

  it('learns what the margin cannot see: F1 on held-out toy pairs far above margin-only', () => {
    const train = toySet(1, 150),
      test = toySet(2, 150);
    const cands = (s: ReturnType<typeof toySet>) => {
      const { fwd, bwd } = mineTables(s.sv, s.tv, s.d, { k: 4 });
      return candidatePairs(fwd, bwd, s.src, s.trg);
    };
    const tc = cands(train);
    const m = trainScorer(
      tc,
      tc.map((c) => (train.gold.has(`${c.src}\t${c.trg}`) ? 1 : 0)),
      4,
      { data: 'toy' },
    );
    const hc = cands(test);
    const byScorer = selectByScorer(hc, m).map((c) => ({ src: String(c.src), trg: String(c.trg), score: c.prob }));
    const byMargin = selectByScorer(hc, {
      ...m,
      weights: m.weights.map((_, j) => (j === 1 ? 1 : 0)),
      mean: m.mean.map(() => 0),
      std: m.std.map(() => 1),
      bias: 0,
    }).map((c) => ({ src: String(c.src), trg: String(c.trg), score: c.margin }));
    const g = test.gold;
    const f1s = evaluateBucc(byScorer, g).f1,
      f1m = evaluateBucc(byMargin, g).f1;
    assert.ok(f1s >= 0.97, `scorer F1 ${f1s}`);
    assert.ok(f1s >= f1m + 0.2, `scorer ${f1s} vs margin ${f1m}`);
    // the probability orders a gold candidate above its decoy
    const p = (s: number, t: number) => scoreCandidate(m, hc.find((c) => c.src === s && c.trg === t)!.features);
    const [goldT] = [...g].filter((k) => k.startsWith('0\t')).map((k) => Number(k.split('\t')[1]));
    const decoy = goldT! % 2 ? goldT! - 1 : goldT! + 1;
    if (hc.some((c) => c.src === 0 && c.trg === decoy)) assert.ok(p(0, goldT!) > p(0, decoy));
  });

  it("enumerates each candidate once, in order: every source's and every target's neighbours", () => {
    for (const [seed, n, k] of [
      [4, 30, 4],
      [6, 12, 3],
      [7, 5, 8],
    ] as const) {
      const s = toySet(seed, n);
      const { fwd, bwd } = mineTables(s.sv, s.tv, s.d, { k: Math.min(k, n) });
      const c = enumerateCandidates(fwd, bwd);
      const keys = Array.from({ length: c.n }, (_, i) => `${c.src[i]}\t${c.trg[i]}`);
      assert.equal(new Set(keys).size, c.n);
      for (let i = 1; i < c.n; i++) assert.ok(c.src[i - 1]! < c.src[i]! || (c.src[i - 1] === c.src[i] && c.trg[i - 1]! < c.trg[i]!));
      const want = new Set<string>();
      for (let i = 0; i < fwd.n; i++) for (let j = 0; j < fwd.k; j++) if (fwd.labels[i * fwd.k + j]! >= 0n) want.add(`${i}\t${fwd.labels[i * fwd.k + j]}`);
      for (let i = 0; i < bwd.n; i++) for (let j = 0; j < bwd.k; j++) if (bwd.labels[i * bwd.k + j]! >= 0n) want.add(`${bwd.labels[i * bwd.k + j]}\t${i}`);
      assert.deepEqual(
        keys,
        [...want].sort((x, y) => {
          const [a, b] = x.split('\t').map(Number),
            [c2, d] = y.split('\t').map(Number);
          return a! - c2! || b! - d!;
        }),
      );
      assert.deepEqual(
        candidatePairs(fwd, bwd, s.src, s.trg).map((x) => `${x.src}\t${x.trg}`),
        keys,
      );
    }
  });

  it("mines in columns exactly what scoring every candidate's features gives (greedy and exchange, thresholds, a pair model, word tables)", async () => {
    const train = toySet(1, 60),
      test = toySet(9, 80);
    const al = new WordAligner(
      trainWordTables(
        train.src.map((x, i) => [
          x,
          train.trg[
            [...train.gold]
              .find((g) => g.startsWith(`${i}\t`))!
              .split('\t')
              .map(Number)[1]!
          ]!,
        ]),
      ),
    );
    // a stand-in for the pair model's logits: any fixed function of the pair
    const logitsOf = (src: number[], trg: number[]) => Float32Array.from(src, (x, i) => Math.sin(3 * x + 7 * trg[i]!) * 2);
    const pairLogits = async (src: number[], trg: number[]) => logitsOf(src, trg);
    const { fwd, bwd } = mineTables(train.sv, train.tv, train.d, { k: 4 });
    const tc = candidatePairs(fwd, bwd, train.src, train.trg, al);
    const labels = tc.map((c) => (train.gold.has(`${c.src}\t${c.trg}`) ? 1 : 0));
    const plain = trainScorer(tc, labels, 4, {});
    const bare = trainScorer(candidatePairs(fwd, bwd, train.src, train.trg), labels, 4, {});
    const tp = tc.map((c) => ({ ...c, features: [...c.features] }));
    addPairFeatures(
      tp,
      logitsOf(
        tp.map((c) => c.src),
        tp.map((c) => c.trg),
      ),
    );
    const withPair = trainScorer(
      tp,
      labels,
      4,
      {},
      { pair: { file: 'pair-model.safetensors', config: { dim: 16, pca: 8, hidden: 4, maxWords: 8, center: true }, trained: {} } },
    );
    const t = mineTables(test.sv, test.tv, test.d, { k: 4 });
    for (const [m, aligner] of [
      [bare, null],
      [plain, al],
      [withPair, al],
    ] as const) {
      const hc = candidatePairs(t.fwd, t.bwd, test.src, test.trg, aligner);
      if (m.pair)
        addPairFeatures(
          hc,
          logitsOf(
            hc.map((c) => c.src),
            hc.map((c) => c.trg),
          ),
        );
      for (const assignment of ['greedy', 'exchange'] as const) {
        for (const threshold of [0, 0.5, 0.9]) {
          const want = selectByScorer(hc, m, threshold, assignment);
          const got = await mineWithScorer(test.sv, test.tv, test.d, test.src, test.trg, m, {
            k: 4,
            aligner,
            pairLogits: m.pair ? pairLogits : undefined,
            threshold,
            assignment,
          });
          assert.ok(want.length > (threshold < 0.9 ? 40 : 10), `${want.length} pairs at ${threshold}`);
          assert.deepEqual(got, want);
        }
      }
    }
    await assert.rejects(() => mineWithScorer(test.sv, test.tv, test.d, test.src, test.trg, withPair, { k: 4 }), /give pairLogits/);
  });

  it('scores given pairs as mining scores its candidates; a pair outside the neighbourhoods ranks k and scores lower (scorer score)', async () => {
    const train = toySet(1, 60),
      test = toySet(9, 80);
    const { fwd, bwd } = mineTables(train.sv, train.tv, train.d, { k: 4 });
    const tc = candidatePairs(fwd, bwd, train.src, train.trg);
    const m = trainScorer(
      tc,
      tc.map((c) => (train.gold.has(`${c.src}\t${c.trg}`) ? 1 : 0)),
      4,
      {},
    );
    const mined = await mineWithScorer(test.sv, test.tv, test.d, test.src, test.trg, m, { k: 4 });
    // the mined pairs given back: every one a candidate, so nothing is added and each keeps its probability
    const given = await scoreGivenPairs(
      test.sv,
      test.tv,
      test.d,
      test.src,
      test.trg,
      Int32Array.from(mined, (p) => p.src),
      Int32Array.from(mined, (p) => p.trg),
      m,
      { k: 4 },
    );
    assert.ok(mined.length > 40);
    assert.deepEqual(
      Array.from(given.prob),
      mined.map((p) => p.prob),
    );
    assert.deepEqual(
      Array.from(given.margin),
      mined.map((p) => p.margin),
    );
    // each source with the target its best pair does not have, farthest by cosine: outside both neighbourhoods
    const far = mined.map((p) => {
      let best = -1,
        at = 0;
      for (let t = 0; t < test.tv.length / test.d; t++) {
        let dot = 0;
        for (let j = 0; j < test.d; j++) dot -= test.sv[p.src * test.d + j]! * test.tv[t * test.d + j]!;
        if (dot > best) {
          best = dot;
          at = t;
        }
      }
      return at;
    });
    const both = await scoreGivenPairs(
      test.sv,
      test.tv,
      test.d,
      test.src,
      test.trg,
      Int32Array.from([...mined.map((p) => p.src), ...mined.map((p) => p.src)]),
      Int32Array.from([...mined.map((p) => p.trg), ...far]),
      m,
      { k: 4 },
    );
    const n = mined.length,
      wrong = Array.from(both.prob.subarray(n)),
      right = Array.from(both.prob.subarray(0, n));
    assert.ok(
      wrong.every((p, i) => p < right[i]!),
      'a far target scores below the mined one',
    );
    assert.ok(Math.max(...wrong) < 0.05, `far pairs: ${Math.max(...wrong)}`);
    // without a scorer: the margin xling mine gives each pair
    const mg = marginOfPairs(
      test.sv,
      test.tv,
      test.d,
      mined.map((p) => p.src),
      mined.map((p) => p.trg),
      { k: 4 },
    ).score;
    mined.forEach((p, i) => assert.ok(Math.abs(mg[i]! - p.margin) < 1e-5, `${mg[i]} vs ${p.margin}`));
    // the cosine of an added pair is the vectors' product
    let dot = 0;
    for (let j = 0; j < test.d; j++) dot += test.sv[mined[0]!.src * test.d + j]! * test.tv[far[0]! * test.d + j]!;
    assert.ok(Math.abs(both.cos[n]! - dot) < 1e-5);
  });

  // zh-en translations of the sample (no shared letters for the surface features), and word tables from the first 900
  let zhEn: { rows: [string, string][]; al: WordAligner } | null = null;
  function zhEnSample(): { rows: [string, string][]; al: WordAligner } {
    if (zhEn) return zhEn;
    const [head, ...lines] = gunzipSync(readFileSync(join(root, 'data', 'sample', 'gettext.train.tsv.gz')))
      .toString('utf8')
      .trimEnd()
      .split('\n');
    const cols = head!.split('\t'),
      di = cols.indexOf('zh'),
      ei = cols.indexOf('en');
    const rows = lines
      .map((l) => l.split('\t'))
      .filter((r) => r[di] && r[ei])
      .map((r) => [r[di]!, r[ei]!] as [string, string]);
    return (zhEn = { rows, al: new WordAligner(trainWordTables(rows.slice(0, 900), { minProb: 0.05 })) });
  }
  /** Unit vectors near one random base vector: near(e) adds noise of scale e. */
  function nearOneBase(rng: Rng, d: number): (e: number) => Float32Array {
    const base = Float32Array.from({ length: d }, () => rng.normal());
    return (e) => {
      const v = base.map((x) => x + e * rng.normal());
      let q = 0;
      for (const x of v) q += x * x;
      return v.map((x) => x / Math.sqrt(q));
    };
  }

  it("trains word tables on a corpus's own pairs when the scorer has none for it (--self-tables)", async () => {
    // sets of zh-en translations in which every other source has a decoy target (another row's
    // English) nearer than its translation by the vectors, so that mostly the words tell them apart
    const { rows, al } = zhEnSample();
    const set = (from: number, n: number, decoys: number, seed: number) => {
      const rng = new Rng(seed),
        d = 16;
      const src: string[] = [],
        trg: string[] = [],
        sv: number[] = [],
        tv: number[] = [],
        gold = new Set<string>();
      for (let i = 0; i < n; i++) {
        const near = nearOneBase(rng, d);
        src.push(rows[from + i]![0]);
        sv.push(...near(0.02));
        // the decoy nearer than the translation
        gold.add(`${i}\t${trg.length}`);
        trg.push(rows[from + i]![1]);
        tv.push(...near(i % 2 ? 0.05 : 0.1));
        if (i % 2 === 0) {
          trg.push(rows[decoys + i / 2]![1]);
          tv.push(...near(0.05));
        }
      }
      return { src, trg, sv: Float32Array.from(sv), tv: Float32Array.from(tv), d, gold };
    };
    const labelled = (x: ReturnType<typeof set>, aligner: WordAligner | null) => {
      const t = mineTables(x.sv, x.tv, x.d, { k: 4 });
      const c = candidatePairs(t.fwd, t.bwd, x.src, x.trg, aligner);
      return { c, y: c.map((q) => (x.gold.has(`${q.src}\t${q.trg}`) ? 1 : 0)) };
    };
    // a scorer that has seen pairs with tables and without, as one trained on several language pairs
    const a1 = labelled(set(900, 300, 2600, 1), al),
      a2 = labelled(set(1200, 200, 2750, 2), null);
    const m = trainScorer([...a1.c, ...a2.c], [...a1.y, ...a2.y], 4, {});
    const test = set(1400, 1200, 2850, 3);
    const f1 = async (o: Parameters<typeof mineWithScorer>[6]) =>
      evaluateBucc(
        (await mineWithScorer(test.sv, test.tv, test.d, test.src, test.trg, m, { k: 4, ...o })).map((q) => ({
          src: String(q.src),
          trg: String(q.trg),
          score: q.prob,
        })),
        test.gold,
      ).f1;
    let said: number | null | undefined;
    const steps: number[][] = [];
    const tables = await f1({ aligner: al }),
      none = await f1({}),
      self = await f1({
        selfTables: {
          onTables: (n) => {
            said = n;
          },
          onProgress: (d, t) => steps.push([d, t]),
        },
      });
    assert.ok(said! >= 100, `self tables from ${said} pairs`);
    // the tables' training shows progress: every EM iteration of both directions
    assert.deepEqual(
      steps,
      Array.from({ length: 12 }, (_, i) => [i + 1, 12]),
    );
    assert.ok(tables >= none + 0.02, `with tables ${tables}, without ${none}`);
    assert.ok(self >= none + 0.01, `self-trained tables ${self}, without ${none}`);
    // a cap on the pairs they learn from takes the most probable
    let capped: number[] = [];
    await f1({
      selfTables: {
        maxPairs: 120,
        onTables: (n, found) => {
          capped = [n!, found];
        },
      },
    });
    assert.deepEqual(capped, [120, said]);
    // too few confident pairs: none trained, the first pass is the answer
    let few: number | null | undefined = 0;
    assert.equal(
      await f1({
        selfTables: {
          minPairs: 10_000,
          onTables: (n) => {
            few = n;
          },
        },
      }),
      none,
    );
    assert.equal(few, null);
    // a scorer with the pair's tables does not train its own
    let asked = false;
    assert.equal(
      await f1({
        aligner: al,
        selfTables: {
          onTables: () => {
            asked = true;
          },
        },
      }),
      tables,
    );
    assert.equal(asked, false);
  });

  it('fits a second regression on what self-trained tables make of its training sets, and mines with it in their second pass', async () => {
    const { rows, al } = zhEnSample();
    // sets as above: 60% of the sources with their translation, decoys (other rows' English) as near by the vectors
    const set = (from: number, n: number, seed: number) => {
      const rng = new Rng(seed),
        d = 16;
      const src: string[] = [],
        trg: string[] = [],
        sv: number[] = [],
        tv: number[] = [],
        gold = new Set<string>();
      for (let i = 0; i < n; i++) {
        const near = nearOneBase(rng, d);
        src.push(rows[from + i]![0]);
        sv.push(...near(0.02));
        if (i % 5 < 3) {
          gold.add(`${i}\t${trg.length}`);
          trg.push(rows[from + i]![1]);
          tv.push(...near(0.08));
        }
        trg.push(rows[from + n + i]![1]);
        tv.push(...near(0.08));
      }
      const t = mineTables(Float32Array.from(sv), Float32Array.from(tv), d, { k: 4 });
      return { src, trg, sv: Float32Array.from(sv), tv: Float32Array.from(tv), d, gold, t };
    };
    const a = set(900, 400, 1),
      b = set(1700, 400, 2),
      test = set(2500, 500, 3);
    const ca = candidatePairs(a.t.fwd, a.t.bwd, a.src, a.trg, al),
      cb = candidatePairs(b.t.fwd, b.t.bwd, b.src, b.trg, al);
    const ya = ca.map((q) => (a.gold.has(`${q.src}\t${q.trg}`) ? 1 : 0)),
      yb = cb.map((q) => (b.gold.has(`${q.src}\t${q.trg}`) ? 1 : 0));
    const m = trainScorer([...ca, ...cb], [...ya, ...yb], 4, {});
    // realign: the features candidatePairs gives with that aligner (or none), the others kept
    assert.deepEqual(realign(ca, a.src, a.trg, null), candidatePairs(a.t.fwd, a.t.bwd, a.src, a.trg, null));
    assert.deepEqual(realign(realign(ca, a.src, a.trg, null), a.src, a.trg, al), ca);
    const withTail = ca.map((q) => ({ ...q, features: q.features.concat([7, 8, 9]) }));
    assert.deepEqual(
      realign(withTail, a.src, a.trg, null).map((q) => q.features.slice(-3)),
      ca.map(() => [7, 8, 9]),
    );
    // the self-tables features of each training set; too few pairs: none
    const sa = selfTablesFeatures(ca, a.src, a.trg, m)!,
      sb = selfTablesFeatures(cb, b.src, b.trg, m)!;
    assert.ok(sa.pairs >= 100 && sb.pairs >= 100, `${sa.pairs} ${sb.pairs}`);
    assert.equal(selfTablesFeatures(ca, a.src, a.trg, m, { minPairs: 10_000 }), null);
    const head2 = fitLogistic(
      [...sa.cands, ...sb.cands].map((q) => q.features),
      [...ya, ...yb],
    );
    const mh: ScorerModel = { ...m, self: { ...head2, trained: {} } };
    // mining with self tables: the first pass by the first regression, the second by the head — exactly
    // what scoring the test set's self-tables features with the head gives
    // (with the head, on tables cross-fitted by source, as the head was fitted; without, on tables from all the pairs)
    const steps: number[][] = [];
    const run = (x: ScorerModel) =>
      mineWithScorer(test.sv, test.tv, test.d, test.src, test.trg, x, { k: 4, selfTables: { onProgress: (d, t) => steps.push([d, t]) } });
    const ct = candidatePairs(test.t.fwd, test.t.bwd, test.src, test.trg, null);
    const found = assignOneToOne(ct.map((q) => ({ src: q.src, trg: q.trg, margin: q.margin, prob: scoreCandidate(m, q.features) }))).filter(
      (q) => q.prob >= 0.5,
    );
    const whole = new WordAligner(
      trainWordTables(
        found.map((q) => [test.src[q.src]!, test.trg[q.trg]!]),
        { minProb: 0.05 },
      ),
    );
    const crossed = crossFittedTables(
      found.map((q) => [q.src, q.trg]),
      test.src,
      test.trg,
    );
    assert.deepEqual(await run(mh), selectByScorer(realign(ct, test.src, test.trg, crossed), withSelfHead(mh)));
    assert.deepEqual(
      steps,
      Array.from({ length: 24 }, (_, i) => [i + 1, 24]),
      "both halves' tables, one after the other",
    );
    assert.deepEqual(await run(m), selectByScorer(realign(ct, test.src, test.trg, whole), m));
    assert.deepEqual(selfTablesFeatures(ct, test.src, test.trg, m)!.cands, realign(ct, test.src, test.trg, crossed));
    // no pair is scored by tables that learnt from it: a source's tables are the other half's
    const half = (f: number) =>
      trainWordTables(
        found.filter((q) => q.src % 2 === f).map((q) => [test.src[q.src]!, test.trg[q.trg]!]),
        { minProb: 0.05 },
      );
    assert.deepEqual(crossed(3)!.features(test.src[3]!, test.trg[0]!), new WordAligner(half(0)).features(test.src[3]!, test.trg[0]!));
    assert.deepEqual(crossed(4)!.features(test.src[4]!, test.trg[0]!), new WordAligner(half(1)).features(test.src[4]!, test.trg[0]!));
    // pairs of even sources only: the odd ones are aligned by them, the even ones by nothing, and the progress still ends
    const evenSteps: number[][] = [];
    const evenOnly = crossFittedTables(
      found.filter((q) => q.src % 2 === 0).map((q) => [q.src, q.trg]),
      test.src,
      test.trg,
      (d, t) => evenSteps.push([d, t]),
    );
    assert.equal(evenOnly(2), null);
    assert.deepEqual(evenOnly(3)!.features(test.src[3]!, test.trg[0]!), new WordAligner(half(0)).features(test.src[3]!, test.trg[0]!));
    assert.deepEqual(evenSteps.at(-1), [12, 12]);
    // the head's probabilities are nearer what they claim: the pairs' mean probability against their precision
    const gap = async (x: ScorerModel) => {
      const p = await run(x);
      const prec = p.filter((q) => test.gold.has(`${q.src}\t${q.trg}`)).length / p.length;
      return Math.abs(p.reduce((s2, q) => s2 + q.prob, 0) / p.length - prec);
    };
    const [gh, gm] = [await gap(mh), await gap(m)];
    assert.ok(gh < gm, `calibration gap with the head ${gh}, without ${gm}`);
    // a scorer with the pair's own tables never uses the head
    assert.deepEqual(
      await mineWithScorer(test.sv, test.tv, test.d, test.src, test.trg, mh, { k: 4, aligner: al, selfTables: {} }),
      await mineWithScorer(test.sv, test.tv, test.d, test.src, test.trg, m, { k: 4, aligner: al }),
    );
  });

  it('saves and loads; refuses other formats, feature lists and non-finite weights', () => {
    const s = toySet(4, 30);
    const { fwd, bwd } = mineTables(s.sv, s.tv, s.d, { k: 4 });
    const c = candidatePairs(fwd, bwd, s.src, s.trg);
    const m = trainScorer(
      c,
      c.map((x) => (s.gold.has(`${x.src}\t${x.trg}`) ? 1 : 0)),
      4,
      {},
    );
    saveScorer(join(dir, 'sc'), m);
    assert.deepEqual(loadScorer(join(dir, 'sc')), JSON.parse(JSON.stringify(m)));
    writeFileSync(join(dir, 'bad1.json'), JSON.stringify({ ...m, features: m.features.slice(1) }));
    assert.throws(() => loadScorer(join(dir, 'bad1.json')), /other features/);
    writeFileSync(join(dir, 'bad2.json'), JSON.stringify({ ...m, format: 'x' }));
    assert.throws(() => loadScorer(join(dir, 'bad2.json')), /not an xling scorer/);
    writeFileSync(join(dir, 'bad3.json'), JSON.stringify({ ...m, weights: m.weights.map(() => null) }));
    assert.throws(() => loadScorer(join(dir, 'bad3.json')), /'weights' must hold/);
    assert.throws(() => loadScorer(join(dir, 'none')), /not a scorer/);
    assert.throws(
      () =>
        trainScorer(
          c,
          c.map(() => 0),
          4,
          {},
        ),
      /both gold pairs and wrong ones/,
    );
  });

  it("finds a language pair's word tables by code (BCP-47 spellings, a region's primary language) and says why when it cannot", () => {
    const t = trainWordTables([
      ['Datei öffnen', 'open file'],
      ['Datei speichern', 'save file'],
      ['öffnen', 'open'],
    ]);
    const s0 = toySet(5, 20);
    const { fwd, bwd } = mineTables(s0.sv, s0.tv, s0.d, { k: 4 });
    const c = candidatePairs(fwd, bwd, s0.src, s0.trg);
    const m = {
      ...trainScorer(
        c,
        c.map((x) => (s0.gold.has(`${x.src}\t${x.trg}`) ? 1 : 0)),
        4,
        {},
      ),
      tables: { 'de-en': t, 'pt_br-en': t },
    };
    const feats = (a: ReturnType<typeof scorerTables>['aligner']) => a!.features('Datei öffnen', 'open file');
    const exact = scorerTables(m, 'de', 'en');
    assert.equal(exact.missing, null);
    assert.ok(exact.aligner);
    for (const [s, tl] of [
      ['DE', 'en'],
      ['de-AT', 'en'],
      ['de_at', 'en-US'],
      ['pt-BR', 'en'],
      ['pt_BR', 'EN'],
    ] as const) {
      const r = scorerTables(m, s, tl);
      assert.equal(r.missing, null, `${s}-${tl}`);
      assert.deepEqual(feats(r.aligner), feats(exact.aligner), `${s}-${tl}`);
    }
    // pt alone does not borrow pt_br's tables; a missing pair or an unnamed language is said, with the pairs it has
    for (const [s, tl, re] of [
      ['pt', 'en', /no word tables for pt-en \(it has de-en pt_br-en\).*--pairs pt-en/],
      ['fr', 'en', /no word tables for fr-en/],
      [undefined, 'en', /give --src-lang and --trg-lang/],
      ['auto', 'en', /give --src-lang and --trg-lang/],
      ['de', 'none', /give --src-lang and --trg-lang/],
    ] as const) {
      const r = scorerTables(m, s, tl);
      assert.equal(r.aligner, null, `${s}-${tl}`);
      assert.match(r.missing!, re);
    }
  });
});

describe('mining filters and thresholds', () => {
  type P = { s: string; t: string };
  const run = (pairs: P[], o: Parameters<typeof filterPairs>[2]) => filterPairs(pairs, (p) => [p.s, p.t], o);
  const base: P[] = [
    { s: 'Datei öffnen', t: 'Open file' },
    { s: 'OK', t: 'OK' },
    { s: '12:30 / 45%', t: '12:30 / 45%' },
    { s: 'Ein sehr langer Satz über das Speichern der Datei auf der Festplatte', t: 'Save' },
    { s: 'Datei öffnen!', t: 'open file' },
    { s: 'Drucken', t: 'Print' },
  ];

  it('each filter removes what it names and nothing else', () => {
    const names = (r: ReturnType<typeof run>) => r.rejected.map((x) => `${x.reason}:${x.pair.s}`);
    assert.deepEqual(names(run(base, { minChars: 3 })), ['too_short:OK']);
    assert.deepEqual(names(run(base, { maxChars: 30 })), ['too_long:Ein sehr langer Satz über das Speichern der Datei auf der Festplatte']);
    assert.deepEqual(names(run(base, { maxLengthRatio: 3 })), ['length_ratio:Ein sehr langer Satz über das Speichern der Datei auf der Festplatte']);
    assert.deepEqual(names(run(base, { dropIdentical: true })), ['identical:OK', 'identical:12:30 / 45%']);
    assert.deepEqual(names(run(base, { minLetterShare: 0.5 })), ['not_text:12:30 / 45%']);
    assert.deepEqual(names(run(base, { dedupSrc: true })), ['duplicate_src:Datei öffnen!']);
    assert.deepEqual(names(run(base, { dedupTrg: true })), ['duplicate_trg:Datei öffnen!']);
    assert.deepEqual(names(run(base, { dedupPair: true })), ['duplicate_pair:Datei öffnen!']);
    const lid = {
      identify: (t: string) =>
        /[öä]|Datei|Drucken|Ein/.test(t)
          ? { lang: 'de', confidence: 0.99 }
          : /^[A-Z][a-z]+( [a-z]+)?$/.test(t)
            ? { lang: 'en', confidence: 0.9 }
            : { lang: 'fr', confidence: 0.3 },
      minConfidence: 0.5,
    };
    assert.deepEqual(names(run([...base, { s: 'Print', t: 'Print' }], { lid: { ...lid, src: 'de', trg: 'en' } })), ['src_language:Print']);
    assert.deepEqual(names(run([{ s: 'Drucken', t: 'Drucken' }], { lid: { ...lid, src: 'de', trg: 'en' } })), ['trg_language:Drucken']);
    // unsure identification (confidence below the bar) removes nothing
    assert.deepEqual(names(run([{ s: '12:30', t: '12:30' }], { lid: { ...lid, src: 'de', trg: 'en' } })), []);
    // a variant of the language asked is that language (pt for pt_BR, de_CH for de), another language is not
    const variant = { identify: (t: string) => ({ lang: t, confidence: 0.99 }), minConfidence: 0.5 };
    assert.deepEqual(
      names(
        run(
          [
            { s: 'pt', t: 'en_US' },
            { s: 'es', t: 'en' },
          ],
          { lid: { ...variant, src: 'pt_BR', trg: 'en' } },
        ),
      ),
      ['src_language:es'],
    );
    assert.deepEqual(
      names(
        run(
          [
            { s: 'de_CH', t: 'en' },
            { s: 'da', t: 'en' },
          ],
          { lid: { ...variant, src: 'de', trg: 'en' } },
        ),
      ),
      ['src_language:da'],
    );
    const all = run(base, {});
    assert.equal(all.kept.length, base.length);
    const c = run(base, { minChars: 3, dropIdentical: true, dedupSrc: true });
    assert.equal(c.counts.too_short + c.counts.identical + c.counts.duplicate_src, c.rejected.length);
    assert.equal(c.kept.length + c.rejected.length, base.length);
  });

  it('threshold by target precision: the lowest threshold whose precision reaches P', () => {
    const curve = [
      { threshold: 0.9, precision: 1 },
      { threshold: 0.8, precision: 1 },
      { threshold: 0.7, precision: 0.95 },
      { threshold: 0.6, precision: 0.9 },
      { threshold: 0.5, precision: 0.8 },
    ];
    assert.equal(thresholdForPrecision(curve, 0.95), 0.7);
    assert.equal(thresholdForPrecision(curve, 0.9), 0.6);
    assert.equal(thresholdForPrecision(curve, 1), 0.8);
    assert.equal(thresholdForPrecision(curve, 0.5), 0.5);
    assert.equal(thresholdForPrecision([{ threshold: 1, precision: 0.4 }], 0.5), null);
  });
});

describe('xling scorer train / mine --scorer / eval bucc --scorer (end to end)', () => {
  it('trains from a parallel TSV, then mines and evaluates with it; thresholds from a dev JSON', () => {
    const model = join(dir, 'model');
    tinyDualModel(dir, model);
    const langs = ['de', 'fr', 'en'];
    const cols = Object.fromEntries(langs.map((l) => [l, devColumn(l)]));
    const rows = cols.en!.length;
    writeFileSync(
      join(dir, 'par.tsv'),
      langs.join('\t') + '\n' + Array.from({ length: rows }, (_, i) => langs.map((l) => cols[l]![i]).join('\t')).join('\n') + '\n',
    );
    let r = cli([
      'scorer',
      'train',
      '--model',
      model,
      '--parallel',
      join(dir, 'par.tsv'),
      '--rows',
      '150',
      '--tables',
      join(dir, 'par.tsv'),
      '--config',
      settings('self-head', { selfHead: true }),
      '-o',
      join(dir, 'scorer'),
      '--json',
      join(dir, 'sc.json'),
    ]);
    assert.equal(r.status, 0, r.stderr);
    // word tables from every other row of the TSV (not only 5,000 of them)
    assert.match(r.stderr, /de-en: .*word tables from 150 parallel rows/);
    assert.equal(loadScorer(join(dir, 'scorer')).trained.word_tables, join(dir, 'par.tsv'));
    const summary = JSON.parse(readFileSync(join(dir, 'sc.json'), 'utf8'));
    // sets of 90 pairs: too few for the self-tables regression (mining keeps the first regression there)
    assert.match(r.stderr, /self-tables regression: no set has 100 pairs scored ≥ 0.5 without tables; none fitted/);
    assert.equal(summary.self_head, null);
    assert.equal(loadScorer(join(dir, 'scorer')).self, undefined);
    // (this model's candidates hold too few gold pairs for it on any set; the regression itself is
    // tested above) a scorer with one: mining a pair without tables says it cross-fits them
    // (its first regression's bias raised so that the first pass finds enough pairs for tables)
    const sh: ScorerModel = {
      ...loadScorer(join(dir, 'scorer')),
      bias: 10,
      self: {
        mean: loadScorer(join(dir, 'scorer')).mean,
        std: loadScorer(join(dir, 'scorer')).std,
        weights: loadScorer(join(dir, 'scorer')).weights.map((w) => w / 2),
        bias: 0,
        trained: {},
      },
    };
    saveScorer(join(dir, 'scorer-h'), sh);
    assert.deepEqual(loadScorer(join(dir, 'scorer-h')).self!.weights, sh.self!.weights);
    writeFileSync(join(dir, 'de.plain'), cols.de!.slice(0, 300).join('\n') + '\n');
    writeFileSync(join(dir, 'fr.plain'), cols.fr!.slice(0, 300).join('\n') + '\n');
    const frSide = [
      'mine',
      '--src',
      join(dir, 'de.plain'),
      '--trg',
      join(dir, 'fr.plain'),
      '--model',
      model,
      '--src-lang',
      'de',
      '--trg-lang',
      'fr',
      '--threshold',
      '0',
    ];
    const selfSaid =
      /then scoring again with them \(cross-fitted by source: each half of the sources aligned by the other half's tables; the scorer's self-tables regression\)/;
    r = cli([...frSide, '--scorer', join(dir, 'scorer-h'), '-o', join(dir, 'h.tsv')]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, selfSaid);
    r = cli([...frSide, '--scorer', join(dir, 'scorer'), '-o', join(dir, 'n.tsv')]);
    assert.equal(r.status, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /cross-fitted/);
    // a damaged regression is refused when the scorer is read
    writeFileSync(
      join(dir, 'scorer-h', 'scorer.json'),
      readFileSync(join(dir, 'scorer-h', 'scorer.json'), 'utf8').replace(/"self": \{\n {2}"mean": \[/, '"self": {\n  "mean": [null, '),
    );
    assert.throws(() => loadScorer(join(dir, 'scorer-h')), /'self.mean' must hold \d+ finite numbers/);
    assert.deepEqual(Object.keys(summary.sets).sort(), ['de-en', 'fr-en']);
    assert.ok(summary.training_accuracy > 0.8, JSON.stringify(summary));
    // a BUCC-format split of the last 100 dev rows (60 paired, distractors on both sides)
    const de = cols.de!.slice(-100),
      en = cols.en!.slice(-100);
    writeFileSync(
      join(dir, 'de.bucc'),
      de
        .slice(0, 80)
        .map((s, i) => `de-${i}\t${s}`)
        .join('\n') + '\n',
    );
    writeFileSync(
      join(dir, 'en.bucc'),
      en
        .map((s, i) => ({ s, i }))
        .filter(({ i }) => i < 60 || i >= 80)
        .map(({ s, i }) => `en-${i}\t${s}`)
        .join('\n') + '\n',
    );
    writeFileSync(
      join(dir, 'gold'),
      de
        .slice(0, 60)
        .map((_, i) => `de-${i}\ten-${i}`)
        .join('\n') + '\n',
    );
    const bucc = [
      '--src',
      join(dir, 'de.bucc'),
      '--trg',
      join(dir, 'en.bucc'),
      '--gold',
      join(dir, 'gold'),
      '--model',
      model,
      '--src-lang',
      'de',
      '--trg-lang',
      'en',
    ];
    r = cli(['eval', 'bucc', ...bucc, '--scorer', join(dir, 'scorer'), '--json', join(dir, 'bs.json'), '--target-precision', '0.9']);
    assert.equal(r.status, 0, r.stderr);
    const withScorer = JSON.parse(readFileSync(join(dir, 'bs.json'), 'utf8'));
    assert.equal(withScorer.scorer, join(dir, 'scorer'));
    assert.ok(withScorer.threshold > 0 && withScorer.threshold < 1, `a probability threshold: ${withScorer.threshold}`);
    assert.ok(Array.isArray(withScorer.cuts) && withScorer.cuts.length > 0);
    // what --threshold auto would keep, measured against the gold (margin runs have no such threshold)
    const cutAt = (t: number) => withScorer.cuts.filter((c: number[]) => c[0]! >= t).at(-1);
    assert.ok(withScorer.auto.threshold > 0 && withScorer.auto.threshold < 1, JSON.stringify(withScorer.auto));
    assert.ok(
      Math.abs(withScorer.auto.precision - cutAt(withScorer.auto.threshold)[1]) < 1e-12 &&
        Math.abs(withScorer.auto.recall - cutAt(withScorer.auto.threshold)[2]) < 1e-12,
    );
    assert.ok(
      withScorer.auto.f1 > 0 && withScorer.auto.f1 <= withScorer.f1 + 1e-12,
      `F1 at the automatic threshold ${JSON.stringify(withScorer.auto)} (F1-optimal: ${withScorer.f1})`,
    );
    // the exchange-improved assignment is recorded; without a scorer it is refused
    r = cli([
      'eval',
      'bucc',
      ...bucc,
      '--scorer',
      join(dir, 'scorer'),
      '--config',
      settings('exchange', { assignment: 'exchange' }),
      '--json',
      join(dir, 'bx.json'),
    ]);
    assert.equal(r.status, 0, r.stderr);
    const exchanged = JSON.parse(readFileSync(join(dir, 'bx.json'), 'utf8'));
    assert.equal(exchanged.assignment, 'exchange');
    assert.ok(exchanged.f1 >= withScorer.f1 - 0.05, `exchange F1 ${exchanged.f1} vs greedy ${withScorer.f1}`);
    // a pair the scorer has no word tables for is said before any work: by default the run trains
    // them on its own pairs (if enough score ≥ 0.5 without), with selfTables false it goes on without
    r = cli(['eval', 'bucc', ...bucc.slice(0, -4), '--src-lang', 'de', '--trg-lang', 'fr', '--scorer', join(dir, 'scorer')]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stderr,
      /\[bucc\] note: the scorer has no word tables for de-fr \(it has de-en fr-en\): word tables are trained on this run's own pairs instead/,
    );
    assert.match(
      r.stderr,
      /\[bucc\] (training word tables on the \d+ pairs scored ≥ 0.5 without them, then scoring again|\d+ pairs scored ≥ 0.5 without word tables, fewer than 100)/,
    );
    r = cli([
      'eval',
      'bucc',
      ...bucc.slice(0, -4),
      '--src-lang',
      'de',
      '--trg-lang',
      'fr',
      '--scorer',
      join(dir, 'scorer'),
      '--config',
      settings('no-self-tables', { selfTables: false }),
    ]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /\[bucc\] warning: the scorer has no word tables for de-fr \(it has de-en fr-en\): its word-alignment features are left empty/);
    assert.doesNotMatch(r.stderr, /training word tables|pairs scored ≥/);
    // a threshold calibrated where the scorer had the pair's tables, applied where it has none: said
    r = cli([
      'eval',
      'bucc',
      ...bucc.slice(0, -4),
      '--src-lang',
      'de',
      '--trg-lang',
      'fr',
      '--scorer',
      join(dir, 'scorer'),
      '--config',
      settings('no-self-tables', { selfTables: false }),
      '--threshold-from',
      join(dir, 'bs.json'),
      '--json',
      '-',
    ]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).word_tables, 'none');
    assert.match(r.stderr, /warning: --threshold-from .*bs\.json was calibrated with the scorer's own word tables for its pair, and this run has none/);
    assert.doesNotMatch(
      cli(['eval', 'bucc', ...bucc, '--scorer', join(dir, 'scorer'), '--threshold-from', join(dir, 'bs.json')]).stderr,
      /was calibrated with/,
    );
    assert.doesNotMatch(cli(['eval', 'bucc', ...bucc, '--scorer', join(dir, 'scorer')]).stderr, /no word tables/);
    r = cli(['eval', 'bucc', ...bucc, '--config', settings('exchange', { assignment: 'exchange' })]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /cfg-exchange\.json: 'assignment' goes with --scorer/);
    r = cli(['eval', 'bucc', ...bucc, '--json', join(dir, 'bm.json')]);
    assert.equal(r.status, 0, r.stderr);
    const marginOnly = JSON.parse(readFileSync(join(dir, 'bm.json'), 'utf8'));
    assert.ok(withScorer.f1 >= marginOnly.f1 - 0.05, `scorer F1 ${withScorer.f1} vs margin ${marginOnly.f1}`);
    // mine with the scorer and the dev threshold; rows carry probability and margin
    r = cli([
      'mine',
      '--src',
      join(dir, 'de.bucc'),
      '--trg',
      join(dir, 'en.bucc'),
      '--model',
      model,
      '--src-lang',
      'de',
      '--trg-lang',
      'en',
      '--scorer',
      join(dir, 'scorer'),
      '--threshold-from',
      join(dir, 'bs.json'),
      '--config',
      settings('header-dedup', { header: true, filters: { dedup: 'all', minChars: 2 } }),
      '-o',
      join(dir, 'mined.tsv'),
      '--stats',
      join(dir, 'stats.json'),
    ]);
    assert.equal(r.status, 0, r.stderr);
    const lines = readFileSync(join(dir, 'mined.tsv'), 'utf8').trimEnd().split('\n');
    assert.match(lines[0]!, /^# xling mine: model=.* scorer=.*scorer word_tables=scorer threshold=0\.\d+/);
    for (const l of lines.slice(1)) {
      const [p, m, s, t] = l.split('\t');
      assert.ok(Number(p) >= withScorer.threshold && Number(p) <= 1, l);
      assert.ok(Number.isFinite(Number(m)), l);
      assert.match(s!, /^de-\d+$/);
      assert.match(t!, /^en-\d+$/);
    }
    const stats = JSON.parse(readFileSync(join(dir, 'stats.json'), 'utf8'));
    assert.equal(stats.pairs, lines.length - 1);
    // through a faiss index over the target vectors: an exact (flat) one gives the same pairs
    for (const l of ['de', 'en']) {
      writeFileSync(
        join(dir, `${l}.plain`),
        readFileSync(join(dir, `${l}.bucc`), 'utf8')
          .trimEnd()
          .split('\n')
          .map((x) => x.split('\t')[1])
          .join('\n') + '\n',
      );
      assert.equal(cli(['embed', '--model', model, '--input', join(dir, `${l}.plain`), '--lang', l, '--output', join(dir, `${l}.npy`)]).status, 0);
    }
    assert.equal(cli(['index', 'build', '--factory', 'Flat', join(dir, 'en.npy'), '-o', join(dir, 'en.faiss')]).status, 0);
    const viaVectors = [
      'mine',
      '--src',
      join(dir, 'de.bucc'),
      '--trg',
      join(dir, 'en.bucc'),
      '--src-vectors',
      join(dir, 'de.npy'),
      '--trg-vectors',
      join(dir, 'en.npy'),
      '--src-lang',
      'de',
      '--trg-lang',
      'en',
      '--scorer',
      join(dir, 'scorer'),
      '--threshold',
      '0.2',
    ];
    r = cli([...viaVectors, '-o', join(dir, 'exact.tsv')]);
    assert.equal(r.status, 0, r.stderr);
    r = cli([...viaVectors, '--index', join(dir, 'en.faiss'), '-o', join(dir, 'indexed.tsv')]);
    assert.equal(r.status, 0, r.stderr);
    assert.ok(readFileSync(join(dir, 'exact.tsv'), 'utf8').split('\n').length > 10);
    assert.equal(readFileSync(join(dir, 'indexed.tsv'), 'utf8'), readFileSync(join(dir, 'exact.tsv'), 'utf8'));
    // --threshold auto: the cut the probabilities expect to give the best F1, said and recorded — the same file as that threshold given as a number
    const viaAuto = viaVectors.slice(0, -2);
    r = cli([
      ...viaAuto,
      '--threshold',
      'auto',
      '--config',
      settings('header', { header: true }),
      '--stats',
      join(dir, 'sa.json'),
      '-o',
      join(dir, 'auto.tsv'),
    ]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /automatic threshold [\d.]+: keeps \d+ of \d+ pairs; were the probabilities calibrated for this data, precision [\d.]+% and recall/);
    const sa = JSON.parse(readFileSync(join(dir, 'sa.json'), 'utf8'));
    assert.equal(sa.threshold_auto.threshold, sa.threshold);
    assert.ok(sa.threshold > 0 && sa.threshold < 1 && sa.pairs === sa.threshold_auto.kept, JSON.stringify(sa));
    const autoLines = readFileSync(join(dir, 'auto.tsv'), 'utf8').trimEnd().split('\n');
    assert.match(autoLines[0]!, /threshold=[\d.e-]+ \(auto\)/);
    assert.equal(autoLines.length - 1, sa.pairs);
    assert.equal(cli([...viaAuto, '--threshold', String(sa.threshold), '-o', join(dir, 'num.tsv')]).status, 0);
    assert.equal(readFileSync(join(dir, 'num.tsv'), 'utf8'), autoLines.slice(1).join('\n') + '\n');
    // without a scorer the scores are not probabilities: refused before any work, as is a threshold that is not a number
    for (const [t, msg] of [
      ['auto', /--threshold auto goes with --scorer/],
      ['0.x', /--threshold expects a number or 'auto', got '0.x'/],
    ] as const) {
      r = cli([
        'mine',
        '--src',
        join(dir, 'de.bucc'),
        '--trg',
        join(dir, 'en.bucc'),
        '--src-vectors',
        join(dir, 'de.npy'),
        '--trg-vectors',
        join(dir, 'en.npy'),
        '--threshold',
        t,
        '-o',
        join(dir, 'no.tsv'),
      ]);
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, msg);
      assert.equal(existsSync(join(dir, 'no.tsv')), false);
    }
    assert.equal(stats.scorer, join(dir, 'scorer'));
    // language identification of both sides: German sources asked as English are removed, and only they
    r = cli([
      'mine',
      '--src',
      join(dir, 'de.bucc'),
      '--trg',
      join(dir, 'en.bucc'),
      '--model',
      model,
      '--src-lang',
      'de',
      '--trg-lang',
      'en',
      '-o',
      join(dir, 'm1.tsv'),
      '--config',
      settings('lid', { filters: { lid: true } }),
      '--stats',
      join(dir, 's1.json'),
    ]);
    assert.equal(r.status, 0, r.stderr);
    const right = JSON.parse(readFileSync(join(dir, 's1.json'), 'utf8'));
    r = cli([
      'mine',
      '--src',
      join(dir, 'de.bucc'),
      '--trg',
      join(dir, 'en.bucc'),
      '--model',
      model,
      '--src-lang',
      'fr',
      '--trg-lang',
      'en',
      '-o',
      join(dir, 'm2.tsv'),
      '--config',
      settings('lid', { filters: { lid: true } }),
      '--stats',
      join(dir, 's2.json'),
    ]);
    assert.equal(r.status, 0, r.stderr);
    const wrong = JSON.parse(readFileSync(join(dir, 's2.json'), 'utf8'));
    assert.ok(right.rejected.src_language <= 0.1 * right.candidates_before_filters, JSON.stringify(right));
    assert.ok(wrong.rejected.src_language >= 0.8 * wrong.candidates_before_filters, JSON.stringify(wrong));
    assert.ok(wrong.rejected.trg_language <= 0.1 * wrong.candidates_before_filters, JSON.stringify(wrong));
    r = cli([
      'mine',
      '--src',
      join(dir, 'de.bucc'),
      '--trg',
      join(dir, 'en.bucc'),
      '--model',
      model,
      '-o',
      join(dir, 'm3.tsv'),
      '--config',
      settings('lid', { filters: { lid: true } }),
    ]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /cfg-lid\.json: 'filters\.lid' needs the language asked for/);
    // margin-calibrated thresholds are refused for scorer runs (and vice versa)
    r = cli([
      'mine',
      '--src',
      join(dir, 'de.bucc'),
      '--trg',
      join(dir, 'en.bucc'),
      '--model',
      model,
      '--threshold-from',
      join(dir, 'bs.json'),
      '-o',
      join(dir, 'x.tsv'),
    ]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /calibrated with a scorer/);
    // … and in eval bucc too, before any embedding (it used to apply any file's threshold)
    r = cli(['eval', 'bucc', ...bucc, '--threshold-from', join(dir, 'bs.json')]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /calibrated with a scorer, but this run is without one/);
    r = cli(['eval', 'bucc', ...bucc, '--scorer', join(dir, 'scorer'), '--threshold-from', join(dir, 'bm.json')]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /calibrated without a scorer, but this run is with one/);
    // a margin threshold is refused under another margin or another k (the ratio margin's scale depends on k)
    r = cli([
      'mine',
      '--src',
      join(dir, 'de.bucc'),
      '--trg',
      join(dir, 'en.bucc'),
      '--model',
      model,
      '--margin',
      'absolute',
      '--threshold-from',
      join(dir, 'bm.json'),
      '-o',
      join(dir, 'x.tsv'),
    ]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /calibrated with --margin ratio, but this run uses --margin absolute/);
    r = cli(['eval', 'bucc', ...bucc, '-k', '6', '--threshold-from', join(dir, 'bm.json')]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /calibrated with k=4, but this run uses k=6/);
    assert.equal(existsSync(join(dir, 'x.tsv')), false);
    // the same scoring is accepted, and the calibrated figures are reported
    r = cli(['eval', 'bucc', ...bucc, '--threshold-from', join(dir, 'bm.json'), '--json', join(dir, 'bm2.json')]);
    assert.equal(r.status, 0, r.stderr);
    const again = JSON.parse(readFileSync(join(dir, 'bm2.json'), 'utf8'));
    assert.equal(again.at_threshold.f1, again.f1, 'its own F1-optimal threshold gives its F1');
  });

  it('scorer score: a noisy parallel corpus scored line by line, by the scorer or the margin; filters score 0; bad input refused', () => {
    // runs after the test above (its model and scorer)
    const model = join(dir, 'model'),
      cols = Object.fromEntries(['de', 'en'].map((l) => [l, devColumn(l).slice(-100)]));
    // half the lines translations, half misaligned (a target of another row), one with an empty side, one untranslated
    const lines = cols.de!.map((d, i) => (i % 2 ? [d, cols.en![(i + 37) % 100]!, 'mis'] : [d, cols.en![i]!, 'ok']));
    lines.push(['Hallo Welt', '', 'empty'], [cols.en![4]!, cols.en![4]!, 'same']);
    writeFileSync(join(dir, 'noisy.tsv'), lines.map((l) => l.join('\t')).join('\n') + '\n');
    const base = ['scorer', 'score', '--input', join(dir, 'noisy.tsv'), '--model', model, '--src-lang', 'de', '--trg-lang', 'en'];
    let r = cli([
      ...base,
      '--scorer',
      join(dir, 'scorer'),
      '-o',
      join(dir, 'scored.tsv'),
      '--stats',
      join(dir, 'scored.json'),
      '--keep-all',
      join(dir, 'scored.rejected'),
    ]);
    assert.equal(r.status, 0, r.stderr);
    const read = (f: string) =>
      readFileSync(join(dir, f), 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => l.split('\t'));
    const scored = read('scored.tsv');
    assert.deepEqual(
      scored.map((c) => c.slice(0, 3)),
      lines,
      'every line, in order, its columns kept',
    );
    const mean = (rows: string[][], kind: string) => {
      const x = rows.filter((c) => c[2] === kind).map((c) => Number(c[3]));
      return x.reduce((a, b) => a + b, 0) / x.length;
    };
    assert.ok(scored.every((c) => Number(c[3]) >= 0 && Number(c[3]) <= 1));
    assert.ok(mean(scored, 'ok') > mean(scored, 'mis') + 0.4, `${mean(scored, 'ok')} vs ${mean(scored, 'mis')}`);
    assert.equal(scored.at(-2)![3], '0.000000', 'an empty side scores 0');
    // identical sides (an untranslated line) score 0 by default, and --keep-all says why
    assert.equal(scored.at(-1)![3], '0.000000');
    assert.deepEqual(read('scored.rejected'), [['identical', ...scored.at(-1)!.slice(0, 3), '0.000000']]);
    const st = JSON.parse(readFileSync(join(dir, 'scored.json'), 'utf8'));
    assert.equal(st.lines, 102);
    assert.equal(st.empty, 1);
    assert.equal(st.rejected.identical, 1);
    assert.equal(st.word_tables, 'scorer');
    // dropIdentical false keeps its score (the scorer takes a copy for a translation); --threshold keeps the lines at or above it, in order
    r = cli([
      ...base,
      '--scorer',
      join(dir, 'scorer'),
      '--config',
      settings('keep-identical', { filters: { dropIdentical: false } }),
      '--threshold',
      '0.5',
      '-o',
      join(dir, 'kept.tsv'),
    ]);
    assert.equal(r.status, 0, r.stderr);
    const kept = read('kept.tsv');
    assert.deepEqual(
      kept.filter((c) => c[2] !== 'same').map((c) => c.slice(0, 3)),
      scored.filter((c) => Number(c[3]) >= 0.5).map((c) => c.slice(0, 3)),
    );
    assert.equal(kept.at(-1)![2], 'same', `the copy: ${JSON.stringify(kept.at(-1))}`);
    assert.ok(kept.filter((c) => c[2] === 'ok').length >= 0.8 * kept.length, JSON.stringify(kept.map((c) => c[2])));
    // duplicates (after normalisation) keep their best-scoring line, the others score 0 — also when the
    // corpus comes on standard input (read more than once: spooled)
    const dupLines = [...lines, ...lines.slice(0, 10).map((l) => [`${l[0]} `, l[1]!.toUpperCase(), l[2]!])];
    writeFileSync(join(dir, 'dup.tsv'), dupLines.map((l) => l.join('\t')).join('\n') + '\n');
    r = cli([...base.map((x) => (x.endsWith('noisy.tsv') ? join(dir, 'dup.tsv') : x)), '--scorer', join(dir, 'scorer'), '-o', join(dir, 'dup-all.tsv')]);
    assert.equal(r.status, 0, r.stderr);
    const sp = spawnSync(
      process.execPath,
      [
        mainJs,
        ...base.map((x) => (x.endsWith('noisy.tsv') ? '-' : x)),
        '--scorer',
        join(dir, 'scorer'),
        '--config',
        settings('dedup-pair', { filters: { dedup: 'pair' } }),
        '--keep-all',
        join(dir, 'dup.rejected'),
        '-o',
        '-',
      ],
      { input: readFileSync(join(dir, 'dup.tsv')), encoding: 'utf8', cwd: root },
    );
    assert.equal(sp.status, 0, sp.stderr);
    const all = read('dup-all.tsv'),
      deduped = sp.stdout
        .trimEnd()
        .split('\n')
        .map((l) => l.split('\t'));
    // of line j and its copy 102 + j, the better keeps its score (line j on a tie), the other scores 0
    const want = all.map((c) => [...c]);
    for (let j = 0; j < 10; j++) want[Number(all[102 + j]![3]) > Number(all[j]![3]) ? j : 102 + j]![3] = '0.000000';
    assert.deepEqual(deduped, want);
    assert.equal(read('dup.rejected').filter((c) => c[0] === 'duplicate_pair').length, 10);
    // in blocks (balanced: 101 lines with both sides in two blocks of 51 and 50): each block scored as a corpus of its own
    r = cli([...base, '--scorer', join(dir, 'scorer'), '--config', settings('b51', { block: 51 }), '-o', join(dir, 'blocks.tsv')]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /2 blocks of 51 lines/);
    writeFileSync(
      join(dir, 'first.tsv'),
      lines
        .slice(0, 51)
        .map((l) => l.join('\t'))
        .join('\n') + '\n',
    );
    writeFileSync(
      join(dir, 'second.tsv'),
      lines
        .slice(51)
        .map((l) => l.join('\t'))
        .join('\n') + '\n',
    );
    for (const part of ['first', 'second'])
      assert.equal(
        cli([...base.map((x) => (x.endsWith('noisy.tsv') ? join(dir, `${part}.tsv`) : x)), '--scorer', join(dir, 'scorer'), '-o', join(dir, `${part}.out`)])
          .status,
        0,
      );
    assert.equal(readFileSync(join(dir, 'blocks.tsv'), 'utf8'), readFileSync(join(dir, 'first.out'), 'utf8') + readFileSync(join(dir, 'second.out'), 'utf8'));
    assert.notEqual(readFileSync(join(dir, 'blocks.tsv'), 'utf8'), readFileSync(join(dir, 'scored.tsv'), 'utf8'), 'the context changes the scores');
    // each block is kept in OUTPUT.partial as it is scored (removed at the end unless keepWork); --resume reuses
    // the blocks found there and scores the others — here block 1's scores replaced by 0.25, block 2's removed, as a kill leaves it
    assert.equal(existsSync(join(dir, 'blocks.tsv.partial')), false);
    const blocked = [...base, '--scorer', join(dir, 'scorer'), '-o', join(dir, 'resumed.tsv')];
    const keepWork = ['--config', settings('b51-keep', { block: 51, keepWork: true })];
    r = cli([...blocked, ...keepWork]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(readFileSync(join(dir, 'resumed.tsv'), 'utf8'), readFileSync(join(dir, 'blocks.tsv'), 'utf8'));
    const work = join(dir, 'resumed.tsv.partial'),
      b0 = JSON.parse(readFileSync(join(work, 'block-0.json'), 'utf8'));
    assert.equal(b0.scores.length, 51);
    writeFileSync(join(work, 'block-0.json'), JSON.stringify({ ...b0, scores: b0.scores.map(() => 0.25) }));
    rmSync(join(work, 'block-1.json'));
    r = cli([...blocked, '--resume', ...keepWork]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /--resume: 1 of 2 blocks \(51 lines\) reused/);
    const resumed = read('resumed.tsv'),
      whole = read('blocks.tsv');
    assert.deepEqual(
      resumed.slice(0, 51).map((c) => c[3]),
      Array(51).fill('0.250000'),
      'block 1 read back, not scored again',
    );
    assert.deepEqual(resumed.slice(51), whole.slice(51), 'block 2 scored again, as before');
    // scoring options other than the kept blocks' score everything again; filters and thresholds do not
    r = cli([...blocked, '--resume', '--threshold', '0.3', ...keepWork]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /--resume: 2 of 2 blocks/);
    // a block whose lines differ (another file, stdin, an edit in place) is scored again; the others are reused whatever the file's name
    writeFileSync(join(dir, 'edited.tsv'), lines.map((l, i) => (i === 90 ? [l[0], 'Something else entirely.', l[2]] : l).join('\t')).join('\n') + '\n');
    r = cli([...blocked.map((x) => (x.endsWith('noisy.tsv') ? join(dir, 'edited.tsv') : x)), '--resume', ...keepWork]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /block 2 has other lines than when it was kept: scored again/);
    assert.match(r.stderr, /--resume: 1 of 2 blocks \(51 lines\) reused/);
    r = cli([...blocked, '--resume', '--config', settings('b51-k3', { block: 51, k: 3 })]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /removed .*resumed\.tsv\.partial of an earlier run \(made with another model, scorer or scoring options\)/);
    assert.doesNotMatch(r.stderr, /blocks .* reused/);
    assert.equal(existsSync(work), false, 'removed once the output is written');
    r = cli([...base, '--resume', '-o', '-']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--resume with -o -: give 'work' in --config/);
    // a work directory that holds anything else is never emptied
    mkdirSync(join(dir, 'mine'), { recursive: true });
    writeFileSync(join(dir, 'mine', 'notes.txt'), 'keep me\n');
    r = cli([...blocked, '--config', settings('b51-work', { block: 51, work: join(dir, 'mine') })]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /cfg-b51-work\.json: 'work' .*mine: holds files that are not scored blocks \(notes\.txt\)/);
    assert.equal(readFileSync(join(dir, 'mine', 'notes.txt'), 'utf8'), 'keep me\n');
    // a labelled sample (--label-col: 1 a good pair) evaluates the scores and calibrates a threshold that --threshold-from applies
    writeFileSync(join(dir, 'labelled.tsv'), lines.map((l) => [...l, l[2] === 'ok' ? '1' : '0'].join('\t')).join('\n') + '\n');
    r = cli([
      ...base.map((x) => (x.endsWith('noisy.tsv') ? join(dir, 'labelled.tsv') : x)),
      '--scorer',
      join(dir, 'scorer'),
      '--label-col',
      '4',
      '--json',
      join(dir, 'ev.json'),
      '--svg',
      join(dir, 'ev.svg'),
      '-o',
      join(dir, 'lab.tsv'),
    ]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^P [\d.]+ {2}R [\d.]+ {2}F1 [\d.]+ {2}at threshold [\d.]+ {2}\(AP [\d.]+; 50 good pairs of 102 lines\)\n$/);
    const ev = JSON.parse(readFileSync(join(dir, 'ev.json'), 'utf8'));
    assert.ok(ev.f1 > 0.8 && ev.average_precision > 0.8, JSON.stringify(ev).slice(0, 300));
    assert.equal(ev.scorer, join(dir, 'scorer'));
    assert.match(readFileSync(join(dir, 'ev.svg'), 'utf8'), /^<svg/);
    r = cli([...base, '--scorer', join(dir, 'scorer'), '--threshold-from', join(dir, 'ev.json'), '-o', join(dir, 'cal.tsv'), '--stats', join(dir, 'cal.json')]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(readFileSync(join(dir, 'cal.json'), 'utf8')).threshold, ev.threshold);
    assert.deepEqual(
      read('cal.tsv'),
      scored.filter((c) => Number(c[3]) >= ev.threshold),
    );
    for (const [argv, code, msg] of [
      [['--threshold-from', join(dir, 'ev.json')], 1, /calibrated with a scorer, but this run is without one/],
      [['--label-col', '2'], 2, /--label-col 2 is a side's column/],
      [['--json', join(dir, 'x.json')], 2, /--json evaluates the scores against --label-col/],
    ] as const) {
      r = cli([...base, ...argv, '-o', join(dir, 'no.tsv')]);
      assert.equal(r.status, code, r.stderr);
      assert.match(r.stderr, msg);
      assert.equal(existsSync(join(dir, 'no.tsv')), false);
    }
    r = cli([...base, '--label-col', '3', '-o', join(dir, 'no.tsv')]);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /noisy\.tsv:1: --label-col 3 is 'ok', not 1 \(a good pair\) or 0/);
    // without a scorer: the margin score (LASER's score mode), from two aligned files
    writeFileSync(join(dir, 'noisy.de'), lines.map((l) => l[0]).join('\n') + '\n');
    writeFileSync(join(dir, 'noisy.en'), lines.map((l) => l[1]).join('\n') + '\n');
    r = cli([
      'scorer',
      'score',
      '--src',
      join(dir, 'noisy.de'),
      '--trg',
      join(dir, 'noisy.en'),
      '--model',
      model,
      '--src-lang',
      'de',
      '--trg-lang',
      'en',
      '-o',
      join(dir, 'margin.tsv'),
    ]);
    assert.equal(r.status, 0, r.stderr);
    const margin = read('margin.tsv').map((c, i) => [c[0]!, c[1]!, lines[i]![2]!, c[2]!]);
    assert.ok(mean(margin, 'ok') > mean(margin, 'mis') + 0.1, `${mean(margin, 'ok')} vs ${mean(margin, 'mis')}`);
    // bad input: a line without its target column, files of different lengths, the corpus given twice or half
    writeFileSync(join(dir, 'bad.tsv'), 'eins\tone\nzwei\tzwei\ndrei\n');
    for (const [argv, code, msg] of [
      [['--input', join(dir, 'bad.tsv')], 1, /bad\.tsv:3: 1 tab-separated column, but --src-col 1 and --trg-col 2 need 2/],
      [['--src', join(dir, 'noisy.de'), '--trg', join(dir, 'bad.tsv')], 1, /has 102 lines but --trg .* has 3: the files must be aligned/],
      [['--input', join(dir, 'noisy.tsv'), '--src', join(dir, 'noisy.de')], 2, /give the corpus as --input TSV, or as --src FILE and --trg FILE/],
      [['--src', join(dir, 'noisy.de')], 2, /--trg is needed with --src/],
      [['--input', join(dir, 'noisy.tsv'), '--trg-col', '1'], 2, /--src-col and --trg-col are both 1/],
    ] as const) {
      r = cli(['scorer', 'score', ...argv, '--model', model, '-o', join(dir, 'no.tsv')]);
      assert.equal(r.status, code, r.stderr);
      assert.match(r.stderr, msg);
      assert.equal(existsSync(join(dir, 'no.tsv')), false);
    }
    // partial translations go into --parallel sets only
    r = cli(['scorer', 'train', '--model', model, '--bucc', dir, '--config', settings('truncated', { truncated: true }), '-o', join(dir, 'no-scorer')]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /cfg-truncated\.json: 'truncated' adds sentences to --parallel sets/);
  });

  it('scorer score reads its corpus in passes: each later pass must read the lines the first read', async () => {
    const lines = Array.from({ length: 20000 }, (_, i) => (i % 10 === 3 ? `s${i}\t ` : `s${i}\tt${i}`));
    // a source that can change between its reads: `edit` applied from the second read on
    let reads = 0,
      edit = (l: string[]) => l;
    const source = {
      name: '--input x.tsv',
      async *rows() {
        const now = ++reads > 1 ? edit(lines) : lines;
        for (const line of now) {
          const [src, trg] = line.split('\t');
          yield { line, src: src!, trg: trg! };
        }
      },
    };
    const scan = await scanCorpus(source);
    assert.deepEqual([scan.n, scan.full, scan.digests.length], [20000, 18000, 3]);
    // unchanged: every line once and in order, the pairs with both sides in blocks
    const blocks: number[][] = [];
    for await (const b of blocksOf(source, 7000, scan)) blocks.push([b.b, b.lines.length, b.lines[0]!, b.sides.length]);
    assert.deepEqual(blocks, [
      [0, 7000, 0, 7000],
      [1, 7000, 7778, 7000],
      [2, 4000, 15556, 4000],
    ]);
    // a line edited: refused within the chunk of DIGEST_LINES lines that holds it, not at the end
    edit = (l) => l.map((x, i) => (i === 9000 ? 'other\tline' : x));
    let last = -1;
    await assert.rejects(async () => {
      for await (const { i } of linesOf(source, scan)) last = i;
    }, /--input x\.tsv: changed while it was being scored/);
    assert.ok(last >= 9000 && last < 2 * DIGEST_LINES, `refused after line ${last}`);
    // shorter or longer than the first reading: refused
    for (const e of [(l: string[]) => l.slice(0, 19999), (l: string[]) => [...l, 'more\tlines']]) {
      edit = e;
      await assert.rejects(async () => {
        for await (const _ of linesOf(source, scan)) {
          /* read */
        }
      }, /changed while it was being scored/);
    }
  });

  it('scorer score: SIGINT stops it (exit 130, no output, the blocks scored kept); --resume goes on to the same output', async () => {
    // runs after the test above (its model, scorer and noisy.tsv); 8 blocks of 13 lines, the signal sent
    // when the run says where it keeps them, before its first block
    const args = [
      'scorer',
      'score',
      '--input',
      join(dir, 'noisy.tsv'),
      '--model',
      join(dir, 'model'),
      '--scorer',
      join(dir, 'scorer'),
      '--src-lang',
      'de',
      '--trg-lang',
      'en',
      '--config',
      settings('b13', { block: 13 }),
    ];
    const out = join(dir, 'int.tsv');
    const child = cliAsync([...args, '-o', out]);
    let err = '',
      sent = false;
    const code = await new Promise<number | null>((resolve) => {
      child.stderr!.on('data', (b: Buffer) => {
        err += b.toString();
        if (!sent && /kept in/.test(err)) {
          sent = true;
          child.kill('SIGINT');
        }
      });
      child.on('exit', (c) => resolve(c));
    });
    assert.equal(code, 130, err);
    assert.match(err, /interrupted \(SIGINT\)/);
    assert.equal(existsSync(out), false, 'no output');
    // (the signal takes effect at the first pause: while the corpus is read for the first block, or
    // between two blocks — how many were scored by then depends on the machine)
    const kept = readdirSync(`${out}.partial`).filter((f) => /^block-\d+\.json$/.test(f)).length;
    assert.ok(kept < 8, `${kept} of 8 blocks kept`);
    assert.ok(existsSync(join(`${out}.partial`, 'key.json')));
    console.log(`# SIGINT: ${kept} of 8 blocks kept`);
    const r = cli([...args, '-o', out, '--resume']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, kept ? new RegExp(`--resume: ${kept} of 8 blocks`) : /scores are kept in/);
    const whole = cli([...args, '-o', join(dir, 'int-whole.tsv')]);
    assert.equal(whole.status, 0, whole.stderr);
    assert.equal(readFileSync(out, 'utf8'), readFileSync(join(dir, 'int-whole.tsv'), 'utf8'));
  });

  it('scorer train keeps each language pair in OUT.partial: --resume reuses the ones made from the same data and arguments', () => {
    // runs after the test above (its model, par.tsv and the two-pair scorer trained in one go)
    const model = join(dir, 'model'),
      out = join(dir, 'scorer-r');
    const args = ['scorer', 'train', '--model', model, '--parallel', join(dir, 'par.tsv'), '--rows', '150', '--tables', join(dir, 'par.tsv'), '-o', out];
    // a run with one pair kept (as a killed run leaves it: each pair is written when it is done)
    let r = cli([...args, '--pairs', 'de-en', '--keep-work']);
    assert.equal(r.status, 0, r.stderr);
    assert.ok(existsSync(join(`${out}.partial`, 'de-en.json')));
    // the self-tables regression is asked for (selfHead), not fitted by default
    assert.doesNotMatch(r.stderr, /self-tables regression/);
    r = cli([...args, '--resume']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /de-en: .* \(reused\)/);
    assert.doesNotMatch(r.stderr, /fr-en: .* \(reused\)/);
    assert.match(r.stderr, /--resume: 1 of 2 language pairs reused/);
    assert.match(r.stderr, /scorer train: 2\/2 pairs/);
    assert.deepEqual(loadScorer(out), loadScorer(join(dir, 'scorer')));
    assert.ok(!existsSync(`${out}.partial`));
    // made with other arguments: done again
    assert.equal(cli([...args, '--pairs', 'de-en', '--keep-work']).status, 0);
    assert.match(cli([...args, '--pairs', 'de-en', '--keep-work']).stderr, /removed .*scorer-r\.partial of an earlier run \(--resume reuses it\)/);
    r = cli([...args, '--pairs', 'de-en', '--resume', '--config', settings('min-prob', { tableMinProb: 0.1 })]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /de-en: made with other arguments in .*; done again/);
    assert.doesNotMatch(r.stderr, /reused/);
    // a language the model does not know: refused before any work when asked for, left out of the default pairs
    const rows = readFileSync(join(dir, 'par.tsv'), 'utf8').split('\n');
    writeFileSync(join(dir, 'xx.tsv'), ['de\txx\ten', ...rows.slice(1)].join('\n'));
    r = cli(['scorer', 'train', '--model', model, '--parallel', join(dir, 'xx.tsv'), '--rows', '150', '--pairs', 'de-en,xx-en', '-o', join(dir, 'sx')]);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /--pairs xx-en 'xx': the model has no language of that code \(it knows [a-z_ ]+\)$/m);
    assert.doesNotMatch(r.stderr, /de-en: /);
    assert.ok(!existsSync(join(dir, 'sx.partial')));
    r = cli(['scorer', 'train', '--model', model, '--parallel', join(dir, 'xx.tsv'), '--rows', '150', '-o', join(dir, 'sx')]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /xx-en: left out \('xx': the model has no language of that code/);
    assert.deepEqual(Object.keys(loadScorer(join(dir, 'sx')).tables), ['de-en']);
  });

  it("scorer train --pair-model: the pair model's three features, resumed by epoch, taken by --pair-from, used by eval bucc", () => {
    // runs after the tests above (their model, par.tsv and BUCC files)
    const model = join(dir, 'model');
    const args = [
      'scorer',
      'train',
      '--model',
      model,
      '--parallel',
      join(dir, 'par.tsv'),
      '--pairs',
      'de-en',
      '--rows',
      '150',
      '--tables',
      join(dir, 'par.tsv'),
      '--pair-model',
    ];
    const pm = (name: string, more: Record<string, number> = {}) => ['--config', settings(name, { pairModel: { rows: 200, hidden: 16, pca: 16, ...more } })];
    let r = cli([...args, ...pm('pm-e2', { epochs: 2 }), '-o', join(dir, 'sp2')]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /pair model: \d+ examples \(\d+ translations\) of 1 language pairs, 2 epochs, hidden 16, PCA 16/);
    assert.match(r.stderr, /pair model epoch 2\/2: mean loss/);
    const sp2 = loadScorer(join(dir, 'sp2'));
    assert.deepEqual(sp2.features.slice(-3), ['pair_logit', 'pair_gap_src', 'pair_gap_trg']);
    assert.equal(sp2.pair!.file, 'pair-model.safetensors');
    assert.ok(existsSync(join(dir, 'sp2', 'pair-model.safetensors')));
    // more wrong neighbours per translation, fewer words read
    const count = (err: string) => {
      const m = /pair model: (\d+) examples \((\d+) translations\)/.exec(err)!;
      return [Number(m[1]), Number(m[2])] as const;
    };
    const [ex1, tr1] = count(r.stderr);
    r = cli([...args, ...pm('pm-neg2', { epochs: 1, negatives: 2, maxWords: 8 }), '-o', join(dir, 'sp3')]);
    assert.equal(r.status, 0, r.stderr);
    const [ex2, tr2] = count(r.stderr);
    assert.equal(tr2, tr1);
    assert.ok(ex1 <= 3 * tr1 && ex2 > ex1 + tr1 / 2 && ex2 <= 5 * tr2, `${ex1} / ${ex2} examples of ${tr1} translations`);
    assert.equal(loadScorer(join(dir, 'sp3')).pairModel!.config.maxWords, 8);
    // the seed: recorded (the seed changes the pair model, not the scorer's sets)
    assert.equal(cli([...args, ...pm('pm-seed2', { epochs: 1, seed: 2 }), '-o', join(dir, 'sp5')]).status, 0);
    assert.equal(loadScorer(join(dir, 'sp5')).pair!.trained.seed, 2);
    assert.equal(sp2.pair!.trained.seed, 1);
    // one epoch kept, then resumed for two: the scorer of the uninterrupted run
    r = cli([...args, ...pm('pm-e1', { epochs: 1 }), '--keep-work', '-o', join(dir, 'sp1')]);
    assert.equal(r.status, 0, r.stderr);
    r = cli([...args, ...pm('pm-e2', { epochs: 2 }), '--resume', '-o', join(dir, 'sp1')]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /--resume: pair model from .*, 1 of 2 epochs done\n/);
    const strip = (m: ReturnType<typeof loadScorer>) => ({
      ...m,
      pairModel: undefined,
      pair: { ...m.pair, trained: { ...m.pair!.trained, losses: undefined, seconds: undefined } },
    });
    assert.deepEqual(strip(loadScorer(join(dir, 'sp1'))), strip(sp2));
    // eval bucc reads the words through --model; without it the scorer is refused before any work
    const bucc = ['--src', join(dir, 'de.bucc'), '--trg', join(dir, 'en.bucc'), '--gold', join(dir, 'gold'), '--src-lang', 'de', '--trg-lang', 'en'];
    r = cli(['eval', 'bucc', ...bucc, '--model', model, '--scorer', join(dir, 'sp2'), '--json', join(dir, 'bp.json')]);
    assert.equal(r.status, 0, r.stderr);
    const withPair = JSON.parse(readFileSync(join(dir, 'bp.json'), 'utf8'));
    const marginOnly = JSON.parse(readFileSync(join(dir, 'bm.json'), 'utf8'));
    assert.ok(withPair.f1 >= marginOnly.f1 - 0.05, `scorer with pair model F1 ${withPair.f1} vs margin ${marginOnly.f1}`);
    r = cli([
      'mine',
      '--src',
      join(dir, 'de.bucc'),
      '--trg',
      join(dir, 'en.bucc'),
      '--model',
      model,
      '--src-lang',
      'de',
      '--trg-lang',
      'en',
      '--scorer',
      join(dir, 'sp2'),
      '-o',
      join(dir, 'mp.tsv'),
    ]);
    assert.equal(r.status, 0, r.stderr);
    const mined = readFileSync(join(dir, 'mp.tsv'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t'));
    assert.ok(mined.length >= 5 && mined.every((c) => c.length === 4 && Number(c[0]) >= 0.5 && Number(c[0]) <= 1), `${mined.length} rows`);
    // mostly gold pairs (de-i with en-i)
    assert.ok(mined.filter((c) => c[2]!.slice(3) === c[3]!.slice(3)).length >= 0.8 * mined.length, mined.map((c) => c.join(' ')).join('\n'));
    writeFileSync(join(dir, 'v.npy'), '');
    r = cli(['eval', 'bucc', ...bucc, '--src-vectors', join(dir, 'v.npy'), '--trg-vectors', join(dir, 'v.npy'), '--scorer', join(dir, 'sp2')]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /has a pair model, which reads the sentences' words through the sentence encoder: give --model/);
    // gold BUCC sets with the pair model of another scorer
    const gd = join(dir, 'gold-sets');
    mkdirSync(gd, { recursive: true });
    for (const [f, t] of [
      ['de.bucc', 'de-en.t.de'],
      ['en.bucc', 'de-en.t.en'],
      ['gold', 'de-en.t.gold'],
    ] as const)
      copyFileSync(join(dir, f), join(gd, t));
    r = cli(['scorer', 'train', '--model', model, '--bucc', gd, '--pair-from', join(dir, 'sp2'), '-o', join(dir, 'sg')]);
    assert.equal(r.status, 0, r.stderr);
    const sg = loadScorer(join(dir, 'sg'));
    assert.equal(sg.pair!.trained.from, join(dir, 'sp2'));
    assert.equal(sg.features.length, sp2.features.length);
    assert.doesNotMatch(r.stderr, /another encoder/);
    // another encoder of the same dimension: said (its word vectors are not the ones the pair model learnt from)
    cpSync(model, join(dir, 'model-b'), { recursive: true });
    writeFileSync(join(dir, 'model-b', 'config.json'), readFileSync(join(model, 'config.json'), 'utf8') + '\n');
    r = cli(['scorer', 'train', '--model', join(dir, 'model-b'), '--bucc', gd, '--pair-from', join(dir, 'sp2'), '-o', join(dir, 'sg3')]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /warning: --pair-from .*sp2's pair model was trained with another encoder than .*model-b/);
    r = cli(['eval', 'bucc', ...bucc, '--model', join(dir, 'model-b'), '--scorer', join(dir, 'sp2')]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /\[bucc\] warning: --scorer .*sp2 was trained with another encoder than .*model-b .*its margins, ranks and gaps/);
    // a scorer without a pair model is checked too; one trained with model-b on sp2's pair model: its pair model is said
    r = cli(['eval', 'bucc', ...bucc, '--model', join(dir, 'model-b'), '--scorer', join(dir, 'scorer')]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /\[bucc\] warning: --scorer .*scorer was trained with another encoder than .*model-b/);
    r = cli(['eval', 'bucc', ...bucc, '--model', join(dir, 'model-b'), '--scorer', join(dir, 'sg3')]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /\[bucc\] warning: --scorer .*sg3's pair model was trained with another encoder than .*model-b .*its word vectors/);
    r = cli(['eval', 'bucc', ...bucc, '--model', model, '--scorer', join(dir, 'sg3')]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /\[bucc\] warning: --scorer .*sg3 was trained with another encoder than /);
    r = cli(['scorer', 'train', '--model', model, '--bucc', gd, '--pair-from', join(dir, 'scorer'), '-o', join(dir, 'sg2')]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /--pair-from .*scorer: that scorer has no pair model/);
    r = cli(['scorer', 'train', '--model', model, '--bucc', gd, '--pair-model', '-o', join(dir, 'sg2')]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--pair-model learns from translations: give --tables TSV/);
    // a scorer directory without its pair model's file is refused, naming it
    rmSync(join(dir, 'sg', 'pair-model.safetensors'));
    assert.throws(() => loadScorer(join(dir, 'sg')), /its pair model .*pair-model\.safetensors is missing/);
  });
});

// The joint multi-task family and its pieces: the word aligner on a toy corpus with known
// alignments, skip-gram pair construction, both losses against hand computations, the JMT
// model learning the synthetic corpus, the classifiers on a separable toy set, the sentence
// splitter, and the word-level tokenizer.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { alignBothWays, IdPair } from '../../src/mine/scorer/word-align/fast-align.js';
import { evaluate, predict, trainClassifier, CLASSIFIER_DEFAULTS } from '../../src/classify/classifier.js';
import { SentenceEncoderModel } from '../../src/embed/model.js';
import { distanceHingeLoss, skipGramLoss } from '../../src/models/jmt/loss.js';
import { SkipGramSampler } from '../../src/models/jmt/skipgram.js';
import { tensor } from '../../src/tensor/index.js';
import { splitSentences } from '../../src/text/sentences.js';
import { splitWords } from '../../src/text/tokenizer.js';
import { parseConfig } from '../../src/models/config.js';
import { train } from '../../src/train/trainer.js';
import { DevSet, xsimOnDev } from '../../src/train/validate.js';
import { Rng } from '../../src/util/rng.js';
import { encodeRows, syntheticCorpus, WordTokenizer } from '../fixtures/synthetic.js';

describe('word aligner (fast_align-style EM)', () => {
  it('recovers the alignments of a toy corpus: a word permutation with local reordering and a null word', () => {
    const rng = new Rng(3),
      V = 40;
    const perm = rng.shuffle(Array.from({ length: V }, (_, i) => i));
    const pairs: IdPair[] = [],
      gold: number[][] = [];
    for (let s = 0; s < 600; s++) {
      const n = 3 + rng.int(6);
      const src = Array.from({ length: n }, () => rng.int(V));
      const order = Array.from({ length: n }, (_, i) => i);
      if (rng.next() < 0.5) {
        const k = rng.int(n - 1);
        [order[k], order[k + 1]] = [order[k + 1]!, order[k]!];
      }
      const trg = order.map((j) => perm[src[j]!]!);
      const g = [...order];
      // a target word with no source (id V, "the" of the other language) at a random place
      const at = rng.int(trg.length + 1);
      trg.splice(at, 0, V);
      g.splice(at, 0, -1);
      pairs.push({ src: Int32Array.from(src), trg: Int32Array.from(trg) });
      gold.push(g);
    }
    const links = alignBothWays(pairs, V, V + 1);
    let right = 0,
      found = 0,
      total = 0;
    links.forEach((ls, s) => {
      for (const [j, i] of ls) {
        found++;
        if (gold[s]![i] === j) right++;
      }
      total += gold[s]!.filter((x) => x >= 0).length;
    });
    assert.ok(right / found > 0.97, `precision ${right / found}`);
    assert.ok(right / total > 0.9, `recall ${right / total}`);
  });

  it('gives the links of the textbook EM (a hash map of t(e|f), re-made each iteration), exactly', () => {
    const rng = new Rng(11),
      V = 30;
    const pairs: IdPair[] = Array.from({ length: 300 }, () => ({
      src: Int32Array.from({ length: 1 + rng.int(8) }, () => rng.int(V)),
      trg: Int32Array.from({ length: 1 + rng.int(8) }, () => rng.int(V + 5)),
    }));
    const o = { model1Iterations: 2, iterations: 3, tension: 4, nullProb: 0.08 };
    assert.deepEqual(alignBothWays(pairs, V, V + 5, o), referenceAlignBothWays(pairs, V, V + 5, o));
  });
});

/** fast_align's EM written plainly (the aligner before its cells were made dense), for the test above. */
function referenceAlignBothWays(
  pairs: IdPair[],
  S: number,
  T: number,
  o: { model1Iterations: number; iterations: number; tension: number; nullProb: number },
): [number, number][][] {
  const diag = (i: number, j: number, m: number, n: number) => Math.exp(-o.tension * Math.abs((i + 1) / m - (j + 1) / n));
  const train = (ps: IdPair[], sv: number, tv: number) => {
    let t = new Map<number, number>();
    for (const { src, trg } of ps)
      for (const e of trg) {
        t.set(sv * tv + e, 1);
        for (const f of src) t.set(f * tv + e, 1);
      }
    for (let it = 0; it < o.model1Iterations + o.iterations; it++) {
      const useDiag = it >= o.model1Iterations,
        counts = new Map<number, number>(),
        totals = new Float64Array(sv + 1);
      for (const { src, trg } of ps) {
        const n = src.length,
          m = trg.length,
          post = new Float64Array(n + 1);
        for (let i = 0; i < m; i++) {
          const e = trg[i]!;
          let z = 0,
            dz = 0;
          post[0] = (useDiag ? o.nullProb : 1 / (n + 1)) * t.get(sv * tv + e)!;
          z += post[0]!;
          if (useDiag) for (let j = 0; j < n; j++) dz += diag(i, j, m, n);
          for (let j = 0; j < n; j++) {
            post[j + 1] = (useDiag ? ((1 - o.nullProb) * diag(i, j, m, n)) / dz : 1 / (n + 1)) * t.get(src[j]! * tv + e)!;
            z += post[j + 1]!;
          }
          for (let j = 0; j <= n; j++) {
            const f = j === 0 ? sv : src[j - 1]!,
              c = post[j]! / z;
            counts.set(f * tv + e, (counts.get(f * tv + e) ?? 0) + c);
            totals[f]! += c;
          }
        }
      }
      t = new Map([...counts].map(([k, c]) => [k, c / totals[Math.floor(k / tv)]!]));
    }
    return t;
  };
  const best = (p: IdPair, t: Map<number, number>, sv: number, tv: number) =>
    Array.from(p.trg, (e, i) => {
      const n = p.src.length,
        m = p.trg.length;
      let dz = 0,
        b = o.nullProb * t.get(sv * tv + e)!,
        at = -1;
      for (let j = 0; j < n; j++) dz += diag(i, j, m, n);
      for (let j = 0; j < n; j++) {
        const s = (((1 - o.nullProb) * diag(i, j, m, n)) / dz) * t.get(p.src[j]! * tv + e)!;
        if (s > b) {
          b = s;
          at = j;
        }
      }
      return at;
    });
  const rev = pairs.map((p) => ({ src: p.trg, trg: p.src }));
  const fwd = train(pairs, S, T),
    bwd = train(rev, T, S);
  return pairs.map((p, k) => {
    const a = best(p, fwd, S, T),
      b = best(rev[k]!, bwd, T, S);
    const links: [number, number][] = [];
    a.forEach((j, i) => {
      if (j >= 0 && b[j] === i) links.push([j, i]);
    });
    return links;
  });
}

describe('multilingual skip-gram pairs', () => {
  const tok = new WordTokenizer(syntheticCorpus(50, 1).words);
  const { cells } = syntheticCorpus(50, 1);
  const corpus = encodeRows(cells, tok, 0, 50);

  it('monolingual pairs lie within the window; cross-lingual contexts lie around the aligned word', () => {
    // links: xx word i ↔ en word i (the synthetic xx keeps the word order of en)
    const links = new Map([['xx', corpus.ids.get('xx')!.map((s) => Array.from({ length: s!.length - 1 }, (_, i) => [i, i] as [number, number]))]]);
    const window = 2;
    const mono = new SkipGramSampler(corpus, new Map(), 'en', tok.vocabSize, { window, mono: true, cross: false, extraMono: true, batch: 400, negatives: 64 });
    const b = mono.batch(7);
    const near = (w: number, c: number) =>
      [...corpus.ids.values()].some((rows) =>
        rows.some((s) =>
          s?.some((t, i) => t === w && s.slice(Math.max(0, i - window), i + window + 1).some((u, j) => u === c && j !== i - Math.max(0, i - window))),
        ),
      );
    for (let k = 0; k < 50; k++) assert.ok(near(b.words[k]!, b.contexts[k]!), `monolingual pair ${k}`);
    assert.ok(Array.from(b.words).every((w) => w >= 4) && Array.from(b.contexts).every((w) => w >= 4), 'no special tokens');
    const cross = new SkipGramSampler(corpus, links, 'en', tok.vocabSize, { window: 0, mono: false, cross: true, extraMono: true, batch: 200, negatives: 8 });
    const c = cross.batch(9);
    // window 0: the context is the aligned word itself, i.e. the translation of the word
    const en = (w: string) => w.replace(/^\u2581/, '');
    for (let k = 0; k < 200; k++) {
      const [w, x] = [tok.vocab[c.words[k]!]!, tok.vocab[c.contexts[k]!]!].map(en);
      const ie = (s: string) => (s.startsWith('w') ? Number(s.slice(1)) : -1);
      // xx's shared words are spelled as en's; the others map by the cipher of the corpus
      assert.ok(ie(w!) >= 0 || ie(x!) >= 0, `one side is English: ${w} ${x}`);
    }
    assert.deepEqual(Array.from(mono.batch(7).words), Array.from(b.words), 'deterministic from the seed');
  });

  it('draws negatives ∝ count^0.75', () => {
    const s = new SkipGramSampler(corpus, new Map(), 'en', tok.vocabSize, {
      window: 2,
      mono: true,
      cross: false,
      extraMono: true,
      batch: 10,
      negatives: 20000,
    });
    const counts = new Float64Array(tok.vocabSize);
    for (const rows of corpus.ids.values()) for (const r of rows) for (const t of r!) if (t >= 4) counts[t]! += 1;
    const p = Float64Array.from(counts, (c) => c ** 0.75);
    const z = p.reduce((a, b) => a + b, 0);
    const seen = new Float64Array(tok.vocabSize);
    for (const n of s.batch(3).negatives) seen[n]! += 1;
    let tv = 0;
    for (let i = 0; i < p.length; i++) tv += Math.abs(seen[i]! / 20000 - p[i]! / z);
    assert.ok(tv / 2 < 0.05, `total variation ${tv / 2}`);
  });
});

describe('JMT losses', () => {
  const sig = (x: number) => 1 / (1 + Math.exp(-x));
  it('skip-gram with shared negatives equals −mean[log σ(u·v) + Σ log σ(−u·n)]', () => {
    const u = [
        [1, 0],
        [0.5, -1],
      ],
      v = [
        [0.3, 0.2],
        [-1, 2],
      ],
      n = [
        [1, 1],
        [0, -0.5],
        [2, 0],
      ];
    const dot = (a: number[], b: number[]) => a[0]! * b[0]! + a[1]! * b[1]!;
    const want = -u.reduce((acc, ui, i) => acc + Math.log(sig(dot(ui, v[i]!))) + n.reduce((a, nk) => a + Math.log(sig(-dot(ui, nk))), 0), 0) / u.length;
    assert.ok(Math.abs(skipGramLoss(tensor(u), tensor(v), tensor(n)).item() - want) < 1e-5);
  });
  it('hinge on L2 distances, both directions, equals the formula', () => {
    const S = [
        [0, 0],
        [1, 0],
        [0, 2],
      ],
      T = [
        [0, 1],
        [1, 1],
        [3, 0],
      ];
    const d = (a: number[], b: number[]) => Math.hypot(a[0]! - b[0]!, a[1]! - b[1]!);
    const m = 1.5,
      neg = Int32Array.from([1, 2, 0, 2, 1, 0]),
      back = Int32Array.from([2, 1, 2, 0, 0, 1]);
    let fwd = 0,
      bwd = 0;
    for (let i = 0; i < 3; i++)
      for (let k = 0; k < 2; k++) {
        fwd += Math.max(0, m + d(S[i]!, T[i]!) - d(S[i]!, T[neg[2 * i + k]!]!));
        bwd += Math.max(0, m + d(T[i]!, S[i]!) - d(T[i]!, S[back[2 * i + k]!]!));
      }
    assert.ok(Math.abs(distanceHingeLoss(tensor(S), tensor(T), m, neg).item() - fwd / 3) < 1e-5);
    assert.ok(Math.abs(distanceHingeLoss(tensor(S), tensor(T), m, neg, back).item() - (fwd + bwd) / 3) < 1e-5);
  });
});

describe('JMT family on the synthetic corpus', () => {
  it('every variant learns translation vectors far below chance', async () => {
    const { cells, words } = syntheticCorpus(900, 1);
    const tok = new WordTokenizer(words);
    const corpus = encodeRows(cells, tok, 0, 700);
    const dev: DevSet = { pairs: new Map(['xx', 'yy'].map((l) => [l, { src: cells.get(l)!.slice(700, 900), en: cells.get('en')!.slice(700, 900) }])) };
    for (const [name, extra] of [
      ['JMT-Sent-LSTM', { encoder: { type: 'lstm', dim: 32, hidden: 32 } }],
      ['JMT-Sent-Avg no-mono', { encoder: { type: 'avg', dim: 32 }, skipgram: { extraMono: false, batch: 256, negatives: 64 } }],
      ['Sent-LSTM', { encoder: { type: 'lstm', dim: 32, hidden: 32 }, skipgram: { enabled: false } }],
    ] as const) {
      const cfg = parseConfig(
        {
          model: 'jmt',
          seed: 4,
          sentence: { marginPerDim: 0.05 },
          batch: { size: 50 },
          optim: { lr: 0.02 },
          budget: { pairs: 50 * 80 },
          dropout: 0,
          checkpointEvery: 1000,
          logEvery: 1000,
          ...extra,
        },
        'jmt test',
      );
      const dir = mkdtempSync(join(tmpdir(), 'xling-jmt-'));
      try {
        const { task } = await train({ config: cfg, corpus, tokenizer: tok, outDir: dir, log: () => {} });
        const x = xsimOnDev(new SentenceEncoderModel(task.encoder(), tok), dev).average;
        console.log(`# ${name}: xsim ${x.toFixed(1)}%`);
        assert.ok(x < 30, `${name}: xsim ${x}% (chance 99.5%)`);
        task.module.dispose();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });
});

describe('document classifiers', () => {
  it('averaged perceptron and MLP separate a toy set; metrics by hand', () => {
    const rng = new Rng(2);
    const make = (n: number) => {
      const x = new Float32Array(n * 4),
        y = new Int32Array(n);
      for (let i = 0; i < n; i++) {
        y[i] = i % 3;
        for (let j = 0; j < 4; j++) x[i * 4 + j] = (j === y[i]! ? 2 : 0) + rng.normal() * 0.3;
      }
      return { x, y };
    };
    const tr = make(300),
      te = make(90);
    for (const type of ['perceptron', 'mlp'] as const) {
      const clf = trainClassifier(tr.x, tr.y, ['a', 'b', 'c'], { ...CLASSIFIER_DEFAULTS, type, epochs: type === 'mlp' ? 60 : 5, hidden: [16], lr: 0.01 });
      const r = evaluate(te.y, predict(clf, te.x), clf.labels);
      assert.ok(r.accuracy > 0.97, `${type}: accuracy ${r.accuracy}`);
    }
    const r = evaluate(Int32Array.from([0, 0, 1, 1, 2]), Int32Array.from([0, 1, 1, 1, 0]), ['a', 'b', 'c']);
    assert.equal(r.accuracy, 3 / 5);
    assert.deepEqual(r.confusion, [
      [1, 1, 0],
      [0, 2, 0],
      [1, 0, 0],
    ]);
    // F1: a = 0.5, b = 0.8, c = 0 → macro 1.3 / 3
    assert.ok(Math.abs(r.macro_f1 - 1.3 / 3) < 1e-9);
  });
});

describe('text for documents and word models', () => {
  it('splits sentences at . ! ? before a new sentence, after 。！？, and before bullets', () => {
    assert.deepEqual(splitSentences('Open the file. It is big! Really? yes'), ['Open the file.', 'It is big!', 'Really? yes']);
    assert.deepEqual(splitSentences('Version 2.0 is out (e.g. here). 3 files changed'), ['Version 2.0 is out (e.g. here).', '3 files changed']);
    assert.deepEqual(splitSentences('第一句。第二句！第三句'), ['第一句。', '第二句！', '第三句']);
    assert.deepEqual(splitSentences('It has: * tool-a - does x. * tool-b'), ['It has:', 'tool-a - does x.', 'tool-b']);
    assert.deepEqual(splitSentences('one line without marks'), ['one line without marks']);
  });
  it('splits words as BERT does: whitespace, punctuation and CJK ideographs on their own', () => {
    assert.deepEqual(splitWords('datei «kann» nicht: 日本語のテキスト, ok!'), [
      'datei',
      '«',
      'kann',
      '»',
      'nicht',
      ':',
      '日',
      '本',
      '語',
      'のテキスト',
      ',',
      'ok',
      '!',
    ]);
  });
});

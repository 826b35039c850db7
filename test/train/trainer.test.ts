import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/models/config.js';
import {
  BatchStream,
  buildExamples,
  epochBatches,
  epochLangBatches,
  epochPairBatches,
  langQuotas,
  pairKey,
  temperatureShares,
} from '../../src/train-data/examples.js';
import { train, TrainingInterrupted } from '../../src/train/trainer.js';
import { fingerprintOf } from '../../src/train/pipeline.js';
import { encodeTable, loadTable } from '../../src/train/prepare.js';
import { laserConfigOf } from '../../src/models/laser/family.js';
import { unigramOutputBias } from '../../src/models/laser/train.js';
import { LaserEncoder, LaserModel, LaserSentenceEncoder } from '../../src/models/laser/model.js';
import { SentenceEncoderModel } from '../../src/embed/model.js';
import { xsimOnDev, DevSet } from '../../src/train/validate.js';
import { encodeRows as encode, syntheticCorpus, WordTokenizer } from '../fixtures/synthetic.js';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test', 'fixtures');

const tinyConfig = (pairs: number) =>
  parseConfig(
    {
      seed: 3,
      encoder: { embedDim: 32, hidden: 64 },
      decoder: { embedDim: 32, hidden: 96, langEmbedDim: 8 },
      paths: [
        { kind: '1:1', src: '*', trg: ['en'] },
        { kind: '1:1', src: ['en'], trg: ['xx'] },
      ],
      batch: { size: 32 },
      optim: { lr: 0.01 },
      budget: { pairs },
      checkpointEvery: 10,
      logEvery: 1000,
      validate: { every: 0 },
    },
    'test config',
  );

describe('LASER trainer', () => {
  const { cells, words } = syntheticCorpus(900, 1);
  const tok = new WordTokenizer(words);
  const trainSet = encode(cells, tok, 0, 700);
  const dev: DevSet = { pairs: new Map(['xx', 'yy'].map((l) => [l, { src: cells.get(l)!.slice(700, 900), en: cells.get('en')!.slice(700, 900) }])) };

  it('config errors name the setting', () => {
    assert.throws(() => parseConfig({ encoder: { hiden: 3 } }, 'c.json'), /c\.json: unknown setting 'encoder\.hiden'/);
    assert.throws(() => parseConfig({ batch: { size: 'x' } }, 'c.json'), /'batch\.size' must be a number/);
    assert.throws(() => parseConfig({ paths: [{ kind: '1:1', src: '*', trg: ['en', 'es'] }] }, 'c.json'), /one target language/);
  });

  it('builds examples per path and length-sorted batches', () => {
    const ex = buildExamples(trainSet, [
      { kind: '1:1', src: '*', trg: ['en'] },
      { kind: '1:N', src: ['xx'], trg: ['en', 'yy'] },
      { kind: 'M:1', src: ['xx', 'yy'], trg: ['en'] },
    ]);
    assert.equal(ex.filter((e) => e.kind === '1:1').length, 1400);
    assert.equal(ex.filter((e) => e.kind === '1:N').length, 700);
    assert.equal(ex.filter((e) => e.kind === 'M:1').length, 700);
    const bs = epochBatches({ ex, c: trainSet, seed: 1, size: 32, sortChunk: 10, maxTokens: 0 }, 0);
    assert.equal(
      bs.reduce((a, b) => a + b.examples.length, 0),
      ex.length,
    );
    for (const b of bs) assert.ok(b.examples.every((e) => e.kind === b.kind));
    assert.deepEqual(
      epochBatches({ ex, c: trainSet, seed: 1, size: 32, sortChunk: 10, maxTokens: 0 }, 0).map((b) => b.examples[0]!.row),
      bs.map((b) => b.examples[0]!.row),
      'deterministic',
    );
    assert.throws(() => buildExamples(trainSet, [{ kind: '1:1', src: ['de'], trg: ['en'] }]), /'de' is not in the corpus/);
    const weighted = buildExamples(trainSet, [
      { kind: '1:1', src: ['xx'], trg: ['en'] },
      { kind: '1:1', src: ['en'], trg: ['yy'], weight: 2.5 },
    ]);
    assert.equal(weighted.filter((e) => e.src[0] === 'en').length, 1750, 'weight 2.5 → 2.5× the examples');
    // trg '*': every two languages of a row once, the earlier column as the source
    const all = buildExamples(trainSet, [{ kind: '1:1', src: '*', trg: '*' }]);
    let want = 0;
    for (let r = 0; r < trainSet.rows; r++) {
      const k = trainSet.langs.filter((l) => trainSet.ids.get(l)![r]).length;
      want += (k * (k - 1)) / 2;
    }
    assert.ok(want > 700);
    assert.equal(all.length, want);
    assert.equal(new Set(all.map((e) => `${e.row} ${e.src[0]} ${e.trg[0]}`)).size, want, 'each pair once');
    assert.ok(all.every((e) => trainSet.langs.indexOf(e.src[0]!) < trainSet.langs.indexOf(e.trg[0]!)));
    assert.throws(() => buildExamples(trainSet, [{ kind: '1:1', src: ['xx'], trg: '*' }]), /trg '\*' needs kind 1:1 and src '\*'/);
    assert.throws(
      () => parseConfig({ paths: [{ kind: '1:N', src: '*', trg: '*' }] }, 'c.json'),
      /c\.json: paths\[0\]: trg '\*' .*needs kind '1:1' and src '\*'/,
    );
    assert.throws(() => parseConfig({ model: 'laser', paths: [{ kind: '1:1', src: '*', trg: '*' }] }, 'c.json'), /a laser path names its target languages/);
    // a weighted path of 10⁵+ examples (the gettext corpus has 531k X→en): no call-stack overflow
    const rows = 300_000,
      ids = Int32Array.from([1]);
    const big = {
      langs: ['xx', 'en'],
      rows,
      ids: new Map([
        ['xx', new Array(rows).fill(ids)],
        ['en', new Array(rows).fill(ids)],
      ]),
    };
    assert.equal(buildExamples(big, [{ kind: '1:1', src: ['xx'], trg: ['en'], weight: 2 }]).length, 2 * rows);
  });

  it('a path with sources reads only the rows of those sources (#source column)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'xling-sources-'));
    try {
      const file = join(dir, 'c.tsv');
      const lines = ['en\tde\tfr\t#source'];
      for (let i = 0; i < 30; i++) lines.push(`cat ${i}\tKatze ${i}\t${i % 2 ? `chat ${i}` : ''}\t${['a', 'b', 'a,c'][i % 3]}`);
      writeFileSync(file, lines.join('\n') + '\n');
      const table = await loadTable(file);
      assert.deepEqual(table.langs, ['en', 'de', 'fr'], '#source is not a language');
      assert.equal(table.sources?.[2], 'a,c');
      const tok = new WordTokenizer(['cat', 'katze', 'chat', ...Array.from({ length: 30 }, (_, i) => String(i))]);
      const c = encodeTable(table, tok);
      // every cell's ids at its row (a view of its language's one buffer), no ids where a row has no cell
      for (const l of table.langs) {
        const col = c.ids.get(l)!;
        for (let r = 0; r < table.rows.length; r++) {
          const text = table.rows[r]!.get(l);
          if (text) assert.deepEqual([...col[r]!], [...tok.encode(text)], `${l} row ${r}`);
          else assert.equal(col[r], undefined, `${l} row ${r}`);
        }
        assert.equal(new Set(col.filter((a) => a).map((a) => a!.buffer)).size, 1, `${l}: one buffer`);
      }
      const every = { kind: '1:1' as const, src: '*' as const, trg: ['en'] };
      const base = buildExamples(c, [every]);
      assert.equal(base.length, 30 + 15);
      assert.equal(new Set(base.map((e) => e.src)).size, 2, 'examples share their language lists');
      // the rows of source 'c' (every third, listed with 'a') twice: once from each path
      const more = buildExamples(c, [every, { ...every, sources: ['c'] }]);
      const fromC = base.filter((e) => e.row % 3 === 2).length;
      assert.equal(more.length, base.length + fromC);
      assert.ok(more.slice(base.length).every((e) => e.row % 3 === 2));
      assert.throws(() => buildExamples(c, [{ ...every, sources: ['z'] }]), /no row of the corpus comes from z/);
      const noColumn = { ...c, sources: undefined };
      assert.throws(() => buildExamples(noColumn, [{ ...every, sources: ['a'] }]), /'sources' needs a corpus with a #source column/);
      assert.throws(
        () => parseConfig({ paths: [{ kind: '1:1', src: '*', trg: ['en'], sources: [] }] }, 'c.json'),
        /c\.json: paths\[0\]\.sources must list source names/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('samples one language pair per batch with a temperature', () => {
    // xx→en has 700 examples, en→yy only 70: T = 1 keeps the 10:1 ratio, T = 100 is near 1:1
    const ex = buildExamples(trainSet, [
      { kind: '1:1', src: ['xx'], trg: ['en'] },
      { kind: '1:1', src: ['en'], trg: ['yy'], weight: 0.1 },
    ]);
    const share = (T: number) => {
      let small = 0,
        n = 0;
      for (let epoch = 0; epoch < 20; epoch++) {
        const bs = epochPairBatches({ ex, c: trainSet, seed: 1, size: 8, sortChunk: 10, maxTokens: 0 }, epoch, T);
        assert.equal(bs.length, Math.ceil(700 / 8) + Math.ceil(70 / 8), 'an epoch has as many batches as the pairs have');
        for (const b of bs) {
          assert.equal(new Set(b.examples.map(pairKey)).size, 1, 'one language pair per batch');
          n++;
          if (b.examples[0]!.src[0] === 'en') small++;
        }
      }
      return small / n;
    };
    const s1 = share(1),
      s100 = share(100);
    assert.ok(Math.abs(s1 - 70 / 770) < 0.03, `T=1: share of the small pair ${s1.toFixed(3)}`);
    assert.ok(Math.abs(s100 - 0.5) < 0.05, `T=100: share of the small pair ${s100.toFixed(3)}`);
    // deterministic and resumable from the stream state (an epoch here has 97 batches)
    const key = (st: BatchStream) =>
      st
        .next()
        .examples.map((e) => e.row)
        .join();
    const a = new BatchStream(ex, trainSet, 1, 8, 10, 0, undefined, { pairTemperature: 5 });
    const seen: string[] = [];
    let at = a.state;
    for (let i = 0; i < 150; i++) {
      if (i === 120) at = a.state;
      seen.push(key(a));
    }
    const b = new BatchStream(ex, trainSet, 1, 8, 10, 0, at, { pairTemperature: 5 });
    for (let i = 120; i < 150; i++) assert.equal(key(b), seen[i], `batch ${i} after resume`);
  });

  it('mixes language pairs in batches with a temperature over their shares', () => {
    // xx→en has 700 examples, en→yy 70: T = 1 keeps 10:1, T = 3 gives 700^(1/3) : 70^(1/3) ≈ 2.15 : 1
    const ex = buildExamples(trainSet, [
      { kind: '1:1', src: ['xx'], trg: ['en'] },
      { kind: '1:1', src: ['en'], trg: ['yy'], weight: 0.1 },
    ]);
    const [big, small] = temperatureShares([700, 70], 3);
    assert.ok(Math.abs(big! / small! - 10 ** (1 / 3)) < 1e-9);
    const seenSmall = new Map<number, number>();
    let mixed = 0,
      smallN = 0,
      total = 0;
    for (let epoch = 0; epoch < 4; epoch++) {
      const bs = epochLangBatches({ ex, c: trainSet, seed: 1, size: 8, sortChunk: 10, maxTokens: 0 }, epoch, { temperature: 3, minRows: 0, maxRepeat: 10 });
      for (const b of bs) {
        if (new Set(b.examples.map(pairKey)).size > 1) mixed++;
        for (const e of b.examples) {
          total++;
          if (e.src[0] === 'en') {
            smallN++;
            seenSmall.set(e.row, (seenSmall.get(e.row) ?? 0) + 1);
          }
        }
      }
    }
    assert.equal(total, 4 * 770, 'an epoch has as many examples as the corpus');
    assert.equal(smallN, 4 * Math.round(small! * 770), 'the small pair takes its share');
    assert.ok(mixed > 0, 'batches mix pairs');
    // the small pair is read in whole passes: every example as often as the others, give or take one
    const counts = [...seenSmall.values()];
    assert.equal(seenSmall.size, 70);
    assert.ok(Math.max(...counts) - Math.min(...counts) <= 1, `repeats ${Math.min(...counts)}–${Math.max(...counts)}`);
    // deterministic and resumable from the stream state
    const key = (st: BatchStream) =>
      st
        .next()
        .examples.map((e) => `${e.src[0]}${e.row}`)
        .join();
    const a = new BatchStream(ex, trainSet, 1, 8, 10, 0, undefined, { langTemperature: 3 });
    const seen: string[] = [];
    let at = a.state;
    for (let i = 0; i < 250; i++) {
      if (i === 200) at = a.state;
      seen.push(key(a));
    }
    const b = new BatchStream(ex, trainSet, 1, 8, 10, 0, at, { langTemperature: 3 });
    for (let i = 200; i < 250; i++) assert.equal(key(b), seen[i], `batch ${i} after resume`);
    assert.throws(() => parseConfig({ batch: { pairTemperature: 2, langTemperature: 2 } }, 'c.json'), /exclude each other/);
    // a floor: the small pair raised to min(minRows, maxRepeat × n) examples an epoch, the large one kept
    assert.deepEqual(langQuotas([700, 70], 770, { temperature: 1, minRows: 300, maxRepeat: 10 }), [700, 300]);
    assert.deepEqual(langQuotas([700, 70], 770, { temperature: 1, minRows: 3000, maxRepeat: 2 }), [1400, 140]);
    assert.deepEqual(langQuotas([700, 70], 770, { temperature: 1, minRows: 50, maxRepeat: 10 }), [700, 70]);
    const floored = new BatchStream(ex, trainSet, 1, 8, 10, 0, undefined, { langMinRows: 300 });
    let small2 = 0;
    for (let i = 0; i < Math.ceil(1000 / 8); i++) small2 += floored.next().examples.filter((e) => e.src[0] === 'en').length;
    assert.ok(small2 >= 0.26 * 1000 && small2 <= 0.34 * 1000, `the floored pair's share ${small2 / 1000}`);
  });

  it('decoder.outBias unigram starts the output bias at the log frequency of target tokens', () => {
    const cfg = parseConfig({ ...tinyConfig(100), decoder: { embedDim: 32, hidden: 96, langEmbedDim: 8, outBias: 'unigram' } }, 't');
    assert.throws(() => parseConfig({ decoder: { outBias: 'zipf' } }, 'c.json'), /c\.json: 'decoder\.outBias' must be 'uniform', 'unigram', got "zipf"/);
    const model = new LaserModel(laserConfigOf(cfg, tok));
    const ex = buildExamples(trainSet, cfg.paths);
    unigramOutputBias(model, ex, trainSet);
    const bias = model.decoder.out.bias!.toFloat32Array();
    const counts = new Float64Array(tok.vocabSize).fill(1);
    for (const e of ex) for (const t of trainSet.ids.get(e.trg[0]!)![e.row]!) counts[t]! += 1;
    const total = counts.reduce((a, b) => a + b, 0);
    for (let v = 0; v < tok.vocabSize; v++) assert.ok(Math.abs(bias[v]! - Math.log(counts[v]! / total)) < 1e-5, `token ${v}`);
    assert.ok(Math.abs(bias.reduce((a, b) => a + Math.exp(b), 0) - 1) < 1e-4, 'a distribution');
    assert.equal(bias.indexOf(Math.max(...bias)), tok.eosId, 'end of sentence is the most frequent target token');
    model.dispose();
  });

  it('learns cross-lingual sentence vectors far below chance', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'xling-train-'));
    try {
      const cfg = tinyConfig(40000);
      const untrained = new LaserEncoder(laserConfigOf(cfg, tok));
      const before = xsimOnDev(new SentenceEncoderModel(new LaserSentenceEncoder(untrained, tok.padId), tok), dev);
      untrained.dispose();
      const { task, log } = await train({ config: cfg, corpus: trainSet, tokenizer: tok, outDir: dir, log: () => {} });
      const after = xsimOnDev(new SentenceEncoderModel(task.encoder(), tok), dev);
      // Chance is 99.5%; shared words already give an untrained encoder some signal.
      assert.ok(after.average < 40, `trained xsim error ${after.average}% (chance 99.5%)`);
      assert.ok(after.average < before.average - 15, `training helps: ${before.average}% -> ${after.average}%`);
      assert.ok(log.at(-1)!.loss < log[0]!.loss / 2, 'loss falls');
      assert.equal(log.at(-1)!.pairs, 40000, 'exact pair budget');
      assert.ok(existsSync(join(dir, 'loss.svg')));
      task.module.dispose();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the generic trainer reproduces the pre-plug-in LASER loss curve (same seed and config)', async () => {
    // test/fixtures/laser-loss-curve.json: losses of the LASER-only trainer of commit 716c599 on this
    // corpus with this config (1:1 and 1:N paths, language-pair batches, dropout, unigram bias)
    const golden = JSON.parse(readFileSync(join(fixtures, 'laser-loss-curve.json'), 'utf8')) as { losses: number[]; pairs: number[] };
    const cfg = parseConfig(
      {
        seed: 3,
        encoder: { embedDim: 32, hidden: 64 },
        decoder: { embedDim: 32, hidden: 96, langEmbedDim: 8 },
        paths: [
          { kind: '1:1', src: '*', trg: ['en'] },
          { kind: '1:1', src: ['en'], trg: ['xx'] },
          { kind: '1:N', src: ['yy'], trg: ['en', 'xx'] },
        ],
        batch: { size: 32, pairTemperature: 2 },
        optim: { lr: 0.01 },
        dropout: 0.1,
        budget: { pairs: 32 * 40 },
        checkpointEvery: 10,
        logEvery: 1000,
        validate: { every: 0 },
      },
      'golden',
    );
    const dir = mkdtempSync(join(tmpdir(), 'xling-golden-'));
    try {
      const { task, log } = await train({ config: cfg, corpus: trainSet, tokenizer: tok, outDir: dir, log: () => {} });
      assert.deepEqual(
        log.map((e) => e.pairs),
        golden.pairs,
        'same batches',
      );
      log.forEach((e, i) =>
        assert.ok(Math.abs(e.loss - golden.losses[i]!) < 1e-4 * Math.max(1, golden.losses[i]!), `step ${i + 1}: ${e.loss} vs ${golden.losses[i]}`),
      );
      task.module.dispose();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('resume after a kill reproduces the same loss curve', async () => {
    const a = mkdtempSync(join(tmpdir(), 'xling-resume-a-'));
    const b = mkdtempSync(join(tmpdir(), 'xling-resume-b-'));
    try {
      const cfg = { ...tinyConfig(32 * 30), dropout: 0.1 };
      const full = await train({ config: cfg, corpus: trainSet, tokenizer: tok, outDir: a, log: () => {} });
      // "kill" after 17 steps: the last checkpoint is at step 10, steps 11–17 are lost.
      const part = await train({ config: cfg, corpus: trainSet, tokenizer: tok, outDir: b, log: () => {}, stopAfterSteps: 17 });
      part.task.module.dispose();
      assert.equal((JSON.parse(readFileSync(join(b, 'checkpoint', 'state.json'), 'utf8')) as { step: number }).step, 10, 'the last checkpoint before the kill');
      // the kill -9 came during the next checkpoint save: the whole checkpoint already moved to
      // checkpoint.old, a half-written one lies in a temporary (CI once carried one into a model)
      renameSync(join(b, 'checkpoint'), join(b, 'checkpoint.old'));
      mkdirSync(join(b, 'checkpoint.tmp-99999-0badf00d'));
      writeFileSync(join(b, 'checkpoint.tmp-99999-0badf00d', 'model.safetensors.tmp-99999-deadbeef'), 'half');
      const resumed = await train({ config: cfg, corpus: trainSet, tokenizer: tok, outDir: b, resume: true, log: () => {} });
      const la = full.log.map((e) => e.loss),
        lb = readFileSync(join(b, 'train-log.jsonl'), 'utf8')
          .trim()
          .split('\n')
          .map((l) => (JSON.parse(l) as { loss: number }).loss);
      assert.equal(lb.length, la.length);
      for (let i = 0; i < la.length; i++) assert.ok(Math.abs(la[i]! - lb[i]!) < 1e-6, `step ${i + 1}: ${la[i]} vs ${lb[i]}`);
      assert.deepEqual(
        readdirSync(b).filter((f) => f.startsWith('checkpoint')),
        ['checkpoint'],
        'no temporaries, no checkpoint.old',
      );
      full.task.module.dispose();
      resumed.task.module.dispose();
      await assert.rejects(
        train({ config: cfg, corpus: trainSet, tokenizer: tok, outDir: join(b, 'none'), resume: true, log: () => {} }),
        /--resume: no checkpoint in/,
      );
    } finally {
      rmSync(a, { recursive: true, force: true });
      rmSync(b, { recursive: true, force: true });
    }
  });

  it('an abort (SIGINT) stops after the step it came in, writes a checkpoint there, and the resumed run has the same loss curve', async () => {
    const a = mkdtempSync(join(tmpdir(), 'xling-stop-a-'));
    const b = mkdtempSync(join(tmpdir(), 'xling-stop-b-'));
    try {
      // checkpoints every 10 steps; the abort comes at step 13 (from the step's log line), so
      // only the one written on the way out can hold step 13
      const cfg = { ...tinyConfig(32 * 30), dropout: 0.1, logEvery: 1 };
      const full = await train({ config: cfg, corpus: trainSet, tokenizer: tok, outDir: a, log: () => {} });
      const stop = new AbortController();
      const seen: number[] = [];
      const log = (l: string) => {
        const m = /^step (\d+) pairs/.exec(l);
        if (m) {
          seen.push(+m[1]!);
          if (+m[1]! === 13) stop.abort();
        }
      };
      await assert.rejects(
        train({ config: cfg, corpus: trainSet, tokenizer: tok, outDir: b, log, signal: stop.signal }),
        (e) => e instanceof TrainingInterrupted && e.step === 13,
      );
      assert.equal(Math.max(...seen), 13, 'no step after the abort');
      assert.equal((JSON.parse(readFileSync(join(b, 'checkpoint', 'state.json'), 'utf8')) as { step: number }).step, 13, 'a checkpoint of the last step');
      assert.ok(existsSync(join(b, 'loss.svg')), 'the curves of the steps so far');
      const resumed = await train({ config: cfg, corpus: trainSet, tokenizer: tok, outDir: b, resume: true, log: () => {} });
      const la = full.log.map((e) => e.loss),
        lb = resumed.log.map((e) => e.loss);
      assert.equal(lb.length, la.length);
      for (let i = 0; i < la.length; i++) assert.ok(Math.abs(la[i]! - lb[i]!) < 1e-6, `step ${i + 1}: ${la[i]} vs ${lb[i]}`);
      // an abort before the first step still leaves a checkpoint (step 0) for --resume
      const c = join(b, 'early');
      const early = new AbortController();
      early.abort();
      await assert.rejects(
        train({ config: cfg, corpus: trainSet, tokenizer: tok, outDir: c, log: () => {}, signal: early.signal }),
        (e) => e instanceof TrainingInterrupted && e.step === 0,
      );
      assert.ok(existsSync(join(c, 'checkpoint', 'state.json')));
      full.task.module.dispose();
      resumed.task.module.dispose();
    } finally {
      rmSync(a, { recursive: true, force: true });
      rmSync(b, { recursive: true, force: true });
    }
  });
});

describe('checkpoint fingerprint', () => {
  it('a dual config at features.hashes 1 fingerprints as before the setting existed; 2 hashes differ', () => {
    const one = parseConfig({ model: 'dual' }) as unknown as Record<string, unknown> & { features: Record<string, unknown> };
    const { hashes: _, ...older } = one.features;
    assert.equal(one.features.hashes, 1);
    assert.equal(fingerprintOf(one as never, 'tok'), fingerprintOf({ ...one, features: older } as never, 'tok'));
    const two = parseConfig({ model: 'dual', features: { hashes: 2 } });
    assert.notEqual(fingerprintOf(two, 'tok'), fingerprintOf(one as never, 'tok'));
    assert.notEqual(fingerprintOf(one as never, 'tok'), fingerprintOf(one as never, 'other tokenizer'));
  });
});

// xling distill: a small student distilled from a tiny teacher (trained here on the bundled sample)
// beats chance by a wide margin on the dev set and approaches its teacher; the held-out distance to
// the teacher shrinks; a killed run resumes (teacher cache kept, same student as an uninterrupted
// run); bad options are refused before any work.
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { exportCompact } from '../../src/embed/export.js';
import { loadSentenceEncoder } from '../../src/embed/model-dir.js';
import { readNpyHeader } from '../../src/io/npy.js';
import { parseConfig } from '../../src/models/config.js';
import { distillModel, DistillResult } from '../../src/train/distill.js';
import { trainModel } from '../../src/train/pipeline.js';
import { cli, devColumn, root } from '../fixtures/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'xling-distill-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const train = join(root, 'data/sample/gettext.train.tsv.gz'),
  dev = join(root, 'data/sample/gettext.dev.tsv.gz');
const teacherDir = join(dir, 'teacher');
// the student: a quarter of the teacher's buckets, half its feature width
const STUDENT = {
  model: 'dual',
  vocab: { type: 'none' },
  features: { buckets: 4096, ngrams: [1, 4], dim: 32 },
  batch: { size: 128 },
  optim: { lr: 0.003, sparseLr: 0.05 },
  budget: { pairs: 30000 },
  center: { perLang: 100 },
  checkpointEvery: 100,
};
const quiet = () => {};
let full: DistillResult;

describe('xling distill', () => {
  before(async () => {
    const teacher = parseConfig({
      model: 'dual',
      features: { buckets: 16384, dim: 64 },
      encoder: { outDim: 64 },
      batch: { size: 128 },
      optim: { lr: 0.003, sparseLr: 0.05 },
      budget: { pairs: 20000 },
      center: { perLang: 100 },
    });
    await trainModel({ config: teacher, data: train, out: teacherDir, log: quiet, quiet: true });
    full = await distillModel({
      teacher: teacherDir,
      config: parseConfig(STUDENT),
      data: [],
      parallel: train,
      dev,
      out: join(dir, 'S'),
      log: quiet,
      quiet: true,
    });
  });

  it('the student beats chance by a wide margin and approaches its teacher (dev similarity-search error)', () => {
    const d = full.dev!;
    // chance: 299 of 300 wrong
    assert.ok(d.teacher.average < 50, `teacher ${d.teacher.average}%`);
    assert.ok(d.student.average < 60, `student ${d.student.average}% (chance 99.7%)`);
    assert.ok(d.student.average < d.teacher.average + 15, `student ${d.student.average}% vs teacher ${d.teacher.average}%`);
  });

  it('distillation brings the student near the teacher on held-out sentences', () => {
    const h = full.heldOut!;
    assert.ok(h.before.sentences > 100);
    assert.ok(h.before.cosine < 0.2, `untrained cosine ${h.before.cosine}`);
    assert.ok(h.after.cosine > 0.55, `trained cosine ${h.after.cosine}`);
    assert.ok(h.after.mse < h.before.mse / 2, `MSE ${h.before.mse} → ${h.after.mse}`);
  });

  it("writes an ordinary small dual model (the teacher's dimension, per-language means, identifier, report)", () => {
    const s = join(dir, 'S');
    const m = loadSentenceEncoder(s);
    assert.equal(m.dim, 64);
    assert.equal(m.centers.size, 13);
    assert.ok(m.lid);
    const v = m.embed(devColumn('de').slice(0, 3), { lang: 'de' });
    assert.equal(v.length, 3 * 64);
    const report = JSON.parse(readFileSync(join(s, 'distill.json'), 'utf8'));
    assert.equal(report.teacher.dim, 64);
    assert.ok(!existsSync(join(s, 'teacher')) && !existsSync(join(s, 'checkpoint')), 'the finished student holds no cache or checkpoint');
    assert.ok(!existsSync(`${s}.partial`));
  });

  it('a hash-embedding student (features.hashes 2) records its spec; its exports and a spec-less config.json tokenise as it was trained', async () => {
    const out = join(dir, 'H');
    const r = await distillModel({
      teacher: teacherDir,
      config: parseConfig({ ...STUDENT, features: { ...STUDENT.features, hashes: 2, maxFeatures: 4096 }, budget: { pairs: 12000 } }),
      data: [],
      parallel: train,
      dev,
      out,
      log: quiet,
      quiet: true,
    });
    const spec = (d: string) => (JSON.parse(readFileSync(join(d, 'config.json'), 'utf8')) as { tokenizerSpec?: { hashes?: number } }).tokenizerSpec;
    assert.equal(spec(out)?.hashes, 2);
    const texts = devColumn('de').slice(0, 40);
    const m = loadSentenceEncoder(out);
    assert.equal(m.tokenizer.encode('Datei öffnen').length, 2 * loadSentenceEncoder(join(dir, 'S')).tokenizer.encode('Datei öffnen').length);
    const ref = m.embed(texts, { center: false });
    const minCos = (v: Float32Array) => {
      let w = 1;
      for (let i = 0; i < texts.length; i++) {
        let c = 0;
        for (let j = 0; j < m.dim; j++) c += v[i * m.dim + j]! * ref[i * m.dim + j]!;
        w = Math.min(w, c);
      }
      return w;
    };
    // int8: the same tokens, rows within their quantisation error
    const i8 = join(dir, 'H-int8');
    exportCompact(out, i8, { dtype: 'int8' });
    assert.equal(spec(i8)?.hashes, 2);
    assert.ok(minCos(loadSentenceEncoder(i8).embed(texts, { center: false })) > 0.999);
    // a directory written before distill recorded the spec: derived from train.features, hashes included
    const legacy = join(dir, 'H-legacy');
    cpSync(out, legacy, { recursive: true });
    const cfg = JSON.parse(readFileSync(join(legacy, 'config.json'), 'utf8')) as Record<string, unknown>;
    delete cfg.tokenizerSpec;
    writeFileSync(join(legacy, 'config.json'), JSON.stringify(cfg));
    assert.ok(minCos(loadSentenceEncoder(legacy).embed(texts, { center: false })) > 0.99999);
    assert.ok(r.dev!.student.average < 80, `student ${r.dev!.student.average}%`);
  });

  it('a killed run resumes from its checkpoint with the cached teacher vectors, giving the same student', async () => {
    const out = join(dir, 'R'),
      work = `${out}.partial`;
    await distillModel({ teacher: teacherDir, config: parseConfig(STUDENT), data: [], parallel: train, out, log: quiet, quiet: true, stopAfterSteps: 120 });
    assert.ok(existsSync(join(work, 'checkpoint', 'state.json')));
    const cache = join(work, 'teacher', 'vectors.npy');
    assert.deepEqual(readNpyHeader(cache).shape, [4000, 64]);
    assert.equal(readNpyHeader(cache).dtype, 'float16');
    const lines: string[] = [];
    await distillModel({
      teacher: teacherDir,
      config: parseConfig(STUDENT),
      data: [],
      parallel: train,
      out,
      log: (l) => lines.push(l),
      quiet: true,
      resume: true,
    });
    assert.ok(
      lines.some((l) => /resumed from step 100/.test(l)),
      lines.join('\n'),
    );
    assert.ok(!lines.some((l) => /computing them again/.test(l)));
    const a = loadSentenceEncoder(join(dir, 'S')),
      b = loadSentenceEncoder(out);
    const texts = devColumn('fr').slice(0, 50);
    const va = a.embed(texts, { center: false }),
      vb = b.embed(texts, { center: false });
    let maxDiff = 0;
    for (let i = 0; i < va.length; i++) maxDiff = Math.max(maxDiff, Math.abs(va[i]! - vb[i]!));
    assert.ok(maxDiff < 1e-5, `resumed student differs by ${maxDiff}`);
  });

  it('refuses bad options before any work (exit 1/2, naming the argument)', async () => {
    const cfg = join(dir, 'student.json'),
      laserCfg = join(dir, 'laser.json');
    writeFileSync(cfg, JSON.stringify(STUDENT));
    writeFileSync(laserCfg, JSON.stringify({ model: 'laser' }));
    // the CLI's own checks (child processes are slow: the rest in-process below, and test/cli/cli-bad-input.test.ts)
    const cases: [string[], number, RegExp][] = [
      [['--teacher', teacherDir, '--student-config', cfg, '-o', join(dir, 'x1')], 2, /--data/],
      [['--teacher', teacherDir, '--student-config', laserCfg, '--data', dev, '-o', join(dir, 'x2')], 1, /--student-config[\s\S]*dual/],
    ];
    for (const [args, code, msg] of cases) {
      const r = cli(['distill', ...args]);
      assert.equal(r.status, code, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, msg);
      assert.doesNotMatch(r.stderr, /\n\s+at .*:\d+:\d+\)?\n/);
    }
    const base = { teacher: teacherDir, config: parseConfig(STUDENT), data: [{ lang: null, path: dev }], log: quiet, quiet: true };
    const refused: [Partial<Parameters<typeof distillModel>[0]>, RegExp][] = [
      [{ teacher: join(dir, 'none') }, /--teacher/],
      [{ teacher: dir }, /--teacher/],
      [{ data: [], parallel: dev, pivot: 'xx' }, /--parallel[\s\S]*'xx'/],
      [{ data: [{ lang: 'de', path: join(dir, 'missing.txt') }] }, /--data[\s\S]*missing\.txt/],
      [{ resume: true }, /--resume/],
      [{ out: teacherDir, force: true }, /--out[\s\S]*teacher/],
      [{ config: parseConfig({ model: 'dual', vocab: { type: 'bpe', size: 1000 } }) }, /--student-config[\s\S]*vocab/],
    ];
    let k = 3;
    for (const [over, msg] of refused) {
      const out = join(dir, `x${k++}`);
      await assert.rejects(distillModel({ ...base, out, ...over } as Parameters<typeof distillModel>[0]), msg);
    }
    for (let i = 1; i < k; i++) assert.ok(!existsSync(join(dir, `x${i}`)) && !existsSync(join(dir, `x${i}.partial`)), `x${i} left behind`);
  });
});

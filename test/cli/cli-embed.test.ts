// One way to embed text, through the CLI with a dual encoder trained in seconds: xling embed's
// language identification samples the whole input (not the first chunk) and ignores blank lines;
// mine and eval bucc embed with the same options and defaults, so they use xling embed's vectors;
// outputs never overwrite inputs; a model's config.json with unknown keys is refused; long lines
// are cut with one warning; SIGINT/SIGTERM leave no temporary files.
import assert from 'node:assert/strict';
import { cpSync, existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { readNpy } from '../../src/io/npy.js';
import { cli, cliAsync, devColumn, temporariesIn, TINY_DUAL, tinyDualModel } from '../fixtures/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'xling-cli-embed-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const p = (f: string) => join(dir, f);
const model = p('m');
tinyDualModel(dir, model);
const de = devColumn('de'),
  fr = devColumn('fr'),
  en = devColumn('en');

function embed(input: string, out: string, args: string[] = []) {
  const r = cli(['embed', '--model', model, '--input', p(input), '-o', p(out), ...args]);
  assert.equal(r.status, 0, r.stderr);
  return { stderr: r.stderr, v: readNpy(p(out)).data as Float32Array };
}
const identified = (stderr: string) => /input language identified as (\S+)/.exec(stderr)?.[1];
function assertClose(a: Float32Array, b: Float32Array, what: string, tol = 1e-5): void {
  assert.equal(a.length, b.length, what);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  assert.ok(worst < tol, `${what}: max difference ${worst}`);
}

describe('CLI: embed', () => {
  it('language identification does not depend on --chunk', () => {
    // 30 German lines, then 270 French ones: the first chunk alone is German
    writeFileSync(p('mix.txt'), [...de.slice(0, 30), ...fr.slice(30)].join('\n') + '\n');
    const runs = [10, 37, 100000].map((chunk) => ({ chunk, ...embed('mix.txt', `mix-${chunk}.npy`, ['--chunk', String(chunk)]) }));
    const langs = runs.map((r) => identified(r.stderr));
    assert.ok(langs[0], runs[0]!.stderr);
    assert.deepEqual(
      langs,
      langs.map(() => langs[0]),
      `identified per --chunk: ${langs}`,
    );
    // the same rows whatever the chunking (up to float rounding of other batch shapes) …
    for (const r of runs.slice(1)) assertClose(r.v, runs[0]!.v, `--chunk ${r.chunk} vs 10`);
    // … and byte for byte the same for the same --chunk
    embed('mix.txt', 'mix-10b.npy', ['--chunk', '10']);
    assert.deepEqual(readFileSync(p('mix-10b.npy')), readFileSync(p('mix-10.npy')));
  });

  it('blank lines keep their rows, are counted in a warning, and never vote for the language', () => {
    const lines = de.slice(0, 10);
    writeFileSync(p('de10.txt'), lines.join('\n') + '\n');
    writeFileSync(p('de10-blank.txt'), lines.flatMap((l) => [l, '', '', ' ', '', '', '']).join('\n') + '\n');
    const plain = embed('de10.txt', 'de10.npy'),
      blank = embed('de10-blank.txt', 'de10-blank.npy');
    assert.equal(identified(blank.stderr), identified(plain.stderr), blank.stderr);
    assert.match(blank.stderr, /warning: .*de10-blank\.txt: 60 blank lines/);
    assert.doesNotMatch(plain.stderr, /blank/);
    const d = TINY_DUAL.encoder.outDim;
    assert.equal(blank.v.length, 70 * d, 'one row per input line');
    assertClose(Float32Array.from(lines.flatMap((_, i) => [...blank.v.subarray(7 * i * d, (7 * i + 1) * d)])), plain.v, 'the rows of the text lines');
  });

  it('-o FILE.jsonl and -o - write JSON lines (one array a row) with the very values of the .npy; --docs too', () => {
    writeFileSync(p('j.txt'), de.slice(0, 25).join('\n') + '\n');
    const npy = embed('j.txt', 'j.npy');
    const rows = (text: string) =>
      text
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as number[]);
    const same = (got: number[][], what: string) => {
      assert.equal(got.length, 25, what);
      assert.deepEqual(Float32Array.from(got.flat()), npy.v, what);
    };
    assert.equal(cli(['embed', '--model', model, '--input', p('j.txt'), '-o', p('j.jsonl')]).status, 0);
    same(rows(readFileSync(p('j.jsonl'), 'utf8')), '.jsonl');
    const out = cli(['embed', '--model', model, '--input', p('j.txt'), '-o', '-']);
    assert.equal(out.status, 0, out.stderr);
    same(rows(out.stdout), 'standard output');
    // documents: one averaged vector a document, as in the .npy
    writeFileSync(
      p('jd.tsv'),
      de
        .slice(0, 6)
        .map((s, i) => `d${i % 2}\t${s}`)
        .join('\n') + '\n',
    );
    const docs = embed('jd.tsv', 'jd.npy', ['--docs']);
    assert.equal(cli(['embed', '--model', model, '--input', p('jd.tsv'), '--docs', '-o', p('jd.jsonl')]).status, 0);
    assert.deepEqual(Float32Array.from(rows(readFileSync(p('jd.jsonl'), 'utf8')).flat()), docs.v);
    assert.equal(readFileSync(p('jd.jsonl.ids'), 'utf8'), 'd0\nd1\n');
    const bad = cli(['embed', '--model', model, '--input', p('j.txt'), '-o', p('j8.jsonl'), '--dtype', 'int8']);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /JSON lines hold float32 vectors; --dtype int8/);
  });

  it('very long lines are cut before tokenising, with one warning', () => {
    writeFileSync(p('long.txt'), ['Datei öffnen', 'x'.repeat(2_000_000), 'y'.repeat(500_000), 'Speichern'].join('\n') + '\n');
    // (no wall-clock bound: the tokenizer's test checks that a 2 MB line costs what its cut prefix does)
    const r = embed('long.txt', 'long.npy', ['--quiet']);
    assert.equal(r.v.length, 4 * TINY_DUAL.encoder.outDim);
    assert.equal(r.stderr.match(/were cut/g)?.length, 1, r.stderr);
    assert.match(r.stderr, /long\.txt: 2 of 4 lines were longer than the model reads and were cut/);
  });

  it('an output that is an input is refused: through a symlink or a hard link, a file in the model, the same file twice', () => {
    // (every command's plain case is in cli-bad-input.test.ts)
    writeFileSync(p('s.txt'), de.slice(0, 20).join('\n') + '\n');
    writeFileSync(p('t.txt'), en.slice(0, 20).join('\n') + '\n');
    embed('s.txt', 's.npy', ['--quiet']);
    embed('t.txt', 't.npy', ['--quiet']);
    symlinkSync(p('s.txt'), p('s-link.txt'));
    linkSync(p('s.txt'), p('s-hard.txt'));
    writeFileSync(
      p('s.bucc'),
      de
        .slice(0, 20)
        .map((s, i) => `de-${i}\t${s}`)
        .join('\n') + '\n',
    );
    writeFileSync(
      p('t.bucc'),
      en
        .slice(0, 20)
        .map((s, i) => `en-${i}\t${s}`)
        .join('\n') + '\n',
    );
    writeFileSync(
      p('gold'),
      de
        .slice(0, 20)
        .map((_, i) => `de-${i}\ten-${i}`)
        .join('\n') + '\n',
    );
    const snapshot = () =>
      Object.fromEntries(
        readdirSync(dir)
          .filter((f) => statSync(p(f)).isFile())
          .map((f) => [f, readFileSync(p(f)).toString('base64')]),
      );
    const before = snapshot(),
      modelBefore = readFileSync(join(model, 'model.safetensors'));
    const cases: [string[], RegExp][] = [
      [['embed', '--model', model, '--input', p('s.txt'), '-o', p('s-link.txt')], /--output .*s-link\.txt would overwrite the input --input/],
      [['embed', '--model', model, '--input', p('s-link.txt'), '-o', p('s-hard.txt')], /--output .*s-hard\.txt would overwrite the input --input/],
      [['embed', '--model', model, '--input', p('s.txt'), '-o', join(model, 'model.safetensors')], /would overwrite the input --model .* \(it is inside it\)/],
      [
        ['eval', 'bucc', '--src', p('s.bucc'), '--trg', p('t.bucc'), '--gold', p('gold'), '--model', model, '--json', p('x.json'), '--svg', p('x.json')],
        /--json and --svg name the same file/,
      ],
      [
        ['train', '--config', p('s.txt'), '--data', join(model, 'config.json'), '--out', model],
        /--out .*m would replace the directory holding the input --data/,
      ],
    ];
    for (const [args, re] of cases) {
      const r = cli(args);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, re);
    }
    assert.deepEqual(snapshot(), before, 'no input changed, no output written');
    assert.deepEqual(readFileSync(join(model, 'model.safetensors')), modelBefore);
    assert.ok(!existsSync(`${model}.partial`));
  });

  it('mine and eval bucc --model use the vectors xling embed gives the same files', () => {
    // s.txt / t.txt and s.npy / t.npy (xling embed's defaults: identified language, centred) from above
    const viaVectors = cli([
      'mine',
      '--src',
      p('s.txt'),
      '--trg',
      p('t.txt'),
      '--src-vectors',
      p('s.npy'),
      '--trg-vectors',
      p('t.npy'),
      '--margin',
      'absolute',
      '-o',
      '-',
    ]);
    const viaModel = cli(['mine', '--src', p('s.txt'), '--trg', p('t.txt'), '--model', model, '--margin', 'absolute', '-o', '-']);
    assert.equal(viaModel.status, 0, viaModel.stderr);
    assert.match(viaModel.stderr, /--src .*s\.txt: input language identified as/);
    assert.match(viaModel.stderr, /--trg .*t\.txt: input language identified as/);
    const rows = (out: string) =>
      out
        .trim()
        .split('\n')
        .map((l) => l.split('\t'));
    const a = rows(viaVectors.stdout),
      b = rows(viaModel.stdout);
    assert.deepEqual(
      b.map((r) => r.slice(1)),
      a.map((r) => r.slice(1)),
      'the same pairs',
    );
    b.forEach((r, i) => assert.ok(Math.abs(Number(r[0]) - Number(a[i]![0])) < 2e-6, `pair ${i}: cosine ${r[0]} vs ${a[i]![0]}`));
    const bucc = (extra: string[]) => {
      const r = cli(['eval', 'bucc', '--src', p('s.bucc'), '--trg', p('t.bucc'), '--gold', p('gold'), '--json', '-', ...extra]);
      assert.equal(r.status, 0, r.stderr);
      return JSON.parse(r.stdout.slice(r.stdout.indexOf('{'))) as Record<string, number>;
    };
    const bv = bucc(['--src-vectors', p('s.npy'), '--trg-vectors', p('t.npy')]),
      bm = bucc(['--model', model]);
    for (const k of ['precision', 'recall', 'f1', 'tp', 'predicted', 'candidates']) assert.equal(bm[k], bv[k], k);
    assert.ok(Math.abs(bm.threshold! - bv.threshold!) < 2e-6);
    // and the settings' embed.center false / --src-lang give plain or named-language vectors, as xling embed's options do
    const settingsFile = (name: string, v: unknown) => {
      writeFileSync(p(`cfg-${name}.json`), JSON.stringify(v));
      return p(`cfg-${name}.json`);
    };
    embed('s.txt', 's-plain.npy', ['--no-center', '--quiet']);
    embed('t.txt', 't-plain.npy', ['--no-center', '--quiet']);
    const plainV = bucc(['--src-vectors', p('s-plain.npy'), '--trg-vectors', p('t-plain.npy')]),
      plainM = bucc(['--model', model, '--config', settingsFile('no-center', { embed: { center: false } })]);
    assert.ok(Math.abs(plainM.threshold! - plainV.threshold!) < 2e-6);
  });

  it('eval retrieval --docs: documents from sentence vectors, found across languages far above chance, by cosine and by margin', () => {
    const docs = Array.from(
      { length: Math.floor(de.length / 3) },
      (_, i) => `d${i}\t${de.slice(3 * i, 3 * i + 3).join(' ')}\t${en.slice(3 * i, 3 * i + 3).join(' ')}`,
    );
    writeFileSync(p('docs.de-en.tsv'), docs.join('\n') + '\n');
    // a larger tiny model, trained ten times longer than the others here: documents need usable sentence
    // vectors (the settings of test/align/docalign.test.ts's model: one training for both under npm test)
    tinyDualModel(dir, p('m-docs'), { features: { buckets: 65536, dim: 64 }, encoder: { outDim: 64 }, batch: { size: 128 }, budget: { pairs: 20000 } });
    const r = cli(['eval', 'retrieval', '--docs', p('docs.de-en.tsv'), '--model', p('m-docs'), '--json', p('docs.json')]);
    assert.equal(r.status, 0, r.stderr);
    const j = JSON.parse(readFileSync(p('docs.json'), 'utf8')) as {
      documents: number;
      src_lang: string;
      trg_lang: string;
      cosine: Record<string, { p1: number }>;
      margin: Record<string, { p1: number }>;
    };
    assert.deepEqual([j.documents, j.src_lang, j.trg_lang], [docs.length, 'de', 'en'], 'languages from the file name');
    for (const s of ['cosine', 'margin'] as const)
      for (const dir of ['forward', 'backward']) assert.ok(j[s][dir]!.p1 > 0.5, `${s} ${dir} P@1 ${j[s][dir]!.p1} (chance ${(1 / docs.length).toFixed(3)})`);
    // margin scoring discounts hub documents: it finds more than plain cosine
    assert.ok(j.margin.forward!.p1 + j.margin.backward!.p1 > j.cosine.forward!.p1 + j.cosine.backward!.p1, JSON.stringify(j));
    assert.match(r.stdout, /documents, de→en and back, P@1: cosine/);
  });

  it('-k: 0 and negative values are usage errors; above the number of sentences it is capped, said and reported', () => {
    for (const k of ['0', '-3']) {
      for (const cmd of [
        ['mine', '-o', p('k.tsv')],
        ['eval', 'bucc', '--gold', p('gold')],
      ]) {
        const r = cli([...cmd, '--src', p('s.bucc'), '--trg', p('t.bucc'), '--src-vectors', p('s.npy'), '--trg-vectors', p('t.npy'), '-k', k]);
        assert.equal(r.status, 2, r.stderr);
        assert.match(r.stderr, new RegExp(`-k must be an integer >= 1, got '${k}'`));
      }
    }
    assert.ok(!existsSync(p('k.tsv')));
    const r = cli([
      'eval',
      'bucc',
      '--src',
      p('s.bucc'),
      '--trg',
      p('t.bucc'),
      '--gold',
      p('gold'),
      '--src-vectors',
      p('s.npy'),
      '--trg-vectors',
      p('t.npy'),
      '-k',
      '50',
      '--json',
      p('k.json'),
    ]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /-k 50 is more than the 20 source sentences; using k=20/);
    assert.match(r.stdout, /k=20\)/);
    const j = JSON.parse(readFileSync(p('k.json'), 'utf8'));
    assert.equal(j.k, 20);
    assert.equal(j.k_requested, 50);
    const m = cli(['mine', '--src', p('s.txt'), '--trg', p('t.txt'), '--src-vectors', p('s.npy'), '--trg-vectors', p('t.npy'), '-k', '50', '-o', p('k.tsv')]);
    assert.equal(m.status, 0, m.stderr);
    assert.match(m.stderr, /using k=20[\s\S]*k=20\) in/);
  });

  it("a model's config.json with unknown keys in its model or train section is refused", () => {
    for (const [section, key] of [
      ['model', 'outDimm'],
      ['train', 'seeed'],
    ] as const) {
      const copy = p(`m-${section}`);
      cpSync(model, copy, { recursive: true });
      const cfg = JSON.parse(readFileSync(join(copy, 'config.json'), 'utf8'));
      cfg[section][key] = 1;
      writeFileSync(join(copy, 'config.json'), JSON.stringify(cfg));
      const r = cli(['embed', '--model', copy, '--input', p('s.txt'), '-o', p('u.npy')]);
      assert.equal(r.status, 1, r.stderr);
      assert.match(
        r.stderr,
        section === 'model' ? /config\.json: unknown key 'model\.outDimm' for a dual model/ : /config\.json: 'train': unknown setting 'seeed'/,
      );
      assert.ok(!existsSync(p('u.npy')));
    }
  });

  it('SIGINT and SIGTERM leave no temporary files (embed, train)', async () => {
    const sig = p('sig');
    mkdirSync(sig);
    writeFileSync(join(sig, 'big.txt'), Array.from({ length: 400_000 }, (_, i) => `${fr[i % fr.length]} ${i}`).join('\n') + '\n');
    const interrupt = async (args: string[], signal: NodeJS.Signals, ready: () => boolean) => {
      const child = cliAsync(args);
      let stderr = '';
      child.stderr.on('data', (b) => {
        stderr += b;
      });
      const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
      const t0 = Date.now();
      while (!ready()) {
        assert.ok(Date.now() - t0 < 60_000, `${args.join(' ')} did not get going: ${stderr}`);
        await new Promise((r) => setTimeout(r, 10));
      }
      child.kill(signal);
      return { code: await exited, stderr };
    };
    const tmpSeen = () => temporariesIn(sig).length > 0;
    for (const [signal, code, extra] of [
      ['SIGINT', 130, []],
      ['SIGTERM', 143, ['--raw-f32']],
    ] as const) {
      const r = await interrupt(
        ['embed', '--model', model, '--input', join(sig, 'big.txt'), '-o', join(sig, 'v.npy'), '--chunk', '2000', '--quiet', ...extra],
        signal,
        tmpSeen,
      );
      assert.equal(r.code, code, r.stderr);
      assert.match(r.stderr, new RegExp(`xling embed: interrupted \\(${signal}\\)`));
      assert.deepEqual(temporariesIn(sig), [], `${signal}: temporaries left`);
      assert.ok(!existsSync(join(sig, 'v.npy')));
    }
    // training: a checkpoint is never half written, and the run resumes
    writeFileSync(join(sig, 'long.json'), JSON.stringify({ ...TINY_DUAL, budget: { pairs: 50_000_000 }, checkpointEvery: 3 }));
    const out = join(sig, 'model');
    const r = await interrupt(
      ['train', '--config', join(sig, 'long.json'), '--data', 'data/sample/gettext.train.tsv.gz', '--out', out, '--quiet'],
      'SIGTERM',
      () => existsSync(join(`${out}.partial`, 'checkpoint', 'state.json')),
    );
    assert.equal(r.code, 143, r.stderr);
    assert.deepEqual(temporariesIn(sig), []);
    assert.ok(existsSync(join(`${out}.partial`, 'checkpoint', 'state.json')) && !existsSync(out));
  });
});

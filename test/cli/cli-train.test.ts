// xling train through the CLI with a dual encoder that trains in seconds: a re-training that
// fails or is killed leaves the old model whole (embed still gives its vectors), --resume refuses
// a checkpoint of another configuration and a missing one, --out is never a user's folder, and
// budgets and every other range are checked before any work.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { cli, cliAsync, devColumn, temporariesIn, TINY_DUAL, tinyDualModel, trainTinyDual } from '../fixtures/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'xling-cli-train-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const p = (f: string) => join(dir, f);
const DATA = 'data/sample/gettext.train.tsv.gz';

function config(name: string, extra: Record<string, unknown>): string {
  writeFileSync(p(name), JSON.stringify({ ...TINY_DUAL, ...extra }));
  return p(name);
}

function embedBytes(model: string): Buffer {
  const r = cli(['embed', '--model', model, '--input', p('in.txt'), '-o', p('v.npy'), '--quiet']);
  assert.equal(r.status, 0, r.stderr);
  return readFileSync(p('v.npy'));
}

describe('CLI: training never corrupts a model directory', () => {
  const model = p('m');
  writeFileSync(p('in.txt'), devColumn('en').slice(0, 40).join('\n') + '\n');
  // the model trained over (under npm test, a copy of the run's one tiny model)
  tinyDualModel(dir, model);
  const before = embedBytes(model);
  const configBefore = readFileSync(join(model, 'config.json'), 'utf8');
  const intact = () => {
    assert.equal(readFileSync(join(model, 'config.json'), 'utf8'), configBefore);
    assert.deepEqual(embedBytes(model), before, "xling embed gives the old model's vectors");
  };

  it('a re-training that fails leaves the old model intact', () => {
    // another model shape, and a dev file that fails to load after the work directory was made
    writeFileSync(p('bad-dev.tsv'), Buffer.concat([Buffer.from('en\tde\nok\tgut\n'), Buffer.from([0xc3, 0x28, 0x09, 0x61, 0x0a])]));
    const r = cli([
      'train',
      '--config',
      config('other.json', { seed: 2, encoder: { outDim: 16 } }),
      '--data',
      DATA,
      '--dev',
      p('bad-dev.tsv'),
      '--out',
      model,
      '--quiet',
      '--force',
    ]);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /bad-dev\.tsv:3: invalid UTF-8/);
    intact();
  });

  it('a re-training killed half-way leaves the old model intact; --resume refuses a checkpoint of another configuration', async () => {
    const long = config('long.json', { seed: 3, encoder: { outDim: 16 }, budget: { pairs: 50_000_000 }, checkpointEvery: 5 });
    const child = cliAsync(['train', '--config', long, '--data', DATA, '--out', model, '--quiet', '--force']);
    const state = join(`${model}.partial`, 'checkpoint', 'state.json');
    const t0 = Date.now();
    while (!existsSync(state)) {
      assert.ok(Date.now() - t0 < 60_000, 'a checkpoint within a minute');
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill('SIGKILL');
    await new Promise((r) => child.on('exit', r));
    intact();
    // the checkpoint in m.partial has outDim 16: resuming with outDim 32 must not load it
    let r = cli([
      'train',
      '--config',
      config('long32.json', { seed: 3, budget: { pairs: 50_000_000 } }),
      '--data',
      DATA,
      '--out',
      model,
      '--resume',
      '--quiet',
    ]);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /--resume: the checkpoint in .*m\.partial.checkpoint was made with another tokenizer or model configuration/);
    intact();
    // the configuration it was made with resumes (budget and checkpoints are run settings)
    r = cli([
      'train',
      '--config',
      config('short.json', { seed: 3, encoder: { outDim: 16 }, budget: { pairs: 1 } }),
      '--data',
      DATA,
      '--out',
      model,
      '--resume',
      '--quiet',
    ]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /resumed from step \d+/);
    assert.equal(JSON.parse(readFileSync(join(model, 'config.json'), 'utf8')).model.outDim, 16);
    assert.ok(!existsSync(`${model}.partial`));
    assert.deepEqual(temporariesIn(dir), []);
  });

  it('--out must be missing, empty or a model directory', () => {
    const mine = p('my-files');
    mkdirSync(mine);
    writeFileSync(join(mine, 'notes.txt'), 'mine\n');
    const r = cli(['train', '--config', config('ok.json', {}), '--data', DATA, '--out', mine, '--quiet']);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /--out: .*my-files exists and is not an xling model directory/);
    assert.deepEqual(readdirSync(mine), ['notes.txt']);
    assert.ok(!existsSync(`${mine}.partial`));
  });

  it('--resume without a checkpoint is an error; --resume-or-start starts a new model', () => {
    const fresh = p('fresh');
    let r = cli(['train', '--config', config('ok.json', {}), '--data', DATA, '--out', fresh, '--resume', '--quiet']);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /--resume: no checkpoint in .*fresh\.partial or .*fresh/);
    assert.ok(!existsSync(fresh));
    r = cli(['train', '--config', config('ok.json', {}), '--data', DATA, '--out', fresh, '--resume-or-start', '--quiet']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /no checkpoint in .*: starting a new model/);
    assert.ok(existsSync(join(fresh, 'model.safetensors')));
  });
});

describe('CLI: training settings are checked before any work', () => {
  const out = p('never');
  const cases: [string, string[], number, RegExp][] = [
    ['--budget-pairs 0', ['--budget-pairs', '0'], 2, /--budget-pairs must be an integer >= 1, got '0'/],
    ['--budget-pairs -5', ['--budget-pairs', '-5'], 2, /--budget-pairs must be an integer >= 1, got '-5'/],
    ['--budget-minutes 0', ['--budget-minutes', '0'], 2, /--budget-minutes must be a number > 0/],
    ['--threads 0', ['--threads', '0'], 2, /--threads must be an integer >= 1/],
    [
      'a negative budget in the config',
      ['--config', config('neg.json', { budget: { pairs: -5 } })],
      1,
      /neg\.json: 'budget\.pairs' must be an integer >= 0, got -5/,
    ],
    ['a zero budget in the config', ['--config', config('zero.json', { budget: { pairs: 0 } })], 1, /zero\.json: 'budget' needs pairs > 0 or minutes > 0/],
    ['lr 0', ['--config', config('lr.json', { optim: { lr: 0 } })], 1, /lr\.json: 'optim\.lr' must be a number > 0, got 0/],
    ['a family setting out of range', ['--config', config('dim.json', { encoder: { outDim: 0 } })], 1, /dim\.json: 'encoder\.outDim' must be an integer >= 1/],
    ['an unknown setting', ['--config', config('typo.json', { optim: { lrr: 1 } })], 1, /typo\.json: unknown setting 'optim\.lrr'/],
  ];
  for (const [what, args, code, re] of cases) {
    it(what, () => {
      const base = ['--config', config('ok.json', {}), '--data', DATA, '--out', out];
      // later options win: a case's --config replaces the good one
      const r = cli(['train', ...base, ...args]);
      assert.equal(r.status, code, r.stderr);
      assert.match(r.stderr, re);
      assert.ok(!existsSync(out) && !existsSync(`${out}.partial`), 'nothing written');
    });
  }
});

describe('CLI: a finished model directory holds only the model', () => {
  const model = p('lean');
  const files = () => readdirSync(model).sort();

  it('the checkpoint is removed on success; the work directory too', () => {
    trainTinyDual(dir, model);
    assert.ok(!files().some((f) => f.startsWith('checkpoint')), files().join(' '));
    assert.ok(files().includes('model.safetensors') && files().includes('config.json'));
    assert.ok(!existsSync(`${model}.partial`) && !existsSync(`${model}.checkpoint`) && !existsSync(`${model}.lock`));
  });

  it('--out over a finished model needs --force', () => {
    const before = readFileSync(join(model, 'model.safetensors'));
    let r = cli(['train', '--config', config('seed7.json', { seed: 7 }), '--data', DATA, '--out', model, '--quiet']);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /--out: .*lean already holds a model; give --force to replace it \(or --resume to train it further\)/);
    assert.deepEqual(readFileSync(join(model, 'model.safetensors')), before);
    assert.ok(!existsSync(`${model}.partial`));
    r = cli(['train', '--config', config('seed7.json', { seed: 7 }), '--data', DATA, '--out', model, '--quiet', '--force']);
    assert.equal(r.status, 0, r.stderr);
    assert.notDeepEqual(readFileSync(join(model, 'model.safetensors')), before);
  });

  it('--keep-checkpoint keeps it beside the model, and --resume continues from there', () => {
    let r = cli(['train', '--config', config('seed7.json', { seed: 7 }), '--data', DATA, '--out', model, '--quiet', '--force', '--keep-checkpoint']);
    assert.equal(r.status, 0, r.stderr);
    assert.ok(!files().some((f) => f.startsWith('checkpoint')), files().join(' '));
    const kept = JSON.parse(readFileSync(join(`${model}.checkpoint`, 'state.json'), 'utf8')) as { step: number; pairs: number };
    assert.ok(kept.pairs >= 2000, `the last step's checkpoint (${kept.pairs} pairs)`);
    r = cli(['train', '--config', config('seed7.json', { seed: 7 }), '--data', DATA, '--out', model, '--resume', '--budget-pairs', String(kept.pairs + 640)]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`resumed from step ${kept.step} \\(${kept.pairs} pairs\\)`));
    const log = readFileSync(join(model, 'train-log.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { step: number; pairs: number });
    assert.equal(log.at(-1)!.pairs, kept.pairs + 640);
    assert.equal(log.length, kept.step + 10, 'the log goes on from the checkpoint');
    // without --keep-checkpoint this run's checkpoint (and the old one) is gone
    assert.ok(!existsSync(`${model}.checkpoint`) && !existsSync(`${model}.partial`));
    assert.ok(!files().some((f) => f.startsWith('checkpoint')));
    assert.deepEqual(temporariesIn(dir), []);
  });
});

describe('CLI: SIGINT stops training promptly with a checkpoint', () => {
  it('exits 130 soon after the signal, and --resume continues from the step it stopped at', async () => {
    // no periodic checkpoints: only the one written on the way out can be there
    const long = config('sigint.json', { seed: 5, budget: { pairs: 50_000_000 }, checkpointEvery: 1_000_000, logEvery: 1 });
    const out = p('interrupted');
    const child = cliAsync(['train', '--config', long, '--data', DATA, '--out', out]);
    let stderr = '',
      firstStep = 0,
      sentAt = 0,
      second: ReturnType<typeof cli> | null = null;
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (s: string) => {
      stderr += s;
      const m = /step (\d+) pairs/.exec(stderr);
      if (m && !sentAt) {
        firstStep = +m[1]!;
        // a second run given the same --out while this one trains is refused: it would write the same OUT.partial
        second = cli(['train', '--config', long, '--data', DATA, '--out', out, '--resume-or-start']);
        sentAt = Date.now();
        child.kill('SIGINT');
      }
    });
    const code = await exited;
    const seconds = (Date.now() - sentAt) / 1000;
    assert.ok(sentAt > 0, `a progress line came: ${stderr}`);
    assert.equal(code, 130, stderr);
    // a step of this model takes milliseconds; the bound only guards against "keeps training"
    assert.ok(seconds < 20, `exited ${seconds.toFixed(1)} s after SIGINT`);
    console.log(`# SIGINT at step ${firstStep}: exit 130 after ${seconds.toFixed(2)} s`);
    assert.equal(second!.status, 1, second!.stderr);
    assert.match(
      second!.stderr,
      new RegExp(`--out .*interrupted is being written by another process \\(pid ${child.pid}, since \\S+: xling train --config .*sigint\\.json`),
    );
    assert.ok(!/resumed|starting a new model/.test(second!.stderr), second!.stderr);
    // the lock went with the process that held it
    assert.ok(!existsSync(`${out}.lock`));
    assert.match(stderr, /xling train: interrupted \(SIGINT\)/);
    assert.match(stderr, /interrupted at step \d+: checkpoint in .*interrupted\.partial.checkpoint; continue with --resume/);
    const state = JSON.parse(readFileSync(join(`${out}.partial`, 'checkpoint', 'state.json'), 'utf8')) as { step: number; pairs: number };
    assert.ok(state.step >= firstStep, `checkpoint at step ${state.step}, progress line of step ${firstStep}`);
    assert.ok(!existsSync(out));
    assert.deepEqual(temporariesIn(dir), []);
    const r = cli(['train', '--config', long, '--data', DATA, '--out', out, '--resume', '--budget-pairs', String(state.pairs + 320), '--quiet']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`resumed from step ${state.step} \\(${state.pairs} pairs\\)`));
    const log = readFileSync(join(out, 'train-log.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { step: number; pairs: number });
    assert.equal(log.length, state.step + 5);
    assert.ok(!existsSync(`${out}.partial`));
  });
});

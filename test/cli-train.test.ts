// xling train through the CLI with a dual encoder that trains in seconds: a re-training that
// fails or is killed leaves the old model whole (embed still gives its vectors), --resume refuses
// a checkpoint of another configuration and a missing one, --out is never a user's folder, and
// budgets and every other range are checked before any work.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { cli, cliAsync, devColumn, temporariesIn, TINY_DUAL, trainTinyDual } from './fixtures/cli.js';

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
  trainTinyDual(dir, model);
  const before = embedBytes(model);
  const configBefore = readFileSync(join(model, 'config.json'), 'utf8');
  const intact = () => {
    assert.equal(readFileSync(join(model, 'config.json'), 'utf8'), configBefore);
    assert.deepEqual(embedBytes(model), before, 'xling embed gives the old model\'s vectors');
  };

  it('a re-training that fails leaves the old model intact', () => {
    // another model shape, and a dev file that fails to load after the work directory was made
    writeFileSync(p('bad-dev.tsv'), Buffer.concat([Buffer.from('en\tde\nok\tgut\n'), Buffer.from([0xc3, 0x28, 0x09, 0x61, 0x0a])]));
    const r = cli(['train', '--config', config('other.json', { seed: 2, encoder: { outDim: 16 } }), '--data', DATA, '--dev', p('bad-dev.tsv'), '--out', model, '--quiet']);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /bad-dev\.tsv:3: invalid UTF-8/);
    intact();
  });

  it('a re-training killed half-way leaves the old model intact; --resume refuses a checkpoint of another configuration', async () => {
    const long = config('long.json', { seed: 3, encoder: { outDim: 16 }, budget: { pairs: 50_000_000 }, checkpointEvery: 5 });
    const child = cliAsync(['train', '--config', long, '--data', DATA, '--out', model, '--quiet']);
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
    let r = cli(['train', '--config', config('long32.json', { seed: 3, budget: { pairs: 50_000_000 } }), '--data', DATA, '--out', model, '--resume', '--quiet']);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /--resume: the checkpoint in .*m\.partial.checkpoint was made with another tokenizer or model configuration/);
    intact();
    // the configuration it was made with resumes (budget and checkpoints are run settings)
    r = cli(['train', '--config', config('short.json', { seed: 3, encoder: { outDim: 16 }, budget: { pairs: 1 } }), '--data', DATA, '--out', model, '--resume', '--quiet']);
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
    ['a negative budget in the config', ['--config', config('neg.json', { budget: { pairs: -5 } })], 1, /neg\.json: 'budget\.pairs' must be an integer >= 0, got -5/],
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

// The tokenizer spec in config.json: a model directory written before specs gets one
// derived from its legacy fields; a directory with a spec and no training configuration loads and
// embeds exactly as before (loading never reads `train`); a bad spec is refused naming the key.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadSentenceEncoder, readModelConfig } from '../../src/embed/model-dir.js';
import { tokenizerSpecOf } from '../../src/text/spec.js';
import { root } from '../fixtures/cli.js';

const fx = join(root, 'test/fixtures/vectors');
const dir = mkdtempSync(join(tmpdir(), 'xling-spec-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const sentences = readFileSync(join(fx, 'sentences.txt'), 'utf8').trimEnd().split('\n');

/** A copy of a fixture model whose config.json is changed by edit. */
function copyWith(m: string, edit: (c: Record<string, unknown>) => void): string {
  const out = join(dir, `${m}-${Math.random().toString(36).slice(2)}`);
  cpSync(join(fx, m), out, { recursive: true });
  const c = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')) as Record<string, unknown>;
  edit(c);
  writeFileSync(join(out, 'config.json'), JSON.stringify(c));
  return out;
}

describe('tokenizer spec in config.json', () => {
  it('is derived from the legacy fields of directories written before it', () => {
    const dual = readModelConfig(join(fx, 'dual')).tokenizerSpec!;
    assert.deepEqual(
      { ...dual },
      {
        type: 'hashed-ngrams',
        hash: 'fnv1a32-utf16',
        file: null,
        ngrams: [1, 5],
        buckets: 1024,
        words: true,
        maxFeatures: 2048,
        special: { pad: 0, unk: 1, bos: 2, eos: 3 },
        addBos: false,
        addEos: false,
        maxLength: 2048,
        lowercase: true,
        romanize: false,
      },
    );
    const laser = readModelConfig(join(fx, 'laser')).tokenizerSpec!;
    assert.equal(laser.type, 'xling-subword');
    assert.equal(laser.file, 'tokenizer.json');
    assert.equal(laser.addEos, true);
    assert.equal((laser as { romanize: boolean }).romanize, true, 'the LASER fixture was trained with vocab.romanize');
    assert.deepEqual(readModelConfig(join(fx, 'laser-lstm')).tokenizerSpec, { type: 'laser-spm', file: 'laser-tokenizer.json' });
    // the derived spec is what a tokenizer of the same settings reports
    const m = loadSentenceEncoder(join(fx, 'dual'));
    assert.deepEqual(tokenizerSpecOf(m.tokenizer, null), dual);
  });

  it('a directory with a spec and no training configuration embeds as before (loading never reads train)', () => {
    for (const m of ['dual', 'laser', 'jmt']) {
      const spec = readModelConfig(join(fx, m)).tokenizerSpec;
      const lean = copyWith(m, (c) => {
        delete c.train;
        c.tokenizerSpec = spec;
      });
      const want = loadSentenceEncoder(join(fx, m)).embed(sentences, { center: false });
      const got = loadSentenceEncoder(lean).embed(sentences, { center: false });
      assert.deepEqual(new Uint32Array(got.buffer), new Uint32Array(want.buffer), m);
    }
    // romanisation comes from the spec: without it the LASER fixture tokenises differently
    const spec = readModelConfig(join(fx, 'laser')).tokenizerSpec!;
    const plain = copyWith('laser', (c) => {
      delete c.train;
      c.tokenizerSpec = { ...spec, romanize: false };
    });
    const ru = sentences.filter((s) => /[а-я]/i.test(s));
    assert.notDeepEqual(loadSentenceEncoder(plain).tokenize(ru), loadSentenceEncoder(join(fx, 'laser')).tokenize(ru));
  });

  it('a bad spec is refused, naming config.json and the key', () => {
    const spec = readModelConfig(join(fx, 'dual')).tokenizerSpec!;
    const bad = (edit: Record<string, unknown>, re: RegExp) => {
      const d = copyWith('dual', (c) => {
        c.tokenizerSpec = { ...spec, ...edit };
      });
      assert.throws(() => loadSentenceEncoder(d), re);
    };
    bad({ type: 'wordpiece' }, /config\.json: 'tokenizerSpec'\.type must be one of hashed-ngrams, xling-subword, laser-spm, hf-tokenizer \(got "wordpiece"\)/);
    bad({ buckets: -1 }, /config\.json: 'tokenizerSpec'\.buckets must be a count/);
    bad({ type: 'xling-subword', file: 'tokenizer.json' }, /'tokenizerSpec\.file' \("tokenizer\.json"\) and 'tokenizer' \(null\) name different files/);
    const noFeatures = copyWith('dual', (c) => {
      delete (c.train as Record<string, unknown>).features;
    });
    assert.throws(() => loadSentenceEncoder(noFeatures), /neither 'tokenizerSpec' nor 'train\.features'/);
  });
});

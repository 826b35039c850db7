// The PyTorch checkpoint reader (src/io/torch-checkpoint.ts, torch-pickle.ts): both torch.save
// formats, the allow-list, and a fuzz of truncated and bit-flipped files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseTorchCheckpoint, readTorchCheckpoint, tensorsOf, TorchTensor } from '../../src/io/torch-checkpoint.js';
import { containerGlobals, PyObject, unpickle } from '../../src/io/torch-pickle.js';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test', 'fixtures', 'laser');

test('zip and legacy checkpoints hold the same LASER layout and tensors', () => {
  const zip = readTorchCheckpoint(join(dir, 'tiny.pt')) as Map<string, unknown>;
  const legacy = readTorchCheckpoint(join(dir, 'tiny-legacy.pt')) as Map<string, unknown>;
  assert.deepEqual([...zip.keys()], ['params', 'model', 'dictionary']);
  assert.deepEqual([...legacy.keys()], ['params', 'model']);
  const params = zip.get('params') as Map<string, unknown>;
  assert.deepEqual(Object.fromEntries(params), {
    num_embeddings: 3557,
    padding_idx: 1,
    embed_dim: 8,
    hidden_size: 8,
    num_layers: 2,
    bidirectional: true,
    left_pad: true,
    padding_value: 0,
  });
  assert.deepEqual(legacy.get('params'), params);
  const a = tensorsOf(zip.get('model'), 'zip'),
    b = tensorsOf(legacy.get('model'), 'legacy');
  assert.equal(a.size, 1 + 2 * 2 * 4);
  assert.deepEqual([...a.keys()], [...b.keys()]);
  for (const [k, t] of a) {
    const u = b.get(k)!;
    assert.equal(t.dtype, 'float32');
    assert.deepEqual(t.shape, u.shape, k);
    assert.deepEqual(t.data, u.data, k);
  }
  const emb = a.get('embed_tokens.weight')!;
  assert.deepEqual(emb.shape, [3557, 8]);
  assert.ok(
    emb
      .toFloat32()
      .subarray(8, 16)
      .every((v) => v === 0),
    'padding row 1 is zero',
  );
  assert.ok(
    emb
      .toFloat32()
      .subarray(0, 8)
      .some((v) => v !== 0),
  );
  assert.deepEqual(a.get('lstm.weight_ih_l1_reverse')!.shape, [32, 16]);
  const dict = zip.get('dictionary') as Map<string, number>;
  assert.equal(dict.size, 3557);
  assert.equal(dict.get('<pad>'), 1);
  assert.equal(dict.get('</s>'), 2);
});

test('a checkpoint naming a disallowed global is refused, naming it, and nothing runs', () => {
  assert.throws(
    () => readTorchCheckpoint(join(dir, 'evil.pt')),
    (e: Error) => /posix\.system/.test(e.message) && /allow-list/.test(e.message) && e.message.includes('evil.pt'),
  );
  // the same through a hand-written protocol-2 pickle: GLOBAL 'os system' + REDUCE
  const evil = Buffer.concat([
    Buffer.from([0x80, 2, 0x63]),
    Buffer.from('os\nsystem\n'),
    Buffer.from([0x58, 2, 0, 0, 0]),
    Buffer.from('id'),
    Buffer.from([0x85, 0x52, 0x2e]),
  ]);
  assert.throws(() => unpickle(evil, { globals: containerGlobals() }), /os\.system.*allow-list/);
  // a non-checkpoint and an empty file: clear errors
  assert.throws(() => parseTorchCheckpoint(new TextEncoder().encode('hello'), 'x.pt'), /x\.pt: not a PyTorch checkpoint/);
  assert.throws(() => parseTorchCheckpoint(new Uint8Array(0), 'x.pt'), /x\.pt: empty file/);
  assert.throws(() => readTorchCheckpoint(join(dir, 'missing.pt')), /missing\.pt/);
});

test('plain pickles of protocols 2 and 5: containers, Namespace, bytes, big ints, memo sharing', () => {
  for (const proto of [2, 5]) {
    const buf = fs.readFileSync(join(dir, `misc-p${proto}.pkl`));
    const { value, end } = unpickle(buf, { globals: containerGlobals(), what: `p${proto}` });
    assert.equal(end, buf.length);
    const m = value as Map<string, unknown>;
    const ns = m.get('ns') as PyObject;
    assert.ok(ns instanceof PyObject);
    assert.equal(ns.className, 'argparse.Namespace');
    assert.deepEqual(Object.fromEntries(ns.attrs), { arch: 'laser_lstm', layers: 5, lr: [0.001] });
    assert.deepEqual(
      [...(m.get('od') as Map<string, unknown>)],
      [
        ['b', 1],
        ['a', [2.5, null]],
      ],
    );
    assert.deepEqual(m.get('bytes'), Uint8Array.from([0, 255, 97, 98]));
    assert.equal(m.get('big'), 2n ** 70n);
    assert.equal(m.get('neg'), -123456789012);
    assert.equal(m.get('text'), 'ünïcödé ▁x');
    assert.deepEqual(m.get('flags'), [true, false]);
    assert.deepEqual(m.get('set'), new Set([3]));
    assert.equal(m.get('shared'), m.get('od'), 'memoised objects are shared');
  }
});

/** A deterministic generator (mulberry32). */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('fuzz: truncated and bit-flipped checkpoints give an Error with a message or a parse, never a crash', () => {
  const rand = rng(26);
  let errors = 0,
    parsed = 0;
  const check = (b: Uint8Array, what: string) => {
    try {
      const v = parseTorchCheckpoint(b, what);
      parsed++;
      // whatever parses is plain data: tensors hold as many elements as their shape says
      const walk = (x: unknown): void => {
        if (x instanceof TorchTensor) assert.equal(x.data.length, x.numel);
        else if (x instanceof Map) for (const y of x.values()) walk(y);
        else if (Array.isArray(x)) for (const y of x) walk(y);
      };
      walk(v);
    } catch (e) {
      assert.ok(e instanceof Error, `${what}: threw a non-Error`);
      assert.ok(e.message.length > 10 && e.message.includes(what), `${what}: message ${e.message}`);
      assert.ok(!(e instanceof RangeError) && !(e instanceof TypeError), `${what}: ${e.constructor.name} ${e.message}`);
      errors++;
    }
  };
  for (const name of ['tiny.pt', 'tiny-legacy.pt', 'misc-p5.pkl']) {
    const orig = new Uint8Array(fs.readFileSync(join(dir, name)));
    // truncations: every length near the start and end, and random ones
    const cuts = new Set<number>();
    for (let i = 0; i < 64; i++) {
      cuts.add(i);
      cuts.add(orig.length - 1 - i);
    }
    for (let i = 0; i < 150; i++) cuts.add(Math.floor(rand() * orig.length));
    for (const n of cuts) check(orig.subarray(0, n), `${name}[:${n}]`);
    // bit flips: in the pickle part (the first and last bytes hold the structure) and anywhere
    for (let i = 0; i < 300; i++) {
      const b = orig.slice();
      const flips = 1 + Math.floor(rand() * 3);
      for (let f = 0; f < flips; f++) {
        const region =
          rand() < 0.6
            ? rand() < 0.5
              ? Math.floor(rand() * Math.min(2048, b.length))
              : b.length - 1 - Math.floor(rand() * Math.min(4096, b.length))
            : Math.floor(rand() * b.length);
        b[region]! ^= 1 << Math.floor(rand() * 8);
      }
      check(b, `${name}~${i}`);
    }
  }
  assert.ok(errors > 500, `${errors} errors`);
  assert.ok(parsed > 10, `${parsed} parses (flips in tensor data still parse)`);
});

// The TypeScript float32 formatter (src/util/float-text.ts) against the addon's (std::to_chars):
// the same bytes for powers of two and their neighbours, short decimals k · 10^n, ties (values
// exactly halfway between two shortest candidates), embedding-like values and random bit patterns
// (a fixed seed); without the addon, each text reads back as its float32 and nothing shorter does.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { native, nativeAvailable } from '../../src/native.js';
import { float32Text, joinRowsText } from '../../src/util/float-text.js';
import { Rng } from '../../src/util/rng.js';

/** Float32 values that exercise every branch: see the head of this file. */
function sample(): Float32Array {
  const out: number[] = [];
  const f = new Float32Array(1),
    u = new Uint32Array(f.buffer);
  const bits = (b: number) => {
    u[0] = b >>> 0;
    out.push(f[0]!);
  };
  for (let e = 0; e < 255; e++) for (const m of [0, 1, 2, 0x400000, 0x7fffff]) for (const s of [0, 0x80000000]) bits(s | (e << 23) | m);
  for (let n = -46; n <= 39; n++) for (let k = 1; k < 200; k++) out.push(k * 10 ** n);
  // exact ties between two 8- and 9-digit decimals
  out.push(0.000244140625, 1048576.25, 390695.625, -471728.125, 1234567.125, 16777216, 16777218, 123456789, 9.999999e-5, 1e7, 12300000, 1.23e8);
  for (let i = 0; i < 20000; i++) out.push(Math.sin(i * 12.9898) * 0.2);
  const rng = new Rng(7);
  while (out.length < 80000) {
    const b = rng.nextU32();
    if (((b >>> 23) & 0xff) !== 0xff) bits(b);
  }
  out.push(0, -0, Number.NaN, Infinity, -Infinity);
  return Float32Array.from(out);
}

test('float32Text: the addon’s bytes for every kind of float32', { skip: !nativeAvailable() && 'the addon is not built' }, () => {
  const v = sample();
  const parts = ['[', ...Array<string>(v.length - 1).fill(','), ']'];
  const want = (native.format.joinRows!(v, 1, parts) as Buffer).toString('latin1');
  const got = joinRowsText(v, 1, parts).toString('latin1');
  if (got !== want) {
    const a = want.split(','),
      b = got.split(',');
    const i = a.findIndex((s, k) => s !== b[k]);
    assert.fail(`value ${i} (${v[i]}): the addon writes ${a[i]}, TypeScript ${b[i]}`);
  }
  assert.equal(joinRowsText(Float32Array.from([0.5, -1e-7]), 2, ['{"ü":', '}']).toString(), '{"ü":[0.5,-1e-07]}');
});

test('float32Text: the shortest decimal that reads back as the same float32, in the shorter notation', () => {
  const cases: [number, string][] = [
    [0.1, '0.1'],
    [-0.25, '-0.25'],
    [1e-4, '1e-04'],
    [1.2e-4, '0.00012'],
    [1e-8, '1e-08'],
    [3.4028234663852886e38, '3.4028235e+38'],
    [123456789, '123456792'],
    [1e7, '1e+07'],
    [12300000, '12300000'],
    [1 / 3, '0.33333334'],
    [0.000244140625, '0.00024414062'],
    [-0, '-0'],
    [Number.NaN, 'null'],
  ];
  for (const [x, s] of cases) assert.equal(float32Text(x), s, String(x));
  for (const x of sample()) {
    if (!Number.isFinite(x) || x === 0) continue;
    const s = float32Text(x);
    assert.equal(Math.fround(Number(s)), x, s);
    const digits = s
      .replace(/^-|e.*$|\./g, '')
      .replace(/^0+/, '')
      .replace(/0+$/, '').length;
    // (an integer in fixed notation is written exactly, not as its shortest digits)
    if (digits > 1 && /[.e]/.test(s)) assert.notEqual(Math.fround(Number(x.toPrecision(digits - 1))), x, `${s}: ${digits - 1} digits read back`);
  }
  assert.throws(() => joinRowsText(Float32Array.from([1, 2]), 2, ['']), /rows \+ 1 strings/);
  assert.throws(() => joinRowsText(Float32Array.from([1, 2, 3]), 2, ['', '']), /not whole rows/);
});

// Per-language centring helpers (no model needed): the mean is subtracted and rows re-normalised;
// a file's language is the majority vote of the rows' nearest mean vectors.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { centerRows, SpreadSample, spreadSample } from '../../src/embed/centering.js';

test('centerRows subtracts the mean and re-normalises', () => {
  const rows = Float32Array.from([1, 0, 0, 0.6, 0.8, 0]);
  centerRows(rows, 3, Float32Array.from([0.5, 0, 0]), true);
  assert.ok(Math.abs(rows[0]! - 1) < 1e-6 && Math.abs(rows[1]!) < 1e-6);
  const n = Math.hypot(rows[3]!, rows[4]!, rows[5]!);
  assert.ok(Math.abs(n - 1) < 1e-6);
  assert.ok(Math.abs(rows[3]! - 0.1 / Math.hypot(0.1, 0.8)) < 1e-6);
  const raw = Float32Array.from([1, 0]);
  centerRows(raw, 2, Float32Array.from([0.25, 0.5]), false);
  assert.deepEqual([...raw], [0.75, -0.5]);
});

test('SpreadSample: every step-th non-blank line over the whole input, whatever the chunks', () => {
  const lines = Array.from({ length: 10000 }, (_, i) => (i % 7 === 3 ? ' ' : `line ${i}`));
  const all = spreadSample(lines, 100);
  assert.ok(all.length > 50 && all.length <= 100, `${all.length} kept`);
  assert.ok(
    all.every((l) => l.trim()),
    'blank lines never sampled',
  );
  const nonBlank = lines.filter((l) => l.trim());
  const pos = all.map((l) => nonBlank.indexOf(l));
  const step = pos[1]! - pos[0]!;
  assert.ok(
    pos.every((p, i) => p === i * step),
    'evenly spaced from the first line',
  );
  assert.ok(pos.at(-1)! + step >= nonBlank.length, 'reaches the end of the input');
  // fed in any pieces, the same sample; a short input is kept whole
  const s = new SpreadSample(100);
  for (let i = 0; i < lines.length; i += 37) for (const l of lines.slice(i, i + 37)) s.add(l);
  assert.deepEqual(s.lines, all);
  assert.deepEqual(spreadSample(['a', '', 'b'], 100), ['a', 'b']);
});

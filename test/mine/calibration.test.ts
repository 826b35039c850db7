// A threshold calibrated on a dev pair (src/mine/calibration.ts): taken from an `xling eval bucc
// --json` file as that command writes it (snake_case keys), refused when its scores are not the run's.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { thresholdFromFile } from '../../src/mine/calibration.js';

const tmp = mkdtempSync(join(tmpdir(), 'xling-calibration-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
const file = (name: string, j: unknown): string => {
  const f = join(tmp, name);
  writeFileSync(f, JSON.stringify(j));
  return f;
};

test('a calibration whose k was capped by a small dev set matches a run asking for the same k; another k is refused', () => {
  // eval bucc -k 4 on a set where only 3 neighbours exist writes k 3 and k_requested 4
  const capped = file('capped.json', { threshold: 1.2, margin: 'ratio', k: 3, k_requested: 4 });
  assert.equal(thresholdFromFile(capped, undefined, { scorer: false, margin: 'ratio', k: 4 }), 1.2);
  assert.throws(() => thresholdFromFile(capped, undefined, { scorer: false, margin: 'ratio', k: 8 }), /calibrated with k=4, but this run uses k=8/);
  const plain = file('plain.json', { threshold: 1.1, margin: 'ratio', k: 4 });
  assert.equal(thresholdFromFile(plain, undefined, { scorer: false, margin: 'ratio', k: 4 }), 1.1);
  assert.throws(() => thresholdFromFile(plain, undefined, { scorer: false, margin: 'distance', k: 4 }), /calibrated with --margin ratio/);
  const absolute = file('absolute.json', { threshold: 0.7, margin: 'absolute', k: 4 });
  assert.equal(thresholdFromFile(absolute, undefined, { scorer: false, margin: 'absolute', k: 9 }), 0.7, 'an absolute margin does not depend on k');
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LSTM, lstmForwardAsync } from '../../src/nn/index.js';
import { manualSeed, randn, tidy, noGrad } from '../../src/tensor/index.js';

describe('async inference', () => {
  it('LSTM forwardAsync equals forward and leaves the event loop free', async () => {
    manualSeed(2);
    const lstm = new LSTM(64, 256, { bidirectional: true }).eval();
    const x = randn([64, 60, 64]);
    const lengths = Array.from({ length: 64 }, (_, i) => 10 + (i % 50));
    const sync = noGrad(() => tidy(() => lstm.forward(x, { lengths, paddingValue: -1 }).output.toArray()));
    let ticks = 0;
    const timer = setInterval(() => {
      ticks++;
    }, 1);
    const t0 = performance.now();
    const r = await lstmForwardAsync(lstm, x, { lengths, paddingValue: -1 });
    const ms = performance.now() - t0;
    clearInterval(timer);
    const asyncOut = r.output.toArray();
    assert.equal(asyncOut.length, sync.length);
    for (let i = 0; i < sync.length; i++) assert.ok(Math.abs(asyncOut[i]! - sync[i]!) < 1e-5, `element ${i}`);
    // the kernel ran for many milliseconds while the 1 ms timer kept firing
    assert.ok(ticks >= Math.min(5, ms / 4), `timer ticked ${ticks} times during a ${ms.toFixed(0)} ms call`);
    r.output.dispose();
    r.h.dispose();
    r.c.dispose();
    x.dispose();
    lstm.dispose();
  });
});

// Retrieval over two vector files (xling eval retrieval's library call): rows aligned by order or
// by id, P@1/3/10 both ways, the dimension and id-count checks, and the summary's lines.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { retrievalSummary, vectorRetrieval } from '../../src/eval/retrieval.js';
import { writeNpy } from '../../src/io/npy.js';

const dir = mkdtempSync(join(tmpdir(), 'xling-retrieval-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const f = (name: string) => join(dir, name);

// 12 one-hot source rows in 16 dimensions; the target rows are the same, in reverse order
const n = 12,
  d = 16;
const src = new Float32Array(n * d);
for (let i = 0; i < n; i++) src[i * d + i] = 1;
const trg = new Float32Array(n * d);
for (let i = 0; i < n; i++) trg.set(src.subarray(i * d, (i + 1) * d), (n - 1 - i) * d);
writeNpy(f('src.npy'), src, [n, d]);
writeNpy(f('trg.npy'), trg, [n, d]);
writeNpy(f('narrow.npy'), new Float32Array(n * 8), [n, 8]);
const ids = Array.from({ length: n }, (_, i) => `doc${i}`);
writeFileSync(f('src.ids'), ids.join('\n') + '\n');
writeFileSync(f('trg.ids'), [...ids].reverse().join('\n') + '\n');
writeFileSync(f('short.ids'), ids.slice(1).join('\n') + '\n');

describe('vectorRetrieval', () => {
  it('aligned by id, every row is found first both ways; by row order (the target reversed), none is', async () => {
    const byId = await vectorRetrieval({ srcVectors: f('src.npy'), trgVectors: f('trg.npy'), srcIds: f('src.ids'), trgIds: f('trg.ids') });
    assert.deepEqual(byId, { forward: { p1: 1, p3: 1, p10: 1, n }, backward: { p1: 1, p3: 1, p10: 1, n } });
    // by row: row i's gold is target row i, which holds source row n-1-i: never found (the vectors are orthogonal)
    const byRow = await vectorRetrieval({ srcVectors: f('src.npy'), trgVectors: f('trg.npy') });
    assert.equal(byRow.forward!.p1, 0);
    assert.equal(byRow.backward!.n, n);
  });

  it('refuses other dimensions and an id file of another length, naming the files', async () => {
    await assert.rejects(
      vectorRetrieval({ srcVectors: f('src.npy'), trgVectors: f('narrow.npy') }),
      /dimension mismatch: .*src\.npy has 16 columns, .*narrow\.npy 8/,
    );
    await assert.rejects(
      vectorRetrieval({ srcVectors: f('src.npy'), trgVectors: f('trg.npy'), srcIds: f('short.ids'), trgIds: f('trg.ids') }),
      /short\.ids: 11 ids for 12 vectors/,
    );
  });

  it("the summary: a line per direction, in %, with the index's recall when there is one", () => {
    const s = retrievalSummary({
      forward: { p1: 0.5, p3: 0.75, p10: 1, n: 4 },
      forwardIndex: { p1: 0.25, p3: 0.5, p10: 1, n: 4, recallVsExact: 0.9 },
    });
    assert.equal(
      s,
      'forward       P@1 50.00  P@3 75.00  P@10 100.00  (n=4)\n' + 'forwardIndex  P@1 25.00  P@3 50.00  P@10 100.00  (n=4)  recall@10 vs exact 0.900\n',
    );
  });
});

// BUCC-style P/R/F1 on ../shared/data/gettext/mining for every language pair, margin and
// retrieval mode, with vectors from a model directory. Usage:
//   node experiments/mining-table.mjs MODEL_DIR [../shared/data/gettext/mining] > table.md
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { evaluateBucc, goldSet, loadSentenceEncoder, mine, readBucc, readGold } from 'xling';

const [modelDir, dir = '../shared/data/gettext/mining'] = process.argv.slice(2);
if (!modelDir || process.argv.length > 4) {
  console.error('usage: node experiments/mining-table.mjs MODEL_DIR [MINING_DIR]');
  process.exit(2);
}
const model = loadSentenceEncoder(modelDir);
const pairs = readdirSync(dir)
  .filter((f) => f.endsWith('.gold'))
  .map((f) => f.split('.')[0])
  .sort();
const margins = ['absolute', 'ratio', 'eq9', 'eq10'],
  modes = ['fwd', 'bwd', 'max'];
console.log(`| pair | margin | ${modes.map((m) => `${m} P / R / F1`).join(' | ')} |`);
console.log(`|---|---|${modes.map(() => '---').join('|')}|`);
for (const p of pairs) {
  const [xx] = p.split('-');
  const S = await readBucc(join(dir, `${p}.dev.${xx}`)),
    T = await readBucc(join(dir, `${p}.dev.en`));
  const gold = goldSet(await readGold(join(dir, `${p}.dev.gold`)), new Set(S.map((s) => s.id)), new Set(T.map((t) => t.id)));
  const sv = model.embed(S.map((s) => s.sentence)),
    tv = model.embed(T.map((t) => t.sentence));
  for (const margin of margins) {
    const cells = modes.map((retrieval) => {
      const c = mine(sv, tv, model.dim, { k: 4, margin, retrieval }).map((x) => ({ src: S[x.src].id, trg: T[x.trg].id, score: x.score }));
      const r = evaluateBucc(c, gold);
      return `${(100 * r.precision).toFixed(1)} / ${(100 * r.recall).toFixed(1)} / **${(100 * r.f1).toFixed(1)}**`;
    });
    console.log(`| ${p} | ${margin === 'absolute' ? 'cosine' : margin} | ${cells.join(' | ')} |`);
  }
}

// Sentence-alignment F1 of `xling align` (vecalign over a model's embeddings) on synthetic
// documents with known merges, splits, deletions and insertions, made from the rows of N-way
// dev sets taken in order (src/align/synthetic.ts), against the 1:1-in-order and the
// Gale–Church length baselines; vecalign's strict and lax F1 (src/align/score.ts).
//   node dist/bench/align-f1.js --model DIR [--data NAME=TSV.gz ...] [--pairs de-en,fr-en] [--rows 100] [--docs 10] [--long TSV.gz:N] [--del-percentile P] [--json]
// Defaults: the shared gettext and dialogue dev sets, de-en fr-en ru-en ja-en, documents of 100 rows.
// --long: also one document of N rows of that file (the first pair), for the time, memory and
// cells searched of the coarse-to-fine search on a long document.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { alignSentences, embedderOf, LevelInfo } from '../src/align/align.js';
import { AlignmentScores, Group, inOrderAlignment, lengthAlignment, scoreAlignments } from '../src/align/score.js';
import { syntheticDocument } from '../src/align/synthetic.js';
import { loadSentenceEncoder } from '../src/embed/model-dir.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const argv = process.argv.slice(2);
const opt = (name: string): string[] => argv.flatMap((a, i) => (a === `--${name}` && argv[i + 1] ? [argv[i + 1]!] : []));
const model = opt('model')[0] ?? (existsSync(join(root, 'models/default/config.json')) ? join(root, 'models/default') : undefined);
if (!model) throw new Error('give --model DIR');
const data = opt('data').length
  ? opt('data').map((d) => d.split('=') as [string, string])
  : ([
      ['gettext', join(root, '../shared/data/gettext/dev.tsv.gz')],
      ['dialogue', join(root, '../shared/data/dialogue/dev.tsv.gz')],
    ] as [string, string][]);
const pairs = (opt('pairs')[0] ?? 'de-en,fr-en,ru-en,ja-en').split(',').map((p) => p.split('-') as [string, string]);
const rowsPerDoc = Number(opt('rows')[0] ?? 100),
  maxDocs = Number(opt('docs')[0] ?? 10);
const json = argv.includes('--json');
const delPercentile = opt('del-percentile')[0] !== undefined ? Number(opt('del-percentile')[0]) : undefined;
const joinerOf = (lang: string) => (/^(ja|zh)/.test(lang) ? '' : ' ');

const m = loadSentenceEncoder(model);
const embedder = embedderOf(m);
const results: Record<string, unknown>[] = [];
const pct = (x: number) => (100 * x).toFixed(1);
if (!json)
  console.log(
    `model ${model}${delPercentile !== undefined ? `, --del-percentile ${delPercentile}` : ''}; documents of ${rowsPerDoc} rows (10% 2:1 merges, 10% 1:2 splits, 5% deletions, 5% insertions)\n\n| data | pair | docs | sents src/trg | vecalign strict / lax | length (Gale–Church) | 1:1 in order |\n|---|---|---|---|---|---|---|`,
  );
for (const [name, file] of data) {
  const [head, ...lines] = gunzipSync(readFileSync(file)).toString('utf8').trimEnd().split('\n');
  const cols = head!.split('\t');
  for (const [s, t] of pairs) {
    const si = cols.indexOf(s),
      ti = cols.indexOf(t);
    if (si < 0 || ti < 0) continue;
    const rows = lines
      .map((l) => l.split('\t'))
      .filter((c) => c[si]?.trim() && c[ti]?.trim())
      .map((c) => [c[si]!.trim(), c[ti]!.trim()] as [string, string]);
    const gold: Group[][] = [],
      ours: Group[][] = [],
      len: Group[][] = [],
      order: Group[][] = [];
    let ns = 0,
      nt = 0;
    const t0 = performance.now();
    for (let d = 0; d < maxDocs && (d + 1) * rowsPerDoc <= rows.length; d++) {
      const doc = syntheticDocument(rows.slice(d * rowsPerDoc, (d + 1) * rowsPerDoc), { seed: 1000 + d, srcJoiner: joinerOf(s), trgJoiner: joinerOf(t) });
      gold.push(doc.gold);
      ours.push(await alignSentences(doc.src, doc.trg, embedder, { srcLang: s, trgLang: t, delPercentile }));
      len.push(lengthAlignment(doc.src, doc.trg));
      order.push(inOrderAlignment(doc.src.length, doc.trg.length));
      ns += doc.src.length;
      nt += doc.trg.length;
    }
    if (!gold.length) continue;
    const sc = (x: Group[][]): AlignmentScores => scoreAlignments(gold, x);
    const r = {
      data: name,
      pair: `${s}-${t}`,
      docs: gold.length,
      srcSentences: ns,
      trgSentences: nt,
      vecalign: sc(ours),
      length: sc(len),
      inOrder: sc(order),
      seconds: (performance.now() - t0) / 1000,
    };
    results.push(r);
    if (!json)
      console.log(
        `| ${name} | ${s}-${t} | ${r.docs} | ${ns}/${nt} | ${pct(r.vecalign.f1Strict)} / ${pct(r.vecalign.f1Lax)} | ${pct(r.length.f1Strict)} / ${pct(r.length.f1Lax)} | ${pct(r.inOrder.f1Strict)} / ${pct(r.inOrder.f1Lax)} |`,
      );
  }
}
let long: Record<string, unknown> | undefined;
if (opt('long')[0]) {
  const at = opt('long')[0]!.lastIndexOf(':');
  const file = opt('long')[0]!.slice(0, at),
    want = Number(opt('long')[0]!.slice(at + 1));
  const [s, t] = pairs[0]!;
  const [head, ...lines] = gunzipSync(readFileSync(file)).toString('utf8').trimEnd().split('\n');
  const cols = head!.split('\t'),
    si = cols.indexOf(s),
    ti = cols.indexOf(t);
  const rows = lines
    .map((l) => l.split('\t'))
    .filter((c) => c[si]?.trim() && c[ti]?.trim())
    .slice(0, want)
    .map((c) => [c[si]!.trim(), c[ti]!.trim()] as [string, string]);
  const doc = syntheticDocument(rows, { seed: 7, srcJoiner: joinerOf(s), trgJoiner: joinerOf(t) });
  const levels: LevelInfo[] = [];
  const t0 = performance.now();
  const g = await alignSentences(doc.src, doc.trg, embedder, { srcLang: s, trgLang: t, levels });
  const seconds = (performance.now() - t0) / 1000;
  const f1 = scoreAlignments([doc.gold], [g]);
  long = {
    file,
    pair: `${s}-${t}`,
    srcSentences: doc.src.length,
    trgSentences: doc.trg.length,
    seconds,
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
    levels,
    f1,
  };
  if (!json)
    console.log(
      `\nlong document (${file}, ${s}-${t}): ${doc.src.length} × ${doc.trg.length} sentences aligned in ${seconds.toFixed(1)}s (embedding included), peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB; cells searched per level ${levels.map((l) => `${l.n}×${l.m}: ${l.cells}`).join(', ')} (the full matrix: ${doc.src.length * doc.trg.length}); strict / lax F1 ${pct(f1.f1Strict)} / ${pct(f1.f1Lax)}`,
    );
}
if (json) console.log(JSON.stringify({ model, rowsPerDoc, results, long }, null, 1));

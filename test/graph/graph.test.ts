// The k-nn graph: minimax trajectories on small hand-made graphs with known answers, the store's
// filters, a graph of the bundled sample built in one go equal to one built in shards, its recall
// against exact search, and the CLI (stats, neighbours by text and by id, path: directed, else both ways).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  buildGraph,
  defaultFactory,
  EXACT,
  EXACT_CROSSOVER_N,
  GraphBuildOptions,
  graphRecall,
  hnswFactory,
  mergeGraphShards,
  readGraphMeta,
  trainRows,
} from '../../src/graph/build.js';
import { GraphReader, graphPath, minimaxPath, neighboursOfText, openGraphIndex } from '../../src/graph/query.js';
import { buildStore, GraphStore, wordCount } from '../../src/graph/store.js';
import { float16ToFloat32 } from '../../src/io/half.js';
import { NpyWriter, readNpy } from '../../src/io/npy.js';
import { fromArray } from '../../src/tensor/index.js';
import { cli, tinyDualModel } from '../fixtures/cli.js';

/** A graph from an edge list: node → [(neighbour, distance)]. */
function rows(edges: Record<number, [number, number][]>) {
  return (i: number) => {
    const e = edges[i] ?? [];
    return { ids: e.map((x) => x[0]), dist: e.map((x) => x[1]) };
  };
}

describe('minimax trajectories on hand-made graphs', () => {
  it('takes the path whose largest step is smallest, not the shortest one', () => {
    // 0→3 directly costs 0.9; 0→1→2→3 never steps more than 0.4; 0→4→3 has a 0.5 step
    const g = rows({
      0: [
        [3, 0.9],
        [1, 0.3],
        [4, 0.2],
      ],
      1: [[2, 0.4]],
      2: [[3, 0.35]],
      4: [[3, 0.5]],
    });
    const p = minimaxPath(g, 5, 0, 3)!;
    assert.deepEqual(
      p.steps.map((s) => s.id),
      [0, 1, 2, 3],
    );
    assert.ok(Math.abs(p.maxStep - 0.4) < 1e-6);
    assert.deepEqual(
      p.steps.map((s) => s.distance),
      [0, 0.3, 0.4, 0.35],
    );
  });
  it('breaks ties by fewer steps; follows edge direction; unreachable gives null', () => {
    const g = rows({
      0: [
        [1, 0.5],
        [2, 0.1],
      ],
      2: [[3, 0.1]],
      3: [[1, 0.5]],
      5: [[0, 0.1]],
    });
    assert.deepEqual(
      minimaxPath(g, 6, 0, 1)!.steps.map((s) => s.id),
      [0, 1],
      'both routes top out at 0.5: the direct one',
    );
    assert.equal(minimaxPath(g, 6, 1, 0), null, 'no edge leaves 1');
    assert.deepEqual(minimaxPath(g, 6, 4, 4)!.steps, [{ id: 4, distance: 0 }]);
    // a long chain of small steps beats one big jump
    const chain: Record<number, [number, number][]> = { 0: [[99, 0.8]] };
    for (let i = 0; i < 99; i++) chain[i] = [...(chain[i] ?? []), [i + 1, 0.05]];
    const p = minimaxPath(rows(chain), 100, 0, 99)!;
    assert.equal(p.steps.length, 100);
    assert.ok(Math.abs(p.maxStep - 0.05) < 1e-6);
  });
  it('graphPath: along the edges as built; where no path follows them, both ways (fallback); --undirected both ways from the start', () => {
    // 0→1→2, 3→2: 3 is nobody's neighbour, so no directed path reaches it; 4 is on its own
    const edges: Record<number, [number, number][]> = { 0: [[1, 0.2]], 1: [[2, 0.3]], 3: [[2, 0.1]] };
    const reverse: Record<number, [number, number][]> = {};
    for (const [u, es] of Object.entries(edges)) for (const [v, d] of es) (reverse[v] ??= []).push([Number(u), d]);
    const directed = rows(edges),
      both = rows(Object.fromEntries([0, 1, 2, 3, 4].map((i) => [i, [...(edges[i] ?? []), ...(reverse[i] ?? [])]])));
    const g = { size: 5, row: directed, undirectedRow: both };
    const p = graphPath(g, 0, 2)!;
    assert.deepEqual([p.edges, p.fallback, p.steps.map((s) => s.id)], ['directed', false, [0, 1, 2]]);
    const f = graphPath(g, 0, 3)!;
    assert.deepEqual([f.edges, f.fallback, f.steps.map((s) => s.id), f.steps.map((s) => s.distance)], ['undirected', true, [0, 1, 2, 3], [0, 0.2, 0.3, 0.1]]);
    const u = graphPath(g, 2, 0, { undirected: true })!;
    assert.deepEqual([u.edges, u.fallback, u.steps.map((s) => s.id)], ['undirected', false, [2, 1, 0]]);
    assert.equal(graphPath(g, 0, 4), null, 'not even both ways');
    assert.equal(graphPath(g, 0, 4, { undirected: true }), null);
  });
  it('of the paths with the smallest largest step, takes the one with the smallest sum of steps', () => {
    // both 0→1→2→5 and 0→3→4→5 top out at 0.4 (their largest step): the first sums to 1.2, the
    // second to 0.6; 0→5 directly is 0.9. A wander through steps below the bottleneck is not taken.
    const g = rows({
      0: [
        [1, 0.4],
        [3, 0.1],
        [5, 0.9],
      ],
      1: [[2, 0.4]],
      2: [[5, 0.4]],
      3: [[4, 0.4]],
      4: [[5, 0.1]],
    });
    const p = minimaxPath(g, 6, 0, 5)!;
    assert.deepEqual(
      p.steps.map((s) => s.id),
      [0, 3, 4, 5],
    );
    assert.ok(Math.abs(p.maxStep - 0.4) < 1e-6);
  });
});

describe('graph store', () => {
  it('keeps 4–60 word sentences once per language; CJK characters count as words', async () => {
    assert.equal(wordCount('open the file now'), 4);
    assert.equal(wordCount('ファイルを開く'), 7);
    assert.equal(wordCount('打开 file'), 3);
    const dir = mkdtempSync(join(tmpdir(), 'xling-store-'));
    try {
      writeFileSync(
        join(dir, 'in.tsv'),
        'en\tde\nOpen the file now please\tDie Datei jetzt öffnen bitte\nToo short\tZu kurz\nopen THE file now please\tnoch ein anderer Satz hier\n',
      );
      const info = await buildStore(dir, [{ tsv: join(dir, 'in.tsv') }], { minWords: 4, maxWords: 60, dedup: true }, true);
      assert.deepEqual(info.perLang, { en: 1, de: 2 });
      assert.deepEqual(info.dropped, { length: 2, duplicates: 1 });
      const s = new GraphStore(dir);
      assert.equal(s.size, 3);
      assert.deepEqual(
        [0, 1, 2].map((i) => [s.lang(i), s.text(i)]),
        [
          ['en', 'Open the file now please'],
          ['de', 'Die Datei jetzt öffnen bitte'],
          ['de', 'noch ein anderer Satz hier'],
        ],
      );
      assert.deepEqual(s.range(1, 3).text, ['Die Datei jetzt öffnen bitte', 'noch ein anderer Satz hier']);
      s.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('graph of the bundled sample', () => {
  const dir = mkdtempSync(join(tmpdir(), 'xling-graph-'));
  const model = join(dir, 'model');
  const base = (out: string): GraphBuildOptions => ({
    model,
    out,
    sources: [{ tsv: 'data/sample/gettext.dev.tsv.gz' }],
    k: 10,
    factory: 'IVF16,Flat',
    candidates: 32,
    trainSample: 5000,
    recallTarget: 0.95,
    filter: { minWords: 4, maxWords: 60, dedup: true },
    quiet: true,
    log: () => {},
  });
  before(() => {
    tinyDualModel(dir, model);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('builds in one go and in shards to the same graph; recall against exact search is recorded', async () => {
    const one = await buildGraph(base(join(dir, 'one')));
    assert.ok(one.recall_at_10! >= 0.9, `recall ${one.recall_at_10}`);
    assert.ok(one.nprobe !== null && one.nprobe >= 1);
    for (const k of ['store', 'embed', 'train', 'add', 'query', 'stats']) assert.ok(one.steps[k as 'store'], k);
    // the same in two shards: embed, merge, train, add, merge, query, merge
    // the same options as the one-go build (nprobe tuned by the first query shard and recorded; given
    // the tuned nprobe alone, the shards would not re-rank the candidates the tuning may have raised)
    const two = join(dir, 'two');
    const o = base(two);
    for (const i of [0, 1]) await buildGraph({ ...o, shard: [i, 2], steps: ['store', 'embed'] });
    mergeGraphShards(two, () => {});
    await buildGraph({ ...o, steps: ['train'] });
    for (const i of [0, 1]) await buildGraph({ ...o, shard: [i, 2], steps: ['add'] });
    mergeGraphShards(two, () => {});
    for (const i of [0, 1]) await buildGraph({ ...o, shard: [i, 2], steps: ['query'] });
    mergeGraphShards(two, () => {});
    assert.deepEqual([readGraphMeta(two).nprobe, readGraphMeta(two).candidates], [one.nprobe, one.candidates], 'the same nprobe and candidates tuned');
    // each shard timed itself in its own file; the merges added them up into graph.json
    const steps = readGraphMeta(two).steps;
    for (const k of ['embed', 'add', 'query'] as const) assert.ok(steps[k]!.shards === 2 && steps[k]!.seconds >= 0, `${k}: ${JSON.stringify(steps[k])}`);
    assert.deepEqual(
      readdirSync(two).filter((f) => f.startsWith('steps.')),
      [],
      'no timing files left',
    );
    // undirected rows: a node's own row plus every node that has it in its row
    const gr = new GraphReader(two);
    try {
      const incoming = new Map<number, number[]>();
      for (let i = 0; i < gr.size; i++) for (const v of gr.row(i).ids) incoming.set(v, [...(incoming.get(v) ?? []), i]);
      for (const i of [0, 7, gr.size - 1]) {
        const u = gr.undirectedRow(i),
          own = gr.row(i);
        assert.deepEqual([...u.ids], [...own.ids, ...(incoming.get(i) ?? [])], `node ${i}`);
        u.ids.forEach((v, j) => {
          if (j >= own.ids.length) assert.equal(u.dist[j], gr.row(v).dist[[...gr.row(v).ids].indexOf(i)]);
        });
      }
    } finally {
      gr.close();
    }
    const a = readNpy(join(dir, 'one', 'neighbours.npy')),
      b = readNpy(join(two, 'neighbours.npy'));
    assert.deepEqual(b.shape, a.shape);
    assert.deepEqual(Array.from(b.data as Int32Array), Array.from(a.data as Int32Array), 'the same neighbours');
    const va = readNpy(join(dir, 'one', 'vectors.npy')).data as Uint16Array,
      vb = readNpy(join(two, 'vectors.npy')).data as Uint16Array;
    let diff = 0;
    for (let i = 0; i < va.length; i++) if (va[i] !== vb[i]) diff++;
    assert.ok(diff / va.length < 1e-3, `float16 vectors equal (${diff} of ${va.length} differ by rounding)`);
  });

  it('CLI: stats JSON and histogram, neighbours by text and by id, a path between two texts', () => {
    const g = join(dir, 'one');
    let r = cli(['graph', 'stats', '--graph', g, '--json', join(dir, 's.json'), '--svg', join(dir, 'h.svg')]);
    assert.equal(r.status, 0, r.stderr);
    const s = JSON.parse(readFileSync(join(dir, 's.json'), 'utf8')) as Record<string, unknown>;
    for (const k of ['sentences', 'recall_at_10', 'bytes_per_sentence', 'build_seconds', 'same_language_share'])
      assert.ok(s[k] !== undefined && s[k] !== null, k);
    assert.ok(readFileSync(join(dir, 'h.svg'), 'utf8').startsWith('<svg'));
    const reader = new GraphReader(g);
    const text = reader.store.text(7),
      lang = reader.store.lang(7);
    // a sentence that is nobody's neighbour: no path along the edges as built reaches it
    const incoming = new Uint8Array(reader.size);
    for (let i = 0; i < reader.size; i++) for (const v of reader.row(i).ids) incoming[v] = 1;
    const lonely = incoming.findIndex((x, i) => !x && i !== 7);
    assert.ok(lonely >= 0, "some sentence is nobody's neighbour");
    assert.equal(
      minimaxPath((i) => reader.row(i), reader.size, 7, lonely),
      null,
    );
    const expected = graphPath(reader, 7, lonely, { undirected: true });
    assert.ok(expected, `#7 and #${lonely} are connected when the edges are walked both ways`);
    reader.close();
    r = cli(['graph', 'neighbours', '--graph', g, text, '--lang', lang, '--json']);
    assert.equal(r.status, 0, r.stderr);
    const n = JSON.parse(r.stdout) as { neighbours: { id: number; distance: number }[] };
    assert.equal(n.neighbours[0]!.id, 7, 'the sentence itself first');
    assert.ok(n.neighbours[0]!.distance < 1e-3);
    r = cli(['graph', 'neighbours', '--graph', g, '#7', '--json']);
    const byId = JSON.parse(r.stdout) as { neighbours: { id: number; distance: number }[] };
    assert.equal(byId.neighbours.length, 10);
    assert.ok(!byId.neighbours.some((x) => x.id === 7), 'self excluded');
    r = cli(['graph', 'path', '--graph', g, '#7', `#${byId.neighbours[3]!.id}`, '--json']);
    assert.equal(r.status, 0, r.stderr);
    const p = JSON.parse(r.stdout) as { steps: { id: number; distance: number }[]; max_step: number; edges: string; fallback: boolean };
    assert.deepEqual([p.edges, p.fallback], ['directed', false], 'a directed path where there is one');
    assert.doesNotMatch(r.stderr, /both ways/);
    assert.equal(p.steps[0]!.id, 7);
    assert.equal(p.steps.at(-1)!.id, byId.neighbours[3]!.id);
    assert.ok(p.steps.length >= 2 && p.max_step <= byId.neighbours[3]!.distance + 1e-6, 'never worse than the direct edge');
    // only an undirected path: found, said on stderr and in the JSON, the same as --undirected's
    r = cli(['graph', 'path', '--graph', g, '#7', `#${lonely}`, '--json']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`no path from #7 to #${lonely} along the neighbour edges as built; this one walks them both ways`));
    const f = JSON.parse(r.stdout) as { edges: string; fallback: boolean; steps: { id: number; distance: number }[]; max_step: number };
    assert.deepEqual([f.edges, f.fallback], ['undirected', true]);
    assert.deepEqual(
      f.steps.map((x) => x.id),
      expected.steps.map((x) => x.id),
    );
    assert.ok(Math.abs(f.max_step - expected.maxStep) < 1e-6);
    r = cli(['graph', 'path', '--graph', g, '#7', '#999999']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /#999999: the graph has \d+ sentences/);
  });
  it('the default for a small collection is exact search (recall 1); shards give the same graph; a resume needs the same settings', async () => {
    const ex = join(dir, 'exact');
    const logs: string[] = [];
    const o: GraphBuildOptions = { ...base(ex), factory: undefined, log: (l) => logs.push(l) };
    const m = await buildGraph(o);
    assert.equal(m.factory, EXACT);
    assert.equal(defaultFactory(m.sentences, m.model.dim), EXACT);
    assert.match(defaultFactory(4 * EXACT_CROSSOVER_N, 512), /^OPQ16,IVF\d+,PQ16$/, 'a compressed index above the crossover');
    assert.equal(defaultFactory(EXACT_CROSSOVER_N, 512), EXACT);
    // the layout the warning names: an HNSW coarse quantizer over 8√N lists (a power of two); indexes train on ≥ 40 rows a list
    assert.equal(defaultFactory(2e6, 512), 'OPQ16,IVF1024,PQ16');
    assert.equal(hnswFactory(3e6), 'OPQ16,IVF16384_HNSW32,PQ16');
    assert.equal(hnswFactory(566e6), 'OPQ16,IVF262144_HNSW32,PQ16');
    assert.equal(trainRows(3e6, 200000, 'OPQ16,IVF16384_HNSW32,PQ16'), 16384 * 40);
    assert.equal(trainRows(3e6, 200000, 'OPQ16,IVF1024,PQ16'), 200000);
    assert.equal(trainRows(50000, 200000, 'OPQ16,IVF16384_HNSW32,PQ16'), 50000);
    assert.equal(trainRows(3e6, 200000, 'HNSW32'), 200000);
    assert.equal(m.recall_at_10, 1);
    assert.ok(!readdirSync(ex).some((f) => f.endsWith('.faiss')), 'no index file');
    assert.ok(
      logs.some((l) =>
        new RegExp(`recall@10 vs exact search \\((all ${m.sentences}|2000 of ${m.sentences}) sentences, tied neighbours counted as found\\): 1\\.000`).test(l),
      ),
      logs.join(' | '),
    );
    // the neighbours are the exact ones: dot products of the float16 vectors, computed here
    const v = readNpy(join(ex, 'vectors.npy')),
      d = v.shape[1]!,
      x = float16ToFloat32(v.data as Uint16Array);
    const nb = readNpy(join(ex, 'neighbours.npy')).data as Int32Array,
      ds = float16ToFloat32(readNpy(join(ex, 'distances.npy')).data as Uint16Array);
    for (const r of [0, 7, m.sentences - 1]) {
      const scores = Array.from({ length: m.sentences }, (_, j) => {
        let t = 0;
        for (let c = 0; c < d; c++) t += x[r * d + c]! * x[j * d + c]!;
        return [j, t] as [number, number];
      })
        .filter(([j]) => j !== r)
        .sort((a, b) => b[1] - a[1]);
      for (let j = 0; j < 10; j++)
        assert.ok(Math.abs(ds[r * 10 + j]! - (1 - scores[j]![1])) < 2e-3, `row ${r} rank ${j}: ${ds[r * 10 + j]} vs ${1 - scores[j]![1]}`);
      assert.ok(nb.subarray(r * 10, r * 10 + 10).every((id) => id !== r && id >= 0));
    }
    // in three shards (query blocks do not line up with the shards): the same bytes
    const sh = join(dir, 'exact-shards');
    const os: GraphBuildOptions = { ...o, out: sh };
    for (const i of [0, 1, 2]) await buildGraph({ ...os, shard: [i, 3], steps: ['store', 'embed'] });
    mergeGraphShards(sh, () => {});
    for (const i of [0, 1, 2]) await buildGraph({ ...os, shard: [i, 3], steps: ['train', 'add', 'query'] });
    mergeGraphShards(sh, () => {});
    assert.ok(readFileSync(join(sh, 'neighbours.npy')).equals(readFileSync(join(ex, 'neighbours.npy'))), 'neighbours identical');
    assert.ok(readFileSync(join(sh, 'distances.npy')).equals(readFileSync(join(ex, 'distances.npy'))), 'distances identical');
    // other settings are refused, naming each difference; the same ones have nothing left to do
    await assert.rejects(buildGraph({ ...o, k: 5 }), /a graph built with other settings — k 10 \(given: 5\)/);
    await assert.rejects(buildGraph({ ...o, factory: 'IVF16,Flat', candidates: 8 }), /factory "exact" \(given: "IVF16,Flat"\); candidates 32 \(given: 8\)/);
    await assert.rejects(
      buildGraph({ ...o, sources: [{ tsv: 'data/sample/gettext.train.tsv.gz' }] }),
      /data \["[^"]*gettext\.dev\.tsv\.gz"\] \(given: \["[^"]*gettext\.train\.tsv\.gz"\]\)/,
    );
    await assert.rejects(buildGraph({ ...o, model: join(dir, 'one') }), /model .*model \(given: .*one\)/);
    logs.length = 0;
    await buildGraph(o);
    assert.ok(
      logs.some((l) => /nothing to do: every step asked for was already done with these settings/.test(l)),
      logs.join('\n'),
    );
    // a texts' neighbours without an index file: the sentence itself first
    const g = new GraphReader(ex);
    try {
      const model = (await import('../../src/embed/model-dir.js')).loadSentenceEncoder(join(dir, 'model'));
      const index = openGraphIndex(ex);
      try {
        const r = neighboursOfText(g, model, index, g.store.text(7), { lang: g.store.lang(7) });
        assert.equal(r.neighbours[0]!.id, 7);
      } finally {
        index.dispose();
      }
    } finally {
      g.close();
    }
  });

  it('recall counts tied neighbours (equal vectors: the same string in several languages) as found, and wrong ones as missed', () => {
    // 12 equal unit vectors (rows 0–11), 8 others far from them; row 0's exact 10 neighbours are
    // 10 of rows 1–11, which 10 being arbitrary
    const g = join(dir, 'ties'),
      d = 4,
      N = 20;
    rmSync(g, { recursive: true, force: true });
    const x = new Float32Array(N * d);
    for (let i = 0; i < N; i++) {
      if (i < 12) x[i * d] = 1;
      else {
        const a = (i - 12) * 0.3;
        x[i * d + 1] = Math.cos(a);
        x[i * d + 2] = Math.sin(a);
      }
    }
    const vectors = fromArray(x, [N, d]);
    const graphOf = (row0: number[]) => {
      rmSync(g, { recursive: true, force: true });
      mkdirSync(g);
      writeFileSync(join(g, 'graph.json'), JSON.stringify({ format: 'xling-graph', k: 10 }));
      const w = NpyWriter.open(join(g, 'neighbours.npy'), 10, 'int32');
      const rows = new Int32Array(N * 10);
      for (let i = 0; i < N; i++) {
        // every other row lists its exact neighbours: the rows of its group, nearest first
        const others = Array.from({ length: N }, (_, j) => j)
          .filter((j) => j !== i)
          .sort((a, b) => {
            let sa = 0,
              sb = 0;
            for (let c = 0; c < d; c++) {
              sa += x[i * d + c]! * x[a * d + c]!;
              sb += x[i * d + c]! * x[b * d + c]!;
            }
            return sb - sa || a - b;
          });
        rows.set(i === 0 ? row0 : others.slice(0, 10), i * 10);
      }
      w.append(rows);
      w.close();
    };
    // row 0 lists rows 2–11: all tied with whichever 10 exact search picked
    graphOf([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    let r = graphRecall(g, vectors, N);
    assert.equal(r.recall, 1);
    // row 0 lists nine tied rows and one far row (12): one of 200 missed
    graphOf([2, 3, 4, 5, 6, 7, 8, 9, 10, 12]);
    r = graphRecall(g, vectors, N);
    assert.equal(r.recall, 199 / 200);
    assert.ok(r.byIds <= r.recall);
    vectors.dispose();
  });

  it('warns when the recall target is not reached', async () => {
    const logs: string[] = [];
    const m = await buildGraph({ ...base(join(dir, 'pq')), factory: 'PQ4', candidates: 10, recallTarget: 0.999, log: (l) => logs.push(l) });
    assert.ok(m.recall_at_10! < 0.999);
    assert.ok(
      logs.some((l) => /warning: recall@10 0\.\d+ is below the recall target 0\.999/.test(l)),
      logs.join('\n'),
    );
    // an IVF index whose codes cap recall below the target at every list: the warning names the HNSW layout
    logs.length = 0;
    const m2 = await buildGraph({ ...base(join(dir, 'ivfpq')), factory: 'IVF4,PQ4', candidates: 10, recallTarget: 0.999, log: (l) => logs.push(l) });
    assert.equal(m2.nprobe, 4);
    assert.ok(
      logs.some(
        (l) =>
          l.includes(`at nprobe 4 (every list) and 80 candidates is below the recall target 0.999`) && l.includes(`--factory "${hnswFactory(m2.sentences)}"`),
      ),
      logs.join('\n'),
    );
    // where more lists stop helping, the tuning doubled the candidates re-ranked (up to 8 × 10), recorded as the graph's; its settings keep the 10 given
    assert.equal(m2.candidates, 80);
    assert.equal(m2.settings?.candidates, 10);
    assert.ok(
      logs.some((l) => /nprobe 4, 20 candidates: recall@10/.test(l)),
      logs.join('\n'),
    );
  });

  it('raises the candidates re-ranked where more lists stop raising the recall, and reaches the target with them', async () => {
    const logs: string[] = [];
    const few = await buildGraph({
      ...base(join(dir, 'ivfpq-few')),
      factory: 'IVF4,PQ4',
      candidates: 10,
      nprobe: 4,
      recallTarget: 0.9,
      log: (l) => logs.push(l),
    });
    const tuned = await buildGraph({ ...base(join(dir, 'ivfpq-tuned')), factory: 'IVF4,PQ4', candidates: 10, recallTarget: 0.9, log: (l) => logs.push(l) });
    // with nprobe given nothing is tuned: 10 candidates, and PQ4's codes keep the recall low
    assert.equal(few.candidates, 10);
    assert.ok(few.recall_at_10! < 0.9, `recall ${few.recall_at_10} with 10 candidates`);
    assert.ok(tuned.candidates > 10 && tuned.candidates <= 80, `candidates ${tuned.candidates}`);
    assert.ok(tuned.recall_at_10! >= 0.9 && tuned.recall_at_10! > few.recall_at_10!, `recall ${tuned.recall_at_10} with ${tuned.candidates} candidates`);
  });

  it('CLI: the model is found from any directory (stored relative to the graph); a rebuild with other settings is refused; path counts distinct sentences', () => {
    let r = cli(['graph', 'build', '--model', 'model', '--data', join(process.cwd(), 'data/sample/gettext.dev.tsv.gz'), '--out', 'rel', '-k', '5', '--quiet'], {
      cwd: dir,
    });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(readGraphMeta(join(dir, 'rel')).model.dir, '../model');
    const elsewhere = mkdtempSync(join(tmpdir(), 'xling-elsewhere-'));
    try {
      const reader = new GraphReader(join(dir, 'rel'));
      const text = reader.store.text(3),
        lang = reader.store.lang(3),
        size = reader.size,
        to = reader.row(3).ids[1]!;
      reader.close();
      r = cli(['graph', 'neighbours', '--graph', join(dir, 'rel'), text, '--lang', lang, '--json'], { cwd: elsewhere });
      assert.equal(r.status, 0, r.stderr);
      assert.equal((JSON.parse(r.stdout) as { neighbours: { id: number }[] }).neighbours[0]!.id, 3);
      assert.match(r.stderr, /model \S*model \(recorded in graph\.json as \.\.\/model, relative to the graph directory\)/);
      r = cli(['graph', 'path', '--graph', join(dir, 'rel'), '#3', `#${to}`, '--undirected', '--json'], { cwd: elsewhere });
      assert.equal(r.status, 0, r.stderr);
      const { visited, edges, fallback } = JSON.parse(r.stdout) as { visited: number; edges: string; fallback: boolean };
      assert.deepEqual([edges, fallback], ['undirected', false], 'asked for');
      assert.ok(visited >= 2 && visited <= size, `${visited} of ${size}`);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
    r = cli(['graph', 'build', '--model', 'model', '--out', 'rel', '-k', '6'], { cwd: dir });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /rel: a graph built with other settings — k 5 \(given: 6\)/);
    assert.doesNotMatch(r.stderr, /done/);
  });
});

// Vocabulary analysis: neighbour joining recovers known trees (Saitou & Nei's exactness on additive
// distances), KL divergences and vocabulary counts by hand, and `xling analyze vocab` on the sample.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LangTokens, neighbourJoining, symmetricKL, toNewick, TreeNode, treeSvg, vocabularyUse } from '../../src/analyze/vocab.js';
import { Rng } from '../../src/util/rng.js';
import { cli, temporariesIn, tinyDualModel } from '../fixtures/cli.js';

/** Path lengths between the leaves of a tree. */
function leafDistances(t: TreeNode): Map<string, Map<string, number>> {
  const adj = new Map<TreeNode, [TreeNode, number][]>();
  const link = (a: TreeNode, b: TreeNode, l: number) => {
    adj.set(a, [...(adj.get(a) ?? []), [b, l]]);
    adj.set(b, [...(adj.get(b) ?? []), [a, l]]);
  };
  const walk = (n: TreeNode) => {
    for (const c of n.children) {
      link(n, c.node, c.length);
      walk(c.node);
    }
  };
  walk(t);
  const leaves = [...adj.keys()].filter((n) => !n.children.length);
  const out = new Map<string, Map<string, number>>();
  for (const s of leaves) {
    const d = new Map<TreeNode, number>([[s, 0]]),
      stack = [s];
    while (stack.length) {
      const u = stack.pop()!;
      for (const [v, l] of adj.get(u)!)
        if (!d.has(v)) {
          d.set(v, d.get(u)! + l);
          stack.push(v);
        }
    }
    out.set(s.name!, new Map(leaves.map((x) => [x.name!, d.get(x)!])));
  }
  return out;
}

/** The leaf sets below each internal edge, as canonical strings (the unrooted tree's splits). */
function splits(t: TreeNode, all: string[]): Set<string> {
  const out = new Set<string>();
  const below = (n: TreeNode): string[] => {
    if (!n.children.length) return [n.name!];
    const ls = n.children.flatMap((c) => below(c.node));
    if (ls.length > 1 && ls.length < all.length - 1) {
      const side = ls.includes(all[0]!) ? all.filter((x) => !ls.includes(x)) : ls;
      out.add([...side].sort().join(','));
    }
    return ls;
  };
  below(t);
  return out;
}

describe('neighbour joining', () => {
  it('gives the textbook tree of the five-taxon example', () => {
    // the example of Saitou & Nei's method on Wikipedia: d(a,b)=5, d(a,c)=9 ...
    const names = ['a', 'b', 'c', 'd', 'e'];
    const D = [
      [0, 5, 9, 9, 8],
      [5, 0, 10, 10, 9],
      [9, 10, 0, 8, 7],
      [9, 10, 8, 0, 3],
      [8, 9, 7, 3, 0],
    ];
    const t = neighbourJoining(names, D);
    assert.equal(toNewick(t), '((c:4,(a:2,b:3):3):1,(d:2,e:1):1);');
    const d = leafDistances(t);
    names.forEach((x, i) => names.forEach((y, j) => assert.ok(Math.abs(d.get(x)!.get(y)! - D[i]![j]!) < 1e-9, `${x}-${y}`)));
  });

  it('recovers random additive trees exactly: same splits, same path lengths', () => {
    for (let trial = 0; trial < 20; trial++) {
      const rng = new Rng(trial);
      // a random tree: join random pairs of a pool until one node is left
      const n = 4 + rng.int(9);
      const pool: TreeNode[] = Array.from({ length: n }, (_, i) => ({ name: `t${i}`, children: [] }));
      while (pool.length > 1) {
        const i = rng.int(pool.length);
        const a = pool.splice(i, 1)[0]!;
        const j = rng.int(pool.length);
        const b = pool.splice(j, 1)[0]!;
        pool.push({
          children: [
            { node: a, length: 0.1 + rng.next() },
            { node: b, length: 0.1 + rng.next() },
          ],
        });
      }
      const truth = pool[0]!;
      const names = Array.from({ length: n }, (_, i) => `t${i}`);
      const td = leafDistances(truth);
      const D = names.map((x) => names.map((y) => td.get(x)!.get(y)!));
      const got = neighbourJoining(names, D);
      assert.deepEqual(splits(got, names), splits(truth, names), `trial ${trial}: splits`);
      const gd = leafDistances(got);
      for (const x of names) for (const y of names) assert.ok(Math.abs(gd.get(x)!.get(y)! - td.get(x)!.get(y)!) < 1e-9, `trial ${trial}: ${x}-${y}`);
    }
  });

  it('draws every leaf, marks the marked ones, and refuses fewer than two taxa', () => {
    const t = neighbourJoining(
      ['en', 'ru', 'de'],
      [
        [0, 3, 1],
        [3, 0, 3],
        [1, 3, 0],
      ],
    );
    const svg = treeSvg(t, { title: 'tree', marked: new Set(['ru']) });
    for (const l of ['en', 'de']) assert.match(svg, new RegExp(`>${l}<`));
    assert.match(svg, />ru \*</);
    assert.throws(() => neighbourJoining(['en'], [[0]]), /two taxa/);
  });
});

describe('token distributions', () => {
  const lt = (lang: string, c: Record<number, number>): LangTokens => ({
    lang,
    counts: new Map(Object.entries(c).map(([k, v]) => [+k, v])),
    total: Object.values(c).reduce((s, x) => s + x, 0),
  });

  it('symmetrised KL with add-alpha smoothing over the union of types, by hand', () => {
    const a = lt('a', { 4: 3, 5: 1 }),
      b = lt('b', { 4: 1, 6: 1 });
    // union {4,5,6}, alpha 1: p = (4,2,1)/7, q = (2,1,2)/5
    const p = [4 / 7, 2 / 7, 1 / 7],
      q = [2 / 5, 1 / 5, 2 / 5];
    const want = p.reduce((s, pi, i) => s + pi * Math.log(pi / q[i]!) + q[i]! * Math.log(q[i]! / pi), 0);
    assert.ok(Math.abs(symmetricKL(a, b, 1) - want) < 1e-12);
    assert.ok(Math.abs(symmetricKL(b, a, 1) - want) < 1e-12, 'symmetric');
    assert.ok(symmetricKL(a, lt('a2', { 4: 6, 5: 2 }), 1e-9) < 1e-8, 'the same distribution at another size: ~0 with little smoothing');
  });

  it('counts tokens, types and types of one language only', () => {
    const use = vocabularyUse([lt('x', { 4: 2, 5: 1, 7: 1 }), lt('y', { 4: 1, 6: 5 }), lt('z', { 5: 1 })]);
    assert.deepEqual(use, [
      { lang: 'x', tokens: 4, types: 3, onlyThisLanguage: 1 },
      { lang: 'y', tokens: 6, types: 2, onlyThisLanguage: 1 },
      { lang: 'z', tokens: 1, types: 1, onlyThisLanguage: 0 },
    ]);
  });
});

describe('xling analyze vocab', () => {
  const dir = mkdtempSync(join(tmpdir(), 'xling-vocab-'));
  const model = join(dir, 'model');
  before(() => {
    tinyDualModel(dir, model);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('writes per-language counts, a symmetric divergence matrix, Newick and SVG; related languages are nearest', () => {
    const out = (f: string) => join(dir, f);
    const r = cli([
      'analyze',
      'vocab',
      '--model',
      model,
      '--data',
      'data/sample/gettext.train.tsv.gz',
      '--sample',
      '2000',
      '--json',
      out('v.json'),
      '--newick',
      out('v.nwk'),
      '--svg',
      out('v.svg'),
    ]);
    assert.equal(r.status, 0, r.stderr);
    const j = JSON.parse(readFileSync(out('v.json'), 'utf8')) as {
      languages: { lang: string; sentences: number; types: number }[];
      symmetric_kl: Record<string, Record<string, number>>;
      newick: string;
    };
    const langs = j.languages.map((l) => l.lang);
    assert.equal(langs.length, 13);
    for (const l of j.languages) assert.ok(l.sentences > 100 && l.sentences <= 2000 && l.types > 0, JSON.stringify(l));
    for (const x of langs)
      for (const y of langs) {
        assert.equal(j.symmetric_kl[x]![y], j.symmetric_kl[y]![x]);
        assert.ok(x === y ? j.symmetric_kl[x]![y] === 0 : j.symmetric_kl[x]![y]! > 0);
      }
    const nearest = (x: string) => langs.filter((y) => y !== x).sort((p, q) => j.symmetric_kl[x]![p]! - j.symmetric_kl[x]![q]!)[0];
    assert.equal(nearest('zh'), 'ja', 'Han characters');
    assert.ok(['es', 'it', 'fr'].includes(nearest('pt_br')!), `pt_br nearest ${nearest('pt_br')}`);
    assert.equal(readFileSync(out('v.nwk'), 'utf8').trim(), j.newick);
    for (const l of langs) assert.ok(j.newick.includes(l));
    assert.match(readFileSync(out('v.svg'), 'utf8'), /^<svg[\s\S]*<\/svg>$/);
    assert.deepEqual(temporariesIn(dir), []);
  });

  it('refuses a missing data file and a collection of one language', () => {
    const r = cli(['analyze', 'vocab', '--model', model, '--data', join(dir, 'nope.tsv')]);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /nope\.tsv/);
    const one = cli(['analyze', 'vocab', '--model', model, '--data', 'data/sample/gettext.train.tsv.gz:en']);
    assert.equal(one.status, 1);
    assert.match(one.stderr, /two or more/);
  });
});

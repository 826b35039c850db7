// How languages share a model's vocabulary (Schwenk, Kiela & Douze 2019, Figure 2): the tokens
// each language uses, those only one language uses, the symmetrised KL divergence between the
// languages' token distributions, and a neighbour-joining tree (Saitou & Nei 1987) over those
// divergences, written as Newick and drawn as an SVG tree with branch lengths to scale.
import { TextTokenizer } from '../text/text-tokenizer.js';
import { Rng } from '../util/rng.js';
import { escapeXml, textWidth } from '../util/svg.js';

export interface LangTokens {
  lang: string;
  counts: Map<number, number>;
  total: number;
}

/** Token counts of each language over up to `sample` sentences (seeded; special tokens left out). */
export function tokenCounts(tok: TextTokenizer, byLang: Map<string, string[]>, sample: number, seed = 1): LangTokens[] {
  return [...byLang]
    .filter(([, s]) => s.length)
    .map(([lang, sents]) => {
      const pick = sents.length > sample ? new Rng(`${seed}:${lang}`).sample(sents.length, sample).map((i) => sents[i]!) : sents;
      const counts = new Map<number, number>();
      let total = 0;
      for (const s of pick)
        for (const t of tok.encode(s)) {
          if (t < 4) continue;
          counts.set(t, (counts.get(t) ?? 0) + 1);
          total++;
        }
      return { lang, counts, total };
    });
}

export interface VocabUse {
  lang: string;
  tokens: number;
  types: number;
  onlyThisLanguage: number;
}

/** Tokens (occurrences), distinct types, and types no other language uses, per language. */
export function vocabularyUse(langs: LangTokens[]): VocabUse[] {
  const users = new Map<number, number>();
  for (const l of langs) for (const t of l.counts.keys()) users.set(t, (users.get(t) ?? 0) + 1);
  return langs.map((l) => ({
    lang: l.lang,
    tokens: l.total,
    types: l.counts.size,
    onlyThisLanguage: [...l.counts.keys()].filter((t) => users.get(t) === 1).length,
  }));
}

/**
 * KL(P‖Q) + KL(Q‖P) of two token distributions, each smoothed by adding `alpha` to the count of
 * every type either language uses (so both are defined on the union).
 */
export function symmetricKL(a: LangTokens, b: LangTokens, alpha: number): number {
  const types = new Set([...a.counts.keys(), ...b.counts.keys()]);
  const za = a.total + alpha * types.size,
    zb = b.total + alpha * types.size;
  let kl = 0;
  for (const t of types) {
    const p = ((a.counts.get(t) ?? 0) + alpha) / za,
      q = ((b.counts.get(t) ?? 0) + alpha) / zb;
    kl += (p - q) * Math.log(p / q); // p log p/q + q log q/p
  }
  return kl;
}

export interface TreeNode {
  name?: string;
  children: { node: TreeNode; length: number }[];
}

/**
 * Neighbour joining over a symmetric distance matrix. The unrooted result is returned rooted at
 * the last join (the tree's shape and branch lengths are NJ's; only the drawing needs a root).
 */
export function neighbourJoining(names: string[], dist: number[][]): TreeNode {
  if (names.length < 2) throw new Error('neighbour joining needs at least two taxa');
  let nodes: TreeNode[] = names.map((n) => ({ name: n, children: [] }));
  let D = dist.map((r) => [...r]);
  while (nodes.length > 2) {
    const n = nodes.length;
    const r = D.map((row) => row.reduce((s, x) => s + x, 0));
    let best = Infinity,
      bi = 0,
      bj = 1;
    for (let i = 0; i < n; i++)
      for (let j = i + 1; j < n; j++) {
        const q = (n - 2) * D[i]![j]! - r[i]! - r[j]!;
        if (q < best - 1e-12) {
          best = q;
          bi = i;
          bj = j;
        }
      }
    const dij = D[bi]![bj]!;
    const li = dij / 2 + (r[bi]! - r[bj]!) / (2 * (n - 2)),
      lj = dij - li;
    const u: TreeNode = {
      children: [
        { node: nodes[bi]!, length: Math.max(0, li) },
        { node: nodes[bj]!, length: Math.max(0, lj) },
      ],
    };
    const keep = nodes.map((_, k) => k).filter((k) => k !== bi && k !== bj);
    const du = keep.map((k) => (D[bi]![k]! + D[bj]![k]! - dij) / 2);
    D = [...keep.map((k, a) => [...keep.map((m) => D[k]![m]!), du[a]!]), [...du, 0]];
    nodes = [...keep.map((k) => nodes[k]!), u];
  }
  return {
    children: [
      { node: nodes[0]!, length: D[0]![1]! / 2 },
      { node: nodes[1]!, length: D[0]![1]! / 2 },
    ],
  };
}

export function toNewick(t: TreeNode, digits = 5): string {
  const rec = (n: TreeNode): string =>
    n.children.length ? `(${n.children.map((c) => `${rec(c.node)}:${+c.length.toFixed(digits)}`).join(',')})` : (n.name ?? '').replace(/[(),:;\s]/g, '_');
  return `${rec(t)};`;
}

/** A rectangular tree drawing: x = distance from the root (to scale), leaves one per row; marked leaves in colour with an asterisk. */
export function treeSvg(t: TreeNode, o: { title?: string; marked?: Set<string>; width?: number } = {}): string {
  const leaves: { node: TreeNode; depth: number }[] = [];
  const pos = new Map<TreeNode, { x: number; y: number }>();
  const walk = (n: TreeNode, depth: number): number => {
    if (!n.children.length) {
      const y = leaves.length;
      leaves.push({ node: n, depth });
      pos.set(n, { x: depth, y });
      return y;
    }
    const ys = n.children.map((c) => walk(c.node, depth + c.length));
    const y = (Math.min(...ys) + Math.max(...ys)) / 2;
    pos.set(n, { x: depth, y });
    return y;
  };
  walk(t, 0);
  const maxX = Math.max(...leaves.map((l) => l.depth)) || 1;
  const width = Math.max(o.width ?? 760, o.title ? textWidth(o.title, 15) + 40 : 0),
    row = 18,
    top = o.title ? 44 : 16,
    left = 20,
    right = width - 140;
  const height = top + leaves.length * row + 40;
  const sx = (x: number) => left + (x / maxX) * (right - left),
    sy = (y: number) => top + y * row + row / 2;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
  ];
  if (o.title) out.push(`<text x="${width / 2}" y="24" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(o.title)}</text>`);
  const draw = (n: TreeNode) => {
    const p = pos.get(n)!;
    if (n.children.length) {
      const ys = n.children.map((c) => pos.get(c.node)!.y);
      out.push(
        `<line x1="${sx(p.x).toFixed(1)}" x2="${sx(p.x).toFixed(1)}" y1="${sy(Math.min(...ys)).toFixed(1)}" y2="${sy(Math.max(...ys)).toFixed(1)}" stroke="#333"/>`,
      );
      for (const c of n.children) {
        const q = pos.get(c.node)!;
        out.push(`<line x1="${sx(p.x).toFixed(1)}" x2="${sx(q.x).toFixed(1)}" y1="${sy(q.y).toFixed(1)}" y2="${sy(q.y).toFixed(1)}" stroke="#333"/>`);
        draw(c.node);
      }
    } else {
      const mark = o.marked?.has(n.name ?? '');
      out.push(
        `<text x="${(sx(p.x) + 5).toFixed(1)}" y="${(sy(p.y) + 4).toFixed(1)}"${mark ? ' fill="#c0392b" font-weight="bold"' : ''}>${escapeXml(n.name ?? '')}${mark ? ' *' : ''}</text>`,
      );
    }
  };
  draw(t);
  // scale bar: a tenth of the tree's depth
  const bar = +(maxX / 5).toPrecision(1);
  out.push(
    `<line x1="${left}" x2="${(left + (bar / maxX) * (right - left)).toFixed(1)}" y1="${height - 16}" y2="${height - 16}" stroke="#333" stroke-width="2"/><text x="${left}" y="${height - 22}" font-size="11">${bar}</text>`,
  );
  if (o.marked?.size) out.push(`<text x="${width - 10}" y="${height - 12}" text-anchor="end" font-size="11" fill="#c0392b">* romanised</text>`);
  out.push('</svg>');
  return out.join('\n');
}

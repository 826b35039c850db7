// A unigram-LM subword learner (SentencePiece's algorithm, simplified) and its Viterbi
// segmentation. Learning: seed pieces = frequent substrings of the words, EM over each word's
// lattice of pieces (Bayesian M-step as SentencePiece), then repeatedly drop the pieces whose
// removal costs the least likelihood until the vocabulary has the requested size. Encoding is
// the same Viterbi as HF's Unigram model, so HF `tokenizers` loads the result from
// tokenizer.json and segments identically.

export interface UnigramModel {
  /** Pieces (after the special tokens), with their log-probabilities. */
  pieces: string[];
  scores: number[];
}

export interface UnigramLearnOptions {
  vocabSize: number;
  specials: number;
  characterCoverage?: number;
  /** Longest piece in characters (default 16, as SentencePiece). */
  maxPieceLength?: number;
  /** Seed vocabulary size before pruning (default 20 × the vocabulary size). */
  seedSize?: number;
  /** Share of pieces kept by each pruning round (default 0.75). */
  shrink?: number;
  log?: (msg: string) => void;
}

/** HF's penalty for an unknown character: the lowest piece score minus 10. */
export const UNK_PENALTY = 10;

interface TrieNode {
  next: Map<number, TrieNode>;
  id: number;
}

/** A trie over code points; ids are piece indices. */
export class PieceTrie {
  private readonly root: TrieNode = { next: new Map(), id: -1 };
  constructor(pieces: readonly string[], from = 0) {
    pieces.forEach((p, i) => {
      if (i < from) return;
      let n = this.root;
      for (const ch of p) {
        const c = ch.codePointAt(0)!;
        let m = n.next.get(c);
        if (!m) n.next.set(c, (m = { next: new Map(), id: -1 }));
        n = m;
      }
      n.id = i;
    });
  }
  /** Calls fn(end, id) for every piece that starts at `start` in cps. */
  prefixes(cps: ArrayLike<number>, start: number, fn: (end: number, id: number) => void): void {
    let n: TrieNode | undefined = this.root;
    for (let j = start; j < cps.length; j++) {
      n = n.next.get(cps[j]!);
      if (!n) return;
      if (n.id >= 0) fn(j + 1, n.id);
    }
  }
}

/**
 * Best segmentation of one word (code points) under `scores`, as HF's Unigram does it: pieces
 * by position, ties keep the earlier candidate; a character no piece covers becomes `unkId`
 * with score `unkScore`. Returns piece ids (unkId for unknowns, not fused).
 */
export function viterbi(cps: ArrayLike<number>, trie: PieceTrie, scores: ArrayLike<number>, unkId: number, unkScore: number, skipId = -1): number[] {
  const n = cps.length;
  const best = new Float64Array(n + 1).fill(-Infinity);
  const from = new Int32Array(n + 1).fill(-1);
  const via = new Int32Array(n + 1).fill(-1);
  best[0] = 0;
  for (let i = 0; i < n; i++) {
    if (best[i] === -Infinity) continue;
    const bi = best[i]!;
    let single = false;
    trie.prefixes(cps, i, (j, id) => {
      if (id === skipId) return;
      if (j === i + 1) single = true;
      const s = bi + scores[id]!;
      if (from[j] < 0 || s > best[j]!) {
        best[j] = s;
        from[j] = i;
        via[j] = id;
      }
    });
    if (!single) {
      const s = bi + unkScore;
      if (from[i + 1] < 0 || s > best[i + 1]!) {
        best[i + 1] = s;
        from[i + 1] = i;
        via[i + 1] = unkId;
      }
    }
  }
  const out: number[] = [];
  for (let j = n; j > 0; j = from[j]!) out.push(via[j]!);
  return out.reverse();
}

function logAddExp(a: number, b: number): number {
  if (a === -Infinity) return b;
  if (b === -Infinity) return a;
  return a > b ? a + Math.log1p(Math.exp(b - a)) : b + Math.log1p(Math.exp(a - b));
}

/** Digamma by recurrence + asymptotic series (SentencePiece's M-step uses it). */
export function digamma(x: number): number {
  let r = 0;
  while (x < 7) {
    r -= 1 / x;
    x += 1;
  }
  x -= 0.5;
  const xx = 1 / x,
    xx2 = xx * xx,
    xx4 = xx2 * xx2;
  return r + Math.log(x) + xx2 / 24 - (7 / 960) * xx4 + (31 / 8064) * xx4 * xx2 - (127 / 30720) * xx4 * xx4;
}

/** Words as code-point runs (with their counts), and the pieces learnt so far with their log-probabilities. */
interface Segments {
  segs: Int32Array[];
  freq: number[];
}
interface PieceSet {
  pieces: string[];
  scores: number[];
}

const isChar = (p: string) => [...p].length === 1;

/** The alphabet: the most frequent characters covering `coverage` of all occurrences (always kept), with every character's count. */
function characterAlphabet(wordCounts: Map<string, number>, coverage: number): { chars: Map<number, number>; alphabet: Set<number> } {
  const chars = new Map<number, number>();
  let totalChars = 0;
  for (const [w, c] of wordCounts)
    for (const ch of w) {
      const cp = ch.codePointAt(0)!;
      chars.set(cp, (chars.get(cp) ?? 0) + c);
      totalChars += c;
    }
  const byFreq = [...chars].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  const alphabet = new Set<number>();
  let covered = 0;
  for (const [cp, c] of byFreq) {
    if (alphabet.size && covered / totalChars >= coverage) break;
    alphabet.add(cp);
    covered += c;
  }
  alphabet.add(0x2581);
  return { chars, alphabet };
}

/** Words as code-point runs, split at characters outside the alphabet (those become <unk>). */
function segmentWords(wordCounts: Map<string, number>, alphabet: Set<number>): Segments {
  const segs: Int32Array[] = [];
  const freq: number[] = [];
  for (const [w, c] of wordCounts) {
    let run: number[] = [];
    const flush = () => {
      if (run.length) {
        segs.push(Int32Array.from(run));
        freq.push(c);
      }
      run = [];
    };
    for (const ch of w) {
      const cp = ch.codePointAt(0)!;
      if (alphabet.has(cp)) run.push(cp);
      else flush();
    }
    flush();
  }
  return { segs, freq };
}

/** Seeds: the `count` best substrings of 2..maxLen characters seen twice or more, ranked by frequency × length. */
function seedPieces(words: Segments, maxLen: number, count: number): [string, number, number][] {
  const sub = new Map<string, number>();
  for (let s = 0; s < words.segs.length; s++) {
    const cps = words.segs[s]!,
      f = words.freq[s]!;
    const str = Array.from(cps, (c) => String.fromCodePoint(c));
    for (let i = 0; i < cps.length; i++) {
      let piece = str[i]!;
      for (let j = i + 1; j < cps.length && j - i < maxLen; j++) {
        piece += str[j]!;
        sub.set(piece, (sub.get(piece) ?? 0) + f);
      }
    }
  }
  const ranked: [string, number, number][] = [];
  for (const [p, c] of sub) if (c >= 2) ranked.push([p, c, c * [...p].length]);
  return ranked.sort((a, b) => b[2] - a[2] || (a[0] < b[0] ? -1 : 1)).slice(0, Math.max(0, count));
}

/** Adds one segment's expected piece counts (forward-backward over its lattice) to `expected`; returns its log-likelihood. */
function expectSegment(cps: Int32Array, f: number, trie: PieceTrie, scores: number[], expected: Float64Array): number {
  const n = cps.length;
  const alpha = new Float64Array(n + 1).fill(-Infinity);
  const beta = new Float64Array(n + 1).fill(-Infinity);
  alpha[0] = 0;
  const edges: number[] = []; // (start, end, id) triples
  for (let i = 0; i < n; i++) {
    trie.prefixes(cps, i, (j, id) => {
      edges.push(i, j, id);
    });
  }
  for (let e = 0; e < edges.length; e += 3) {
    const i = edges[e]!,
      j = edges[e + 1]!,
      id = edges[e + 2]!;
    alpha[j] = logAddExp(alpha[j]!, alpha[i]! + scores[id]!);
  }
  beta[n] = 0;
  for (let e = edges.length - 3; e >= 0; e -= 3) {
    const i = edges[e]!,
      j = edges[e + 1]!,
      id = edges[e + 2]!;
    beta[i] = logAddExp(beta[i]!, beta[j]! + scores[id]!);
  }
  const z = alpha[n]!;
  for (let e = 0; e < edges.length; e += 3) {
    const i = edges[e]!,
      j = edges[e + 1]!,
      id = edges[e + 2]!;
    expected[id] += f * Math.exp(alpha[i]! + scores[id]! + beta[j]! - z);
  }
  return z;
}

/** Keeps the pieces (and scores) at `idx`. */
function keepPieces(v: PieceSet, idx: number[]): void {
  const { pieces, scores } = v;
  v.pieces = idx.map((k) => pieces[k]!);
  v.scores = idx.map((k) => scores[k]!);
}

/** One EM step; returns the objective (negative log-likelihood) before it. */
function emStep(v: PieceSet, words: Segments): number {
  const trie = new PieceTrie(v.pieces);
  const expected = new Float64Array(v.pieces.length);
  let objective = 0;
  for (let s = 0; s < words.segs.length; s++) objective -= words.freq[s]! * expectSegment(words.segs[s]!, words.freq[s]!, trie, v.scores, expected);
  // M-step: drop rare multi-character pieces; Bayesian (digamma) log-probabilities.
  const keep: number[] = [];
  for (let k = 0; k < v.pieces.length; k++) if (isChar(v.pieces[k]!) || expected[k]! >= 0.5) keep.push(k);
  const sum = keep.reduce((a, k) => a + Math.max(expected[k]!, 0.5), 0);
  const lsum = digamma(sum);
  v.pieces = keep.map((k) => v.pieces[k]!);
  v.scores = keep.map((k) => digamma(Math.max(expected[k]!, 0.5)) - lsum);
  return objective;
}

/** Keeps the characters and the `target` − characters pieces whose removal would cost the likelihood most. */
function prunePieces(v: PieceSet, words: Segments, target: number): void {
  const { pieces, scores } = v;
  const trie = new PieceTrie(pieces);
  const freq = new Float64Array(pieces.length);
  for (let s = 0; s < words.segs.length; s++) for (const id of viterbi(words.segs[s]!, trie, scores, -1, -1e9)) freq[id] += words.freq[s]!;
  const vsum = freq.reduce((a, b) => a + b, 0);
  const loss: [number, number][] = [];
  for (let k = 0; k < pieces.length; k++) {
    if (isChar(pieces[k]!)) continue;
    if (freq[k] === 0) {
      loss.push([k, -Infinity]);
      continue;
    }
    // the piece's best segmentation without itself: where its occurrences would go
    const cps = Int32Array.from([...pieces[k]!], (c) => c.codePointAt(0)!);
    const alt = viterbi(cps, trie, scores, -1, -1e9, k);
    const fk = freq[k]!;
    const newSum = vsum + fk * (alt.length - 1);
    let lpAlt = 0;
    for (const a of alt) lpAlt += Math.log(freq[a]! + fk) - Math.log(newSum);
    loss.push([k, fk * (Math.log(fk) - Math.log(vsum) - lpAlt)]);
  }
  loss.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  const nChars = pieces.filter(isChar).length;
  const keep = new Set(loss.slice(0, Math.max(0, target - nChars)).map(([k]) => k));
  keepPieces(
    v,
    pieces.map((_, k) => k).filter((k) => isChar(pieces[k]!) || keep.has(k)),
  );
}

/** Final size: every character plus the best-scoring pieces up to `budget`. */
function cutToBudget(v: PieceSet, budget: number): void {
  const { pieces, scores } = v;
  if (pieces.length <= budget) return;
  const order = pieces
    .map((_, k) => k)
    .filter((k) => !isChar(pieces[k]!))
    .sort((a, b) => scores[b]! - scores[a]! || a - b);
  const keep = new Set(order.slice(0, budget - pieces.filter(isChar).length));
  keepPieces(
    v,
    pieces.map((_, k) => k).filter((k) => isChar(pieces[k]!) || keep.has(k)),
  );
}

/** Learns unigram pieces and scores from word counts (words start with '▁'). */
export function learnUnigram(wordCounts: Map<string, number>, o: UnigramLearnOptions): UnigramModel {
  const budget = o.vocabSize - o.specials;
  const log = o.log ?? (() => {});
  const { chars, alphabet } = characterAlphabet(wordCounts, o.characterCoverage ?? 0.9995);
  if (alphabet.size > budget) throw new Error(`unigram: vocabulary size ${o.vocabSize} is smaller than the alphabet (${alphabet.size} characters)`);
  const words = segmentWords(wordCounts, alphabet);
  const seeds = seedPieces(words, o.maxPieceLength ?? 16, (o.seedSize ?? budget * 20) - alphabet.size);
  const charList = [...alphabet].sort((a, b) => (chars.get(b) ?? 0) - (chars.get(a) ?? 0) || a - b);
  const freqs = [...charList.map((c) => chars.get(c) ?? 1), ...seeds.map(([, c]) => c)];
  const total = freqs.reduce((a, b) => a + b, 0);
  const v: PieceSet = {
    pieces: [...charList.map((c) => String.fromCodePoint(c)), ...seeds.map(([p]) => p)],
    scores: freqs.map((f) => Math.log(f) - Math.log(total)),
  };
  log(`unigram: ${words.segs.length} word pieces, ${alphabet.size} characters, ${v.pieces.length} seed pieces`);

  const desired = Math.ceil(budget * 1.1);
  for (let round = 0; ; round++) {
    const o1 = emStep(v, words),
      o2 = emStep(v, words);
    log(`unigram: round ${round}: ${v.pieces.length} pieces, objective ${(o2 / total).toFixed(4)} (was ${(o1 / total).toFixed(4)})`);
    if (v.pieces.length <= desired) break;
    prunePieces(v, words, Math.max(desired, Math.floor(v.pieces.length * (o.shrink ?? 0.75))));
  }
  // two more EM steps on the final set
  cutToBudget(v, budget);
  emStep(v, words);
  emStep(v, words);
  // Pieces in descending score order (characters dropped by the M-step are restored at the end).
  for (const cp of charList) {
    const ch = String.fromCodePoint(cp);
    if (!v.pieces.includes(ch)) {
      v.pieces.push(ch);
      v.scores.push(Math.min(...v.scores) - 1);
    }
  }
  const order = v.pieces.map((_, k) => k).sort((a, b) => v.scores[b]! - v.scores[a]! || a - b);
  return { pieces: order.map((k) => v.pieces[k]!), scores: order.map((k) => v.scores[k]!) };
}

// SentencePiece `.model` files read directly (no Python, no C++): the ModelProto protobuf
// (src/sentencepiece_model.proto: pieces with scores and types, trainer_spec's model type and
// byte_fallback, normalizer_spec's precompiled character map and whitespace options) and the
// encoder of sentencepiece 0.1.97 (Debian's python3-sentencepiece), step for step:
// - normalizer.cc: user-defined symbols kept whole, else the longest match of the precompiled
//   charsmap (a Darts double-array trie over UTF-8 bytes → replacement strings), else one UTF-8
//   character (a malformed byte → U+FFFD); leading/trailing/repeated whitespace removed; a dummy
//   prefix "▁"; spaces escaped as "▁";
// - unigram_model.cc EncodeOptimized: Viterbi over UTF-8 positions with float32 path scores,
//   user-defined pieces scored length × max score − 0.1, an unknown character at min score − 10;
// - bpe_model.cc: merges of the highest-scoring adjacent pair (ties: leftmost), unused pieces split
//   back;
// - sentencepiece_processor.cc: unknown pieces as UTF-8 byte pieces <0xXX> with byte_fallback,
//   else runs of unknown pieces merged into one.

export type PieceType = 'normal' | 'unknown' | 'control' | 'user_defined' | 'unused' | 'byte';
const PIECE_TYPES: Record<number, PieceType> = { 1: 'normal', 2: 'unknown', 3: 'control', 4: 'user_defined', 5: 'unused', 6: 'byte' };

export interface SentencePieceModelProto {
  pieces: { piece: string; score: number; type: PieceType }[];
  modelType: 'unigram' | 'bpe' | 'word' | 'char';
  byteFallback: boolean;
  treatWhitespaceAsSuffix: boolean;
  normalizer: { name: string; precompiledCharsmap: Uint8Array; addDummyPrefix: boolean; removeExtraWhitespaces: boolean; escapeWhitespaces: boolean };
}

/** A minimal protobuf wire-format reader (varints, 32/64-bit, length-delimited). */
class Wire {
  p = 0;
  constructor(
    readonly b: Uint8Array,
    readonly what: string,
  ) {}
  get done(): boolean {
    return this.p >= this.b.length;
  }
  fail(m: string): never {
    throw new Error(`${this.what}: ${m} (at byte ${this.p}; not a SentencePiece model, or corrupt)`);
  }
  varint(): number {
    let v = 0,
      mul = 1;
    for (let i = 0; i < 10; i++) {
      if (this.p >= this.b.length) this.fail('truncated varint');
      const c = this.b[this.p++]!;
      v += (c & 0x7f) * mul;
      if (!(c & 0x80)) return v;
      mul *= 128;
    }
    return this.fail('varint too long');
  }
  bytes(): Uint8Array {
    const n = this.varint();
    if (this.p + n > this.b.length) this.fail('length-delimited field beyond the end');
    const r = this.b.subarray(this.p, this.p + n);
    this.p += n;
    return r;
  }
  float(): number {
    if (this.p + 4 > this.b.length) this.fail('truncated float');
    const v = new DataView(this.b.buffer, this.b.byteOffset + this.p, 4).getFloat32(0, true);
    this.p += 4;
    return v;
  }
  /** Reads fields until the end, calling f(field, wireType); unhandled fields are skipped. */
  fields(f: (field: number, wt: number) => boolean): void {
    while (!this.done) {
      const key = this.varint();
      const field = Math.floor(key / 8),
        wt = key & 7;
      if (field === 0) this.fail('field number 0');
      if (f(field, wt)) continue;
      if (wt === 0) this.varint();
      else if (wt === 1) {
        this.p += 8;
        if (this.p > this.b.length) this.fail('truncated');
      } else if (wt === 2) this.bytes();
      else if (wt === 5) {
        this.p += 4;
        if (this.p > this.b.length) this.fail('truncated');
      } else this.fail(`unsupported wire type ${wt}`);
    }
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const utf8enc = new TextEncoder();

/** Parses a SentencePiece ModelProto. */
export function parseSentencePieceModel(buf: Uint8Array, what = 'sentencepiece model'): SentencePieceModelProto {
  const m: SentencePieceModelProto = {
    pieces: [],
    modelType: 'unigram',
    byteFallback: false,
    treatWhitespaceAsSuffix: false,
    normalizer: { name: '', precompiledCharsmap: new Uint8Array(0), addDummyPrefix: true, removeExtraWhitespaces: true, escapeWhitespaces: true },
  };
  const str = (w: Wire, b: Uint8Array) => {
    try {
      return utf8.decode(b);
    } catch {
      return w.fail('invalid UTF-8');
    }
  };
  const top = new Wire(buf, what);
  top.fields((field, wt) => {
    if (field === 1 && wt === 2) {
      const w = new Wire(top.bytes(), what);
      const piece = { piece: '', score: 0, type: 'normal' as PieceType };
      w.fields((f, t) => {
        if (f === 1 && t === 2) {
          piece.piece = str(w, w.bytes());
          return true;
        }
        if (f === 2 && t === 5) {
          piece.score = w.float();
          return true;
        }
        if (f === 3 && t === 0) {
          const v = w.varint();
          piece.type = PIECE_TYPES[v] ?? w.fail(`unknown piece type ${v}`);
          return true;
        }
        return false;
      });
      m.pieces.push(piece);
      return true;
    }
    if (field === 2 && wt === 2) {
      const w = new Wire(top.bytes(), what);
      w.fields((f, t) => {
        if (f === 3 && t === 0) {
          const v = w.varint();
          m.modelType = ({ 1: 'unigram', 2: 'bpe', 3: 'word', 4: 'char' } as const)[v as 1] ?? w.fail(`unknown model type ${v}`);
          return true;
        }
        if (f === 35 && t === 0) {
          m.byteFallback = w.varint() !== 0;
          return true;
        }
        if (f === 24 && t === 0) {
          m.treatWhitespaceAsSuffix = w.varint() !== 0;
          return true;
        }
        return false;
      });
      return true;
    }
    if (field === 3 && wt === 2) {
      const w = new Wire(top.bytes(), what);
      const n = m.normalizer;
      w.fields((f, t) => {
        if (f === 1 && t === 2) {
          n.name = str(w, w.bytes());
          return true;
        }
        if (f === 2 && t === 2) {
          n.precompiledCharsmap = w.bytes().slice();
          return true;
        }
        if (f === 3 && t === 0) {
          n.addDummyPrefix = w.varint() !== 0;
          return true;
        }
        if (f === 4 && t === 0) {
          n.removeExtraWhitespaces = w.varint() !== 0;
          return true;
        }
        if (f === 5 && t === 0) {
          n.escapeWhitespaces = w.varint() !== 0;
          return true;
        }
        return false;
      });
      return true;
    }
    return false;
  });
  if (m.pieces.length === 0) throw new Error(`${what}: no pieces (not a SentencePiece model)`);
  return m;
}

/** A byte trie: longest/all prefix matches over UTF-8 bytes, values in increasing length. */
class ByteTrie {
  private readonly next: Map<number, number>[] = [new Map()];
  private readonly value: number[] = [-1];
  insert(key: Uint8Array, v: number): void {
    let node = 0;
    for (const c of key) {
      let n = this.next[node]!.get(c);
      if (n === undefined) {
        n = this.next.length;
        this.next.push(new Map());
        this.value.push(-1);
        this.next[node]!.set(c, n);
      }
      node = n;
    }
    this.value[node] = v;
  }
  /** Calls f(value, length) for each key that is a prefix of s[start..end), shortest first. */
  prefixes(s: Uint8Array, start: number, end: number, f: (v: number, len: number) => void): void {
    let node = 0;
    for (let i = start; i < end; i++) {
      const n = this.next[node]!.get(s[i]!);
      if (n === undefined) return;
      node = n;
      if (this.value[node]! >= 0) f(this.value[node]!, i + 1 - start);
    }
  }
}

/** The precompiled charsmap: uint32 trie size, a Darts double array, NUL-terminated replacements. */
class CharsMap {
  private readonly units: Uint32Array;
  private readonly normalized: Uint8Array;
  constructor(blob: Uint8Array, what: string) {
    if (blob.length <= 4) throw new Error(`${what}: normalisation rule blob is broken`);
    const dv = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
    const trieSize = dv.getUint32(0, true);
    if (trieSize >= blob.length || trieSize % 4) throw new Error(`${what}: normalisation trie exceeds the blob`);
    this.units = new Uint32Array(trieSize / 4);
    for (let i = 0; i < this.units.length; i++) this.units[i] = dv.getUint32(4 + 4 * i, true);
    this.normalized = blob.subarray(4 + trieSize);
  }
  /** The longest rule at s[start..): [replacement bytes, consumed length] or null. */
  longest(s: Uint8Array, start: number): [Uint8Array, number] | null {
    const a = this.units;
    if (a.length === 0) return null;
    let pos = 0;
    let unit = a[0]!;
    pos ^= offset(unit);
    let best = 0,
      bestValue = 0,
      count = 0;
    for (let i = start; i < s.length; i++) {
      const c = s[i]!;
      pos ^= c;
      if (pos >= a.length) break;
      unit = a[pos]!;
      if ((unit & ((1 << 31) | 0xff)) >>> 0 !== c) break;
      pos ^= offset(unit);
      if ((unit >>> 8) & 1) {
        if (pos >= a.length) break;
        if (count++ < 32) {
          best = i + 1 - start;
          bestValue = a[pos]! & 0x7fffffff;
        }
      }
    }
    if (best === 0) return null;
    if (bestValue >= this.normalized.length) return null;
    let e = bestValue;
    while (e < this.normalized.length && this.normalized[e] !== 0) e++;
    return [this.normalized.subarray(bestValue, e), best];
  }
}
function offset(unit: number): number {
  return (unit >>> 10) << ((unit & (1 << 9)) >>> 6);
}

/** Length of the UTF-8 character at s[i] when valid (IsValidDecodeUTF8), else 0. */
function validCharLen(s: Uint8Array, i: number): number {
  const c = s[i]!;
  if (c < 0x80) return 1;
  const cont = (k: number) => i + k < s.length && (s[i + k]! & 0xc0) === 0x80;
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    if (!cont(1) || !cont(2)) return 0;
    const cp = ((c & 0x0f) << 12) | ((s[i + 1]! & 0x3f) << 6) | (s[i + 2]! & 0x3f);
    return cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff) ? 0 : 3;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    const cp = ((c & 0x07) << 18) | ((s[i + 1]! & 0x3f) << 12) | ((s[i + 2]! & 0x3f) << 6) | (s[i + 3]! & 0x3f);
    return cp < 0x10000 || cp > 0x10ffff ? 0 : 4;
  }
  return 0;
}
/** OneCharLen: the length a UTF-8 lead byte announces. */
function oneCharLen(c: number): number {
  return [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4][c >> 4]!;
}

const SPACE = utf8enc.encode('\u2581');
const REPLACEMENT = utf8enc.encode('\ufffd');

export interface SentencePieceEncoding {
  ids: number[];
  pieces: string[];
}

export class SentencePieceProcessor {
  readonly proto: SentencePieceModelProto;
  private readonly pieceIds = new Map<string, number>(); // normal, user-defined, unused
  private readonly reserved = new Map<string, number>(); // control, unknown, byte
  private readonly trie = new ByteTrie();
  private readonly userTrie: ByteTrie | null;
  private readonly charsmap: CharsMap | null;
  readonly unkId: number;
  // as unigram_model.cc: FLT_MAX and FLT_MIN (the smallest positive float, so max ≥ 1.2e-38)
  private minScore = 3.4028234663852886e38;
  private maxScore = 1.1754943508222875e-38;
  private readonly scores: Float32Array;
  private readonly types: PieceType[];

  constructor(
    buf: Uint8Array,
    readonly what = 'sentencepiece model',
  ) {
    this.proto = parseSentencePieceModel(buf, what);
    const m = this.proto;
    let unk = -1;
    let user = false;
    this.scores = Float32Array.from(m.pieces, (p) => p.score);
    this.types = m.pieces.map((p) => p.type);
    m.pieces.forEach((p, i) => {
      if (!p.piece) throw new Error(`${what}: piece ${i} is empty`);
      const normal = p.type === 'normal' || p.type === 'user_defined' || p.type === 'unused';
      const map = normal ? this.pieceIds : this.reserved;
      if (map.has(p.piece)) throw new Error(`${what}: piece ${JSON.stringify(p.piece)} is defined twice`);
      map.set(p.piece, i);
      if (normal) this.trie.insert(utf8enc.encode(p.piece), i);
      if (p.type === 'user_defined') user = true;
      if (p.type === 'unknown') {
        if (unk >= 0) throw new Error(`${what}: unk is defined twice`);
        unk = i;
      }
      if (p.type === 'byte' && !m.byteFallback) throw new Error(`${what}: byte piece ${p.piece} although byte_fallback is false`);
      if (p.type === 'normal') {
        this.minScore = Math.min(this.minScore, p.score);
        this.maxScore = Math.max(this.maxScore, p.score);
      }
    });
    if (unk < 0) throw new Error(`${what}: no unknown piece`);
    this.unkId = unk;
    if (m.byteFallback) for (let b = 0; b < 256; b++) if (!this.reserved.has(bytePiece(b))) throw new Error(`${what}: byte_fallback without 256 byte pieces`);
    this.userTrie = user ? new ByteTrie() : null;
    if (this.userTrie)
      m.pieces.forEach((p, i) => {
        if (p.type === 'user_defined') this.userTrie!.insert(utf8enc.encode(p.piece), i);
      });
    this.charsmap = m.normalizer.precompiledCharsmap.length ? new CharsMap(m.normalizer.precompiledCharsmap, what) : null;
  }

  get vocabSize(): number {
    return this.proto.pieces.length;
  }
  idToPiece(id: number): string {
    return this.proto.pieces[id]?.piece ?? '';
  }
  /** PieceToId: reserved pieces, then normal ones, else the unknown id. */
  pieceToId(piece: string): number {
    return this.reserved.get(piece) ?? this.pieceIds.get(piece) ?? this.unkId;
  }

  /** The user-defined symbol at s[i] (longest), or 0. */
  private userMatch(s: Uint8Array, i: number): number {
    if (!this.userTrie) return 0;
    let len = 0;
    this.userTrie.prefixes(s, i, s.length, (_v, l) => {
      len = Math.max(len, l);
    });
    return len;
  }

  /** Normalizer::Normalize: the normalised UTF-8 bytes. */
  normalize(text: string): Uint8Array {
    const input = utf8enc.encode(text);
    const n = this.proto.normalizer;
    const out: number[] = [];
    const prefix = (i: number): [Uint8Array, number] => {
      const u = this.userMatch(input, i);
      if (u) return [input.subarray(i, i + u), u];
      const r = this.charsmap?.longest(input, i);
      if (r) return r;
      const len = validCharLen(input, i);
      return len ? [input.subarray(i, i + len), len] : [REPLACEMENT, 1];
    };
    let i = 0;
    if (n.removeExtraWhitespaces) {
      while (i < input.length) {
        const [r, len] = prefix(i);
        if (!(r.length === 1 && r[0] === 0x20)) break;
        i += len;
      }
    }
    if (i >= input.length) return new Uint8Array(0);
    const addWs = () => {
      if (n.escapeWhitespaces) out.push(...SPACE);
      else out.push(0x20);
    };
    if (!this.proto.treatWhitespaceAsSuffix && n.addDummyPrefix) addWs();
    let prevSpace = n.removeExtraWhitespaces;
    while (i < input.length) {
      const [r, len] = prefix(i);
      let k = 0;
      while (prevSpace && k < r.length && r[k] === 0x20) k++;
      if (k < r.length) {
        for (; k < r.length; k++) {
          if (n.escapeWhitespaces && r[k] === 0x20) out.push(...SPACE);
          else out.push(r[k]!);
        }
        prevSpace = r[r.length - 1] === 0x20;
      }
      i += len;
      if (!n.removeExtraWhitespaces) prevSpace = false;
    }
    if (n.removeExtraWhitespaces) {
      const sp = n.escapeWhitespaces ? SPACE : Uint8Array.of(0x20);
      while (out.length >= sp.length && sp.every((b, j) => out[out.length - sp.length + j] === b)) out.length -= sp.length;
    }
    if (this.proto.treatWhitespaceAsSuffix && n.addDummyPrefix) addWs();
    return Uint8Array.from(out);
  }

  /** Unigram Viterbi (EncodeOptimized): [start, end, id] pieces over the normalised bytes. */
  private encodeUnigram(s: Uint8Array): [number, number, number][] {
    const size = s.length;
    if (!size) return [];
    const unkScore = Math.fround(this.minScore - 10);
    const bestScore = new Float32Array(size + 1);
    const startsAt = new Int32Array(size + 1).fill(-1);
    const ids = new Int32Array(size + 1).fill(-1);
    let start = 0;
    while (start < size) {
      const till = bestScore[start]!;
      let single = false;
      const mblen = Math.min(oneCharLen(s[start]!), size - start);
      this.trie.prefixes(s, start, size, (id, length) => {
        const t = this.types[id]!;
        if (t === 'unused') return;
        const end = start + length;
        // as in C++: the piece score is a double (the ternary's common type), so the candidate is
        // summed and compared in double precision and stored as float
        const cand = t === 'user_defined' ? Math.fround(length * this.maxScore) - 0.1 + till : this.scores[id]! + till;
        if (startsAt[end] === -1 || cand > bestScore[end]!) {
          bestScore[end] = cand;
          startsAt[end] = start;
          ids[end] = id;
        }
        if (!single && length === mblen) single = true;
      });
      if (!single) {
        const end = start + mblen;
        const cand = Math.fround(unkScore + till);
        if (startsAt[end] === -1 || cand > bestScore[end]!) {
          bestScore[end] = cand;
          startsAt[end] = start;
          ids[end] = this.unkId;
        }
      }
      start += mblen;
    }
    const res: [number, number, number][] = [];
    let end = size;
    while (end > 0) {
      const st = startsAt[end]!;
      if (st < 0) throw new Error(`${this.what}: no segmentation`);
      res.push([st, end, ids[end]!]);
      end = st;
    }
    return res.reverse();
  }

  /** BPE (bpe_model.cc Encode without dropout). */
  private encodeBpe(s: Uint8Array): [number, number, number][] {
    const syms: { start: number; len: number; prev: number; next: number; freeze: boolean }[] = [];
    let i = 0;
    while (i < s.length) {
      const u = this.userMatch(s, i);
      const len = u || Math.min(s.length - i, oneCharLen(s[i]!));
      syms.push({ start: i, len, prev: syms.length - 1, next: i + len < s.length ? syms.length + 1 : -1, freeze: u > 0 });
      i += len;
    }
    if (!syms.length) return [];
    const dec = new TextDecoder('utf-8');
    const key = (a: number, len: number) => dec.decode(s.subarray(a, a + len));
    // agenda: a binary max-heap on (score, -left)
    type Pair = { left: number; right: number; score: number; size: number };
    const heap: Pair[] = [];
    const better = (a: Pair, b: Pair) => a.score > b.score || (a.score === b.score && a.left < b.left);
    const push = (x: Pair) => {
      heap.push(x);
      let k = heap.length - 1;
      while (k > 0) {
        const up = (k - 1) >> 1;
        if (!better(heap[k]!, heap[up]!)) break;
        [heap[k], heap[up]] = [heap[up]!, heap[k]!];
        k = up;
      }
    };
    const popTop = (): Pair => {
      const top = heap[0]!,
        last = heap.pop()!;
      if (heap.length) {
        heap[0] = last;
        let k = 0;
        for (;;) {
          const l = 2 * k + 1,
            r = l + 1;
          let m = k;
          if (l < heap.length && better(heap[l]!, heap[m]!)) m = l;
          if (r < heap.length && better(heap[r]!, heap[m]!)) m = r;
          if (m === k) break;
          [heap[k], heap[m]] = [heap[m]!, heap[k]!];
          k = m;
        }
      }
      return top;
    };
    const revMerge = new Map<string, [string, string]>();
    const maybeAdd = (l: number, r: number) => {
      if (l === -1 || r === -1 || syms[l]!.freeze || syms[r]!.freeze) return;
      const piece = key(syms[l]!.start, syms[l]!.len + syms[r]!.len);
      const id = this.pieceIds.get(piece);
      if (id === undefined) return;
      push({ left: l, right: r, score: this.scores[id]!, size: syms[l]!.len + syms[r]!.len });
      if (this.types[id] === 'unused') revMerge.set(piece, [key(syms[l]!.start, syms[l]!.len), key(syms[r]!.start, syms[r]!.len)]);
    };
    for (let k = 1; k < syms.length; k++) maybeAdd(k - 1, k);
    while (heap.length) {
      const top = popTop();
      const L = syms[top.left]!,
        R = syms[top.right]!;
      if (L.len === 0 || R.len === 0 || L.len + R.len !== top.size) continue;
      L.len += R.len;
      L.next = R.next;
      if (R.next >= 0) syms[R.next]!.prev = top.left;
      R.len = 0;
      maybeAdd(L.prev, top.left);
      maybeAdd(top.left, L.next);
    }
    const res: [number, number, number][] = [];
    const resegment = (start: number, w: string) => {
      const id = this.pieceToId(w);
      const rm = this.types[id] === 'unused' ? revMerge.get(w) : undefined;
      if (!rm) {
        res.push([start, start + utf8enc.encode(w).length, id]);
        return;
      }
      resegment(start, rm[0]);
      resegment(start + utf8enc.encode(rm[0]).length, rm[1]);
    };
    for (let k = 0; k !== -1; k = syms[k]!.next) resegment(syms[k]!.start, key(syms[k]!.start, syms[k]!.len));
    return res;
  }

  /** char_model.cc: one piece per character (a user-defined symbol where one starts), each looked up. */
  private encodeChar(s: Uint8Array): [number, number, number][] {
    const res: [number, number, number][] = [];
    const dec = new TextDecoder('utf-8');
    for (let i = 0; i < s.length; ) {
      const len = this.userMatch(s, i) || Math.min(s.length - i, oneCharLen(s[i]!));
      res.push([i, i + len, this.pieceToId(dec.decode(s.subarray(i, i + len)))]);
      i += len;
    }
    return res;
  }

  /**
   * word_model.cc: the words of SplitIntoWords (a new word at each ▁, or after each ▁ with
   * treat_whitespace_as_suffix), each looked up as a whole.
   */
  private encodeWord(s: Uint8Array): [number, number, number][] {
    const isWs = (i: number) => i + 3 <= s.length && s[i] === SPACE[0] && s[i + 1] === SPACE[1] && s[i + 2] === SPACE[2];
    const starts: number[] = [];
    for (let i = 0; i < s.length; ) {
      const len = Math.min(s.length - i, oneCharLen(s[i]!));
      if (this.proto.treatWhitespaceAsSuffix) {
        if (i === 0) starts.push(0);
        if (isWs(i) && i + len < s.length) starts.push(i + len);
      } else if (i === 0 || isWs(i)) starts.push(i);
      i += len;
    }
    const dec = new TextDecoder('utf-8');
    return starts.map((a, k) => {
      const b = starts[k + 1] ?? s.length;
      return [a, b, this.pieceToId(dec.decode(s.subarray(a, b)))];
    });
  }

  /** Ids and pieces of a text, as SentencePieceProcessor.encode(text) / encode(text, out_type=str). */
  encode(text: string): SentencePieceEncoding {
    const s = this.normalize(text);
    const type = this.proto.modelType;
    const segs = type === 'bpe' ? this.encodeBpe(s) : type === 'char' ? this.encodeChar(s) : type === 'word' ? this.encodeWord(s) : this.encodeUnigram(s);
    const ids: number[] = [],
      pieces: string[] = [];
    const dec = new TextDecoder('utf-8');
    let prevUnk = false;
    for (const [a, b, id] of segs) {
      const isUnk = id === this.unkId;
      if (isUnk && this.proto.byteFallback) {
        for (let k = a; k < b; k++) {
          const piece = bytePiece(s[k]!);
          ids.push(this.pieceToId(piece));
          pieces.push(piece);
        }
      } else if (isUnk && prevUnk) {
        pieces[pieces.length - 1] += dec.decode(s.subarray(a, b));
      } else {
        ids.push(id);
        pieces.push(dec.decode(s.subarray(a, b)));
      }
      prevUnk = isUnk;
    }
    return { ids, pieces };
  }
}

function bytePiece(b: number): string {
  return `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`;
}

// Small seeded PRNG (xoshiro128**, seeded through splitmix32) for deterministic sampling.

function splitmix32(state: { s: number }): number {
  state.s = (state.s + 0x9e3779b9) | 0;
  let z = state.s;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/** Hashes a string seed into a 32-bit integer (FNV-1a). */
export function hashSeed(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  private spare: number | null = null;

  /** `seed`: any number (its low 32 bits and the high part are mixed in) or a string. */
  constructor(seed: number | string = 0) {
    const n = typeof seed === 'string' ? hashSeed(seed) : seed;
    const st = { s: (n >>> 0) ^ Math.floor(n / 2 ** 32) };
    this.a = splitmix32(st);
    this.b = splitmix32(st);
    this.c = splitmix32(st);
    this.d = splitmix32(st);
    if ((this.a | this.b | this.c | this.d) === 0) this.a = 1;
  }

  /** Next raw 32-bit unsigned integer. */
  nextU32(): number {
    const r = Math.imul(rotl(Math.imul(this.b, 5), 7), 9) >>> 0;
    const t = this.b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return r;
  }

  /** Uniform float in [0, 1) with 53 random bits. */
  next(): number {
    const hi = this.nextU32() >>> 5; // 27 bits
    const lo = this.nextU32() >>> 6; // 26 bits
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** Uniform integer in [0, n), unbiased. n must be a positive integer ≤ 2^32. */
  int(n: number): number {
    if (!Number.isInteger(n) || n <= 0 || n > 2 ** 32) throw new RangeError(`Rng.int: n must be an integer in [1, 2^32], got ${n}`);
    if (n === 2 ** 32) return this.nextU32();
    const limit = 2 ** 32 - (2 ** 32 % n);
    for (;;) {
      const x = this.nextU32();
      if (x < limit) return x % n;
    }
  }

  /** Uniform integer in [lo, hi). */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo);
  }

  /** Standard normal (Box–Muller), or N(mean, std). */
  normal(mean = 0, std = 1): number {
    let z: number;
    if (this.spare !== null) {
      z = this.spare;
      this.spare = null;
    } else {
      let u = 0;
      while (u === 0) u = this.next();
      const v = this.next();
      const r = Math.sqrt(-2 * Math.log(u));
      z = r * Math.cos(2 * Math.PI * v);
      this.spare = r * Math.sin(2 * Math.PI * v);
    }
    return mean + std * z;
  }

  /** Shuffles `arr` in place (Fisher–Yates) and returns it. */
  shuffle<T>(arr: T[]): T[] {
    for (let i = arr.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const t = arr[i]!;
      arr[i] = arr[j]!;
      arr[j] = t;
    }
    return arr;
  }

  /** A random element of a non-empty array. */
  pick<T>(arr: readonly T[]): T {
    if (arr.length === 0) throw new RangeError('Rng.pick: empty array');
    return arr[this.int(arr.length)]!;
  }

  /** `k` distinct indices from [0, n), in random order (k ≤ n). */
  sample(n: number, k: number): number[] {
    if (k > n || k < 0) throw new RangeError(`Rng.sample: cannot draw ${k} of ${n}`);
    if (k * 3 > n) return this.shuffle(Array.from({ length: n }, (_, i) => i)).slice(0, k);
    const seen = new Set<number>();
    const out: number[] = [];
    while (out.length < k) {
      const x = this.int(n);
      if (!seen.has(x)) {
        seen.add(x);
        out.push(x);
      }
    }
    return out;
  }

  /** An independent generator derived from this one (for parallel streams). */
  fork(): Rng {
    return new Rng(this.nextU32() * 2 ** 20 + (this.nextU32() >>> 12));
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

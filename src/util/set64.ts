// A set of 64-bit keys in one typed array (open addressing, linear probing): about 16 bytes a key
// at most, against some 50 for a JavaScript Set of bigints — what de-duplicating the lines of a
// corpus of tens of millions needs. Keys are hashes of texts (hash64): two texts share one with a
// probability of about n² / 2^65 among n texts.

/**
 * A 64-bit hash of a text's UTF-16 code units: two 32-bit multiplicative lanes mixed into each
 * other at the end (cyrb53's construction, all 64 bits kept). Not cryptographic: a key, not a
 * signature; about 20 times faster than node:crypto's MD5 on short lines.
 */
export function hash64(text: string): bigint {
  let h1 = 0xdeadbeef,
    h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (BigInt(h2 >>> 0) << 32n) | BigInt(h1 >>> 0);
}

export class Set64 {
  private table = new BigUint64Array(1024);
  private count = 0;
  private zero = false; // 0 marks an empty slot: the key 0 is kept aside

  get size(): number {
    return this.count + (this.zero ? 1 : 0);
  }

  has(k: bigint): boolean {
    if (k === 0n) return this.zero;
    const t = this.table,
      mask = t.length - 1;
    for (let i = this.slot(k, mask); ; i = (i + 1) & mask) {
      const v = t[i]!;
      if (v === k) return true;
      if (v === 0n) return false;
    }
  }

  add(k: bigint): void {
    if (k === 0n) {
      this.zero = true;
      return;
    }
    if (2 * (this.count + 1) > this.table.length) this.grow();
    if (this.put(this.table, k)) this.count++;
  }

  private slot(k: bigint, mask: number): number {
    // the low 32 bits mixed with the high ones (the keys are hashes already)
    return (Number(k & 0xffffffffn) ^ Number(k >> 32n)) & mask;
  }

  /** Puts k in t; false if it was there. */
  private put(t: BigUint64Array, k: bigint): boolean {
    const mask = t.length - 1;
    for (let i = this.slot(k, mask); ; i = (i + 1) & mask) {
      const v = t[i]!;
      if (v === k) return false;
      if (v === 0n) {
        t[i] = k;
        return true;
      }
    }
  }

  private grow(): void {
    const old = this.table;
    this.table = new BigUint64Array(old.length * 2);
    for (const v of old) if (v !== 0n) this.put(this.table, v);
  }
}

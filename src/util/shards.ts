// How N rows split over shards: the one rule every sharded job uses (index builds, mining,
// cluster embedding), so shards made by different commands line up.

/** Rows of shard i of n: [⌊i·N/n⌋, ⌊(i+1)·N/n⌋). */
export function shardRows(n: number, [i, of]: [number, number]): [number, number] {
  return [Math.floor((i * n) / of), Math.floor(((i + 1) * n) / of)];
}

/** The row ranges of n rows over `shards` shards (shardRows of each; empty shards are dropped). */
export function shardRanges(n: number, shards: number): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < shards; i++) {
    const [a, b] = shardRows(n, [i, shards]);
    if (b > a) out.push([a, b]);
  }
  return out;
}

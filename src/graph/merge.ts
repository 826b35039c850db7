// `xling graph merge`: the shards' outputs of a step joined.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { readIndex } from '../index/faiss.js';
import { NpyRowReader, NpyWriter } from '../io/npy.js';
import { readJson, writeJson } from '../nn/serialize.js';
import { GraphStep, metaFile, readGraphMeta } from './meta.js';

/** Joins the shards' outputs of a step: vectors (concatenated), index (merged), neighbours/distances (concatenated). */
export function mergeGraphShards(g: string, log: (l: string) => void = (l) => process.stderr.write(`[graph] ${l}\n`)): void {
  const files = readdirSync(g);
  // the shards' finished files only: a killed shard leaves its temporary (NAME.tmp-PID-…), which
  // shares the prefix and must never be read
  const shardsOf = (base: string) =>
    files.filter((f) => new RegExp(`^${base}\\.shard-\\d+-of-\\d+\\.(npy|faiss)$`).test(f)).sort((a, b) => shardIndex(a) - shardIndex(b));
  const leftovers = (base: string) => {
    for (const f of files) if (f.startsWith(`${base}.shard-`) && f.includes('.tmp-')) rmSync(join(g, f), { force: true });
  };
  for (const base of ['vectors', 'neighbours', 'distances']) {
    const parts = shardsOf(base);
    if (!parts.length || existsSync(join(g, `${base}.npy`))) continue;
    checkComplete(parts, base);
    const readers = parts.map((p) => NpyRowReader.open(join(g, p)));
    const w = NpyWriter.open(join(g, `${base}.npy`), readers[0]!.cols, readers[0]!.dtype);
    try {
      for (const r of readers) for (let a = 0; a < r.rows; a += 100000) w.append(r.readRowsRaw(a, Math.min(r.rows, a + 100000)));
      w.close();
    } catch (e) {
      w.abort();
      throw e;
    } finally {
      readers.forEach((r) => r.close());
    }
    for (const p of parts) rmSync(join(g, p));
    leftovers(base);
    log(`merged ${parts.length} shards → ${base}.npy`);
  }
  const timings = files.filter((f) => /^steps\.\w+\.shard-\d+-of-\d+\.json$/.test(f));
  if (timings.length) {
    const m = readGraphMeta(g);
    for (const f of timings) {
      const step = f.split('.')[1] as GraphStep,
        n = Number(/-of-(\d+)/.exec(f)![1]);
      const prev = m.steps[step];
      m.steps[step] = { seconds: +((prev?.shards ? prev.seconds : 0) + readJson<{ seconds: number }>(join(g, f)).seconds).toFixed(1), shards: n };
    }
    writeJson(metaFile(g), m);
    for (const f of timings) rmSync(join(g, f));
  }
  const ix = shardsOf('index');
  if (ix.length && !existsSync(join(g, 'index.faiss'))) {
    checkComplete(ix, 'index');
    const base = readIndex(join(g, ix[0]!));
    for (const p of ix.slice(1)) {
      const s = readIndex(join(g, p));
      base.mergeFrom(s);
      s.dispose();
    }
    base.write(join(g, 'index.faiss'));
    base.dispose();
    for (const p of ix) rmSync(join(g, p));
    leftovers('index');
    log(`merged ${ix.length} index shards → index.faiss`);
  }
}

function shardIndex(f: string): number {
  return Number(/\.shard-(\d+)-of-/.exec(f)![1]);
}
function checkComplete(parts: string[], base: string): void {
  const n = Number(/-of-(\d+)/.exec(parts[0]!)![1]);
  const have = new Set(parts.map(shardIndex));
  const missing = Array.from({ length: n }, (_, i) => i).filter((i) => !have.has(i));
  if (missing.length) throw new Error(`${base}: shards ${missing.join(', ')} of ${n} are not done yet`);
}

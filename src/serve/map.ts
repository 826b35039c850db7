// A 2-D map of a sample of the sentence space for the web explorer: UMAP (umap-js) over the
// normalised vectors of up to `sample` store sentences (drawn evenly, seeded), computed once per
// server and cached beside the index file (<index>.map.json) so a restart reuses it. The cache is
// keyed by content: the UMAP settings, the index file (size, mtime, SHA-256), the sentences
// (SHA-256 of the store) and the model (its directory's files, size and mtime); a map of another
// index or store at the same path is recomputed. A cache that cannot be written (read-only mount,
// a directory in its place) is reported once through `onCacheError`; the map is still returned.
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { UMAP } from 'umap-js';
import { SentenceEncoderModel } from '../embed/model.js';
import { writeFileAtomicSync } from '../util/atomic.js';
import { Rng } from '../util/rng.js';
import { SentenceStore } from '../io/sentence-store.js';

export interface MapPoint {
  id: number;
  x: number;
  y: number;
  lang: string | null;
  text: string;
}
export interface SentenceMap {
  points: MapPoint[];
  method: string;
  sample: number;
}

async function fileDigest(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** The identity of what a map is computed from: settings, index file, sentences, model files. */
export async function mapKey(store: SentenceStore, o: { sample: number; seed?: number; indexFile?: string; modelDir?: string }): Promise<string> {
  const parts: Record<string, unknown> = { umap: `cosine n=${o.sample} seed=${o.seed ?? 1} neighbours=15 minDist=0.1` };
  if (o.indexFile && existsSync(o.indexFile)) {
    const st = statSync(o.indexFile);
    parts.index = { size: st.size, mtime: st.mtimeMs, sha256: await fileDigest(o.indexFile) };
  }
  const h = createHash('sha256');
  for (let i = 0; i < store.size; i++) {
    h.update(store.lang(i) ?? '');
    h.update('\t');
    h.update(store.text(i));
    h.update('\n');
  }
  parts.store = { size: store.size, sha256: h.digest('hex') };
  if (o.modelDir && existsSync(o.modelDir)) {
    parts.model = readdirSync(o.modelDir)
      .sort()
      .flatMap((f) => {
        const st = statSync(join(o.modelDir!, f));
        return st.isFile() ? [`${f}:${st.size}:${st.mtimeMs}`] : [];
      });
  }
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

export async function buildMap(
  model: SentenceEncoderModel,
  store: SentenceStore,
  o: { sample: number; cacheFile?: string; seed?: number; indexFile?: string; modelDir?: string; onCacheError?: (e: Error) => void },
): Promise<SentenceMap> {
  const key = await mapKey(store, o);
  if (o.cacheFile && existsSync(o.cacheFile)) {
    try {
      const m = JSON.parse(readFileSync(o.cacheFile, 'utf8')) as SentenceMap & { key?: string };
      if (m.key === key) return m;
    } catch {
      /* recompute */
    }
  }
  const n = Math.min(o.sample, store.size);
  const ids = n === store.size ? Array.from({ length: n }, (_, i) => i) : new Rng(o.seed ?? 1).sample(store.size, n).sort((a, b) => a - b);
  // each sentence centred with its own language's mean when known (as the index was built)
  const byLang = new Map<string | null, number[]>();
  for (const i of ids) {
    const l = store.lang(i);
    const g = byLang.get(l);
    if (g) g.push(i);
    else byLang.set(l, [i]);
  }
  const vec = new Map<number, number[]>();
  for (const [lang, g] of byLang) {
    const v = await model.embedAsync(
      g.map((i) => store.text(i)),
      { lang: lang ?? undefined, center: lang !== null },
    );
    g.forEach((id, k) => vec.set(id, Array.from(v.subarray(k * model.dim, (k + 1) * model.dim))));
  }
  const rng = new Rng(o.seed ?? 1);
  const umap = new UMAP({
    nComponents: 2,
    nNeighbors: Math.min(15, Math.max(2, n - 1)),
    minDist: 0.1,
    random: () => rng.next(),
    distanceFn: (a, b) => {
      let s = 0;
      for (let j = 0; j < a.length; j++) s += a[j]! * b[j]!;
      return 1 - s;
    },
  });
  const xy = await umap.fitAsync(
    ids.map((i) => vec.get(i)!),
    () => true,
  );
  const map: SentenceMap & { key: string } = {
    key,
    method: 'UMAP (cosine, 15 neighbours)',
    sample: n,
    points: ids.map((id, k) => ({ id, x: xy[k]![0]!, y: xy[k]![1]!, lang: store.lang(id), text: store.text(id) })),
  };
  if (o.cacheFile) {
    try {
      writeFileAtomicSync(o.cacheFile, JSON.stringify(map));
    } catch (e) {
      o.onCacheError?.(e as Error);
    }
  }
  return map;
}

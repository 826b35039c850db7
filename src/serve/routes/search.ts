// POST /search of xling serve: the k nearest sentences of the loaded index to a text (embedded as
// the embedding routes do) or a vector, with their text and language from the sentence store.
// A float faiss index takes a per-request nprobe (faiss SearchParameters: the index's own setting
// is never changed); a binary one is searched by Hamming distance and rescored with the float query.
import type { FastifyPluginCallback } from 'fastify';
import { l2normalizeRows } from '../../embed/vectors.js';
import { BinaryFlatIndex } from '../../index/binary.js';
import { HttpError } from '../http-error.js';
import { signalOf } from '../plugins/limits.js';
import { SERVE_LIMITS } from '../settings.js';
import { RouteOptions, xlingFields } from '../context.js';

/** A query vector as sent: d finite numbers, not all zero; normalised. */
function queryVector(v: number[], d: number): Float32Array {
  if (v.length !== d) throw new HttpError(422, `vector has ${v.length} dimensions, the index ${d}`, 'Validation');
  const q = Float32Array.from(v);
  let norm = 0;
  for (const x of q) norm += x * x;
  if (!Number.isFinite(norm)) throw new HttpError(422, 'Input validation error: vector has values that are not finite as 32-bit floats', 'Validation');
  if (norm === 0) throw new HttpError(422, 'Input validation error: vector is zero (it has no direction to search)', 'Validation');
  l2normalizeRows(q, d);
  return q;
}

export const searchRoutes: FastifyPluginCallback<RouteOptions> = (app, { ctx }, done) => {
  const { options: o, embedder } = ctx,
    d = embedder.d;
  app.post(
    '/search',
    {
      schema: {
        description: 'k nearest sentences of the index to a text (or a vector), with their text and language',
        tags: ['xling'],
        body: {
          type: 'object',
          properties: {
            text: { type: 'string' },
            vector: { type: 'array', items: { type: 'number' } },
            k: { type: 'integer', minimum: 1, maximum: SERVE_LIMITS.searchK, default: 10 },
            nprobe: { type: 'integer', minimum: 1 },
            rescore: { type: 'integer', minimum: 0, maximum: 100 },
            ...xlingFields,
          },
        },
      },
    },
    async (req) => {
      const idx = o.index;
      if (!idx) throw new HttpError(503, 'no index loaded (xling serve --index F.faiss --store S)', 'Unavailable');
      const b = req.body as { text?: string; vector?: number[]; k?: number; nprobe?: number; rescore?: number; lang?: string | null; center?: boolean };
      if (b.rescore !== undefined && !(idx instanceof BinaryFlatIndex))
        throw new HttpError(422, 'Input validation error: rescore applies to binary indexes only (this index holds float vectors)', 'Validation');
      if (!b.text === !b.vector) throw new HttpError(422, 'give exactly one of text or vector', 'Validation');
      if (b.nprobe !== undefined && !idx.info.ivf)
        throw new HttpError(422, 'Input validation error: nprobe applies to IVF indexes only (this index has no inverted lists)', 'Validation');
      let q: Float32Array;
      if (b.vector) q = queryVector(b.vector, idx.d);
      else {
        if (d !== idx.d) throw new HttpError(500, `the model gives ${d}-d vectors, the index holds ${idx.d}-d`, 'Backend');
        q = await embedder.vectors([b.text!], { truncate: true, normalize: true, lang: b.lang, center: b.center, signal: signalOf(req), field: 'text' });
      }
      // binary: the k·rescore nearest by Hamming distance re-ranked by the float query (default 4; 0: Hamming distances as scores)
      const r =
        idx instanceof BinaryFlatIndex
          ? await idx.searchAsync(q, b.k ?? 10, { rescore: b.rescore ?? 4 })
          : await idx.searchAsync(q, b.k ?? 10, b.nprobe !== undefined ? { nprobe: b.nprobe } : undefined);
      const results = [];
      for (let j = 0; j < r.k; j++) {
        const id = Number(r.labels[j]);
        if (id < 0) continue;
        const known = o.store && id < o.store.size;
        results.push({ id, score: r.distances[j]!, text: known ? o.store!.text(id) : null, lang: known ? o.store!.lang(id) : null });
      }
      return { results };
    },
  );
  done();
};

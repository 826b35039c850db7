// What an index was built from, beside it: INDEX.json records the model that made its vectors
// (xling index build --model), so that a search with text queries embeds them with the same model.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { writeFileAtomicSync } from '../util/atomic.js';

export interface IndexMeta {
  /** The model directory whose vectors the index holds (an absolute path). */
  model: string;
  /** The vectors' dimension. */
  dim: number;
}

/** The file beside an index that records its metadata. */
export const indexMetaPath = (index: string): string => `${index}.json`;

/** Records the index's model (an absolute path); without one, removes the record an earlier build left. */
export function writeIndexMeta(index: string, meta: IndexMeta | null): void {
  const f = indexMetaPath(index);
  if (meta) writeFileAtomicSync(f, `${JSON.stringify({ format: 'xling-index', model: resolve(meta.model), dim: meta.dim }, null, 1)}\n`);
  else if (readIndexMeta(index)) rmSync(f, { force: true });
}

/** The index's recorded metadata, or null when it has none (or the file beside it is not xling's record). */
export function readIndexMeta(index: string): IndexMeta | null {
  const f = indexMetaPath(index);
  if (!existsSync(f)) return null;
  let j: { format?: unknown; model?: unknown; dim?: unknown };
  try {
    j = JSON.parse(readFileSync(f, 'utf8')) as typeof j;
  } catch {
    return null;
  }
  if (j?.format !== 'xling-index' || typeof j.model !== 'string' || typeof j.dim !== 'number') return null;
  return { model: j.model, dim: j.dim };
}

// Text queries of xling search: sentences given on the command line or in a file, embedded with
// the model that made the index's vectors (recorded beside the index by xling index build
// --model), else the one given, else the default model; each query centred by its own language.
import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { indexMetaPath, readIndexMeta } from '../index/meta.js';
import { readLines, shownPath } from '../io/lines.js';
import type { Vectors } from '../io/vectors.js';
import { modelOrDefault } from './default-model.js';
import { vectorsFor } from './input.js';
import { PER_SENTENCE } from './language.js';

/** Whether a queries file holds vectors (.npy, by its name or its first bytes) rather than sentences. */
export function isNpyFile(path: string): boolean {
  if (/\.npy$/i.test(path)) return true;
  if (path === '-' || !existsSync(path)) return false;
  const fd = openSync(path, 'r');
  try {
    const b = Buffer.alloc(6);
    return readSync(fd, b, 0, 6, 0) === 6 && b.toString('latin1') === '\x93NUMPY';
  } catch {
    return false; // a folder, a pipe: named by the reader
  } finally {
    closeSync(fd);
  }
}

/** The query sentences: --query values, or a file's lines (blank ones refused: they have nothing to search for). */
export async function readTextQueries(given: readonly string[] | undefined, file: string | undefined): Promise<string[]> {
  if (given) {
    given.forEach((q, i) => {
      if (!q.trim()) throw new Error(`--query ${i + 1}: an empty query`);
    });
    return [...given];
  }
  const out: string[] = [];
  for await (const { line, no } of readLines(file!)) {
    if (!line.trim()) throw new Error(`${shownPath(file!)}:${no}: an empty query (one sentence a line)`);
    out.push(line);
  }
  if (!out.length) throw new Error(`--queries ${shownPath(file!)}: no queries`);
  return out;
}

/** The model that embeds text queries against an index: --model, else the index's recorded model, else the default one. */
export function queryModel(given: string | undefined, index: string | undefined, say: (line: string) => void): string {
  if (given !== undefined) return given;
  const meta = index ? readIndexMeta(index) : null;
  if (!meta) return modelOrDefault(undefined, false, say);
  if (!existsSync(meta.model))
    throw new Error(`--index ${index}: its vectors are of the model ${meta.model} (${indexMetaPath(index!)}), which is not there any more; give --model DIR`);
  say(`[search] the index's model: ${meta.model}\n`);
  return meta.model;
}

/** The queries' vectors (L2-normalised), each query centred by its own language as the server centres its inputs. */
export function embedQueries(queries: string[], model: string): Vectors {
  return vectorsFor(queries, undefined, model, 'the queries', { lang: PER_SENTENCE, langFlag: '--query', center: true, label: 'search', quiet: true });
}

// xling serve's run: the model and what is searched (a faiss or binary index with its sentences, or
// a graph directory) opened and checked against each other, the server started, and stopped
// gracefully on SIGTERM or SIGINT.
import { loadEncoderForRuntime } from '../embed/portable.js';
import { GraphReader, openGraphIndex } from '../graph/query.js';
import { BinaryFlatIndex, isBinaryIndexFile } from '../index/binary.js';
import { FaissIndex, faissMessage, readIndex } from '../index/faiss.js';
import { loadStore, SentenceStore } from '../io/sentence-store.js';
import { loadServeConfig } from './config.js';
import { buildServer, closeGracefully, SERVE_DEFAULTS } from './server.js';
import { ServeOptions } from './settings.js';

export interface ServeRunOptions {
  modelDir: string;
  precision: 'fp32' | 'bf16';
  /** A faiss index (or a binary flat one) over sentence vectors, and its sentences (line i = row i). */
  index?: string;
  store?: string;
  /** A graph directory (xling graph build): its index and sentences instead of index and store. */
  graph?: string;
  /** A JSON file of tuning knobs (body limit, timeouts, connection cap). */
  config?: string;
  port: number;
  host: string;
  /** The rest of buildServer's options (they win over the config file's). */
  server: Omit<ServeOptions, 'model' | 'modelDir' | 'index' | 'store' | 'graph' | 'indexPath'>;
}

interface Collection {
  index?: FaissIndex | BinaryFlatIndex;
  store?: SentenceStore;
  graph?: GraphReader;
}

/** --index FILE: a binary flat index (by its header), else a faiss one. */
function readAnyIndex(file: string): FaissIndex | BinaryFlatIndex {
  if (isBinaryIndexFile(file))
    try {
      return BinaryFlatIndex.read(file);
    } catch (e) {
      throw new Error(`--index ${file}: ${faissMessage(e)}`);
    }
  try {
    return readIndex(file);
  } catch {
    throw new Error(`--index ${file}: not a faiss index (faiss cannot read it; xling index build writes one)`);
  }
}

/** The index and sentences searched, each checked against the model's dimension and the other's size. */
async function openCollection(o: ServeRunOptions, dim: number): Promise<Collection> {
  const c: Collection = {};
  if (o.index) {
    c.index = readAnyIndex(o.index);
    if (c.index.d !== dim) throw new Error(`--index ${o.index} holds ${c.index.d}-d vectors, --model ${o.modelDir} gives ${dim}-d`);
  }
  if (o.store) {
    c.store = await loadStore(o.store);
    if (c.store.size !== c.index!.ntotal) throw new Error(`--store ${o.store} has ${c.store.size} sentences, --index ${o.index} ${c.index!.ntotal} vectors`);
  }
  if (o.graph) {
    c.graph = new GraphReader(o.graph);
    if (c.graph.meta.model.dim !== dim)
      throw new Error(`--graph ${o.graph} was built with ${c.graph.meta.model.dim}-d vectors, --model ${o.modelDir} gives ${dim}-d`);
    c.index = openGraphIndex(o.graph);
    c.store = c.graph.store;
  }
  return c;
}

/**
 * Serves until SIGTERM or SIGINT: then in-flight requests finish (new ones get 503) and what was
 * opened is closed. A bag-of-n-grams model (the default one) runs on the portable runtime, others
 * on the native backend.
 */
export async function serveUntilSignal(o: ServeRunOptions): Promise<void> {
  const tuning = o.config ? loadServeConfig(o.config) : {};
  const model = loadEncoderForRuntime(o.modelDir, { precision: o.precision });
  const { index, store, graph } = await openCollection(o, model.dim);
  const app = await buildServer({ ...tuning, model, modelDir: o.modelDir, index, store, graph, indexPath: o.index, ...o.server });
  const address = await app.listen({ port: o.port, host: o.host });
  process.stderr.write(`[serve] ${o.modelDir} (${model.dim}-d) listening on ${address} — API docs at ${address}/docs\n`);
  await new Promise<void>((resolve) => {
    const stop = (sig: string) => {
      process.stderr.write(`[serve] ${sig}: finishing in-flight requests\n`);
      void closeGracefully(app, tuning.requestTimeoutMs ?? SERVE_DEFAULTS.requestTimeoutMs).then(() => {
        index?.dispose();
        graph?.close();
        resolve();
      });
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}

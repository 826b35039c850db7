// xling serve: the embedding and search HTTP API (src/serve/server.ts) and the web explorer.
import { loadEncoderForRuntime } from '../embed/portable.js';
import { GraphReader, openGraphIndex } from '../graph/query.js';
import { FaissIndex, readIndex } from '../index/faiss.js';
import { BinaryFlatIndex, isBinaryIndexFile } from '../index/binary.js';
import { buildServer, closeGracefully, SERVE_DEFAULTS } from '../serve/server.js';
import { loadServeConfig } from '../serve/config.js';
import { loadStore, SentenceStore } from '../io/sentence-store.js';
import { setComputeThreads } from '../tensor/backend.js';
import { DEFAULTED_MODEL_OPTION, modelOrDefault } from './default-model.js';
import { command, usage } from './command.js';
import { checkPaths, inContext } from './io.js';
import { PRECISION_OPTION } from './vectors.js';

export const serveCommand = command(
  ['serve'],
  {
    name: 'xling serve',
    summary: 'embedding and search HTTP API (TEI- and OpenAI-compatible routes) and a web explorer',
    description:
      "Binds to 127.0.0.1 unless --host says otherwise. --lang auto centres an input only when the model's identifier gives its language with a confidence of at least 0.5 (never a vote across inputs); an unknown code is refused. SIGTERM or SIGINT: in-flight requests finish, new ones get 503, then the process exits. OpenAPI document and UI at /docs.",
    options: {
      model: DEFAULTED_MODEL_OPTION,
      port: { type: 'number', default: 8080, range: { int: true, min: 0, max: 65535 }, help: '0: any free port (printed)' },
      host: { type: 'string', default: '127.0.0.1', help: 'address to listen on (0.0.0.0: every interface)' },
      index: { type: 'string', metavar: 'FAISS', help: 'faiss index over sentence vectors, for /search and the explorer' },
      store: { type: 'string', metavar: 'FILE', help: 'the sentences of the index: line i = index row i (lang<TAB>sentence or plain)' },
      graph: {
        type: 'string',
        metavar: 'DIR',
        help: 'a graph directory (xling graph build): /neighbours/:id, /path, and its index and sentences (instead of --index/--store)',
      },
      mapSample: {
        type: 'number',
        default: 5000,
        range: { int: true, min: 2, max: 50000 },
        help: "sentences in the explorer's 2-D map (UMAP; cached as INDEX.map.json)",
      },
      maxBatchTokens: {
        type: 'number',
        range: { int: true, min: 1 },
        help: `tokens per inference batch of pooled requests (default ${SERVE_DEFAULTS.maxBatchTokens}; ${16 * SERVE_DEFAULTS.maxBatchTokens} n-gram features for a bag-of-n-grams model)`,
      },
      maxClientBatchSize: { type: 'number', default: SERVE_DEFAULTS.maxClientBatchSize, range: { int: true, min: 1 }, help: 'inputs per request (413 beyond)' },
      maxConcurrentRequests: { type: 'number', default: SERVE_DEFAULTS.maxConcurrentRequests, range: { int: true, min: 1 }, help: '429 beyond' },
      autoTruncate: { type: 'boolean', default: false, help: "cut inputs over the model's length instead of answering 413 (a request's truncate wins)" },
      apiKey: { type: 'string', help: 'require Authorization: Bearer KEY (except /health and the explorer page)' },
      lang: {
        type: 'string',
        default: 'auto',
        help: "language of inputs for per-language centring (a request's lang wins); 'auto': each input identified on its own",
      },
      center: { type: 'boolean', default: true, help: 'per-language centring when a language is given' },
      precision: PRECISION_OPTION,
      threads: { type: 'number', range: { int: true, min: 1 }, help: 'threads that compute (default: all cores)' },
      log: { type: 'boolean', default: false, help: 'log every request (JSON lines on stdout)' },
      config: { type: 'string', metavar: 'FILE', help: 'JSON file of tuning knobs: body limit, timeouts, connection cap (see configs/serve.json)' },
    },
    examples: [
      'xling serve --model runs/fast --port 8080',
      'xling serve --model runs/fast --config configs/serve.json --api-key KEY',
      'curl -s localhost:8080/embed -H content-type:application/json -d \'{"inputs":["Datei öffnen"]}\'',
    ],
  },
  async (a) => {
    if (a.store && !a.index) usage('--store goes with --index');
    if (a.graph && a.index) usage('--graph brings its own index and sentences: give --graph or --index, not both');
    const modelDir = modelOrDefault(a.model);
    checkPaths([
      ['--model', modelDir, 'in-dir'],
      ['--index', a.index, 'in'],
      ['--store', a.store, 'in-text'],
      ['--graph', a.graph, 'in-dir'],
      ['--config', a.config, 'in'],
    ]);
    const tuning = a.config ? loadServeConfig(a.config) : {};
    if (a.threads) setComputeThreads(a.threads);
    // a bag-of-n-grams model (the default one) on the portable runtime, others on the native backend
    const model = loadEncoderForRuntime(modelDir, { precision: a.precision as 'fp32' | 'bf16' });
    let index: FaissIndex | BinaryFlatIndex | undefined, store: SentenceStore | undefined;
    if (a.index) {
      const file = a.index;
      if (isBinaryIndexFile(file)) index = inContext(`--index ${file}`, () => BinaryFlatIndex.read(file));
      else
        try {
          index = readIndex(file);
        } catch {
          throw new Error(`--index ${file}: not a faiss index (faiss cannot read it; xling index build writes one)`);
        }
      if (index.d !== model.dim) throw new Error(`--index ${a.index} holds ${index.d}-d vectors, --model ${modelDir} gives ${model.dim}-d`);
    }
    if (a.store) {
      store = await loadStore(a.store);
      if (store.size !== index!.ntotal) throw new Error(`--store ${a.store} has ${store.size} sentences, --index ${a.index} ${index!.ntotal} vectors`);
    }
    const graph = a.graph ? new GraphReader(a.graph) : undefined;
    if (graph && graph.meta.model.dim !== model.dim)
      throw new Error(`--graph ${a.graph} was built with ${graph.meta.model.dim}-d vectors, --model ${modelDir} gives ${model.dim}-d`);
    if (graph) {
      index = openGraphIndex(a.graph!);
      store = graph.store;
    }
    const app = await buildServer({
      ...tuning,
      model,
      modelDir,
      index,
      store,
      graph,
      indexPath: a.index,
      mapSample: a.mapSample,
      maxBatchTokens: a.maxBatchTokens,
      maxClientBatchSize: a.maxClientBatchSize,
      maxConcurrentRequests: a.maxConcurrentRequests,
      autoTruncate: a.autoTruncate,
      apiKey: a.apiKey,
      lang: a.lang,
      center: a.center,
      logger: a.log,
    });
    const address = await app.listen({ port: a.port, host: a.host });
    process.stderr.write(`[serve] ${modelDir} (${model.dim}-d) listening on ${address} — API docs at ${address}/docs\n`);
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
  },
  { ownSignals: true },
);

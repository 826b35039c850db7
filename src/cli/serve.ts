// xling serve: the embedding and search HTTP API (src/serve/server.ts) and the web explorer.
import { SERVE_DEFAULTS } from '../serve/server.js';
import { serveUntilSignal } from '../serve/start.js';
import { setComputeThreads } from '../tensor/backend.js';
import { DEFAULTED_MODEL_OPTION, modelOrDefault } from './default-model.js';
import { command, usage } from './command.js';
import { checkPaths } from './io.js';
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
    if (a.threads) setComputeThreads(a.threads);
    await serveUntilSignal({
      modelDir,
      precision: a.precision as 'fp32' | 'bf16',
      index: a.index,
      store: a.store,
      graph: a.graph,
      config: a.config,
      port: a.port,
      host: a.host,
      server: {
        mapSample: a.mapSample,
        maxBatchTokens: a.maxBatchTokens,
        maxClientBatchSize: a.maxClientBatchSize,
        maxConcurrentRequests: a.maxConcurrentRequests,
        autoTruncate: a.autoTruncate,
        apiKey: a.apiKey,
        lang: a.lang,
        center: a.center,
        logger: a.log,
      },
    });
  },
  { ownSignals: true },
);

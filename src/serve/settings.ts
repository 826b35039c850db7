// xling serve's settings: what buildServer is given (ServeOptions), the defaults of its limits, the
// fixed bounds of one request's work, and the limits as the server applies them (ServeSettings).
import { SentenceEncoderModel } from '../embed/model.js';
import { GraphReader } from '../graph/query.js';
import { FaissIndex } from '../index/faiss.js';
import { BinaryFlatIndex } from '../index/binary.js';
import { SentenceStore } from '../io/sentence-store.js';

export interface ServeOptions {
  model: SentenceEncoderModel;
  /** Shown as model_id (the model directory's name). */
  modelDir: string;
  maxBatchTokens?: number; // 16384 (×16 for encoders of unpadded feature bags)
  maxClientBatchSize?: number; // 32 inputs per request
  maxConcurrentRequests?: number; // 512
  bodyLimit?: number; // 2 MB
  requestTimeoutMs?: number; // 30 s: the whole request (receiving it and the handler); 408 while receiving, 503 past it in the handler
  headersTimeoutMs?: number; // 10 s: a request's headers must arrive within it (408)
  keepAliveTimeoutMs?: number; // 5 s: an idle keep-alive connection is closed after it
  maxConnections?: number; // max(1024, 2 × maxConcurrentRequests): connections beyond are dropped
  /** Inputs over the model's length are cut instead of refused (413) unless a request says truncate: false (TEI's --auto-truncate). */
  autoTruncate?: boolean;
  apiKey?: string;
  /** Default language of requests for per-language centring (a request's `lang` wins); default 'auto' (identified per request); null: none. */
  lang?: string | null;
  center?: boolean;
  /** A float faiss index, or a binary flat one (packed sign bits: Hamming search of the query's signs, rescored with the float query). */
  index?: FaissIndex | BinaryFlatIndex;
  store?: SentenceStore;
  /** Where the index was read from (the explorer's map is cached beside it, keyed by the index's and store's content). */
  indexPath?: string;
  /** A k-nn graph (xling graph build): GET /neighbours/:id and POST /path; `index` and `store` must then be the graph's (texts are snapped through them). */
  graph?: GraphReader;
  /** Sentences in the explorer's 2-D map (default 5000). */
  mapSample?: number;
  logger?: boolean;
}

export const SERVE_DEFAULTS = {
  maxBatchTokens: 16384,
  maxClientBatchSize: 32,
  maxConcurrentRequests: 512,
  bodyLimit: 2 << 20,
  requestTimeoutMs: 30000,
  headersTimeoutMs: 10000,
  keepAliveTimeoutMs: 5000,
  autoTruncate: false,
};

/** Fixed bounds of the work one request can ask for. */
export const SERVE_LIMITS = {
  /** JSON bodies nested deeper are refused (400) before they are parsed. */
  jsonDepth: 32,
  /** /mine: k at most this, and (|src| + |trg|) × k at most mineWork. */
  mineK: 64,
  mineWork: 32768,
  /** A body refused as too large while still arriving is read and dropped up to this many times the body limit before the 413 (more: the connection is closed after it). */
  drainFactor: 4,
  /** /search: k at most this. */
  searchK: 1000,
};

/** The limits as the server applies them: every default filled in. */
export interface ServeSettings {
  maxClientBatchSize: number;
  maxConcurrentRequests: number;
  bodyLimit: number;
  requestTimeoutMs: number;
  /** At most the request timeout. */
  headersTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
  autoTruncate: boolean;
}

export function resolveSettings(o: ServeOptions): ServeSettings {
  const d = SERVE_DEFAULTS;
  const maxConcurrentRequests = o.maxConcurrentRequests ?? d.maxConcurrentRequests;
  const requestTimeoutMs = o.requestTimeoutMs ?? d.requestTimeoutMs;
  return {
    maxClientBatchSize: o.maxClientBatchSize ?? d.maxClientBatchSize,
    maxConcurrentRequests,
    bodyLimit: o.bodyLimit ?? d.bodyLimit,
    requestTimeoutMs,
    headersTimeoutMs: Math.min(o.headersTimeoutMs ?? d.headersTimeoutMs, requestTimeoutMs),
    keepAliveTimeoutMs: o.keepAliveTimeoutMs ?? d.keepAliveTimeoutMs,
    maxConnections: o.maxConnections ?? Math.max(1024, 2 * maxConcurrentRequests),
    autoTruncate: o.autoTruncate ?? d.autoTruncate,
  };
}

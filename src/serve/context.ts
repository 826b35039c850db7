// What xling serve's route plugins (routes/) are given: the server's options, its limits, the one
// embedding path (with its batcher) and the metrics.
import type { Embedder } from './embedder.js';
import type { ServeMetrics } from './plugins/metrics.js';
import type { ServeOptions, ServeSettings } from './settings.js';

export interface ServeContext {
  options: ServeOptions;
  settings: ServeSettings;
  embedder: Embedder;
  metrics: ServeMetrics;
}

/** The plugin options of a route plugin. */
export interface RouteOptions {
  ctx: ServeContext;
}

/** Request fields of xling's own on every embedding route. */
export const xlingFields = {
  lang: { type: ['string', 'null'], description: 'language of the inputs, for per-language centring (xling)' },
  center: { type: 'boolean' },
};

// Layering of src/ (checked by `npm run lint:layers`, part of `npm test`): dependencies point down.
//   cli → train / serve / cluster → eval → mine / classify / analyze / probe / graph / corpus / align → embed
//   → models → nn / index / train-data / mine/scorer/word-align → tensor → text / io / native / kernels → util
// A folder may import its own layer and the layers below it, never one above. A folder inside
// another may have a layer of its own (mine/scorer/word-align: the word aligner the scorer's
// features, the JMT family and the code-switching probe share sits below models). The addon
// (src/native.ts) is called only through the typed wrappers in src/tensor/, src/index/ and
// src/kernels.ts; the portable runtime (src/lite/) reaches no native code at all.
const RANK = {
  util: 0,
  text: 0.5,
  io: 0.5,
  'native.ts': 0.5,
  'kernels.ts': 0.5,
  tensor: 1,
  nn: 2,
  index: 2,
  'train-data': 2,
  'mine/scorer/word-align': 2,
  models: 3,
  embed: 4,
  eval: 5.5,
  mine: 5,
  classify: 5,
  analyze: 5,
  probe: 5,
  graph: 5,
  corpus: 5,
  align: 5,
  train: 6,
  serve: 6,
  cluster: 6,
  cli: 7,
};
const esc = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const pathOf = (layer) => `^src/${esc(layer)}${layer.endsWith('.ts') ? '$' : '/'}`;
const layers = Object.keys(RANK);

// the folders with a layer of their own inside `layer`'s folder
const nestedIn = (layer) => layers.filter((l) => l.startsWith(`${layer}/`));

const forbidden = layers
  .map((layer) => {
    const above = layers.filter((l) => RANK[l] > RANK[layer]);
    // a nested folder at this layer or below stays importable, though its parent is above
    const allowed = above.flatMap(nestedIn).filter((l) => RANK[l] <= RANK[layer]);
    return (
      above.length && {
        name: `layer-${layer.replace('.ts', '').replaceAll('/', '-')}`,
        comment: `src/${layer} (layer ${RANK[layer]}) must not import a higher layer: ${above.join(', ')}`,
        severity: 'error',
        from: { path: pathOf(layer), ...(nestedIn(layer).length && { pathNot: `(${nestedIn(layer).map(pathOf).join('|')})` }) },
        to: { path: `(${above.map(pathOf).join('|')})`, ...(allowed.length && { pathNot: `(${allowed.map(pathOf).join('|')})` }) },
      }
    );
  })
  .filter(Boolean);

forbidden.push(
  {
    name: 'native-behind-wrappers',
    comment: 'the addon is called only through src/tensor/, src/index/ and src/kernels.ts',
    severity: 'error',
    from: { path: '^src/', pathNot: '^src/(tensor/|index/|kernels\\.ts$|index\\.ts$)' },
    to: { path: '^src/native\\.ts$' },
  },
  {
    name: 'lite-without-native',
    comment: 'xling/lite (src/lite/) must not reach the addon or libtorch, directly or through other modules',
    severity: 'error',
    from: { path: '^src/lite/' },
    to: { path: '^src/(native\\.ts|kernels\\.ts|tensor/|index/|nn/)', reachable: true },
  },
  {
    name: 'encoder-interface-without-tensors',
    comment: 'the inference interface (src/models/encoder.ts: token ids in, float32 rows out) names no tensor: a runtime without libtorch can implement it',
    severity: 'error',
    from: { path: '^src/models/encoder\\.ts$' },
    to: { path: '^src/(native\\.ts|kernels\\.ts|tensor/|nn/|index/)', reachable: true },
  },
  {
    name: 'cli-commands-apart',
    comment:
      "a src/cli command file never imports another command's file: only the shared helpers (command.ts: specs and usage errors; io.ts: paths and outputs; vectors.ts: embedding options; default-model.ts; interrupt.ts: signals of training commands; mine-options.ts: the mining commands' option groups; graph-options.ts: a graph build's options; command-table.ts for run.ts and commands.ts, run.ts for main.ts; command-table.ts itself lists every command, loading each on use)",
    severity: 'error',
    from: { path: '^src/cli/', pathNot: '^src/cli/command-table\\.ts$' },
    to: {
      path: '^src/cli/',
      pathNot: '^src/cli/(command|io|vectors|default-model|interrupt|mine-options|graph-options|command-table|run|help-docs)\\.ts$',
    },
  },
  {
    name: 'no-circular',
    comment: 'no import circle, type imports included (a module that two others need apart goes below both)',
    severity: 'error',
    from: { path: '^src/' },
    to: { circular: true },
  },
  {
    name: 'no-unknown-layer',
    comment: 'every folder of src/ has a place in the layering (add it to RANK in .dependency-cruiser.cjs)',
    severity: 'error',
    from: { path: '^src/', pathNot: `^src/(${layers.map((l) => esc(l) + (l.endsWith('.ts') ? '$' : '/')).join('|')}|index\\.ts$|lite/)` },
    to: {},
  },
);

module.exports = {
  forbidden,
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
    includeOnly: '^src/',
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
  },
};

// Every xling subcommand, in the order of `xling --help` and of docs/cli.md: the words after
// `xling`, the one-line summary (`xling --help` lists them without loading any command) and how
// its module is loaded. A command's module (and what it imports: libtorch-backed layers, the
// server, the job queue) is imported only when that command runs, so starting one command costs
// the imports of that command alone. The summary is the command spec's own (test/cli/cli-startup.test.ts).
import type { CliCommand } from './command.js';

export interface CommandEntry {
  /** Words after `xling`, e.g. ['eval', 'xsim']. */
  path: string[];
  /** The spec's summary (its one line in `xling --help`). */
  summary: string;
  /** The command (its module imported on first use). */
  load(): Promise<CliCommand>;
}

function entry(path: string[], summary: string, load: () => Promise<CliCommand>): CommandEntry {
  return { path, summary, load };
}

export const COMMAND_TABLE: CommandEntry[] = [
  entry(['train'], 'train a multilingual sentence encoder (LASER-style or dual encoder)', async () => (await import('./train.js')).trainCommand),
  entry(['train-lid'], "train the model's language identifier (lid.json) from an N-way TSV", async () => (await import('./train-lid.js')).trainLidCommand),
  entry(['embed'], 'embed sentences (or documents) into vectors (.npy or JSON lines)', async () => (await import('./embed.js')).embedCommand),
  entry(
    ['export'],
    'write the encoder alone (-o DIR), or the word vectors in word2vec text format (--words FILE)',
    async () => (await import('./export.js')).exportCommand,
  ),
  entry(['eval', 'xsim'], 'similarity-search error between every pair of languages', async () => (await import('./eval-xsim.js')).evalXsimCommand),
  entry(['eval', 'bucc'], 'BUCC-style bitext mining precision/recall/F1', async () => (await import('./eval-bucc.js')).evalBuccCommand),
  entry(['eval', 'retrieval'], 'P@1/3/10 of finding aligned sentences or documents', async () => (await import('./eval-retrieval.js')).evalRetrievalCommand),
  entry(['mine'], 'mine parallel sentences from two monolingual corpora', async () => (await import('./mine.js')).mineCommand),
  entry(
    ['scorer', 'train'],
    'train the second-stage mining scorer (gold BUCC pairs, or a parallel TSV)',
    async () => (await import('./scorer.js')).scorerTrainCommand,
  ),
  entry(
    ['scorer', 'score'],
    "score the pairs of a parallel corpus (cleaning it, as Bicleaner does): the scorer's probability, or the margin score, appended to each line",
    async () => (await import('./scorer-score.js')).scorerScoreCommand,
  ),
  entry(['index', 'build'], 'train and fill a faiss index from a .npy of vectors', async () => (await import('./index-cmds.js')).indexBuildCommand),
  entry(['index', 'merge'], 'merge index shards (built from the same trained index) into one', async () => (await import('./index-cmds.js')).indexMergeCommand),
  entry(
    ['search'],
    'k nearest neighbours of query sentences or vectors (through an index, or exactly against a .npy), with the sentences found',
    async () => (await import('./index-cmds.js')).searchCommand,
  ),
  entry(['classify', 'train'], 'train a document classifier on document vectors', async () => (await import('./classify.js')).classifyTrainCommand),
  entry(
    ['classify', 'eval'],
    'accuracy and macro-F1 of a document classifier on labelled documents',
    async () => (await import('./classify.js')).classifyEvalCommand,
  ),
  entry(
    ['serve'],
    'embedding and search HTTP API (TEI- and OpenAI-compatible routes) and a web explorer',
    async () => (await import('./serve.js')).serveCommand,
  ),
  entry(
    ['graph', 'build'],
    'the k-nearest-neighbour graph of a multilingual collection (store, embed, index, query)',
    async () => (await import('./graph.js')).graphBuildCommand,
  ),
  entry(
    ['graph', 'merge'],
    'join the outputs of the shards of a graph build step (vectors, index, neighbours)',
    async () => (await import('./graph.js')).graphMergeCommand,
  ),
  entry(
    ['graph', 'stats'],
    "a graph's size, recall, build times, distance histograms and language mixing",
    async () => (await import('./graph.js')).graphStatsCommand,
  ),
  entry(
    ['graph', 'neighbours'],
    'nearest sentences of a text (or of a sentence id) in every language: paraphrases and translations',
    async () => (await import('./graph.js')).graphNeighboursCommand,
  ),
  entry(
    ['graph', 'path'],
    'the minimax trajectory between two sentences (the path whose largest step is smallest)',
    async () => (await import('./graph.js')).graphPathCommand,
  ),
  entry(
    ['analyze', 'vocab'],
    "how languages share a model's vocabulary: tokens per language, tokens of one language only, symmetrised KL divergences, a neighbour-joining tree",
    async () => (await import('./analyze.js')).analyzeVocabCommand,
  ),
  entry(
    ['probe', 'code-switch'],
    'code-switched English sentences (words replaced by their aligned words in other languages): is the original still the nearest sentence of the collection?',
    async () => (await import('./probe.js')).probeCodeSwitchCommand,
  ),
  entry(
    ['worker'],
    'run xling cluster jobs from a Redis queue (one process per machine or core group)',
    async () => (await import('./cluster.js')).workerCommand,
  ),
  entry(
    ['import', 'laser'],
    "import a LASER BiLSTM encoder (LASER2, LASER3's BiLSTM models) with its SentencePiece model as an xling model directory",
    async () => (await import('./import.js')).importLaserCommand,
  ),
  entry(
    ['import', 'hf'],
    'import a Hugging Face sentence encoder (BERT, XLM-RoBERTa, DistilBERT; sentence-transformers modules) by its Hub name or from a local snapshot',
    async () => (await import('./import-hf.js')).importHfCommand,
  ),
  entry(['cluster', 'embed'], 'xling embed split into shards run by xling workers', async () => (await import('./cluster.js')).clusterEmbedCommand),
  entry(
    ['cluster', 'graph'],
    'xling graph build as stages run by xling workers (embed, add and query split into shards)',
    async () => (await import('./cluster.js')).clusterGraphCommand,
  ),
  entry(
    ['cluster', 'index'],
    'xling index build as jobs run by xling workers: train once, add rows in shards, merge',
    async () => (await import('./cluster.js')).clusterIndexCommand,
  ),
  entry(
    ['cluster', 'mine'],
    'xling mine (exact k-NN, from vectors) with the searches of both directions split into shards',
    async () => (await import('./cluster.js')).clusterMineCommand,
  ),
  entry(
    ['cluster', 'status'],
    'the flows in a queue, or one flow shard by shard (state, progress, tries, worker, failure)',
    async () => (await import('./cluster.js')).clusterStatusCommand,
  ),
  entry(
    ['cluster', 'cancel'],
    'cancel a flow: queued jobs are removed, running ones stop within one chunk',
    async () => (await import('./cluster.js')).clusterCancelCommand,
  ),
  entry(
    ['distill'],
    "distil any model into a small bag-of-n-grams student (MSE to the teacher's vectors; translations regressed onto the teacher's English vectors)",
    async () => (await import('./distill.js')).distillCommand,
  ),
  entry(
    ['corpus'],
    'build an N-way parallel TSV (through English) or a pairwise TSV from translation sources',
    async () => (await import('./corpus.js')).corpusCommand,
  ),
  entry(['align'], 'align the sentences of a document and its translation (vecalign)', async () => (await import('./align.js')).alignCommand),
];

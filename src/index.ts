// Package root: the typed library API.
export * from './tensor/index.js';
export * from './nn/index.js';
export * from './index/index.js';
export { LaserModel, LaserEncoder, LaserDecoder, LaserSentenceEncoder, LASER_DEFAULTS, encodeAsync } from './models/laser/model.js';
export type { LaserConfig } from './models/laser/model.js';
export { padBatch, lengthBatches } from './train-data/batch.js';
export type { TokenBatch } from './train-data/batch.js';
export { DualEncoder, DUAL_DEFAULTS } from './models/dual/model.js';
export type { DualConfig, PoolKind } from './models/dual/model.js';
export type { SentenceEncoder, EncodeOptions } from './models/encoder.js';
export { TensorEncoder } from './models/tensor-encoder.js';
export type { ModelFamily, EncoderLoader, TrainingPlugin, LoadWeights, TrainingTask, SavedModelConfig } from './models/family.js';
export { getFamily, familyKinds, getLoader, loaderKinds, createTask } from './models/registry.js';
export { Tokenizer } from './text/tokenizer.js';
export { normalize as normalizeText, romanize } from './text/normalize.js';
export type { NormalizeOptions } from './text/normalize.js';
export { readNWayTsv, loadNWayTsv, readBucc, readGold, readMoses, readSentences } from './train-data/corpus.js';
export { SentenceEncoderModel } from './embed/model.js';
export { loadSentenceEncoder, writeModelFiles, exportEncoder, readModelConfig } from './embed/model-dir.js';
export { defaultModelPath } from './embed/default-model.js';
export { buildCorpus, CorpusOptions, CorpusSummary } from './corpus/build.js';
export { train } from './train/trainer.js';
export { trainModel } from './train/pipeline.js';
export { parseConfig, loadConfig, defaultConfig } from './models/config.js';
export type { TrainConfig, PathConfig } from './models/config.js';
export { mine, marginScore, unify } from './mine/mine.js';
export { knnChunked, exactSearch, recallVsExact, rescoreExact } from './index/exact.js';
export type { MarginKind, Retrieval, Candidate } from './mine/mine.js';
// The second-stage mining scorer (src/mine/scorer/): train one, load one, score candidates or given pairs, mine with it; a whole mining run;
// a parallel corpus scored pair by pair (xling scorer score: read in passes, its blocks kept in a work directory, evaluated against its labels).
export {
  trainScorerRun,
  loadScorer,
  saveScorer,
  openScorer,
  scoreCandidate,
  mineWithScorer,
  mineTablesWithScorer,
  scoreGivenPairs,
  scoreCorpus,
  ScoredCorpus,
  columnsSource,
  alignedSource,
  scoringKey,
  openBlockStore,
  evaluateLabels,
} from './mine/scorer/index.js';
export type {
  ScorerModel,
  ScorerTrainRun,
  ScorerTrainSummary,
  Assignment,
  Picked,
  OpenedScorer,
  CorpusScoring,
  CorpusSource,
  BlockStore,
  LabelledRun,
  LabelEvaluation,
} from './mine/scorer/index.js';
// A threshold calibrated on a dev pair (--threshold-from), checked against a run's scoring.
export { thresholdFromFile } from './mine/calibration.js';
export type { ScoringOfRun } from './mine/calibration.js';
export { scorerTrainSettings, mineSettings, SCORER_TRAIN_DEFAULTS, MINE_DEFAULTS } from './mine/settings.js';
export type { ScorerTrainSettings, MineSettings } from './mine/settings.js';
export { mineCorpora } from './mine/run.js';
export { alignSentences, alignOverlapVectors, embedderOf } from './align/align.js';
export type { AlignedGroup, AlignOptions, SentenceEmbedder } from './align/align.js';
export { scoreAlignments, parseVecalign } from './align/score.js';
export { evaluateBucc, evaluateAtThreshold } from './util/precision-recall.js';
export { evaluateBuccRun } from './eval/bucc-run.js';
export type { BuccRun, BuccRunResult } from './eval/bucc-run.js';
export { precisionAtK } from './eval/retrieval.js';
export { xsimMatrix } from './eval/xsim-matrix.js';
export { readNpy, writeNpy, NpyRowReader, NpyWriter } from './io/npy.js';
export { readSafetensors, writeSafetensors } from './io/safetensors.js';
// Evaluation building blocks (the experiments/ drivers use these): xsim on a dev set, gold pairs for
// evaluateBucc, document vectors and retrieval, the document classifier, graph queries, language identification.
export { xsimOnDev, xsimOnDevAsync } from './train/validate.js';
export type { DevSet, XsimResult } from './train/validate.js';
export { devSetOf } from './train/prepare.js';
export { goldSet } from './util/precision-recall.js';
export { documentVectors, documentRetrieval, readParallelDocs } from './eval/documents.js';
export { trainClassifier, loadClassifier, predict as predictClasses, evaluate as evaluateClassifier, CLASSIFIER_DEFAULTS } from './classify/classifier.js';
export type { ClassifierOptions, TrainedClassifier, Evaluation as ClassifierEvaluation } from './classify/classifier.js';
export { readLabelledDocs } from './classify/documents.js';
export { GraphReader, neighboursOfText, snap, minimaxPath, openGraphIndex } from './graph/query.js';
export { LanguageIdentifier, loadLanguageIdentifier, LID_CONFIDENCE } from './text/lid.js';
// Line charts as standalone SVG (the trainer's loss and dev curves are drawn with it).
export { lineChart } from './util/svg.js';
export type { LineChartOptions, Series as ChartSeries } from './util/svg.js';
export { lidTrainingText } from './embed/language.js';
// A private redis-server on a free loopback port, for running xling cluster's queue on one machine.
export { startLocalRedis } from './cluster/local-redis.js';
export type { LocalRedis } from './cluster/local-redis.js';

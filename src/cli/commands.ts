// Every xling subcommand.
import { alignCommand } from './align.js';
import { analyzeVocabCommand } from './analyze.js';
import { CliCommand } from './command.js';
import { corpusCommand } from './corpus.js';
import { classifyEvalCommand, classifyTrainCommand } from './classify.js';
import { probeCodeSwitchCommand } from './probe.js';
import {
  clusterCancelCommand,
  clusterEmbedCommand,
  clusterGraphCommand,
  clusterIndexCommand,
  clusterMineCommand,
  clusterStatusCommand,
  workerCommand,
} from './cluster.js';
import { serveCommand } from './serve.js';
import { graphBuildCommand, graphMergeCommand, graphNeighboursCommand, graphPathCommand, graphStatsCommand } from './graph.js';
import { distillCommand } from './distill.js';
import { embedCommand } from './embed.js';
import { evalBuccCommand } from './eval-bucc.js';
import { evalRetrievalCommand } from './eval-retrieval.js';
import { evalXsimCommand } from './eval-xsim.js';
import { exportCommand } from './export.js';
import { importLaserCommand } from './import.js';
import { importHfCommand } from './import-hf.js';
import { indexBuildCommand, indexMergeCommand, searchCommand } from './index-cmds.js';
import { mineCommand } from './mine.js';
import { scorerTrainCommand } from './scorer.js';
import { scorerScoreCommand } from './scorer-score.js';
import { trainCommand } from './train.js';
import { trainLidCommand } from './train-lid.js';

export const commands: CliCommand[] = [
  trainCommand,
  trainLidCommand,
  embedCommand,
  exportCommand,
  evalXsimCommand,
  evalBuccCommand,
  evalRetrievalCommand,
  mineCommand,
  scorerTrainCommand,
  scorerScoreCommand,
  indexBuildCommand,
  indexMergeCommand,
  searchCommand,
  classifyTrainCommand,
  classifyEvalCommand,
  serveCommand,
  graphBuildCommand,
  graphMergeCommand,
  graphStatsCommand,
  graphNeighboursCommand,
  graphPathCommand,
  analyzeVocabCommand,
  probeCodeSwitchCommand,
  workerCommand,
  importLaserCommand,
  importHfCommand,
  clusterEmbedCommand,
  clusterGraphCommand,
  clusterIndexCommand,
  clusterMineCommand,
  clusterStatusCommand,
  clusterCancelCommand,
  distillCommand,
  corpusCommand,
  alignCommand,
];

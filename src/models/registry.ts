// Model kinds. A family xling trains (one folder under src/models/) registers its plug-in (config
// sections and checks, the loader) and where its training code is; a kind xling only imports
// registers a loader. Adding one: a line here. Reading, checking and loading a model directory
// imports the plug-ins alone: a family's training module (its model and task for the trainer) is
// imported only when a run trains (createTask), as a library maps a model type to its class.
import { TrainConfig, TrainingTask, EncoderLoader, ModelFamily, TrainingModule } from './family.js';
import type { EncodedCorpus } from '../train-data/examples.js';
import type { TextTokenizer } from '../text/text-tokenizer.js';
import { dualFamily } from './dual/family.js';
import { jmtFamily } from './jmt/family.js';
import { laserFamily } from './laser/family.js';
import { laserLstmLoader } from './laser-lstm/loader.js';
import { hfLoaders } from './hf/family.js';

const FAMILIES: { family: ModelFamily; training: () => Promise<TrainingModule> }[] = [
  { family: laserFamily, training: () => import('./laser/train.js') },
  { family: dualFamily, training: () => import('./dual/train.js') },
  { family: jmtFamily, training: () => import('./jmt/train.js') },
];

/** Kinds that are loaded but not trained from scratch (imported models). */
const IMPORTED: EncoderLoader[] = [laserLstmLoader, ...hfLoaders];

const LOADERS: EncoderLoader[] = [...FAMILIES.map((f) => f.family), ...IMPORTED];

/** The kinds `xling train` can train. */
export function familyKinds(): string[] {
  return FAMILIES.map((f) => f.family.kind);
}

/** Every kind a model directory can have. */
export function loaderKinds(): string[] {
  return LOADERS.map((f) => f.kind);
}

function trained(kind: string, where: string): (typeof FAMILIES)[number] {
  const f = FAMILIES.find((x) => x.family.kind === kind);
  if (!f) {
    const imported = IMPORTED.some((x) => x.kind === kind);
    throw new Error(
      `${where}: ${imported ? `model kind ${JSON.stringify(kind)} is imported, not trained from scratch (trainable: ` : `unknown model kind ${JSON.stringify(kind)} (known: `}${familyKinds().join(', ')})`,
    );
  }
  return f;
}

/** The training plug-in of a kind; the error lists the kinds that can be trained. */
export function getFamily(kind: string, where = 'model'): ModelFamily {
  return trained(kind, where).family;
}

/**
 * The model of a configuration's family (`cfg.model`) and its training task, built by the
 * family's training module, imported on the first call.
 */
export async function createTask(cfg: TrainConfig, tok: TextTokenizer, corpus: EncodedCorpus, log: (line: string) => void): Promise<TrainingTask> {
  const { createTask } = await trained(cfg.model, 'model').training();
  return createTask(cfg, tok, corpus, log);
}

/** The loader of a model directory's kind; the error lists the known kinds. */
export function getLoader(kind: string, where = 'model'): EncoderLoader {
  const f = LOADERS.find((x) => x.kind === kind);
  if (!f) throw new Error(`${where}: unknown model kind ${JSON.stringify(kind)} (known: ${loaderKinds().join(', ')})`);
  return f;
}

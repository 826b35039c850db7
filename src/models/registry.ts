// Model kinds. A family xling trains (one folder under src/models/) registers both its loader and
// its training plug-in; a kind xling only imports registers a loader. Adding one: a line here.
import { EncoderLoader, ModelFamily } from './family.js';
import { dualFamily } from './dual/family.js';
import { jmtFamily } from './jmt/family.js';
import { laserFamily } from './laser/family.js';
import { laserLstmLoader } from './laser-lstm/loader.js';
import { hfLoaders } from './hf/family.js';

const FAMILIES: ModelFamily[] = [laserFamily, dualFamily, jmtFamily];

/** Kinds that are loaded but not trained from scratch (imported models). */
const IMPORTED: EncoderLoader[] = [laserLstmLoader, ...hfLoaders];

const LOADERS: EncoderLoader[] = [...FAMILIES, ...IMPORTED];

/** The kinds `xling train` can train. */
export function familyKinds(): string[] {
  return FAMILIES.map((f) => f.kind);
}

/** Every kind a model directory can have. */
export function loaderKinds(): string[] {
  return LOADERS.map((f) => f.kind);
}

/** The training plug-in of a kind; the error lists the kinds that can be trained. */
export function getFamily(kind: string, where = 'model'): ModelFamily {
  const f = FAMILIES.find((x) => x.kind === kind);
  if (!f) {
    const imported = IMPORTED.some((x) => x.kind === kind);
    throw new Error(
      `${where}: ${imported ? `model kind ${JSON.stringify(kind)} is imported, not trained from scratch (trainable: ` : `unknown model kind ${JSON.stringify(kind)} (known: `}${familyKinds().join(', ')})`,
    );
  }
  return f;
}

/** The loader of a model directory's kind; the error lists the known kinds. */
export function getLoader(kind: string, where = 'model'): EncoderLoader {
  const f = LOADERS.find((x) => x.kind === kind);
  if (!f) throw new Error(`${where}: unknown model kind ${JSON.stringify(kind)} (known: ${loaderKinds().join(', ')})`);
  return f;
}

// Model families by kind. Adding a family: one folder under src/models/ and one line here.
import { ModelFamily } from './family.js';
import { dualFamily } from './dual/family.js';
import { jmtFamily } from './jmt/family.js';
import { laserFamily } from './laser/family.js';

const FAMILIES: ModelFamily[] = [
  laserFamily,
  dualFamily,
  jmtFamily,
];

export function familyKinds(): string[] { return FAMILIES.map((f) => f.kind); }

/** The family of a kind; the error lists the known kinds. */
export function getFamily(kind: string, where = 'model'): ModelFamily {
  const f = FAMILIES.find((x) => x.kind === kind);
  if (!f) throw new Error(`${where}: unknown model kind ${JSON.stringify(kind)} (known: ${familyKinds().join(', ')})`);
  return f;
}

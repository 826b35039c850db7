// Language identification (src/text/lid-core.ts, the classifier without Node) with the file
// system: reading and writing `lid.json` in a model directory.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomicSync } from '../util/atomic.js';
import { LanguageIdentifier, LID_FILE, setLanguageIdentifierSaver } from './lid-core.js';

export * from './lid-core.js';

setLanguageIdentifierSaver((lid, modelDir) => {
  const f = join(modelDir, LID_FILE);
  writeFileAtomicSync(f, JSON.stringify(lid.toJSON()) + '\n');
  return f;
});

/** The identifier stored in a model directory (`lid.json`), or null when it has none. */
export function loadLanguageIdentifier(modelDir: string): LanguageIdentifier | null {
  const f = join(modelDir, LID_FILE);
  if (!existsSync(f)) return null;
  let x: unknown;
  try {
    x = JSON.parse(readFileSync(f, 'utf8'));
  } catch (e) {
    throw new Error(`${f}: not valid JSON (${(e as Error).message})`);
  }
  return LanguageIdentifier.fromJSON(x, f);
}

// The default model of the CLI and the library (used when no model directory is given): the
// package's models/default/, resolved from this module's location (dist/src/embed/ → the package
// root), never from the current directory. The same folder as xling/lite's defaultModelPath().
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The package's models/default directory. */
export function defaultModelPath(): string {
  return fileURLToPath(new URL('../../../models/default', import.meta.url));
}

let told = false;

/**
 * The model directory to use: the one given, else the default (said once on stderr unless quiet;
 * an error naming the folder when the package has none).
 */
export function modelOrDefault(
  given: string | undefined,
  quiet = false,
  say: (line: string) => void = (l) => {
    process.stderr.write(l);
  },
): string {
  if (given !== undefined) return given;
  const dir = defaultModelPath();
  if (!existsSync(`${dir}/config.json`))
    throw new Error(`no --model given and the package has no default model (${dir} is missing or incomplete); pass --model DIR`);
  if (!quiet && !told) {
    say(`[xling] no --model given: using the default model ${dir}\n`);
    told = true;
  }
  return dir;
}

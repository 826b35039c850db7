// A JSON file read whole and parsed (ECMA-404 text, as JSON.parse takes it), with one rule for its
// errors: a file that cannot be read and a text that is not JSON are each said by the caller's own
// wording (which names the file, or the option or setting that gave it, and what is wrong).

import { readFileSync } from 'node:fs';

/** How the errors of readJsonFile are worded: the file could not be read (its errno code, if any), or its text is not JSON. */
export interface JsonFileErrors {
  unreadable(error: NodeJS.ErrnoException): string;
  invalid(error: Error): string;
}

/** The default wording: `cannot read PATH: …` and `PATH: invalid JSON: …`. */
export const jsonFileErrors = (path: string): JsonFileErrors => ({
  unreadable: (e) => `cannot read ${path}: ${e.message}`,
  invalid: (e) => `${path}: invalid JSON: ${e.message}`,
});

/** The value of the JSON file at `path`; an unreadable file or a text that is not JSON throws an Error worded by `errors`. */
export function readJsonFile<T = unknown>(path: string, errors: JsonFileErrors = jsonFileErrors(path)): T {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(errors.unreadable(e as NodeJS.ErrnoException));
  }
  try {
    return JSON.parse(text) as T;
  } catch (e) {
    throw new Error(errors.invalid(e as Error));
  }
}

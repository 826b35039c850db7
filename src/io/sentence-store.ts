// The sentences behind an index: row i of the index is line i of the store. A store file is
// `lang<TAB>sentence` per line (the language shown and used for grouping), or plain sentences.
import { readLines } from './lines.js';

export interface SentenceStore {
  readonly size: number;
  text(i: number): string;
  lang(i: number): string | null;
}

/** Loads a store file into memory (one line per index row). */
export async function loadStore(path: string): Promise<SentenceStore> {
  const texts: string[] = [],
    langs: (string | null)[] = [];
  let tagged: boolean | null = null;
  for await (const { line, no } of readLines(path)) {
    const tab = line.indexOf('\t');
    const isTagged = tab > 0 && /^[a-z]{2,3}(_[a-z]{2,4})?$/i.test(line.slice(0, tab));
    if (tagged === null) tagged = isTagged;
    if (tagged && !isTagged) throw new Error(`${path}:${no}: expected lang<TAB>sentence like the lines before`);
    texts.push(tagged ? line.slice(tab + 1) : line);
    langs.push(tagged ? line.slice(0, tab) : null);
  }
  if (!texts.length) throw new Error(`${path}: empty sentence store`);
  return { size: texts.length, text: (i) => texts[i]!, lang: (i) => langs[i]! };
}

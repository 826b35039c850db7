// Labelled documents for classification: label<TAB>id<TAB>text per line (the DDTP task files).
import { readLines } from '../io/input.js';

export interface LabelledDocs {
  labels: string[];
  ids: string[];
  texts: string[];
}

/** Reads label<TAB>id<TAB>text lines (blank lines skipped); errors name the file and line. */
export async function readLabelledDocs(path: string): Promise<LabelledDocs> {
  const labels: string[] = [],
    ids: string[] = [],
    texts: string[] = [];
  for await (const { line, no } of readLines(path)) {
    if (!line.trim()) continue;
    const c = line.split('\t');
    if (c.length < 3 || !c[0] || !c[2]!.trim()) throw new Error(`${path}:${no}: expected label<TAB>id<TAB>text`);
    labels.push(c[0]);
    ids.push(c[1]!);
    texts.push(c.slice(2).join(' '));
  }
  if (!labels.length) throw new Error(`${path}: no documents`);
  return { labels, ids, texts };
}

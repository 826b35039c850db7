// From files to training inputs: the N-way TSV corpus, its joint tokenizer, token ids, dev sets.
import { TextTokenizer } from '../text/text-tokenizer.js';
import { EncodedCorpus } from '../data/examples.js';
import { DevSet } from './validate.js';
import { loadNWayTsv } from '../data/corpus.js';

export interface NWayTable { langs: string[]; rows: Map<string, string>[] }

export async function loadTable(path: string): Promise<NWayTable> {
  const t = await loadNWayTsv(path);
  return { langs: t.langs, rows: t.rows };
}

/** Token ids of every cell of the languages the paths use. */
export function encodeTable(t: NWayTable, tok: TextTokenizer, langs: string[] = t.langs): EncodedCorpus {
  const ids = new Map<string, (Int32Array | undefined)[]>();
  for (const l of langs) ids.set(l, t.rows.map((r) => { const s = r.get(l); return s ? tok.encode(s) : undefined; }));
  return { langs, rows: t.rows.length, ids };
}

/** Dev pairs (l, en) for each language with at least minRows aligned rows (as the reference scores). */
export function devSetOf(t: NWayTable, langs: string[] | null, minRows = 200, maxRows = Infinity): DevSet {
  const pairs: DevSet['pairs'] = new Map();
  for (const l of langs ?? t.langs) {
    if (l === 'en') continue;
    const rows = t.rows.filter((r) => r.get(l) && r.get('en')).slice(0, maxRows);
    if (rows.length < minRows) continue;
    pairs.set(l, { src: rows.map((r) => r.get(l)!), en: rows.map((r) => r.get('en')!) });
  }
  return { pairs };
}

// Multilingual sentence sources for commands that read a whole collection (graph store, vocabulary
// analysis): every column of an N-way TSV (header = language codes), some of its columns, or a text
// file of one language. Streamed: a collection never has to fit in memory as rows.
import { parseLangFile, readLines } from '../io/input.js';
import { isMetaColumn, LANG_CODE } from './corpus.js';

export type SentenceSource = { tsv: string; langs?: string[] } | { text: string; lang: string };

/**
 * Command-line forms: an N-way TSV(.gz) (every column), TSV:de,en (those columns), or LANG=FILE
 * (the code checked: an unknown one is an error naming `what`, the option).
 */
export function parseSources(data: string[], what = '--data'): SentenceSource[] {
  return data.map((d) => {
    const eq = parseLangFile(d, what);
    if (eq.lang !== undefined) return { text: eq.file, lang: eq.lang };
    const cols = /^(.+\.tsv(?:\.gz)?):([a-z_,]+)$/i.exec(d);
    if (cols) return { tsv: cols[1]!, langs: cols[2]!.split(',') };
    return { tsv: d };
  });
}

/** The error of a first line that is not an N-way TSV's header (a text file given without LANG=). */
export function notAHeader(file: string, line: string): string {
  return `${file}:1: not an N-way TSV (its first line '${line.slice(0, 40)}${line.length > 40 ? '…' : ''}' is not a header of language codes); for a text file of one language give LANG=FILE, e.g. en=${file}`;
}

export function sourcePath(s: SentenceSource): string {
  return 'text' in s ? s.text : s.tsv;
}

/** Every non-empty sentence of the sources with its language, in file order (line breaks inside a cell become spaces). */
export async function* readSources(sources: SentenceSource[]): AsyncGenerator<{ lang: string; text: string }> {
  for (const src of sources) {
    let n = 0;
    if ('text' in src) {
      for await (const { line } of readLines(src.text)) {
        const text = line.replace(/\r+/g, ' ').trim();
        if (text) {
          n++;
          yield { lang: src.lang, text };
        }
      }
    } else {
      let header: string[] | null = null;
      for await (const { line, no } of readLines(src.tsv)) {
        const cells = line.split('\t');
        if (!header) {
          header = cells;
          if (!header.every((l) => LANG_CODE.test(l) || isMetaColumn(l))) throw new Error(notAHeader(src.tsv, line));
          for (const l of src.langs ?? []) if (!header.includes(l)) throw new Error(`${src.tsv}: no column '${l}' (columns: ${header.join(', ')})`);
          continue;
        }
        if (cells.length !== header.length) throw new Error(`${src.tsv}:${no}: ${cells.length} columns, header has ${header.length}`);
        for (let i = 0; i < cells.length; i++) {
          const text = cells[i]!.replace(/[\r\n]+/g, ' ').trim();
          if (text && !isMetaColumn(header[i]!) && (!src.langs || src.langs.includes(header[i]!))) {
            n++;
            yield { lang: header[i]!, text };
          }
        }
      }
    }
    if (!n) throw new Error(`${sourcePath(src)}: no sentences${'tsv' in src && src.langs ? ` in column(s) ${src.langs.join(', ')}` : ''}`);
  }
}

// An N-way parallel TSV (xling's corpus format: a header of language codes, one row per text,
// empty cells for missing translations; `#`-prefixed metadata columns such as #source) as a
// source of `xling corpus`, so that corpora are merged and deduplicated with other sources.
// Rows carry no document, so none of them is held out for a dev set; they were cleaned, split and
// filtered by length when that corpus was built, and are taken as they are (kind 'row').
import { isMetaColumn, SOURCE_COLUMN } from '../train-data/corpus.js';
import { readLines } from '../io/input.js';
import { normalizeLang } from './langs.js';
import { SourceReader, TranslationUnit } from './types.js';

export const nwayTsvReader: SourceReader = {
  name: 'nway-tsv',
  accepts(file, head) {
    if (!/\.tsv(\.gz)?$/i.test(file)) return false;
    if (head[0] === 0x1f && head[1] === 0x8b) return true; // gzip: the header is checked when read
    const first = head.toString('utf8').split('\n')[0]!.replace(/\r$/, '');
    return first.split('\t').every((c) => isMetaColumn(c) || normalizeLang(c) === c);
  },
  async *read(file, ctx): AsyncIterable<TranslationUnit> {
    let cols: (string | undefined)[] | null = null;
    let srcCol = -1;
    for await (const { line, no } of readLines(file)) {
      const cells = line.split('\t');
      if (!cols) {
        cols = cells.map((c) => (isMetaColumn(c) ? undefined : normalizeLang(c)));
        cells.forEach((c, i) => {
          if (!isMetaColumn(c) && cols![i] !== c) throw new Error(`${file}:1: header must be language codes, got '${c}'`);
        });
        srcCol = cells.indexOf(SOURCE_COLUMN);
        continue;
      }
      if (cells.length !== cols.length) {
        ctx.onProblem({ file, line: no, message: `${cells.length} columns, header has ${cols.length}` });
        continue;
      }
      const texts = new Map<string, string>();
      cells.forEach((c, i) => {
        const l = cols![i];
        if (l && c) texts.set(l, c);
      });
      yield { texts, source: ctx.source ?? (srcCol >= 0 && cells[srcCol] ? cells[srcCol]! : file), kind: 'row' };
    }
    if (!cols) throw new Error(`${file}: empty file (no header)`);
  },
};

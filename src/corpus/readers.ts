// The format readers `xling corpus` tries on each file, in order (the first that accepts a file
// reads it), and the reader of document sets (folders of translated documents, one per language).
import { gettextReader } from './gettext.js';
import { nwayTsvReader } from './tsv.js';
import { ReadContext, SourceReader, TranslationUnit } from './types.js';

export interface DocumentSetReader {
  isDocumentSet(root: string): boolean;
  read(root: string, ctx: ReadContext & { align?: unknown }): AsyncIterable<TranslationUnit>;
}

export function corpusReaders(): SourceReader[] {
  return [gettextReader, nwayTsvReader];
}

export function documentSetReader(): DocumentSetReader | undefined {
  return undefined;
}

// The format readers `xling corpus` tries on each file, in order (the first that accepts a file
// reads it), and the reader of document sets (folders of translated documents, one per language).
import { SentenceEmbedder } from '../align/align.js';
import { chromePakReader } from './chrome-pak.js';
import { cldrReader } from './cldr.js';
import { cldrMainReader } from './cldr-main.js';
import { dingReader, edictReader } from './dictionary.js';
import { findDocumentSets, readDocumentSet, DocumentSetStats } from './docs.js';
import { freedictReader } from './freedict.js';
import { mediawikiReader } from './mediawiki.js';
import { megaglestReader } from './megaglest.js';
import { filletsReader } from './fillets.js';
import { gettextReader } from './gettext.js';
import { mosesReader } from './moses.js';
import { mozillaLangpackReader } from './mozilla.js';
import { qmReader } from './qm.js';
import { renpyReader } from './renpy.js';
import { stringTableReader } from './stringtable.js';
import { tmxReader } from './tmx.js';
import { tuxpaintStampReader } from './tuxpaint.js';
import { nwayTsvReader } from './tsv.js';
import { ReadContext, SourceReader, TranslationUnit } from './types.js';
import { xliffReader } from './xliff.js';

export interface DocumentSetReader {
  /** The document sets at or below a folder. */
  find(root: string): string[];
  read(root: string, ctx: ReadContext & { align?: SentenceEmbedder; stats?: DocumentSetStats }): AsyncIterable<TranslationUnit>;
}

export function corpusReaders(): SourceReader[] {
  return [
    gettextReader,
    qmReader,
    tmxReader,
    xliffReader,
    cldrReader,
    cldrMainReader,
    dingReader,
    edictReader,
    freedictReader,
    renpyReader,
    megaglestReader,
    mediawikiReader,
    filletsReader,
    stringTableReader,
    tuxpaintStampReader,
    chromePakReader,
    mozillaLangpackReader,
    mosesReader,
    nwayTsvReader,
  ];
}

export function documentSetReader(): DocumentSetReader {
  return { find: findDocumentSets, read: readDocumentSet };
}

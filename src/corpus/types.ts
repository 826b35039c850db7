// What every translation source yields to `xling corpus`: translation units (the same text in
// several languages) with their provenance. Readers of each format (gettext catalogs, TMX, XLIFF,
// Moses two-file corpora, CLDR annotations, document sets aligned by structure) produce them;
// the corpus writer cleans, deduplicates and groups them into an N-way TSV through English or a
// pairwise TSV.

/** The kind of text a unit holds; cleaning and length rules depend on it. */
/** 'row': a row of a corpus built before (an N-way TSV), taken as it is: no sentence split, no length rules. */
export type TextKind = 'message' | 'prose' | 'phrase' | 'row';

export interface TranslationUnit {
  /**
   * Language code (already normalised with normalizeLang) → text. Texts are plain: the reader has
   * removed its format's markup (XML inline tags, gettext accelerators, ...) and un-escaped it.
   */
  texts: Map<string, string>;
  /** Provenance: the source package, or the file a unit came from (the TSV's provenance column). */
  source: string;
  /** The document (or catalog) within the source: dev sets are held out by document. */
  doc?: string;
  kind: TextKind;
}

/** A problem with one input file: reported and skipped, never fatal for the run. */
export interface SourceProblem {
  file: string;
  /** 1-based line when known */
  line?: number;
  message: string;
}

export interface ReadContext {
  /** Provenance given by the caller (a package name); defaults to the file's path. */
  source?: string;
  /** Called for each bad file or entry that is skipped. */
  onProblem(p: SourceProblem): void;
  /** Called as units are read, for progress. */
  onProgress?(files: number, units: number): void;
}

/** A format reader: finds its files under a path and reads their units. */
export interface SourceReader {
  /** Short name, e.g. 'gettext', 'tmx'. */
  name: string;
  /** Whether this reader takes the file (by name and, when needed, its first bytes). */
  accepts(file: string, head: Buffer): boolean;
  /** Units of one file; errors for the whole file are thrown (the caller reports and skips it). */
  read(file: string, ctx: ReadContext): AsyncIterable<TranslationUnit>;
}

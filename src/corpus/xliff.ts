// XLIFF reader (OASIS XML Localisation Interchange File Format 1.2, and 2.0/2.1/2.2).
// XLIFF 1.x: a unit per <trans-unit> with a <target>; languages from <file source-language
// target-language> (a <source>/<target> xml:lang wins); <alt-trans> proposals and <seg-source>
// are not read; targets in state "new" or "needs-translation" are not translations yet. Inline:
// <g> and <mrk> keep their text, <x/>, <bx/>, <ex/> are empty, the native code inside <ph>,
// <bpt>, <ept>, <it> (and the <sub> flows inside them) is dropped.
// XLIFF 2.x: a unit per <segment> with a <target> (a segment is what its tools align; the
// <ignorable> whitespace between segments is not read); languages from <xliff srcLang trgLang>.
// Inline: <pc> and <mrk> keep their text; <ph/>, <sc/>, <ec/>, <sm/>, <em/>, <cp/> are empty.
// Both: translate="no" on a file, group or unit skips it; the document id is the <file>'s
// original (or id) after the path. Streamed with saxes: memory is bounded by one unit.
import { extname } from 'node:path';
import type { ReadContext, SourceReader, TranslationUnit } from './types.js';
import { normalizeLang } from './langs.js';
import { FileProblems, rootElement, unitTexts, xmlEvents, type XmlOpen } from './xml.js';

/** Inline elements whose content is native code (or a sub-flow inside one): dropped. */
const CODE = new Set(['ph', 'bpt', 'ept', 'it', 'sub', 'x', 'bx', 'ex', 'sc', 'ec', 'sm', 'em', 'cp']);
const UNTRANSLATED = new Set(['new', 'needs-translation']);

export const xliffReader: SourceReader = {
  name: 'xliff',
  accepts(file: string, head: Buffer): boolean {
    const ext = extname(file.toLowerCase().replace(/\.gz$/, ''));
    if (ext === '.xlf' || ext === '.xliff' || ext === '.xlif') return true;
    return ext === '.xml' && rootElement(head) === 'xliff';
  },
  read(file: string, ctx: ReadContext): AsyncIterable<TranslationUnit> {
    return readXliff(file, ctx);
  },
};

function checkLang(file: string, ev: XmlOpen, attr: string, value: string | undefined): string | undefined {
  if (value !== undefined && normalizeLang(value) === undefined) {
    throw new Error(`${file}:${ev.line}: <${ev.name} ${attr}="${value}">: not a language code`);
  }
  return value;
}

/** The reader's state across the events of one file; `open` and `close` take the element events, `text` the character data. */
class XliffParse {
  private depth = 0;
  private v2 = false;
  // languages of the document (2.x) or of the current <file> (1.x)
  private docSrc: string | undefined;
  private docTrg: string | undefined;
  private fileSrc: string | undefined;
  private fileTrg: string | undefined;
  private doc: string;
  private readonly skipStack: boolean[] = []; // translate="no" in force, per open file/group/unit
  // the unit being read (1.x <trans-unit>, 2.x <segment>)
  private unitDepth = -1;
  private unitLine = 0;
  private unitUntranslated = false;
  private srcText: string | undefined;
  private trgText: string | undefined;
  private srcLang: string | undefined;
  private trgLang: string | undefined;
  private trgLine = 0;
  private collecting: 'source' | 'target' | null = null;
  private pieces: string[] = [];
  private skip = 0; // depth inside code elements of the text being collected

  constructor(
    private readonly file: string,
    private readonly source: string,
    private readonly problems: FileProblems,
  ) {
    this.doc = file;
  }

  text(text: string): void {
    if (this.collecting && this.skip === 0) this.pieces.push(text);
  }

  open(ev: XmlOpen): void {
    this.depth++;
    if (this.collecting) {
      if (this.skip > 0 || CODE.has(ev.name)) this.skip++;
    } else if (this.depth === 1) this.root(ev);
    else if (ev.name === 'source' || ev.name === 'target') this.startText(ev, ev.name);
    else this.openContainer(ev);
  }

  /** A finished unit when `ev` closes one. */
  close(ev: { name: string }): TranslationUnit | undefined {
    this.depth--;
    if (this.collecting) {
      if (this.skip > 0) this.skip--;
      else if (ev.name === this.collecting && this.depth === this.unitDepth) {
        if (this.collecting === 'source') this.srcText ??= this.pieces.join('');
        else this.trgText ??= this.pieces.join('');
        this.collecting = null;
        this.pieces = [];
      }
      return undefined;
    }
    let unit: TranslationUnit | undefined;
    if (this.unitDepth >= 0 && this.depth === this.unitDepth - 1 && (ev.name === 'trans-unit' || ev.name === 'segment')) {
      unit = this.finishUnit();
      this.unitDepth = -1;
    }
    if (ev.name === 'file' || ev.name === 'group' || ev.name === 'unit' || ev.name === 'trans-unit') this.skipStack.pop();
    return unit;
  }

  private root(ev: XmlOpen): void {
    const { file } = this;
    if (ev.name !== 'xliff') throw new Error(`${file}:${ev.line}: not an XLIFF file (its root element is <${ev.name}>, not <xliff>)`);
    const version = ev.attrs['version'] ?? '';
    this.v2 = version.startsWith('2') || (version === '' && ev.attrs['srcLang'] !== undefined) || (ev.attrs['xmlns'] ?? '').includes(':xliff:document:2');
    if (this.v2) {
      this.docSrc = checkLang(file, ev, 'srcLang', ev.attrs['srcLang']);
      this.docTrg = checkLang(file, ev, 'trgLang', ev.attrs['trgLang']);
      if (this.docSrc === undefined) throw new Error(`${file}:${ev.line}: <xliff> has no srcLang`);
    }
  }

  private get skipped(): boolean {
    return this.skipStack.length > 0 && this.skipStack[this.skipStack.length - 1]!;
  }

  /** <file>, <group>, <unit>, <trans-unit>, <segment>. */
  private openContainer(ev: XmlOpen): void {
    const { file } = this;
    if (ev.name === 'file' || ev.name === 'group' || ev.name === 'unit' || ev.name === 'trans-unit')
      this.skipStack.push(this.skipped || ev.attrs['translate'] === 'no');
    if (ev.name === 'file') {
      this.doc = `${file}#${ev.attrs['original'] ?? ev.attrs['id'] ?? ''}`.replace(/#$/, '');
      if (!this.v2) {
        this.fileSrc = checkLang(file, ev, 'source-language', ev.attrs['source-language']);
        this.fileTrg = checkLang(file, ev, 'target-language', ev.attrs['target-language']);
        if (this.fileSrc === undefined) throw new Error(`${file}:${ev.line}: <file> has no source-language`);
      }
    } else if ((ev.name === 'trans-unit' && !this.v2) || (ev.name === 'segment' && this.v2)) this.startUnit(ev);
  }

  private startUnit(ev: XmlOpen): void {
    this.unitDepth = this.skipped ? -1 : this.depth;
    this.unitLine = ev.line;
    this.unitUntranslated = false;
    this.srcText = this.trgText = this.srcLang = this.trgLang = undefined;
  }

  /** A unit's <source> or <target>: collects its text. */
  private startText(ev: XmlOpen, which: 'source' | 'target'): void {
    if (this.unitDepth < 0 || this.depth !== this.unitDepth + 1) return;
    this.collecting = which;
    this.pieces = [];
    this.skip = 0;
    const lang = checkLang(this.file, ev, 'xml:lang', ev.attrs['xml:lang']);
    if (which === 'source') this.srcLang = lang;
    else {
      this.trgLang = lang;
      this.trgLine = ev.line;
      if (!this.v2 && UNTRANSLATED.has(ev.attrs['state'] ?? '')) this.unitUntranslated = true;
    }
  }

  private finishUnit(): TranslationUnit | undefined {
    const { v2, srcText, trgText } = this;
    if (srcText === undefined) {
      this.problems.report('no source', this.unitLine, `a <${v2 ? 'segment' : 'trans-unit'}> without <source>; skipped`);
      return undefined;
    }
    if (trgText === undefined || this.unitUntranslated || trgText.trim() === '') return undefined;
    const sl = this.srcLang ?? (v2 ? this.docSrc : this.fileSrc);
    const tl = this.trgLang ?? (v2 ? this.docTrg : this.fileTrg);
    if (tl === undefined) {
      throw new Error(
        `${this.file}:${this.trgLine}: a <target> in no language (${v2 ? '<xliff> has no trgLang' : '<file> has no target-language'} and the <target> no xml:lang)`,
      );
    }
    const { texts } = unitTexts([
      [sl!, srcText],
      [tl, trgText],
    ]);
    return texts ? { texts, source: this.source, doc: this.doc, kind: 'prose' } : undefined;
  }
}

async function* readXliff(file: string, ctx: ReadContext): AsyncGenerator<TranslationUnit> {
  const problems = new FileProblems(file, ctx);
  const parse = new XliffParse(file, ctx.source ?? file, problems);
  try {
    for await (const batch of xmlEvents(file)) {
      const out: TranslationUnit[] = [];
      for (const ev of batch) {
        if (ev.kind === 'text') parse.text(ev.text);
        else if (ev.kind === 'open') parse.open(ev);
        else {
          const unit = parse.close(ev);
          if (unit) out.push(unit);
        }
      }
      yield* out;
    }
  } finally {
    problems.finish();
  }
}

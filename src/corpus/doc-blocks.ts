// The block sequence of one translated document (Mallard `.page`, DocBook XML, HTML): each text
// block in a fixed order with its element path, the id scope it sits in and its plain text. The
// document-set reader pairs the blocks of the same file in two languages by position and path.
//
// A block is the text of one non-inline element (Mallard `p`, `title`, `desc`, `item`, `td`;
// DocBook `para`, `title`, `entry`; HTML `p`, `h1`-`h6`, `li`, `td`, `dt`, `dd`, `caption`,
// Publican's `div class="para"`), without the text of the blocks nested in it (a footnote or a
// sub-list becomes its own block; the text around it stays one block). Blocks come in the order
// their elements close, which is the same in every language of the same structure. Inline
// elements (`em`, `gui`, `link`, `code`, `span` ...) give their text; verbatim blocks (Mallard
// `screen` and block `code`, DocBook `programlisting`, `screen`, `synopsis`, HTML `pre`, `script`,
// `style`), comments, index terms, page chrome (HTML `head`, `header`, `footer`, `nav`, elements
// marked `hidden`, generated navigation and tables of contents) and Mallard/DocBook metadata
// (credits, revisions; `desc`, `title` and abstracts are kept) give none. An empty
// cross-reference, whose text the formatter fills in, leaves GENERATED_TEXT in its place. A block
// whose text is all inside code-like inline elements (`<code>`, `<cmd>`, `<file>`, `<literal>`
// ...) is marked `code` and left unpaired: it is a command or a file name, not a sentence.
//
// XML is parsed with saxes (strict XML 1.0 with namespaces; a DOCTYPE with an internal subset, and
// so any entity definition, is refused); HTML with htmlparser2 (the WHATWG-style tolerant
// tokenizer, entities decoded). Specs: Mallard 1.0 (http://projectmallard.org/1.0/), DocBook 4.5
// and 5.x element sets.

import { SaxesParser } from 'saxes';
import { Parser as HtmlParser } from 'htmlparser2';

export type DocFormat = 'mallard' | 'docbook' | 'html';

export interface DocBlock {
  /** Element path of the block: its non-inline ancestors and itself, e.g. `page/section/steps/item/p` */
  path: string;
  /** The nearest enclosing element id (with the block's own), '' when none */
  scope: string;
  /** Plain text, whitespace collapsed, leading section numbering ("6.2.1. ") removed */
  text: string;
  /** All of the block's text sits in code-like inline elements */
  code: boolean;
  /** 1-based line of the block's element */
  line: number;
}

/** A file that cannot be read as its format: the message names the line. */
export class DocParseError extends Error {
  constructor(
    message: string,
    readonly line?: number,
  ) {
    super(message);
  }
}

const MALLARD_NS = 'http://projectmallard.org/1.0/';
const DOCBOOK_NS = 'http://docbook.org/ns/docbook';
const DOCBOOK_ROOTS = new Set([
  'book',
  'article',
  'chapter',
  'section',
  'sect1',
  'sect2',
  'sect3',
  'part',
  'appendix',
  'preface',
  'refentry',
  'reference',
  'set',
  'glossary',
  'bibliography',
  'index',
  'colophon',
  'topic',
  'dedication',
]);

interface Rules {
  /** inline elements: their text joins the enclosing block */
  inline: Set<string>;
  /** inline elements whose text is code-like */
  code: Set<string>;
  /** elements dropped with all their content */
  skip: Set<string>;
  /** metadata containers: only these children are read, the others are dropped */
  info: Set<string>;
  infoKeep: Set<string>;
  /** elements that are inline inside text-holding parents and verbatim blocks elsewhere */
  inlineInText?: Set<string>;
  /** parents whose content is inline text (for inlineInText) */
  textParents?: Set<string>;
  /** elements that stand for a space */
  space: Set<string>;
  /** inline elements whose text the formatter generates when they are empty (a cross-reference) */
  generated: Set<string>;
  /** key combinations and menu paths: their parts joined as formatters show them (Ctrl+P, Edit ▸ Copy) */
  joined?: Map<string, string>;
}

/**
 * Stands for the text of an empty cross-reference (Mallard `<link xref="..."/>`, DocBook
 * `<xref/>`), which the formatter fills with the target's title: a sentence holding it is not
 * paired (its text would miss words).
 */
export const GENERATED_TEXT = '\ufffc';

const set = (s: string) => new Set(s.split(/\s+/).filter(Boolean));

const MALLARD: Rules = {
  inline: set('app cmd em file gui guiseq hi input key keyseq link output span sys var'),
  code: set('cmd code file input output sys var'),
  skip: set('screen comment media'),
  info: set('info'),
  infoKeep: set('desc title'),
  inlineInText: set('code'),
  textParents: set('p title subtitle desc cite app cmd em file gui guiseq hi input key keyseq link output span sys var'),
  space: new Set(),
  generated: set('link'),
  joined: new Map([
    ['keyseq', '+'],
    ['guiseq', ' ▸ '],
  ]),
};

const DOCBOOK: Rules = {
  inline: set(`abbrev accel acronym anchor application citation citetitle classname code command
    computeroutput constant database email emphasis envar errorcode errorname errortype exceptionname
    filename firstterm foreignphrase function glossterm guibutton guiicon guilabel guimenu
    guimenuitem guisubmenu hardware interfacename keycap keycode keycombo keysym link literal markup
    menuchoice methodname mousebutton olink option optional package parameter phrase productname
    productnumber prompt property quote replaceable returnvalue shortcut subscript superscript
    symbol systemitem tag termdef token trademark type uri userinput varname wordasword xref ulink
    citerefentry refentrytitle manvolnum personname firstname surname orgname`),
  code: set(`classname code command computeroutput constant envar filename function literal markup
    option package parameter prompt property replaceable returnvalue symbol systemitem tag token
    type uri userinput varname email keycap keycombo keysym`),
  skip: set(`programlisting programlistingco screen screenco literallayout synopsis cmdsynopsis
    funcsynopsis classsynopsis fieldsynopsis methodsynopsis constructorsynopsis destructorsynopsis
    indexterm remark comment imageobject imageobjectco videoobject audioobject textobject
    inlinemediaobject address toc lot include`),
  info: set(`info bookinfo articleinfo chapterinfo sectioninfo sect1info sect2info sect3info
    sect4info sect5info prefaceinfo appendixinfo partinfo setinfo refentryinfo refsectioninfo
    refsect1info refsect2info refsect3info glossaryinfo bibliographyinfo indexinfo referenceinfo`),
  infoKeep: set('title subtitle titleabbrev abstract legalnotice'),
  space: set('sbr'),
  generated: set('xref link olink'),
  joined: new Map([
    ['keycombo', '+'],
    ['menuchoice', ' ▸ '],
  ]),
};

const HTML: Rules = {
  inline: set(`a abbr acronym b bdi bdo big br cite code data del dfn em font i img ins kbd label
    mark q s samp small span strike strong sub sup time tt u var wbr`),
  code: set('code kbd samp tt var'),
  skip: set(`head header footer script style noscript template pre nav svg math textarea select object iframe
    canvas audio video rt rp button`),
  info: new Set(),
  infoKeep: new Set(),
  space: set('br wbr'),
  generated: new Set(),
};

/**
 * Page chrome of generated HTML, dropped by class: DocBook XSL's navigation header and footer,
 * Publican's `docnav` (truncated neighbour titles), tables of contents (the headings again).
 */
const HTML_CHROME = set('docnav navheader navfooter toc breadcrumbs breadcrumb');

/**
 * Ids a formatter numbers by position (`id-1.9.17.2`, `id2345`, `d0e123`): in a translation whose
 * structure differs they may name other elements, so they do not make scopes.
 */
const POSITIONAL_ID = /^(?:[a-z]{0,2}|id)[-_.]?\d[\d.]*(?:[a-z]\d+)*$/i;

interface Frame {
  name: string;
  path: string;
  scope: string;
  parts: string[];
  /** characters of non-space text outside and inside code-like inline elements */
  plain: number;
  coded: number;
  line: number;
  /** code-like inline elements open in this frame */
  codeDepth: number;
}

/** Collects the blocks of one document from open/text/close events. */
class BlockCollector {
  readonly blocks: DocBlock[] = [];
  private frames: Frame[] = [];
  /** names of all open elements (inline ones included) */
  private open: { name: string; kind: 'frame' | 'inline' | 'skip' | 'code'; letters?: number; children?: number }[] = [];
  private skipDepth = 0;

  constructor(private rules: Rules) {}

  openTag(name: string, id: string | undefined, hidden: boolean, line: number): void {
    if (this.skipDepth > 0) {
      this.skipDepth++;
      return;
    }
    const parent = this.open.length ? this.open[this.open.length - 1]!.name : undefined;
    const r = this.rules;
    const inInfo = parent !== undefined && r.info.has(parent);
    if (hidden || r.skip.has(name) || (inInfo && !r.infoKeep.has(name))) {
      this.skipDepth = 1;
      this.open.push({ name, kind: 'skip' });
      return;
    }
    if (r.inlineInText?.has(name)) {
      if (parent !== undefined && r.textParents!.has(parent)) {
        this.open.push({ name, kind: 'code' });
        this.frames[this.frames.length - 1]!.codeDepth++;
      } else {
        this.skipDepth = 1;
        this.open.push({ name, kind: 'skip' });
      }
      return;
    }
    if (r.inline.has(name) && this.frames.length > 0) {
      if (r.space.has(name)) this.text(' ');
      const up = this.open[this.open.length - 1];
      const sep = up === undefined ? undefined : r.joined?.get(up.name);
      if (sep !== undefined && (up!.children = (up!.children ?? 0) + 1) > 1) this.text(sep);
      const isCode = r.code.has(name);
      const f = this.frames[this.frames.length - 1]!;
      this.open.push({ name, kind: isCode ? 'code' : 'inline', letters: f.plain + f.coded });
      if (isCode) this.frames[this.frames.length - 1]!.codeDepth++;
      return;
    }
    const up = this.frames[this.frames.length - 1];
    this.frames.push({
      name,
      path: up ? `${up.path}/${name}` : name,
      scope: (id !== undefined && !POSITIONAL_ID.test(id) ? id : undefined) ?? up?.scope ?? '',
      parts: [],
      plain: 0,
      coded: 0,
      line,
      codeDepth: 0,
    });
    this.open.push({ name, kind: 'frame' });
  }

  closeTag(): void {
    if (this.skipDepth > 1) {
      this.skipDepth--;
      return;
    }
    const top = this.open.pop();
    if (top === undefined) return;
    if (top.kind === 'skip') {
      this.skipDepth = 0;
      return;
    }
    if (top.kind === 'code' || top.kind === 'inline') {
      const f = this.frames[this.frames.length - 1]!;
      if (top.kind === 'code') f.codeDepth--;
      if (this.rules.generated.has(top.name) && top.letters === f.plain + f.coded) f.parts.push(GENERATED_TEXT);
      return;
    }
    const f = this.frames.pop()!;
    const text = cleanBlockText(f.parts.join(''));
    if (text !== '') this.blocks.push({ path: f.path, scope: f.scope, text, code: f.plain === 0 && f.coded > 0, line: f.line });
  }

  text(t: string): void {
    if (this.skipDepth > 0) return;
    const f = this.frames[this.frames.length - 1];
    if (f === undefined) return;
    f.parts.push(t);
    // letters and digits count, punctuation between code elements does not
    const n = t.replace(/[^\p{L}\p{N}]+/gu, '').length;
    if (f.codeDepth > 0) f.coded += n;
    else f.plain += n;
  }

  /** Blocks of elements left open at the end (tolerant HTML) */
  finish(): DocBlock[] {
    while (this.open.length > 0) {
      this.skipDepth = Math.min(this.skipDepth, 1);
      this.closeTag();
    }
    return this.blocks;
  }
}

/** Whitespace collapsed; soft hyphens and zero-width spaces dropped; leading "6.2.1. " numbering removed. */
export function cleanBlockText(s: string): string {
  return s
    .replace(/[\u00ad\u200b]/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^(?:\d+\.)+\d*\s+(?=\S)/, '');
}

/** The format of a document file by its name, or undefined when it is not one. */
export function docFormatOf(file: string): 'xml' | 'html' | undefined {
  const f = file.toLowerCase();
  if (/\.(page|xml|docbook|dbk)$/.test(f)) return 'xml';
  if (/\.(html?|xhtml)$/.test(f)) return 'html';
  return undefined;
}

/** Text of a file's bytes: UTF-8 unless the file declares another encoding; invalid bytes are an error. */
export function decodeDocument(bytes: Buffer, kind: 'xml' | 'html'): string {
  const head = bytes.subarray(0, 2048).toString('latin1');
  const m =
    kind === 'xml' ? /^\s*<\?xml[^>]*encoding\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(head) : /<meta[^>]*charset\s*=\s*["']?([A-Za-z0-9._-]+)/i.exec(head);
  const label = m ? m[1]!.toLowerCase() : 'utf-8';
  let dec: InstanceType<typeof TextDecoder>;
  try {
    dec = new TextDecoder(label, { fatal: true });
  } catch {
    throw new DocParseError(`unknown encoding "${label}"`);
  }
  try {
    return dec.decode(bytes);
  } catch {
    throw new DocParseError(`not valid ${label}`);
  }
}

/** Blocks of a Mallard or DocBook document (the format from its root element). */
export function xmlBlocks(text: string): { format: DocFormat; blocks: DocBlock[] } {
  const parser = new SaxesParser({ xmlns: true, position: true });
  let collector: BlockCollector | undefined;
  let format: DocFormat | undefined;
  let failure: DocParseError | undefined;
  const fail = (msg: string) => {
    if (!failure) failure = new DocParseError(msg, parser.line);
  };
  parser.on('error', (e) => fail(e.message));
  parser.on('doctype', (d) => {
    if (d.includes('[')) fail(`line ${parser.line}: a DOCTYPE with an internal subset (entity definitions) is refused`);
  });
  parser.on('opentag', (node) => {
    if (failure) return;
    const local = node.local;
    if (collector === undefined) {
      if (node.uri === MALLARD_NS) format = 'mallard';
      else if (node.uri === DOCBOOK_NS || (node.uri === '' && DOCBOOK_ROOTS.has(local))) format = 'docbook';
      else {
        fail(`root element <${node.name}> is neither Mallard (${MALLARD_NS}) nor DocBook`);
        return;
      }
      collector = new BlockCollector(format === 'mallard' ? MALLARD : DOCBOOK);
    }
    // elements of other namespaces (ITS rules, XInclude, experimental Mallard extensions) hold no prose
    const foreign = node.uri !== '' && node.uri !== MALLARD_NS && node.uri !== DOCBOOK_NS;
    const idAttr = node.attributes['id'] ?? node.attributes['xml:id'];
    const id = idAttr === undefined ? undefined : typeof idAttr === 'string' ? idAttr : idAttr.value;
    collector.openTag(
      foreign ? `{${node.uri}}${local}` : local,
      id,
      foreign && !/^http:\/\/projectmallard\.org\/(if|ui|experimental)\//.test(node.uri),
      parser.line,
    );
  });
  parser.on('text', (t) => {
    if (!failure) collector?.text(t);
  });
  parser.on('cdata', (t) => {
    if (!failure) collector?.text(t);
  });
  parser.on('closetag', () => {
    if (!failure) collector?.closeTag();
  });
  try {
    parser.write(text).close();
  } catch (e) {
    fail((e as Error).message);
  }
  if (failure) throw failure;
  if (collector === undefined || format === undefined) throw new DocParseError('no root element');
  return { format, blocks: collector.finish() };
}

/** Blocks of an HTML (or XHTML) document. */
export function htmlBlocks(text: string): DocBlock[] {
  const collector = new BlockCollector(HTML);
  // line of an offset, for the blocks' lines
  const newlines: number[] = [];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) newlines.push(i);
  const lineAt = (pos: number) => {
    let lo = 0,
      hi = newlines.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (newlines[mid]! < pos) lo = mid + 1;
      else hi = mid;
    }
    return lo + 1;
  };
  // LibreOffice help's system and application switches: variants hidden until a script shows the
  // reader's; in an inline switch (a key name) the default variant is kept, in a block switch all
  // variants (each is whole paragraphs)
  const classes: string[][] = [];
  const parser = new HtmlParser(
    {
      onopentag(name, attribs) {
        const cls = attribs['class'] === undefined ? [] : attribs['class'].split(/\s+/);
        const parent = classes[classes.length - 1] ?? [];
        classes.push(cls);
        let hidden = 'hidden' in attribs || attribs['aria-hidden'] === 'true' || cls.some((c) => HTML_CHROME.has(c));
        if (parent.includes('switch')) hidden = false;
        if (parent.includes('switchinline')) hidden = !(attribs['id'] ?? '').startsWith('default');
        collector.openTag(name, attribs['id'], hidden, lineAt(parser.startIndex));
      },
      ontext(t) {
        collector.text(t);
      },
      onclosetag() {
        classes.pop();
        collector.closeTag();
      },
    },
    { decodeEntities: true, recognizeSelfClosing: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(text);
  parser.end();
  return collector.finish();
}

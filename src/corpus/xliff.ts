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

async function* readXliff(file: string, ctx: ReadContext): AsyncGenerator<TranslationUnit> {
  const source = ctx.source ?? file;
  let depth = 0;
  let v2 = false;
  // languages of the document (2.x) or of the current <file> (1.x)
  let docSrc: string | undefined, docTrg: string | undefined;
  let fileSrc: string | undefined, fileTrg: string | undefined;
  let doc = file;
  const skipStack: boolean[] = []; // translate="no" in force, per open file/group/unit
  // the unit being read (1.x <trans-unit>, 2.x <segment>)
  let unitDepth = -1;
  let unitLine = 0;
  let unitUntranslated = false;
  let srcText: string | undefined, trgText: string | undefined;
  let srcLang: string | undefined, trgLang: string | undefined;
  let trgLine = 0;
  let collecting: 'source' | 'target' | null = null;
  let pieces: string[] = [];
  let skip = 0; // depth inside code elements of the text being collected
  const problems = new FileProblems(file, ctx);
  try {
    for await (const batch of xmlEvents(file)) {
      const out: TranslationUnit[] = [];
      for (const ev of batch) {
        if (ev.kind === 'text') {
          if (collecting && skip === 0) pieces.push(ev.text);
          continue;
        }
        if (ev.kind === 'open') {
          depth++;
          if (collecting) {
            if (skip > 0 || CODE.has(ev.name)) skip++;
            continue;
          }
          if (depth === 1) {
            if (ev.name !== 'xliff') throw new Error(`${file}:${ev.line}: not an XLIFF file (its root element is <${ev.name}>, not <xliff>)`);
            const version = ev.attrs['version'] ?? '';
            v2 = version.startsWith('2') || (version === '' && ev.attrs['srcLang'] !== undefined) || (ev.attrs['xmlns'] ?? '').includes(':xliff:document:2');
            if (v2) {
              docSrc = checkLang(file, ev, 'srcLang', ev.attrs['srcLang']);
              docTrg = checkLang(file, ev, 'trgLang', ev.attrs['trgLang']);
              if (docSrc === undefined) throw new Error(`${file}:${ev.line}: <xliff> has no srcLang`);
            }
            continue;
          }
          const inherited = skipStack.length > 0 && skipStack[skipStack.length - 1]!;
          switch (ev.name) {
            case 'file':
              skipStack.push(inherited || ev.attrs['translate'] === 'no');
              doc = `${file}#${ev.attrs['original'] ?? ev.attrs['id'] ?? ''}`.replace(/#$/, '');
              if (!v2) {
                fileSrc = checkLang(file, ev, 'source-language', ev.attrs['source-language']);
                fileTrg = checkLang(file, ev, 'target-language', ev.attrs['target-language']);
                if (fileSrc === undefined) throw new Error(`${file}:${ev.line}: <file> has no source-language`);
              }
              break;
            case 'group':
              skipStack.push(inherited || ev.attrs['translate'] === 'no');
              break;
            case 'unit': // 2.x
              skipStack.push(inherited || ev.attrs['translate'] === 'no');
              break;
            case 'trans-unit': // 1.x
              skipStack.push(inherited || ev.attrs['translate'] === 'no');
              if (!v2) startUnit(ev);
              break;
            case 'segment':
              if (v2) startUnit(ev);
              break;
            case 'source':
            case 'target':
              if (unitDepth >= 0 && depth === unitDepth + 1) {
                collecting = ev.name;
                pieces = [];
                skip = 0;
                const lang = checkLang(file, ev, 'xml:lang', ev.attrs['xml:lang']);
                if (ev.name === 'source') srcLang = lang;
                else {
                  trgLang = lang;
                  trgLine = ev.line;
                  if (!v2 && UNTRANSLATED.has(ev.attrs['state'] ?? '')) unitUntranslated = true;
                }
              }
              break;
          }
          continue;
        }
        // close
        depth--;
        if (collecting) {
          if (skip > 0) {
            skip--;
            continue;
          }
          if (ev.name === collecting && depth === unitDepth) {
            if (collecting === 'source') srcText ??= pieces.join('');
            else trgText ??= pieces.join('');
            collecting = null;
            pieces = [];
          }
          continue;
        }
        if (unitDepth >= 0 && depth === unitDepth - 1 && (ev.name === 'trans-unit' || ev.name === 'segment')) {
          const unit = finishUnit();
          if (unit) out.push(unit);
          unitDepth = -1;
        }
        if (ev.name === 'file' || ev.name === 'group' || ev.name === 'unit' || ev.name === 'trans-unit') skipStack.pop();
      }
      yield* out;
    }
  } finally {
    problems.finish();
  }

  function startUnit(ev: XmlOpen): void {
    unitDepth = depth;
    unitLine = ev.line;
    unitUntranslated = false;
    srcText = trgText = srcLang = trgLang = undefined;
    const skipped = skipStack.length > 0 && skipStack[skipStack.length - 1]!;
    if (skipped) unitDepth = -1;
  }

  function finishUnit(): TranslationUnit | undefined {
    if (srcText === undefined) {
      problems.report('no source', unitLine, `a <${v2 ? 'segment' : 'trans-unit'}> without <source>; skipped`);
      return undefined;
    }
    if (trgText === undefined || unitUntranslated || trgText.trim() === '') return undefined;
    const sl = srcLang ?? (v2 ? docSrc : fileSrc);
    const tl = trgLang ?? (v2 ? docTrg : fileTrg);
    if (tl === undefined) {
      throw new Error(
        `${file}:${trgLine}: a <target> in no language (${v2 ? '<xliff> has no trgLang' : '<file> has no target-language'} and the <target> no xml:lang)`,
      );
    }
    const { texts } = unitTexts([
      [sl!, srcText],
      [tl, trgText],
    ]);
    return texts ? { texts, source, doc, kind: 'prose' } : undefined;
  }
}

// TMX reader (Translation Memory eXchange, LISA TMX 1.4b; 1.1–1.3 read the same way): a unit per
// <tu>, its <tuv>s' languages from xml:lang (or the older `lang` attribute of TMX 1.1–1.3), its
// texts the <seg>s' text. Inline markup: the native code of <bpt>, <ept>, <it>, <ph> and <ut> is
// dropped, and so is <sub> (sub-flow text, e.g. a tooltip inside a code, is not part of the
// sentence); <hi> is highlighting, its text kept. <prop>s and <note>s are not text. Streamed with
// saxes: TMX files from OPUS are gigabytes; memory is bounded by one <tu>.
import type { ReadContext, SourceReader, TranslationUnit } from './types.js';
import { FileProblems, rootElement, unitTexts, xmlEvents } from './xml.js';
import { extname } from 'node:path';

/** Inline elements whose content is native code (or a sub-flow), not the segment's text. */
const CODE = new Set(['bpt', 'ept', 'it', 'ph', 'ut', 'sub']);

export const tmxReader: SourceReader = {
  name: 'tmx',
  accepts(file: string, head: Buffer): boolean {
    const f = file.toLowerCase();
    if (f.endsWith('.tmx') || f.endsWith('.tmx.gz')) return true;
    return extname(f) === '.xml' && rootElement(head) === 'tmx';
  },
  read(file: string, ctx: ReadContext): AsyncIterable<TranslationUnit> {
    return readTmx(file, ctx);
  },
};

async function* readTmx(file: string, ctx: ReadContext): AsyncGenerator<TranslationUnit> {
  const source = ctx.source ?? file;
  let root = true;
  let inBody = false;
  // the <tu> being read
  let tuLine = 0;
  let tuvs: [string, string][] | null = null;
  let tuvLang: string | undefined;
  let tuvLine = 0;
  let inTuv = false;
  let seg: string[] | null = null; // text pieces of the <seg> being read
  let skip = 0; // depth inside code elements within the <seg>
  let missingLang = false;
  const problems = new FileProblems(file, ctx);
  try {
    for await (const batch of xmlEvents(file)) {
      const out: TranslationUnit[] = [];
      for (const ev of batch) {
        if (ev.kind === 'text') {
          if (seg && skip === 0) seg.push(ev.text);
          continue;
        }
        if (ev.kind === 'open') {
          if (root) {
            root = false;
            if (ev.name !== 'tmx') throw new Error(`${file}:${ev.line}: not a TMX file (its root element is <${ev.name}>, not <tmx>)`);
            continue;
          }
          if (seg) {
            if (CODE.has(ev.name) || skip > 0) skip++;
            continue;
          }
          switch (ev.name) {
            case 'body':
              inBody = true;
              break;
            case 'tu':
              if (inBody) {
                tuvs = [];
                tuLine = ev.line;
                missingLang = false;
              }
              break;
            case 'tuv':
              if (tuvs) {
                inTuv = true;
                tuvLang = ev.attrs['xml:lang'] ?? ev.attrs['lang'];
                if (tuvLang === undefined && !missingLang) {
                  missingLang = true;
                  tuvLine = ev.line;
                }
              }
              break;
            case 'seg':
              if (inTuv) {
                seg = [];
                skip = 0;
              }
              break;
          }
          continue;
        }
        // close
        if (seg) {
          if (ev.name === 'seg' && skip === 0) {
            if (tuvLang !== undefined) tuvs!.push([tuvLang, seg.join('')]);
            seg = null;
          } else if (skip > 0) skip--;
          continue;
        }
        if (ev.name === 'tuv') inTuv = false;
        else if (ev.name === 'body') inBody = false;
        else if (ev.name === 'tu' && tuvs) {
          const unit = finishTu(tuLine, tuvLine, tuvs, missingLang, problems);
          if (unit) out.push({ texts: unit, source, doc: file, kind: 'prose' });
          tuvs = null;
        }
      }
      yield* out;
    }
  } finally {
    problems.finish();
  }
}

function finishTu(tuLine: number, tuvLine: number, tuvs: [string, string][], missingLang: boolean, problems: FileProblems): Map<string, string> | undefined {
  if (missingLang) {
    problems.report('no language', tuvLine, 'a <tuv> without xml:lang; its <tu> skipped');
    return undefined;
  }
  if (tuvs.length < 2) {
    problems.report('one variant', tuLine, `a <tu> with ${tuvs.length === 0 ? 'no <tuv>' : 'one <tuv>'}; skipped`);
    return undefined;
  }
  const { texts, bad } = unitTexts(tuvs);
  if (bad.length) {
    problems.report(`xml:lang=${JSON.stringify(bad[0])}`, tuLine, `a <tuv> with xml:lang=${JSON.stringify(bad[0])}, not a language code; its <tu> skipped`);
    return undefined;
  }
  return texts;
}

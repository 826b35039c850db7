// Tux Paint stamp descriptions (Debian's tuxpaint-stamps-*: usr/share/tuxpaint/stamps/**/NAME.txt):
// the sentence the drawing program shows and speaks for a stamp ("A white kitten."), in English on
// the file's first line and in other languages on lines `LANG.utf8=TEXT` (`de.utf8=Ein weißes
// Kätzchen.`, `pt_BR.utf8=…`, `sr@latin.utf8=…`; Tux Paint's own layout, written from its catalogs).
// Short everyday descriptions in about 60 languages, few of which other sources cover.
// A unit pairs the English line with every translation; English variants (`en_GB`) are not
// translations. The document is the stamp's folder (`animals/mammals/cats`), so a dev set holds out
// whole folders. A line that is neither is reported; a file that is not UTF-8 is an error.
import { basename, dirname, sep } from 'node:path';
import { readUtf8File } from '../io/lines.js';
import { isEnglishVariant, normalizeLang } from './langs.js';
import type { ReadContext, SourceReader, TranslationUnit } from './types.js';

const LANG_LINE = /^([a-z]{2,3}(?:_[A-Z]{2})?(?:@[a-z]+)?)\.(?:utf8|UTF-8)=(.*)$/;

/** The stamp's folder below `stamps/` (the whole folder path when there is no such folder). */
function stampFolder(file: string): string {
  const parts = dirname(file).split(sep);
  const at = parts.lastIndexOf('stamps');
  return at >= 0 ? parts.slice(at + 1).join('/') || '.' : basename(dirname(file));
}

export const tuxpaintStampReader: SourceReader = {
  name: 'tuxpaint-stamps',
  accepts(file: string, head: Buffer): boolean {
    if (!file.endsWith('.txt')) return false;
    const lines = head.toString('utf8').split('\n', 3);
    return lines.length >= 2 && !LANG_LINE.test(lines[0]!) && LANG_LINE.test(lines[1]!.replace(/\r$/, ''));
  },
  read(file: string, ctx: ReadContext): AsyncIterable<TranslationUnit> {
    return readStamp(file, ctx);
  },
};

async function* readStamp(file: string, ctx: ReadContext): AsyncGenerator<TranslationUnit> {
  const lines = readUtf8File(file).split('\n');
  const english = lines[0]!.replace(/\r$/, '').trim();
  if (!english) throw new Error(`${file}:1: a stamp description starts with its English text; the line is empty`);
  const texts = new Map<string, string>([['en', english]]);
  lines.slice(1).forEach((raw, i) => {
    const line = raw.replace(/\r$/, '');
    if (!line.trim()) return;
    const m = LANG_LINE.exec(line);
    if (!m) {
      ctx.onProblem({ file, line: i + 2, message: 'not a LANG.utf8=TEXT line; skipped' });
      return;
    }
    const lang = normalizeLang(m[1]!);
    const text = m[2]!.trim();
    if (!lang) ctx.onProblem({ file, line: i + 2, message: `'${m[1]}' is no language code; skipped` });
    else if (text && !isEnglishVariant(lang) && !texts.has(lang)) texts.set(lang, text);
  });
  if (texts.size < 2) return;
  const words = english.split(/\s+/).length;
  yield { texts, source: ctx.source ?? file, doc: stampFolder(file), kind: words <= 12 ? 'phrase' : 'prose' };
}

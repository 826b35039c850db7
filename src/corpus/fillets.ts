// Fish Fillets NG's dialogues (Debian's fillets-ng-data): what the two fish and the other
// characters of each level say, one Lua file per level and language
// (`script/LEVEL/dialogs_LANG.lua`). A translated file repeats each English line and gives its
// translation:
//
//   dialogId("vit-hs-klid1", "font_statue", "Citizens, please remain calm.")
//   dialogStr("Občané. Zachovejte klid a rozvahu.")
//
// so each file is read on its own: a unit pairs the third argument of `dialogId` with the
// `dialogStr` after it. Strings are Lua's double-quoted strings (`\"`, `\\`, `\n`); `dialogs_en.lua`
// has no `dialogStr` and gives nothing. The language is the file name's code; a regional variant
// that the corpus folds into its language (`de_CH`) is left out, as its lines repeat the
// language's own.
import { basename, dirname } from 'node:path';
import { readUtf8File } from '../io/lines.js';
import { cleanMessage } from './clean.js';
import { knownLanguage, normalizeLang } from './langs.js';
import type { ReadContext, SourceReader, TranslationUnit } from './types.js';

const STR = String.raw`"((?:[^"\\]|\\.)*)"`;
const PAIR = new RegExp(String.raw`dialogId\(\s*${STR}\s*,\s*${STR}\s*,\s*${STR}\s*\)\s*dialogStr\(\s*${STR}\s*\)`, 'g');

/** A Lua double-quoted string's text. */
function luaString(s: string): string {
  return s.replace(/\\(.)/gs, (_, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : c));
}

/** The code of `dialogs_LANG.lua`, or undefined (an unknown code, or a regional variant folded into its language). */
export function filletsLanguage(file: string): string | undefined {
  const m = /^dialogs_([a-z]{2,3}(?:_[A-Za-z]{2,4})?)\.lua$/.exec(basename(file));
  if (!m) return undefined;
  const lang = normalizeLang(m[1]!);
  if (!lang || !knownLanguage(lang)) return undefined;
  return m[1]!.includes('_') && !lang.includes('_') ? undefined : lang;
}

/** The (id, English, translation) triples of a translated dialogue file. */
export function filletsDialogues(text: string): [string, string, string][] {
  return [...text.matchAll(PAIR)].map((m) => [luaString(m[1]!), luaString(m[3]!), luaString(m[4]!)]);
}

export const filletsReader: SourceReader = {
  name: 'fillets',
  accepts(file: string, head: Buffer): boolean {
    return filletsLanguage(file) !== undefined && head.includes('dialogId(');
  },
  async *read(file: string, ctx: ReadContext): AsyncIterable<TranslationUnit> {
    const lang = filletsLanguage(file);
    if (lang === undefined) throw new Error(`${file}: not a dialogs_LANG.lua file of a language`);
    if (lang === 'en') return;
    const source = ctx.source ?? file;
    const level = basename(dirname(file));
    for (const [, en, tr] of filletsDialogues(readUtf8File(file))) {
      const a = cleanMessage(en, false);
      const b = cleanMessage(tr, false);
      if (!a || !b || a === b) continue;
      yield {
        texts: new Map([
          ['en', a],
          [lang, b],
        ]),
        source,
        doc: level, // a level's dialogue, held out whole
        kind: 'message',
      };
    }
  },
};

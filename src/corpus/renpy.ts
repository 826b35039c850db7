// Ren'Py translation files as translation units: the dialogue and interface strings of visual
// novels, written as characters speak. A game's translations live in `game/tl/LANGUAGE/*.rpy`
// (LANGUAGE is the name the game gives it: `french`, `japanese`, `schinese`), written by Ren'Py's
// "generate translations" and filled in by translators:
//
//   # game/script.rpy:19
//   translate japanese start_915cb944:
//
//       # e "Hello, world."          <- the original statement, as a comment
//       e "こんにちは、世界。"          <- its translation
//
//   translate japanese strings:
//
//       # screens.rpy:12
//       old "Start"
//       new "スタート"
//
// A dialogue block pairs its one original say statement (`who "what"`, `"what"`, `"who" "what"`)
// with its one translated say statement; a block whose translator split or merged lines (not one
// statement each side) is left out. A strings block pairs each `old` with the `new` after it.
// Other blocks (`translate LANGUAGE python:`, `style`) hold no text. Strings are Ren'Py's literals
// ("…", '…' or `…`, backslash escapes); text tags (`{i}`, `{w=0.5}`, `{#comment}`) are removed,
// `{{` and `[[` are literal braces; a string that interpolates a variable (`[player]`) is a
// placeholder and is dropped, as gettext messages with format placeholders are. The language is
// the block's (a name as Steam and Ren'Py spell it, or a code); `translate None` is the game's own
// language and gives nothing. Spec: the Ren'Py documentation, "Translation" and "Text".
import { basename, dirname, sep } from 'node:path';
import { readUtf8File } from '../io/input.js';
import { messageUnit } from './clean.js';
import { isEnglishVariant, knownLanguage, langFromName } from './langs.js';
import type { ReadContext, SourceReader, TranslationUnit } from './types.js';

/** Statements that take a string but say nothing (`voice "a.ogg"`, `play music "x.ogg"`). */
const NOT_SAY = new Set([
  'voice',
  'play',
  'queue',
  'stop',
  'show',
  'scene',
  'hide',
  'image',
  'define',
  'default',
  'call',
  'jump',
  'window',
  'nvl',
  'pause',
  'with',
  'return',
  'pass',
  'label',
  'menu',
  'old',
  'new',
  'translate',
  'init',
  'python',
  'style',
  'screen',
  'transform',
  'at',
  'if',
  'elif',
  'else',
  'while',
]);

/** A string literal at `at` of a line: its raw body and the index after it; undefined when there is none or it is not closed. */
function literalAt(line: string, at: number): { body: string; end: number } | undefined {
  const q = line[at];
  if (q !== '"' && q !== "'" && q !== '`') return undefined;
  let i = at + 1;
  let body = '';
  while (i < line.length) {
    const c = line[i]!;
    if (c === '\\') {
      if (i + 1 >= line.length) return undefined;
      const n = line[i + 1]!;
      body += n === 'n' ? '\n' : n === '\n' ? '' : n; // a backslash before a line break continues the line
      i += 2;
      continue;
    }
    if (c === q) return { body, end: i + 1 };
    body += c;
    i++;
  }
  return undefined;
}

/** Whether a statement ends inside a string literal (one that goes on over the next lines). */
export function endsInLiteral(statement: string): boolean {
  let q: string | undefined;
  for (let i = 0; i < statement.length; i++) {
    const c = statement[i]!;
    if (q === undefined) {
      if (c === '#') return false;
      if (c === '"' || c === "'" || c === '`') q = c;
    } else if (c === '\\') i++;
    else if (c === q) q = undefined;
  }
  return q !== undefined;
}

/** Lines a string literal may span before the file is taken to be broken there. */
const MAX_LITERAL_LINES = 50;

/** What a say statement says, or undefined when the line is not one (or its string is not closed). */
export function sayText(statement: string): string | undefined {
  const s = statement.trim();
  const first = literalAt(s, 0);
  if (first) {
    // "what", or "who" "what"
    const next = s.slice(first.end).match(/^\s+/);
    const second = next ? literalAt(s, first.end + next[0].length) : undefined;
    return second ? second.body : first.body;
  }
  const who = /^([A-Za-z_][\w.]*)\s+/.exec(s);
  if (!who || NOT_SAY.has(who[1]!)) return undefined;
  return literalAt(s, who[0].length)?.body;
}

/**
 * A Ren'Py string as plain text: whitespace runs collapsed (as Ren'Py shows them), text tags
 * removed, literal braces and brackets kept; undefined for a string that interpolates a variable.
 */
export function renpyText(raw: string): string | undefined {
  const s = raw.replace(/%%/g, '%');
  if (/\[[^\]]*\]/.test(s.replace(/\[\[/g, ''))) return undefined;
  return s
    .replace(/\{\{/g, '\u0000')
    .replace(/\{[^{}]*\}/g, '')
    .replace(/\u0000/g, '{')
    .replace(/\[\[/g, '[')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^#+\s*/, ''); // the comments of Ren'Py's interface templates are translated too
}

/** The document of a file: the game's folder and the file's path under `tl/LANGUAGE/` (the same in every language). */
function docOf(file: string): string {
  const parts = file.split(sep);
  const tl = parts.lastIndexOf('tl');
  const game = tl >= 2 && parts[tl - 1] === 'game' ? parts[tl - 2] : tl >= 1 ? parts[tl - 1] : basename(dirname(file));
  return `${game}/${parts.slice(tl + 2).join('/')}`;
}

interface Block {
  kind: 'say' | 'strings' | 'other';
  line: number;
  originals: string[];
  translations: string[];
  pairs: [string, string, number][];
}

/** The (English, translation, line) pairs and the language of a Ren'Py translation file. */
export function parseRenpyTranslations(
  file: string,
  text: string,
  onProblem: (line: number, message: string) => void,
): { lang?: string; pairs: [string, string, number][] } {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const pairs: [string, string, number][] = [];
  let lang: string | undefined;
  let block: Block | undefined;
  let pendingOld: { text: string; line: number } | undefined;
  const close = () => {
    if (!block) return;
    if (block.kind === 'say') {
      const o = block.originals.map(sayText).filter((t) => t !== undefined);
      const t = block.translations.map(sayText).filter((x) => x !== undefined);
      if (o.length === 1 && t.length === 1) pairs.push([o[0]!, t[0]!, block.line]);
    } else if (block.kind === 'strings') pairs.push(...block.pairs);
    block = undefined;
    pendingOld = undefined;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === '') continue;
    if (!/^\s/.test(line)) {
      close();
      const m = /^translate\s+([A-Za-z_]\w*)\s+([A-Za-z_][\w.]*)(?:\s+[^:]*)?\s*:\s*$/.exec(line);
      if (!m) continue; // comments (`# game/script.rpy:19`) and other statements between blocks
      if (lang !== undefined && m[1] !== lang) throw new Error(`${file}:${i + 1}: blocks of two languages in one file (${lang}, ${m[1]})`);
      lang = m[1]!;
      const kind = m[2] === 'strings' ? 'strings' : m[2] === 'python' || m[2] === 'style' ? 'other' : 'say';
      block = { kind, line: i + 1, originals: [], translations: [], pairs: [] };
      continue;
    }
    if (!block || block.kind === 'other') continue;
    const at = i + 1;
    let body = line.trim();
    for (let n = 1; endsInLiteral(body) && n < MAX_LITERAL_LINES && i + 1 < lines.length; n++) body += `\n${lines[++i]!}`;
    if (block.kind === 'say') {
      if (body.startsWith('#')) block.originals.push(body.slice(1).trim());
      else block.translations.push(body);
      continue;
    }
    // strings: `old "…"` then `new "…"`
    const m = /^(old|new)\s+/.exec(body);
    if (!m) continue;
    const lit = literalAt(body, m[0].length);
    if (!lit) {
      onProblem(at, `${m[1]} without a closed string literal`);
      pendingOld = undefined;
      continue;
    }
    if (m[1] === 'old') pendingOld = { text: lit.body, line: at };
    else if (pendingOld) {
      block.pairs.push([pendingOld.text, lit.body, pendingOld.line]);
      pendingOld = undefined;
    } else onProblem(at, 'new without an old before it');
  }
  close();
  return { lang, pairs };
}

export const renpyReader: SourceReader = {
  name: 'renpy',
  accepts(file) {
    return /\.rpym?$/i.test(file) && file.split(sep).slice(0, -2).includes('tl');
  },
  async *read(file: string, ctx: ReadContext): AsyncIterable<TranslationUnit> {
    const text = readUtf8File(file);
    const { lang: name, pairs } = parseRenpyTranslations(file, text, (line, message) => ctx.onProblem({ file, line, message }));
    if (name === undefined || name === 'None') return; // no blocks, or the game's own language
    const lang = langFromName(name);
    if (!lang || !knownLanguage(lang)) throw new Error(`${file}: "${name}" is not a language name or code xling knows`);
    if (lang === 'en' || isEnglishVariant(lang)) return;
    const source = ctx.source ?? file;
    const doc = docOf(file);
    for (const [en, tr] of pairs) {
      const a = renpyText(en),
        b = renpyText(tr);
      if (a === undefined || b === undefined) continue;
      const u = messageUnit(a, b, lang, source, doc);
      if (u) yield u;
    }
  },
};

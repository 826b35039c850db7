// CLDR annotation reader (Unicode CLDR, LDML — UTS #35 part 2 "Annotations": the files
// common/annotations/*.xml and common/annotationsDerived/*.xml). Each file names its locale in
// <identity> (<language type>, optional <script type>, <territory type>) and gives, per emoji or
// symbol (`cp`), a keyword list (`<annotation cp="…">a | b | c</annotation>`, not a sentence: not
// read) and a short name (`<annotation cp="…" type="tts">name</annotation>`): the phrase. A unit
// pairs a locale's name for a cp with the English name from en.xml in the same folder (read once
// per folder and kept; annotationsDerived pairs with annotationsDerived/en.xml). `↑↑↑` marks a
// value inherited from the parent locale: skipped. root.xml and English (en, en_*) yield
// nothing, and so does a regional or script sub-locale whose code folds into its parent's
// (de_CH, es_419, zh_Hant_HK, sr_Cyrl_BA): its few entries are variants of the parent's names,
// not another language. CLDR's `pt` is Brazilian Portuguese (pt_br), `pt_PT` European (pt).
import { basename, dirname, join, resolve } from 'node:path';
import { FileCache, readCached } from '../util/file-cache.js';
import type { ReadContext, SourceReader, TranslationUnit } from './types.js';
import { isEnglishVariant, normalizeLang } from './langs.js';
import { rootElement, XmlOpen, xmlEvents } from './xml.js';

const INHERITED = '↑↑↑';

export const cldrReader: SourceReader = {
  name: 'cldr',
  accepts(file: string, head: Buffer): boolean {
    if (!file.toLowerCase().endsWith('.xml')) return false;
    if (!/^annotations/i.test(basename(dirname(resolve(file))))) return false;
    return rootElement(head) === 'ldml';
  },
  read(file: string, ctx: ReadContext): AsyncIterable<TranslationUnit> {
    return readCldr(file, ctx);
  },
};

/**
 * The corpus's code for a CLDR locale, or undefined when the file yields no units (root, English,
 * a sub-locale folded into its parent's code).
 */
export function cldrLang(language: string, script?: string, territory?: string): string | undefined {
  const lang = language.toLowerCase();
  if (lang === 'root' || lang === 'und') return undefined;
  const full = normalizeLang([language, script, territory].filter((s) => s !== undefined).join('_'));
  if (full === undefined || full === 'en' || isEnglishVariant(full)) return undefined;
  if (lang === 'pt' && script === undefined) {
    if (territory === undefined) return 'pt_br'; // CLDR's pt is pt_Latn_BR
    return territory.toUpperCase() === 'PT' ? 'pt' : undefined; // pt_AO, pt_MZ, …: variants of pt_PT
  }
  if ((script !== undefined || territory !== undefined) && full === normalizeLang(language)) return undefined;
  return full;
}

/** What the <identity> of an LDML file says, and its line. */
export interface LdmlIdentity {
  language?: string;
  script?: string;
  territory?: string;
  variant?: string;
  line: number;
}

/** A reader of an LDML file's elements (those below <ldml>, outside <identity>), walked by walkLdml. */
export interface LdmlVisitor {
  /** An element opens at `depth` (2: a child of <ldml>); `identified`: <identity> was read. True: collect its text. */
  open(ev: XmlOpen, depth: number, identified: boolean): boolean;
  /** An element closes; `text`: its text, trimmed, where open asked for it. */
  close(name: string, depth: number, text: string | undefined): void;
}

type IdentityPart = 'language' | 'script' | 'territory' | 'variant';
const IDENTITY_PARTS = new Set<string>(['language', 'script', 'territory', 'variant'] satisfies IdentityPart[]);

/**
 * Walks an LDML file, streamed: checks its root, reads its <identity> (which must name a
 * language), asks `wanted` whether to go on (no: stop there), and shows every other element to `v`.
 */
export async function walkLdml(file: string, wanted: (id: LdmlIdentity) => boolean, v: LdmlVisitor): Promise<LdmlIdentity> {
  const identity: LdmlIdentity = { line: 0 };
  let depth = 0;
  let inIdentity = false,
    identityDone = false;
  let text: string[] | null = null;
  for await (const batch of xmlEvents(file)) {
    for (const ev of batch) {
      if (ev.kind === 'text') {
        if (text) text.push(ev.text);
      } else if (ev.kind === 'open') {
        depth++;
        if (depth === 1 && ev.name !== 'ldml') throw new Error(`${file}:${ev.line}: not an LDML file (its root element is <${ev.name}>, not <ldml>)`);
        if (depth === 2 && ev.name === 'identity') {
          inIdentity = true;
          identity.line = ev.line;
        } else if (inIdentity && depth === 3 && IDENTITY_PARTS.has(ev.name)) identity[ev.name as IdentityPart] = ev.attrs.type;
        else if (depth > 1 && !inIdentity) text = v.open(ev, depth, identityDone) ? [] : null;
      } else if (--depth === 0) {
        return finishLdml(file, identity, identityDone); // </ldml>
      } else if (inIdentity && depth === 1) {
        inIdentity = false;
        identityDone = true;
        if (identity.language === undefined) throw new Error(`${file}:${identity.line}: <identity> names no <language type>`);
        if (!wanted(identity)) return identity;
      } else if (!inIdentity) {
        v.close(ev.name, depth + 1, text?.join('').trim());
        text = null;
      }
    }
  }
  return finishLdml(file, identity, identityDone);
}

function finishLdml(file: string, identity: LdmlIdentity, identityDone: boolean): LdmlIdentity {
  if (!identityDone) throw new Error(`${file}: no <identity>; the locale is unknown`);
  return identity;
}

interface Annotations {
  identity: LdmlIdentity;
  /** cp → tts name (inherited markers left out) */
  names: Map<string, string>;
}

/**
 * The tts names of an annotation file, streamed. `wanted` is called once the <identity> is read;
 * when it says no, reading stops and the names are empty.
 */
async function readAnnotations(file: string, ctx: ReadContext, wanted: (id: LdmlIdentity) => boolean): Promise<Annotations> {
  const names = new Map<string, string>();
  let cp: string | undefined;
  let cpLine = 0;
  const identity = await walkLdml(file, wanted, {
    open(ev, depth, identified) {
      if (depth === 2 && ev.name === 'annotations' && !identified) {
        throw new Error(`${file}:${ev.line}: <annotations> before <identity>; the locale is unknown`);
      }
      if (depth !== 3 || ev.name !== 'annotation' || ev.attrs['type'] !== 'tts') return false; // keyword lists are not phrases
      cp = ev.attrs['cp'];
      cpLine = ev.line;
      if (cp === undefined) ctx.onProblem({ file, line: ev.line, message: '<annotation type="tts"> without cp; skipped' });
      return cp !== undefined;
    },
    close(name, depth, text) {
      if (text === undefined || depth !== 3 || name !== 'annotation' || text === '' || text === INHERITED) return;
      if (!names.has(cp!)) names.set(cp!, text);
      else if (names.get(cp!) !== text) ctx.onProblem({ file, line: cpLine, message: `a second tts name for ${JSON.stringify(cp)}; the first kept` });
    },
  });
  return { identity, names };
}

/**
 * The English values of a CLDR folder (its en.xml), read once per folder with `read` and kept (read
 * again only if en.xml changes); `why` ends the error of a folder without en.xml.
 */
export function englishOfFolder<T>(
  cache: FileCache<Promise<T>>,
  folder: string,
  why: string,
  read: (file: string) => Promise<{ identity: { language?: string; script?: string; territory?: string }; values: T }>,
): Promise<T> {
  try {
    return readCached(cache, join(folder, 'en.xml'), why, (file) =>
      read(file).then((a) => {
        if (a.identity.language !== 'en' || a.identity.territory !== undefined) {
          throw new Error(`${file}: its <identity> is ${[a.identity.language, a.identity.script, a.identity.territory].filter(Boolean).join('_')}, not en`);
        }
        return a.values;
      }),
    );
  } catch (e) {
    return Promise.reject(e);
  }
}

/** English names per annotations folder. */
const englishCache: FileCache<Promise<Map<string, string>>> = new Map();

function englishNames(folder: string, ctx: ReadContext): Promise<Map<string, string>> {
  return englishOfFolder(englishCache, folder, 'CLDR annotations are paired with the English names of en.xml in their folder', (file) =>
    readAnnotations(file, ctx, () => true).then((a) => ({ identity: a.identity, values: a.names })),
  );
}

async function* readCldr(file: string, ctx: ReadContext): AsyncGenerator<TranslationUnit> {
  const source = ctx.source ?? file;
  let lang: string | undefined;
  let english: Map<string, string> | undefined;
  const a = await readAnnotations(file, ctx, (id) => {
    lang = cldrLang(id.language!, id.script, id.territory);
    return lang !== undefined;
  });
  if (lang === undefined) return;
  english = await englishNames(dirname(file), ctx);
  for (const [cp, name] of a.names) {
    const en = english.get(cp);
    if (en === undefined) continue;
    yield {
      texts: new Map([
        ['en', en],
        [lang, name],
      ]),
      source,
      doc: file,
      kind: 'phrase',
    };
  }
}

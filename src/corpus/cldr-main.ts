// CLDR locale data (Unicode CLDR, LDML — UTS #35: the files common/main/*.xml) as everyday
// phrases: the names a locale gives to languages (Part 2 "Locale Display Names": `<languages>`,
// the two-letter codes, without a script or region), to countries (`<territories>`, the
// two-letter regions), to the Gregorian months and weekdays (Part 4 "Dates": wide format names),
// to the date fields and their relative forms ("yesterday", "next week", "this month"), and to
// units (Part 6 "Units": the long display names, "kilometers", "hours"). Each value is found by
// its element path with the `type` attributes (`localeDisplayNames/territories/territory[DE]`) and
// paired with the value at the same path in en.xml of the same folder (read once per folder, as
// the annotations reader does). Values with an `alt` attribute (short, variant and menu forms),
// `↑↑↑` (inherited) and patterns with placeholders are not read; root, English and sub-locales
// folding into their parent's code give nothing (cldrLang).
import { basename, dirname, resolve } from 'node:path';
import type { FileCache } from '../util/file-cache.js';
import { cldrLang, englishOfFolder, LdmlIdentity, walkLdml } from './cldr.js';
import type { ReadContext, SourceReader, TranslationUnit } from './types.js';
import { rootElement } from './xml.js';

/** The element paths read, as `name[type]` steps below <ldml>. */
const WANTED = [
  /^localeDisplayNames\/languages\/language\[[a-z]{2}\]$/,
  /^localeDisplayNames\/territories\/territory\[[A-Z]{2}\]$/,
  /^dates\/calendars\/calendar\[gregorian\]\/months\/monthContext\[format\]\/monthWidth\[wide\]\/month\[\d+\]$/,
  /^dates\/calendars\/calendar\[gregorian\]\/days\/dayContext\[format\]\/dayWidth\[wide\]\/day\[[a-z]+\]$/,
  /^dates\/fields\/field\[(?:era|year|quarter|month|week|day|weekday|dayperiod|hour|minute|second|zone)\]\/displayName$/,
  /^dates\/fields\/field\[(?:year|quarter|month|week|day|sun|mon|tue|wed|thu|fri|sat)\]\/relative\[-?\d\]$/,
  /^units\/unitLength\[long\]\/unit\[[a-z0-9-]+\]\/displayName$/,
];

const INHERITED = '↑↑↑';

export const cldrMainReader: SourceReader = {
  name: 'cldr-main',
  accepts(file: string, head: Buffer): boolean {
    if (!file.toLowerCase().endsWith('.xml')) return false;
    if (basename(dirname(resolve(file))) !== 'main') return false;
    return rootElement(head) === 'ldml';
  },
  read(file: string, ctx: ReadContext): AsyncIterable<TranslationUnit> {
    return readCldrMain(file, ctx);
  },
};

interface LocaleValues {
  identity: LdmlIdentity;
  values: Map<string, string>;
}

/** The wanted values of a locale file by path; `wanted` is asked once the <identity> is read (no: stop). */
async function readValues(file: string, wanted: (id: LdmlIdentity) => boolean): Promise<LocaleValues> {
  const values = new Map<string, string>();
  const path: string[] = [];
  const alt = [false]; // <ldml> itself
  const identity = await walkLdml(file, wanted, {
    open(ev) {
      const t = ev.attrs.type;
      path.push(t === undefined ? ev.name : `${ev.name}[${t}]`);
      alt.push(alt[alt.length - 1]! || ev.attrs.alt !== undefined || ev.attrs.draft === 'unconfirmed');
      return !alt[alt.length - 1] && WANTED.some((w) => w.test(path.join('/')));
    },
    close(_name, _depth, text) {
      const key = path.join('/');
      if (text && text !== INHERITED && !text.includes('{') && !values.has(key)) values.set(key, text);
      path.pop();
      alt.pop();
    },
  });
  return { identity, values };
}

/** English values per locale-data folder. */
const englishCache: FileCache<Promise<Map<string, string>>> = new Map();

function englishValues(folder: string): Promise<Map<string, string>> {
  return englishOfFolder(englishCache, folder, 'CLDR locale names are paired with the English ones of en.xml in their folder', (file) =>
    readValues(file, () => true),
  );
}

async function* readCldrMain(file: string, ctx: ReadContext): AsyncGenerator<TranslationUnit> {
  const source = ctx.source ?? file;
  let lang: string | undefined;
  const v = await readValues(file, (id) => {
    lang = id.variant === undefined ? cldrLang(id.language!, id.script, id.territory) : undefined;
    return lang !== undefined;
  });
  if (lang === undefined) return;
  const english = await englishValues(dirname(file));
  for (const [key, text] of v.values) {
    const en = english.get(key);
    if (en === undefined || en === text) continue;
    yield {
      texts: new Map([
        ['en', en],
        [lang, text],
      ]),
      source,
      doc: `${basename(file)}#${key.split('/')[1] ?? key}`,
      kind: 'phrase',
    };
  }
}

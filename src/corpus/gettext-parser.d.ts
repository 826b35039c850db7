// Types of the parts of gettext-parser (a well-kept .po/.mo parser without its own types) that xling uses.
declare module 'gettext-parser' {
  export interface GetTextTranslation {
    msgctxt?: string;
    msgid: string;
    msgid_plural?: string;
    msgstr: string[];
    comments?: { translator?: string; reference?: string; extracted?: string; flag?: string; previous?: string };
    obsolete?: boolean;
  }
  export interface GetTextTranslations {
    charset: string;
    headers?: Record<string, string>;
    translations: Record<string, Record<string, GetTextTranslation>>;
  }
  export const po: { parse(buffer: Buffer | string, options?: { defaultCharset?: string; validation?: boolean }): GetTextTranslations };
  export const mo: { parse(buffer: Buffer, defaultCharset?: string): GetTextTranslations };
}

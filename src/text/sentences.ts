// A sentence splitter for documents: after . ! ? … when whitespace and a new sentence follow,
// after the CJK full stops 。！？ (no space needed), and before list bullets (" * ", " • ";
// dashes are not bullets: "name - what it does"). Good enough to average sentence vectors into
// document vectors; a document of one line without such marks is one sentence.

const LATIN_END = /([.!?…]["'»”)\]]*)\s+(?=["'«“([]?[\p{Lu}\p{Lo}\p{N}])/gu;
const CJK_END = /([。！？])/gu;
const BULLET = /\s+(?=[*•]\s)/gu;

export function splitSentences(text: string): string[] {
  const marked = text.replace(LATIN_END, '$1\u0000').replace(CJK_END, '$1\u0000').replace(BULLET, '\u0000');
  const out: string[] = [];
  for (const part of marked.split('\u0000')) {
    const s = part.replace(/^[*•]\s+/, '').trim();
    if (s) out.push(s);
  }
  return out.length ? out : [text.trim()].filter(Boolean);
}

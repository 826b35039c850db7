// The pair model's inputs from text: every sentence's words, each embedded alone by the sentence
// encoder (src/embed/input.ts), and the logits of candidate pairs that mining and scoring add as
// features (xling mine / eval bucc / scorer score --scorer, and the merge of xling cluster mine).
import { vectorsFor } from '../../embed/input.js';
import { Progress } from '../../util/progress.js';
import { pairLogits, PairModel, pairWords, wordIds } from './pair-model.js';
import type { PairLogitsFn } from './score.js';

/** Texts whose words the pair model reads, embedded in `lang` (undefined: identified); lists of the same key share one vocabulary. */
export interface WordList {
  key: string;
  lang: string | undefined;
  texts: string[];
}

/**
 * The pair model's inputs: every text split into words once (pairWords), every distinct word of a
 * key embedded alone by the sentence encoder (in its list's language, centred as `center` says):
 * the vectors [n, dim] in one array (row r + 1 of the word table, row 0 being the padding), and
 * each list's texts as word rows.
 */
export function embedTextWords(
  model: string,
  lists: WordList[],
  o: { center: boolean; dim: number; maxWords: number },
): { vectors: Float32Array; n: number; keys: number; ids: number[][][] } {
  const words = lists.map((l) => l.texts.map((t) => pairWords(t, o.maxWords)));
  const groups = new Map<string, { lang: string | undefined; words: Set<string> }>();
  lists.forEach((l, i) => {
    let g = groups.get(l.key);
    if (!g) groups.set(l.key, (g = { lang: l.lang, words: new Set() }));
    for (const ws of words[i]!) for (const w of ws) g.words.add(w);
  });
  const n = [...groups.values()].reduce((a, g) => a + g.words.size, 0);
  const vectors = new Float32Array(n * o.dim);
  const index = new Map<string, Map<string, number>>();
  let row = 0;
  for (const [key, { lang, words: set }] of groups) {
    const list = [...set];
    if (list.length) {
      const v = vectorsFor(list, undefined, model, `the words of ${lang ?? 'the sentences'}`, {
        lang,
        langFlag: '--src-lang',
        center: o.center,
        label: 'pair',
        quiet: true,
      });
      if (v.d !== o.dim) throw new Error(`the scorer's pair model reads ${o.dim}-dimensional word vectors; --model ${model} gives ${v.d}`);
      vectors.set(v.data, row * o.dim);
    }
    const ix = new Map<string, number>();
    list.forEach((w, i) => ix.set(w, row + i + 1));
    row += list.length;
    index.set(key, ix);
  }
  return { vectors, n, keys: groups.size, ids: lists.map((l, i) => words[i]!.map((ws) => wordIds(ws, index.get(l.key)!))) };
}

/**
 * What xling mine / eval bucc --scorer compute with a scorer's pair model: the words of both
 * sides embedded by --model, then the logit of any candidate pair (row indices).
 */
export function pairLogitsFor(
  pm: PairModel,
  model: string,
  srcText: string[],
  trgText: string[],
  srcLang: string | undefined,
  trgLang: string | undefined,
): PairLogitsFn {
  const e = embedTextWords(
    model,
    [
      { key: 'src', lang: srcLang, texts: srcText },
      { key: 'trg', lang: trgLang, texts: trgText },
    ],
    pm.config,
  );
  const table = pm.wordTable(e.vectors, e.n);
  const [sIds, tIds] = e.ids as [number[][], number[][]];
  return async (src, trg) => {
    const prog = new Progress({ label: 'pair model', unit: 'pairs', total: src.length });
    const z = await pairLogits(
      pm,
      table,
      src.map((s) => sIds[s]!),
      trg.map((t) => tIds[t]!),
      { onProgress: (n) => prog.set(n) },
    );
    prog.done();
    return z;
  };
}

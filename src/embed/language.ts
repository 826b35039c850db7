// Language codes and the one centring rule of every command and the server (the rule and the code
// handling live in src/util/embed-policy.ts, shared with xling/lite, and are re-exported here),
// plus what needs files: the training text of the language identifier that `xling train` stores.
import { readNWayTsv } from '../train-data/corpus.js';
import { LanguageIdentifier } from '../text/lid.js';
import { SpreadSample } from './centering.js';

// the rule itself is plain TypeScript, shared with xling/lite
export {
  AUTO,
  canonicalLang,
  CENTER_MIN_NORM,
  isLangCode,
  LID_CONFIDENCE,
  matchLangCode,
  meanNorm,
  meansNegligible,
  PER_SENTENCE,
  resolveLangCode,
  resolveLangOption,
} from '../util/embed-policy.js';

/**
 * Sentences of each language of training sources (N-way TSVs, optionally .gz), at most `cap` per
 * language spread over the whole file (SpreadSample), for LanguageIdentifier.train.
 */
export async function lidTrainingText(files: string[], o: { langs?: string[]; cap?: number } = {}): Promise<Map<string, string[]>> {
  const by = new Map<string, SpreadSample>();
  const want = o.langs && new Set(o.langs);
  for (const f of files) {
    const it = readNWayTsv(f, { onBad: 'skip' });
    let r = await it.next();
    while (!r.done) {
      for (const [l, t] of r.value.cells) {
        if (want && !want.has(l)) continue;
        let s = by.get(l);
        if (!s) by.set(l, (s = new SpreadSample(o.cap ?? 5000)));
        s.add(t);
      }
      r = await it.next();
    }
    for (const l of want ?? [])
      if (!r.value.langs.includes(l) && !by.has(l)) throw new Error(`--langs: '${l}' is not a column of ${f} (columns: ${r.value.langs.join(' ')})`);
  }
  return new Map([...by].map(([l, s]) => [l, s.lines]));
}

/** Trains the identifier `xling train` stores with a model: every language of the corpus (null with fewer than two). */
export function trainModelIdentifier(byLang: Map<string, string[]>): LanguageIdentifier | null {
  return [...byLang.values()].filter((s) => s.length).length >= 2 ? LanguageIdentifier.train(byLang) : null;
}

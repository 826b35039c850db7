// The worker thread behind LanguageIdentification (identify.ts): holds its own copy of the model's
// language identifier (built from the same lid.json content, so it answers exactly as the model's
// own) and identifies the texts of one batch per message, off the server's event loop.
import { parentPort, workerData } from 'node:worker_threads';
import { LanguageIdentifier } from '../text/lid-core.js';

export interface IdentifyRequest {
  id: number;
  texts: string[];
}
/** Per text: the index of its language in `languages` (-1: no evidence) and its confidence. */
export interface IdentifyReply {
  id: number;
  lang?: Int16Array;
  confidence?: Float64Array;
  error?: string;
}

const lid = LanguageIdentifier.fromJSON((workerData as { lid: unknown }).lid, 'lid.json');
const index = new Map(lid.languages.map((l, i) => [l, i]));
parentPort!.on('message', (m: IdentifyRequest) => {
  try {
    const lang = new Int16Array(m.texts.length),
      confidence = new Float64Array(m.texts.length);
    m.texts.forEach((t, i) => {
      const r = lid.identify(t);
      lang[i] = r ? index.get(r.lang)! : -1;
      confidence[i] = r ? r.confidence : 0;
    });
    parentPort!.postMessage({ id: m.id, lang, confidence } satisfies IdentifyReply, [lang.buffer, confidence.buffer]);
  } catch (e) {
    parentPort!.postMessage({ id: m.id, error: (e as Error).message } satisfies IdentifyReply);
  }
});

// Similarity-search error on a dev set during training: for each language l, the share of
// sentences whose cosine 1-NN among all English dev sentences is not their translation (l→en),
// and the reverse (en→l). The model selection metric of the research.
import { SentenceEncoderModel } from '../embed/model.js';
import { xsimError } from '../eval/xsim-matrix.js';
import { pause } from '../util/pause.js';

export { xsimError };

/** Dev rows: for each language, the sentences aligned with en (same index). */
export interface DevSet {
  pairs: Map<string, { src: string[]; en: string[] }>;
}

export interface XsimResult {
  langs: Record<string, { n: number; l2en: number; en2l: number }>;
  average: number;
}

/** Dev xsim; each side embedded with its language (so per-language centring applies unless center is false). */
export function xsimOnDev(model: SentenceEncoderModel, dev: DevSet, o: { center?: boolean | 'force' } = {}): XsimResult {
  const langs: XsimResult['langs'] = {};
  let sum = 0,
    cnt = 0;
  for (const [l, p] of dev.pairs) {
    const n = p.src.length;
    const X = model.embed(p.src, { lang: l, center: o.center }),
      Y = model.embed(p.en, { lang: 'en', center: o.center });
    const e = xsimError(X, Y, n, model.dim);
    langs[l] = { n, l2en: e.xy, en2l: e.yx };
    sum += e.xy + e.yx;
    cnt += 2;
  }
  return { langs, average: cnt ? sum / cnt : NaN };
}

/**
 * xsimOnDev that lets the event loop run between languages (so a SIGINT handler can abort it);
 * null when `signal` was aborted before it finished.
 */
export async function xsimOnDevAsync(
  model: SentenceEncoderModel,
  dev: DevSet,
  o: { center?: boolean | 'force'; signal?: AbortSignal } = {},
): Promise<XsimResult | null> {
  const langs: XsimResult['langs'] = {};
  let sum = 0,
    cnt = 0;
  for (const [l, p] of dev.pairs) {
    await pause();
    if (o.signal?.aborted) return null;
    const one = xsimOnDev(model, { pairs: new Map([[l, p]]) }, o);
    langs[l] = one.langs[l]!;
    sum += langs[l].l2en + langs[l].en2l;
    cnt += 2;
  }
  return { langs, average: cnt ? sum / cnt : NaN };
}

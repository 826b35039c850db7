// Similarity-search error on a dev set during training: for each language l, the share of
// sentences whose cosine 1-NN among all English dev sentences is not their translation (l→en),
// and the reverse (en→l). The model selection metric of the research.
import { SentenceEncoderModel } from '../embed/model.js';
import { fromArray, noGrad, tidy } from '../tensor/index.js';

/** Dev rows: for each language, the sentences aligned with en (same index). */
export interface DevSet { pairs: Map<string, { src: string[]; en: string[] }> }

export interface XsimResult { langs: Record<string, { n: number; l2en: number; en2l: number }>; average: number }

/** Error rates (%) of 1-NN retrieval between row-aligned embeddings X and Y (both [n, d], normalised). */
export function xsimError(X: Float32Array, Y: Float32Array, n: number, d: number): { xy: number; yx: number } {
  return noGrad(() => tidy(() => {
    const x = fromArray(X, [n, d]), y = fromArray(Y, [n, d]);
    const s = x.matmul(y.t());
    const gold = fromArray(BigInt64Array.from({ length: n }, (_, i) => BigInt(i)));
    const xy = s.argmax(1).ne(gold).float().mean().item();
    const yx = s.argmax(0).ne(gold).float().mean().item();
    return { xy: 100 * xy, yx: 100 * yx };
  }));
}

/** Dev xsim; each side embedded with its language (so per-language centring applies unless center is false). */
export function xsimOnDev(model: SentenceEncoderModel, dev: DevSet, o: { center?: boolean | 'force' } = {}): XsimResult {
  const langs: XsimResult['langs'] = {};
  let sum = 0, cnt = 0;
  for (const [l, p] of dev.pairs) {
    const n = p.src.length;
    const X = model.embed(p.src, { lang: l, center: o.center }), Y = model.embed(p.en, { lang: 'en', center: o.center });
    const e = xsimError(X, Y, n, model.dim);
    langs[l] = { n, l2en: e.xy, en2l: e.yx };
    sum += e.xy + e.yx; cnt += 2;
  }
  return { langs, average: cnt ? sum / cnt : NaN };
}

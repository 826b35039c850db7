// Per-language centring. A multilingual encoder keeps a language-specific offset in its sentence
// vectors (the less trained, the larger); subtracting each language's mean vector before comparing
// across languages removes it (Libovický et al., 2020, "On the language neutrality of pre-trained
// multilingual representations"). The means are fitted on training text at the end of training
// and stored in the model (model.safetensors: center.<lang>); `xling embed --lang xx` applies them.
import { Rng } from '../util/rng.js';
import type { SentenceEncoderModel } from './model.js';

/**
 * Mean of the L2-normalised sentence vectors of up to `perLang` sentences of each language;
 * onProgress gets the sentences embedded since its last call.
 */
export function fitLanguageMeans(
  model: SentenceEncoderModel,
  byLang: Map<string, string[]>,
  perLang: number,
  seed = 0,
  onProgress?: (sentences: number) => void,
): Map<string, Float32Array> {
  const out = new Map<string, Float32Array>();
  const d = model.dim;
  for (const [lang, all] of byLang) {
    if (!all.length) continue;
    const rng = new Rng(`${seed}:${lang}`);
    const pick = all.length > perLang ? rng.sample(all.length, perLang).map((i) => all[i]!) : all;
    let done = 0;
    const v = model.embed(pick, {
      normalize: true,
      center: false,
      onBatch: (n) => {
        onProgress?.(n - done);
        done = n;
      },
    });
    const mu = new Float64Array(d);
    for (let i = 0; i < pick.length; i++) for (let j = 0; j < d; j++) mu[j] += v[i * d + j]!;
    out.set(
      lang,
      Float32Array.from(mu, (x) => x / pick.length),
    );
  }
  return out;
}

export { SpreadSample, spreadSample } from '../util/spread-sample.js';

export { centerRows } from './vectors.js';

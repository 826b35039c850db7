// Embedding without the native backend: an exported bag-of-n-grams dual encoder (xling export) run
// by xling/lite's TypeScript model (src/lite/model.ts), which is a SentenceEncoder
// (src/models/encoder.ts: token ids in, float32 rows out) as the native encoder is, so that the embed
// path's own tokenizer, batching, normalisation and centring (SentenceEncoderModel, InputEmbedder)
// run unchanged over it. loadEncoderForRuntime picks the runtime: the addon where it loads, this otherwise.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LiteModel } from '../lite/model.js';
import { parseSafetensors } from '../lite/safetensors.js';
import { specOf } from '../models/family.js';
import { nativeProblem } from '../tensor/backend.js';
import { loadLanguageIdentifier } from '../text/lid.js';
import { openXlingTokenizer } from '../text/spec.js';
import { NativeBackendMissing } from '../util/native-missing.js';
import { LoadOptions, loadSentenceEncoder, readModelConfig } from './model-dir.js';
import { SentenceEncoderModel } from './model.js';

/**
 * A model directory's sentence encoder on the portable runtime: exported bag-of-n-grams dual
 * encoders (what xling/lite runs); any other model is refused with the native backend's error.
 */
export function loadPortableSentenceEncoder(dir: string, opts: LoadOptions = {}, missing?: NativeBackendMissing): SentenceEncoderModel {
  const cfg = readModelConfig(dir);
  const m = cfg.model as { unit?: string; body?: string } | undefined;
  const refuse = (what: string) =>
    missing ?? new NativeBackendMissing(`${dir} is ${what}: only exported bag-of-n-grams dual encoders run on the portable runtime`);
  if (cfg.kind !== 'dual' || m?.unit === 'token' || (m?.body !== undefined && m.body !== 'none'))
    throw refuse(`a ${cfg.kind} model${m?.body && m.body !== 'none' ? ` with a ${m.body} body` : ''}`);
  if ((opts.precision ?? 'fp32') !== 'fp32')
    throw new Error(`--precision ${opts.precision}: bfloat16 inference is for imported Hugging Face encoders on the native backend`);
  const file = join(dir, 'model.safetensors');
  const raw = readFileSync(file);
  const lite = new LiteModel(
    cfg as ConstructorParameters<typeof LiteModel>[0],
    parseSafetensors(new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength), file),
    file,
  );
  lite.lid = loadLanguageIdentifier(dir);
  const tokenizer = openXlingTokenizer(dir, specOf(dir, cfg));
  return new SentenceEncoderModel(lite, tokenizer, new Map(lite.centers), cfg, lite.lid);
}

let told = false;

/**
 * A model directory's sentence encoder on the native backend where the addon loads, else on the
 * portable runtime (said once on stderr unless quiet). Models the portable runtime cannot run
 * throw NativeBackendMissing.
 */
export function loadEncoderForRuntime(dir: string, opts: LoadOptions = {}, quiet = false): SentenceEncoderModel {
  const missing = nativeProblem();
  if (!missing) return loadSentenceEncoder(dir, opts);
  const model = loadPortableSentenceEncoder(dir, opts, missing);
  if (!quiet && !told) {
    process.stderr.write(`[xling] the native backend is not available (${missing.reason}): embedding on the portable runtime (xling/lite)\n`);
    told = true;
  }
  return model;
}

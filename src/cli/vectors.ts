// Sentence vectors for the CLI: one .npy reader with one dtype rule for every command, and one
// way to embed text with a model (xling embed's options and defaults; src/embed/input.ts) for every command that does.
import { DEFAULTED_MODEL_OPTION } from './default-model.js';
import { usage } from './command.js';
export { openVectors, readVectors, type Vectors } from '../io/vectors.js';
export {
  checkLangOption,
  checkLangOptions,
  cutLinesWarning,
  describeCenter,
  type EmbedSettings,
  InputEmbedder,
  linesCut,
  modelDim,
  vectorsFor,
} from '../embed/input.js';

/** Options of every command that embeds text with a model, with xling embed's defaults (the language option is per input). */
export const EMBED_OPTIONS = {
  center: { type: 'boolean', default: true, help: 'apply per-language centring (--no-center: plain LASER vectors)' },
  forceCenter: {
    type: 'boolean',
    default: false,
    help: "centre even when the model's per-language mean vectors are too small to matter (mean norm below 0.1: not centred by default)",
  },
  batchTokens: { type: 'number', range: { int: true, min: 1 }, help: "max padded tokens per batch (default: the model's, 32000 for token sequences)" },
  batchSentences: { type: 'number', range: { int: true, min: 1 }, help: "max sentences per batch (default: the model's, 4096 for token sequences)" },
} as const;

/** --precision of the commands that run an encoder over text (xling embed, cluster embed, serve). */
export const PRECISION_OPTION = {
  type: 'string',
  choices: ['fp32', 'bf16'],
  default: 'fp32',
  help: "the encoder's arithmetic: bf16 runs an imported Hugging Face encoder's matrices in bfloat16 (about twice the speed on CPUs with AVX512_BF16; cosine to the fp32 vectors > 0.999); other kinds are refused",
} as const;

export const LANG_HELP =
  "the model's mean vector of that language is subtracted (per-language centring; the encoder itself never sees it). Codes are matched to the model's whatever their case and separator (DE, pt-BR, pt_BR) and in ISO 639-1 form (deu, zho_Hant, iw); an unknown code is refused. Default 'auto': identified by the model's language identifier (lid.json) over a sample of non-blank lines spread over the whole input, and centred only when the identification's confidence is at least 0.5; 'auto-per-sentence': each line identified and centred on its own (mixed-language inputs); 'none': no centring";

/** xling embed's input and output options, shared by the commands that do its work elsewhere (xling cluster embed); what is written (--dtype) is each command's own. */
export const EMBED_FILE_OPTIONS = {
  model: DEFAULTED_MODEL_OPTION,
  lang: { type: 'string', help: `language of the input: ${LANG_HELP}` },
  center: EMBED_OPTIONS.center,
  forceCenter: EMBED_OPTIONS.forceCenter,
  normalize: { type: 'boolean', default: true, help: 'L2-normalise vectors (--no-normalize to keep raw)' },
  batchTokens: EMBED_OPTIONS.batchTokens,
  batchSentences: EMBED_OPTIONS.batchSentences,
  precision: PRECISION_OPTION,
} as const;

/** The vectors input of a command that takes it as --vectors NPY or as its first argument (exactly one of them). */
export function vectorsArgument(a: { vectors?: string; _: string[] }): string {
  if (a.vectors !== undefined && a._.length) usage(`give the vectors once: --vectors ${a.vectors} or the argument ${a._[0]}`);
  const v = a.vectors ?? a._[0];
  if (v === undefined) usage('give the vectors: --vectors NPY (or the .npy as the first argument)');
  return v;
}

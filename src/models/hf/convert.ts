// A local Hugging Face snapshot → an xling model directory (config.json with kind 'hf-<arch>',
// model.safetensors with the encoder's weights under `encoder.`, tokenizer.json unchanged).
// Read: config.json (model_type and shape), model.safetensors (or pytorch_model.bin, through the
// allow-list unpickler of src/io/torch-checkpoint.ts), tokenizer.json and, when present,
// sentence-transformers' modules.json (Transformer → Pooling → Dense … → Normalize),
// 1_Pooling/config.json, 2_Dense/{config.json, model.safetensors or pytorch_model.bin}, sentence_bert_config.json
// (max_seq_length) and config_sentence_transformers.json (prompts). Nothing is downloaded here
// (hub.ts fetches a snapshot by name).
import { copyFileSync, existsSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { readSafetensorsHeader } from '../../io/safetensors.js';
import { readTorchCheckpoint, tensorsOf } from '../../io/torch-checkpoint.js';
import { loadTensors, readJson, saveTensors, writeJson } from '../../nn/serialize.js';
import { fromArray, noGrad, Tensor } from '../../tensor/tensor.js';
import { HFTokenizer } from '../../text/hf-tokenizer.js';
import { SavedModelConfig } from '../family.js';
import { DenseSpec, HF_ARCHS, HfActivation, HfArch, HfEncoder, HfModelConfig, PoolMode } from './model.js';

export interface HfImportOptions {
  /** A prompt name of config_sentence_transformers.json, or the prompt text itself ('query: '). */
  prompt?: string;
  /** Ids per input at most (default: sentence-transformers' max_seq_length). */
  maxLength?: number;
  log?: (line: string) => void;
  /** Names the snapshot in errors (default: `--from DIR`). */
  label?: string;
  /** The model's source as recorded in config.json (default: the snapshot folder's name). */
  source?: string;
}

type Json = Record<string, unknown>;

const ACTIVATIONS: Record<string, HfActivation> = {
  gelu: 'gelu',
  gelu_new: 'gelu_tanh',
  gelu_pytorch_tanh: 'gelu_tanh',
  relu: 'relu',
  tanh: 'tanh',
};

/** sentence-transformers' Dense activation_function (a class path) → ours. */
const DENSE_ACTIVATIONS: Record<string, HfActivation> = {
  'torch.nn.modules.activation.Tanh': 'tanh',
  'torch.nn.modules.linear.Identity': 'identity',
  'torch.nn.modules.activation.ReLU': 'relu',
  'torch.nn.modules.activation.Sigmoid': 'sigmoid',
  'torch.nn.modules.activation.GELU': 'gelu',
};

function readOptionalJson(f: string): Json | null {
  return existsSync(f) ? readJson<Json>(f) : null;
}

function num(c: Json, key: string, f: string, dflt?: number): number {
  const v = c[key] ?? dflt;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`${f}: '${key}' must be a number (got ${JSON.stringify(c[key])})`);
  return v;
}

/** A weights file: its tensor names, and a reader of the named tensors (as float32 or their stored dtype). */
interface WeightsSource {
  file: string;
  names: string[];
  load(want: (name: string) => boolean): Map<string, Tensor>;
}

/**
 * The model weights of a folder: model.safetensors, else pytorch_model.bin (torch.save's zip or
 * legacy format, read by the allow-list unpickler: nothing in the file is executed); a clear error
 * for formats not read here.
 */
function weightsSource(dir: string, what: string): WeightsSource {
  const st = join(dir, 'model.safetensors');
  if (existsSync(st)) return { file: st, names: Object.keys(readSafetensorsHeader(st).entries), load: (want) => loadTensors(st, want).tensors };
  if (existsSync(join(dir, 'model.safetensors.index.json')) || existsSync(join(dir, 'pytorch_model.bin.index.json')))
    throw new Error(`${what}: sharded weights (*.index.json) are not supported; save the model as one model.safetensors`);
  const bin = join(dir, 'pytorch_model.bin');
  if (existsSync(bin)) {
    const sd = tensorsOf(readTorchCheckpoint(bin), bin);
    return {
      file: bin,
      names: [...sd.keys()],
      load: (want) => new Map([...sd].filter(([n]) => want(n)).map(([n, t]) => [n, fromArray(t.toFloat32(), t.shape)])),
    };
  }
  throw new Error(`${what}: no model.safetensors or pytorch_model.bin in ${dir}`);
}

/** The Transformer body's shape from the snapshot's config.json. */
function bodyConfig(c: Json, f: string): Omit<HfModelConfig, 'pooling' | 'dense' | 'normalize' | 'maxSeqLength' | 'prompts' | 'prompt' | 'source'> {
  const type = c.model_type;
  if (!HF_ARCHS.includes(type as HfArch)) throw new Error(`${f}: model_type ${JSON.stringify(type)} is not supported (supported: ${HF_ARCHS.join(', ')})`);
  const arch = type as HfArch;
  const act = (key: string): HfActivation => {
    const a = c[key];
    const m = typeof a === 'string' ? ACTIVATIONS[a] : undefined;
    if (!m) throw new Error(`${f}: ${key} ${JSON.stringify(a)} is not supported (supported: ${Object.keys(ACTIVATIONS).join(', ')})`);
    return m;
  };
  if (arch === 'distilbert') {
    return {
      arch,
      vocabSize: num(c, 'vocab_size', f),
      hidden: num(c, 'dim', f),
      layers: num(c, 'n_layers', f),
      heads: num(c, 'n_heads', f),
      intermediate: num(c, 'hidden_dim', f),
      maxPositions: num(c, 'max_position_embeddings', f),
      typeVocabSize: 0,
      eps: 1e-12,
      activation: act('activation'),
      padTokenId: num(c, 'pad_token_id', f, 0),
    };
  }
  const pe = c.position_embedding_type ?? 'absolute';
  if (pe !== 'absolute') throw new Error(`${f}: position_embedding_type ${JSON.stringify(pe)} is not supported (only absolute)`);
  return {
    arch,
    vocabSize: num(c, 'vocab_size', f),
    hidden: num(c, 'hidden_size', f),
    layers: num(c, 'num_hidden_layers', f),
    heads: num(c, 'num_attention_heads', f),
    intermediate: num(c, 'intermediate_size', f),
    maxPositions: num(c, 'max_position_embeddings', f),
    typeVocabSize: num(c, 'type_vocab_size', f, 2),
    eps: num(c, 'layer_norm_eps', f, 1e-12),
    activation: act('hidden_act'),
    padTokenId: num(c, 'pad_token_id', f, arch === 'xlm-roberta' ? 1 : 0),
  };
}

interface StModule {
  type: string;
  path: string;
}

/** sentence-transformers' module chain (modules.json); without one, the Transformer and mean pooling (as sentence-transformers does). */
function stModules(dir: string, log: (s: string) => void): StModule[] {
  const f = join(dir, 'modules.json');
  if (!existsSync(f)) {
    log(`no modules.json: mean pooling over the tokens (as sentence-transformers does for a plain Transformer model)`);
    return [{ type: 'sentence_transformers.models.Transformer', path: '' }];
  }
  const m = readJson<unknown>(f);
  if (!Array.isArray(m)) throw new Error(`${f}: a list of modules expected`);
  return m.map((x: Json, i) => {
    if (typeof x?.type !== 'string') throw new Error(`${f}: module ${i} has no type`);
    return {
      type: x.type.replace(/^sentence_transformers\.models\.(\w+)\.\1$/, 'sentence_transformers.models.$1'),
      path: typeof x.path === 'string' ? x.path : '',
    };
  });
}

function poolingModes(f: string, c: Json): PoolMode[] {
  if (c.pooling_mode_weightedmean_tokens)
    throw new Error(`${f}: pooling_mode_weightedmean_tokens is not supported (supported: cls, max, mean, mean_sqrt_len, lasttoken)`);
  if (c.include_prompt === false) throw new Error(`${f}: include_prompt false (prompt tokens left out of the pooling) is not supported`);
  const modes: PoolMode[] = [];
  if (c.pooling_mode_cls_token) modes.push('cls');
  if (c.pooling_mode_max_tokens) modes.push('max');
  if (c.pooling_mode_mean_tokens) modes.push('mean');
  if (c.pooling_mode_mean_sqrt_len_tokens) modes.push('mean_sqrt_len');
  if (c.pooling_mode_lasttoken) modes.push('lasttoken');
  if (!modes.length) throw new Error(`${f}: no pooling mode is on`);
  return modes;
}

/** Finds the weights' name prefix ('', 'bert.', 'roberta.', …) from the word-embedding table. */
function namePrefix(names: string[], file: string): string {
  const key = 'embeddings.word_embeddings.weight';
  const hits = names.filter((n) => n.endsWith(key)).map((n) => n.slice(0, n.length - key.length));
  if (!hits.length) throw new Error(`${file}: no ${key} (not a BERT, XLM-RoBERTa or DistilBERT state dict)`);
  return hits.includes('') ? '' : hits.sort((a, b) => a.length - b.length)[0]!;
}

/** The files of a snapshot's top folder that the import reads (besides the weights and the modules' folders). */
export const SNAPSHOT_FILES = [
  'config.json',
  'tokenizer.json',
  'tokenizer_config.json',
  'modules.json',
  'sentence_bert_config.json',
  'config_sentence_transformers.json',
] as const;

/** The snapshot's Transformer: its config.json's shape, tokenizer.json and weights. */
function readBody(from: string, what: string) {
  if (!existsSync(from) || !statSync(from).isDirectory()) throw new Error(`${what}: not a directory`);
  const cfgFile = join(from, 'config.json');
  if (!existsSync(cfgFile)) throw new Error(`${what}: no config.json (a Hugging Face model snapshot has one)`);
  const body = bodyConfig(readJson<Json>(cfgFile), cfgFile);
  const tokFile = join(from, 'tokenizer.json');
  if (!existsSync(tokFile))
    throw new Error(
      `${what}: no tokenizer.json (the fast tokenizer file; snapshots with only vocab.txt or sentencepiece.bpe.model need it saved by transformers' AutoTokenizer.save_pretrained)`,
    );
  return { body, tokFile, source: weightsSource(from, what) };
}

type Body = ReturnType<typeof bodyConfig>;

interface Heads {
  pooling: PoolMode[];
  dense: { spec: DenseSpec; source: WeightsSource }[];
  normalize: boolean;
}

/** One Dense module: its config and weights. */
function denseModule(dir: string, path: string): { spec: DenseSpec; source: WeightsSource } {
  const f = join(dir, 'config.json');
  const dc = readJson<Json>(f);
  const an = typeof dc.activation_function === 'string' ? dc.activation_function : 'torch.nn.modules.activation.Tanh';
  const activation = DENSE_ACTIVATIONS[an];
  if (!activation)
    throw new Error(`${f}: activation_function ${JSON.stringify(an)} is not supported (supported: ${Object.keys(DENSE_ACTIVATIONS).join(', ')})`);
  return {
    spec: { in: num(dc, 'in_features', f), out: num(dc, 'out_features', f), bias: dc.bias !== false, activation },
    source: weightsSource(dir, path),
  };
}

/** sentence-transformers' modules after the Transformer: pooling, Dense layers, Normalize. */
function readHeads(from: string, body: Body, log: (s: string) => void): Heads {
  const heads: Heads = { pooling: ['mean'], dense: [], normalize: false };
  const modulesFile = join(from, 'modules.json');
  let sawTransformer = false,
    sawPooling = false;
  for (const m of stModules(from, log)) {
    const dir = join(from, m.path);
    const kind = m.type.replace(/^sentence_transformers\.models\./, '');
    if (kind === 'Transformer') {
      sawTransformer = true;
      continue;
    }
    if (!sawTransformer) throw new Error(`${modulesFile}: the first module must be the Transformer (got ${m.type})`);
    if (kind === 'Pooling') {
      const f = join(dir, 'config.json');
      const pc = readJson<Json>(f);
      heads.pooling = poolingModes(f, pc);
      if (pc.word_embedding_dimension !== undefined && pc.word_embedding_dimension !== body.hidden)
        throw new Error(`${f}: word_embedding_dimension ${String(pc.word_embedding_dimension)} != the model's hidden size ${body.hidden}`);
      sawPooling = true;
    } else if (kind === 'Dense') heads.dense.push(denseModule(dir, m.path));
    else if (kind === 'Normalize') heads.normalize = true;
    else throw new Error(`${modulesFile}: module ${m.type} is not supported (supported: Transformer, Pooling, Dense, Normalize)`);
  }
  if (sawTransformer && !sawPooling && existsSync(modulesFile)) throw new Error(`${modulesFile}: no Pooling module`);
  return heads;
}

/** The maximum input length: --max-length, else sentence-transformers' or the tokenizer's, never past the model's positions. */
function maxLengthOf(from: string, body: Body, given: number | undefined, log: (s: string) => void): number {
  const sbert = readOptionalJson(join(from, 'sentence_bert_config.json'));
  if (sbert?.do_lower_case) throw new Error(`${join(from, 'sentence_bert_config.json')}: do_lower_case true is not supported`);
  const positions = body.maxPositions - (body.arch === 'xlm-roberta' ? body.padTokenId + 1 : 0);
  const tokCfg = readOptionalJson(join(from, 'tokenizer_config.json'));
  const tokMax = typeof tokCfg?.model_max_length === 'number' && tokCfg.model_max_length < 1e6 ? tokCfg.model_max_length : positions;
  const max = given ?? (typeof sbert?.max_seq_length === 'number' ? sbert.max_seq_length : tokMax);
  if (max <= positions) return max;
  log(`maximum length ${max} > the ${positions} positions of the model: cut to ${positions}`);
  return positions;
}

/** The prompts of config_sentence_transformers.json and the one put before every input (--prompt, else its default). */
function promptsOf(from: string, given: string | undefined): { prompts: Record<string, string>; prompt: string } {
  const file = join(from, 'config_sentence_transformers.json');
  const stc = readOptionalJson(file);
  const prompts: Record<string, string> = {};
  if (stc?.prompts && typeof stc.prompts === 'object') for (const [k, v] of Object.entries(stc.prompts as Json)) if (typeof v === 'string') prompts[k] = v;
  if (given !== undefined) return { prompts, prompt: Object.hasOwn(prompts, given) ? prompts[given]! : given };
  const defaultName = typeof stc?.default_prompt_name === 'string' ? stc.default_prompt_name : null;
  if (!defaultName) return { prompts, prompt: '' };
  if (!Object.hasOwn(prompts, defaultName)) throw new Error(`${file}: default_prompt_name ${JSON.stringify(defaultName)} is not among the prompts`);
  return { prompts, prompt: prompts[defaultName]! };
}

/** The tokenizer must load, and its ids fit the embedding table. */
function checkTokenizer(tokFile: string, mc: HfModelConfig): void {
  const tok = HFTokenizer.load(tokFile, { maxLength: mc.maxSeqLength, prompt: mc.prompt, padId: mc.padTokenId });
  try {
    if (tok.vocabSize > mc.vocabSize) throw new Error(`${tokFile}: ${tok.vocabSize} tokens, but the model's vocab_size is ${mc.vocabSize}`);
  } finally {
    tok.dispose();
  }
}

/** Our weight names → the stored ones (prefix and legacy gamma/beta names resolved); every weight of the body must be there. */
function storedNames(source: WeightsSource, want: Map<string, number[]>): Map<string, string> {
  const prefix = namePrefix(source.names, source.file);
  const legacy = (n: string): string => n.replace(/\.gamma$/, '.weight').replace(/\.beta$/, '.bias');
  const stored = new Map<string, string>();
  for (const n of source.names)
    if (n.startsWith(prefix)) {
      const k = legacy(n.slice(prefix.length));
      if (want.has(k)) stored.set(k, n);
    }
  const missing = [...want.keys()].filter((k) => !k.startsWith('dense.') && !stored.has(k));
  if (missing.length)
    throw new Error(`${source.file}: missing weights ${missing.slice(0, 8).join(', ')}${missing.length > 8 ? ` (+${missing.length - 8} more)` : ''}`);
  return stored;
}

/** The encoder's weights (`encoder.` names), read from the snapshot; `owned` collects every tensor to dispose. */
function gatherWeights(source: WeightsSource, stored: Map<string, string>, dense: Heads['dense'], owned: Tensor[]): Map<string, Tensor> {
  const out = new Map<string, Tensor>();
  const wanted = new Set(stored.values());
  const tensors = source.load((n) => wanted.has(n));
  owned.push(...tensors.values());
  for (const [k, n] of stored) out.set(`encoder.${k}`, tensors.get(n)!);
  dense.forEach((d, i) => {
    const dt = d.source.load(() => true);
    owned.push(...dt.values());
    for (const p of d.spec.bias ? ['weight', 'bias'] : ['weight']) {
      const t = dt.get(`linear.${p}`);
      if (!t) throw new Error(`${d.source.file}: no linear.${p}`);
      out.set(`encoder.dense.${i}.${p}`, t);
    }
  });
  return out;
}

/** Checks every weight's shape against the model built from the config, as float32; the parameter count. */
function checkShapes(weights: Map<string, Tensor>, want: Map<string, number[]>, file: string, owned: Tensor[]): number {
  let parameters = 0;
  for (const [k, t] of weights) {
    const w = want.get(k.slice('encoder.'.length));
    if (!w) throw new Error(`internal: unexpected weight ${k}`);
    if (t.shape.join(',') !== w.join(','))
      throw new Error(
        `${k.startsWith('encoder.dense.') ? 'Dense' : file}: '${k.slice('encoder.'.length)}' has shape [${t.shape.join(', ')}], the config gives [${w.join(', ')}]`,
      );
    if (t.dtype !== 'float32') {
      const f = noGrad(() => t.float());
      owned.push(f);
      weights.set(k, f);
    }
    parameters += t.numel;
  }
  return parameters;
}

/** Writes the model directory: the weights (checked against the model the config builds), tokenizer.json, config.json. */
function writeModel(
  out: string,
  mc: HfModelConfig,
  source: WeightsSource,
  dense: Heads['dense'],
  tokFile: string,
): { config: SavedModelConfig; parameters: number } {
  const net = noGrad(() => new HfEncoder(mc));
  const want = new Map([...net.stateDict()].map(([k, t]) => [k, t.shape]));
  net.dispose();
  const stored = storedNames(source, want);
  const owned: Tensor[] = [];
  try {
    const weights = gatherWeights(source, stored, dense, owned);
    const parameters = checkShapes(weights, want, source.file, owned);
    saveTensors(join(out, 'model.safetensors'), weights, { format: 'pt' });
    copyFileSync(tokFile, join(out, 'tokenizer.json'));
    const config: SavedModelConfig = { format: 'xling', version: 2, kind: `hf-${mc.arch}`, encoderOnly: true, model: mc, tokenizer: 'tokenizer.json' };
    writeJson(join(out, 'config.json'), config);
    return { config, parameters };
  } finally {
    for (const t of owned) t.dispose();
  }
}

/**
 * Converts the snapshot `from` into the (empty or new) directory `out`. Everything is checked
 * before the weights are written; the caller writes into a temporary directory and moves it.
 */
export function importHfSnapshot(from: string, out: string, o: HfImportOptions = {}): { config: SavedModelConfig; parameters: number } {
  const log = o.log ?? (() => {});
  const { body, tokFile, source } = readBody(from, o.label ?? `--from ${from}`);
  const { pooling, dense, normalize } = readHeads(from, body, log);
  const maxSeqLength = maxLengthOf(from, body, o.maxLength, log);
  const { prompts, prompt } = promptsOf(from, o.prompt);
  const mc: HfModelConfig = {
    ...body,
    pooling,
    dense: dense.map((d) => d.spec),
    normalize,
    maxSeqLength,
    prompts,
    prompt,
    source: `${o.source ?? basename(resolve(from))} (${body.arch})`,
  };
  checkTokenizer(tokFile, mc);
  const r = writeModel(out, mc, source, dense, tokFile);
  log(
    `${mc.source}: ${mc.layers} layers, ${mc.hidden} wide, ${mc.heads} heads, ${(r.parameters / 1e6).toFixed(1)}M parameters; pooling ${pooling.join('+')}${dense.length ? `, ${dense.length} Dense` : ''}${normalize ? ', Normalize' : ''}; max length ${maxSeqLength}${prompt ? `, prompt ${JSON.stringify(prompt)}` : ''}`,
  );
  return r;
}

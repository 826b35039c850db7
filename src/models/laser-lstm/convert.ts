// `xling import laser`: a LASER BiLSTM checkpoint (torch.save, zip or legacy) + its SentencePiece
// model (+ a fairseq .cvocab where the checkpoint holds no dictionary) → the files of an xling
// model directory of kind laser-lstm. The checkpoint layout is laser_encoders' (models.py,
// SentenceEncoder): `params` = LaserLstmEncoder's constructor arguments (num_embeddings,
// padding_idx, embed_dim, hidden_size, num_layers, bidirectional, left_pad, padding_value),
// `model` = its state dict (embed_tokens.weight, lstm.weight_ih_l{k}[_reverse], …),
// `dictionary` = {piece: id}. Nothing of the checkpoint is executed (src/io/torch-checkpoint.ts).
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { readTorchCheckpoint, tensorsOf, TorchTensor } from '../../io/torch-checkpoint.js';
import { PyObject } from '../../io/torch-pickle.js';
import { RawTensor, writeSafetensors } from '../../io/safetensors.js';
import { writeFileAtomicSync } from '../../util/atomic.js';
import { SavedModelConfig } from '../family.js';
import { SentencePieceProcessor } from '../../text/sentencepiece.js';
import { LaserLstmConfig } from './loader.js';
import { LASER_SPECIALS, LASER_TOKENIZER_FILE, LaserTokenizerFile, readFairseqDictionary } from './tokenizer.js';

export interface LaserImportOptions {
  checkpoint: string;
  spm: string;
  vocab?: string;
  /** Ids per sentence including </s> (default 1024). */
  maxLen?: number;
}

const PARAM_KEYS = ['num_embeddings', 'padding_idx', 'embed_dim', 'hidden_size', 'num_layers', 'bidirectional', 'left_pad', 'padding_value'];

function paramsOf(v: unknown, what: string): Map<string, unknown> {
  if (v instanceof Map) return v as Map<string, unknown>;
  if (v instanceof PyObject) return v.attrs;
  throw new Error(`${what}: 'params' is not a dict`);
}

/** The encoder's shape from the checkpoint's `params` (checked). */
function encoderParams(ck: Map<unknown, unknown>, what: string) {
  if (!ck.has('params')) {
    if (ck.has('cfg'))
      throw new Error(`${what}: a LASER Transformer checkpoint (fairseq 'cfg'): only LASER's BiLSTM encoders (a 'params' entry) are supported`);
    throw new Error(`${what}: no 'params' entry (not a LASER BiLSTM checkpoint; keys: ${[...ck.keys()].map(String).join(', ')})`);
  }
  const params = paramsOf(ck.get('params'), what);
  for (const k of params.keys()) if (!PARAM_KEYS.includes(String(k))) throw new Error(`${what}: unknown LaserLstmEncoder parameter params.${String(k)}`);
  const int = (k: string, dflt?: number): number => {
    const v = params.has(k) ? params.get(k) : dflt;
    if (!Number.isSafeInteger(v) || (v as number) < 0) throw new Error(`${what}: params.${k} must be a non-negative integer (got ${String(v)})`);
    return v as number;
  };
  const numEmbeddings = int('num_embeddings'),
    padId = int('padding_idx');
  const embedDim = int('embed_dim', 320),
    hidden = int('hidden_size', 512),
    layers = int('num_layers', 1);
  const bidirectional = params.has('bidirectional') ? params.get('bidirectional') === true : false;
  if (layers < 1 || hidden < 1 || embedDim < 1 || numEmbeddings < 4) throw new Error(`${what}: params describe an empty encoder`);
  if (padId >= numEmbeddings) throw new Error(`${what}: params.padding_idx ${padId} ≥ num_embeddings ${numEmbeddings}`);
  return { numEmbeddings, padId, embedDim, hidden, layers, bidirectional };
}

/** The state dict's weights under xling's names, each checked against the shape `params` give; nothing else may be there. */
function encoderWeights(model: unknown, p: ReturnType<typeof encoderParams>, what: string): Record<string, RawTensor> {
  const sd = tensorsOf(model, `${what}: 'model'`);
  const out: Record<string, RawTensor> = {};
  const take = (name: string, target: string, shape: number[]) => {
    const t = sd.get(name);
    if (!t) throw new Error(`${what}: model.${name} is missing`);
    if (t.shape.join() !== shape.join()) throw new Error(`${what}: model.${name} has shape [${t.shape}], params say [${shape}]`);
    out[target] = floatRaw(t);
    sd.delete(name);
  };
  const { embedDim, hidden } = p;
  take('embed_tokens.weight', 'encoder.embed.weight', [p.numEmbeddings, embedDim]);
  const dirs = p.bidirectional ? ['', '_reverse'] : [''];
  for (let l = 0; l < p.layers; l++) {
    const inp = l === 0 ? embedDim : hidden * dirs.length;
    for (const sfx of dirs) {
      take(`lstm.weight_ih_l${l}${sfx}`, `encoder.lstm.weight_ih_l${l}${sfx}`, [4 * hidden, inp]);
      take(`lstm.weight_hh_l${l}${sfx}`, `encoder.lstm.weight_hh_l${l}${sfx}`, [4 * hidden, hidden]);
      take(`lstm.bias_ih_l${l}${sfx}`, `encoder.lstm.bias_ih_l${l}${sfx}`, [4 * hidden]);
      take(`lstm.bias_hh_l${l}${sfx}`, `encoder.lstm.bias_hh_l${l}${sfx}`, [4 * hidden]);
    }
  }
  if (sd.size) throw new Error(`${what}: unexpected weights in 'model': ${[...sd.keys()].slice(0, 5).join(', ')}`);
  return out;
}

/** The dictionary: --vocab, else the checkpoint's; LASER fixes the four special ids; every id inside the embedding table. */
function laserDictionary(
  ck: Map<unknown, unknown>,
  vocab: Map<string, number> | null,
  o: LaserImportOptions,
  numEmbeddings: number,
  what: string,
): Map<string, number> {
  let dict: Map<string, number>;
  if (vocab) dict = vocab;
  else if (ck.get('dictionary') instanceof Map) {
    dict = new Map();
    for (const [k, v] of ck.get('dictionary') as Map<unknown, unknown>) {
      if (typeof k !== 'string' || !Number.isSafeInteger(v)) throw new Error(`${what}: dictionary entry ${String(k)} is not piece → id`);
      dict.set(k, v as number);
    }
  } else throw new Error(`${what}: the checkpoint holds no dictionary: give the fairseq dictionary with --vocab FILE.cvocab`);
  for (const [k, v] of Object.entries(LASER_SPECIALS)) dict.set(k, v);
  for (const [p, id] of dict)
    if (id < 0 || id >= numEmbeddings)
      throw new Error(`${o.vocab ? `--vocab ${o.vocab}` : what}: id ${id} of ${JSON.stringify(p)} is outside the embedding table (${numEmbeddings} rows)`);
  return dict;
}

/** Reads and checks the checkpoint, writes config.json, model.safetensors and the tokenizer file into dir. */
export function convertLaserCheckpoint(o: LaserImportOptions, dir: string, log: (line: string) => void = () => {}): LaserLstmConfig {
  const what = o.checkpoint;
  // the SentencePiece model first: cheap, and a wrong file is a clear error before the big read
  let spmBytes: Buffer;
  try {
    spmBytes = readFileSync(o.spm);
  } catch (e) {
    throw new Error(`--spm ${o.spm}: ${(e as Error).message}`);
  }
  const sp = new SentencePieceProcessor(spmBytes, `--spm ${o.spm}`);
  const vocab = o.vocab ? readFairseqDictionary(o.vocab) : null;

  const ck = readTorchCheckpoint(o.checkpoint);
  if (!(ck instanceof Map)) throw new Error(`${what}: not a LASER checkpoint (a dict with 'params' and 'model' expected)`);
  const p = encoderParams(ck, what);
  const { numEmbeddings, padId, embedDim, layers, hidden, bidirectional } = p;
  const out = encoderWeights(ck.get('model'), p, what);
  const dict = laserDictionary(ck, vocab, o, numEmbeddings, what);
  let known = 0;
  for (let i = 0; i < sp.vocabSize; i++) if (dict.has(sp.idToPiece(i))) known++;
  if (known < Math.min(10, sp.vocabSize / 10))
    throw new Error(`--spm ${o.spm}: only ${known} of its ${sp.vocabSize} pieces are in the dictionary (wrong SentencePiece model for this checkpoint?)`);
  log(
    `[import] LASER BiLSTM ${layers}×${hidden}${bidirectional ? '×2' : ''}, embeddings ${numEmbeddings}×${embedDim}; ${dict.size} dictionary entries, ${known}/${sp.vocabSize} SentencePiece pieces in it (${sp.proto.modelType})`,
  );
  const model: LaserLstmConfig = {
    vocabSize: numEmbeddings,
    padId,
    embedDim,
    hidden,
    layers,
    bidirectional,
    source: { checkpoint: basename(o.checkpoint), spm: basename(o.spm), vocab: o.vocab ? basename(o.vocab) : null },
  };
  const tok: LaserTokenizerFile = {
    type: 'laser-spm',
    spm: spmBytes.toString('base64'),
    dictionary: [...dict],
    lowerCase: true,
    normalizePunct: true,
    maxLen: o.maxLen ?? 1024,
  };
  writeSafetensors(join(dir, 'model.safetensors'), out, { format: 'pt' });
  writeFileAtomicSync(join(dir, LASER_TOKENIZER_FILE), JSON.stringify(tok) + '\n');
  const cfg: SavedModelConfig = { format: 'xling', version: 2, kind: 'laser-lstm', encoderOnly: true, model, tokenizer: LASER_TOKENIZER_FILE };
  writeFileAtomicSync(join(dir, 'config.json'), JSON.stringify(cfg, null, 2) + '\n');
  return model;
}

function floatRaw(t: TorchTensor): RawTensor {
  const f = t.toFloat32();
  return { dtype: 'F32', shape: t.shape, data: new Uint8Array(f.buffer, f.byteOffset, f.byteLength) };
}

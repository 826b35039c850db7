// The imported LASER BiLSTM (the LASER toolkit's LaserLstmEncoder: LASER2, LASER3's BiLSTM
// students): embedding, multi-layer BiLSTM, max-pool over time with padded steps excluded. It
// runs on xling's own LASER encoder module (src/models/laser/model.ts: the same layers, the same
// packed-sequence semantics, padding at -1e9 in the max) and BiLSTM kernels. Adaptable
// (`xling train --init`): training runs LaserEncoder's op-by-op forward with autograd over the
// same parameter tensors that the packed kernel reads, so the kernel sees every update at once.
import { join } from 'node:path';
import { padBatch } from '../../train-data/batch.js';
import { withoutTableInit } from '../../nn/layers.js';
import { EncoderLoader, withWeights } from '../family.js';
import { LaserConfig, LaserEncoder, LaserSentenceEncoder } from '../laser/model.js';
import { Tensor } from '../../tensor/tensor.js';
import { encodePacked, encodePackedAsync } from './packed.js';
import { LASER_TOKENIZER_FILE, LaserTokenizer } from './tokenizer.js';

/** config.json's `model` of a laser-lstm directory. */
export interface LaserLstmConfig {
  /** Rows of the embedding table (LASER's num_embeddings). */
  vocabSize: number;
  padId: number;
  embedDim: number;
  hidden: number;
  layers: number;
  bidirectional: boolean;
  /** What it was imported from (file names), for /info and humans; `adapted`: trained further with `xling train --init`. */
  source: { checkpoint: string; spm: string; vocab: string | null; adapted?: string };
}

const KEYS: Record<keyof LaserLstmConfig, true> = {
  vocabSize: true,
  padId: true,
  embedDim: true,
  hidden: true,
  layers: true,
  bidirectional: true,
  source: true,
};

export function laserConfigOfImported(m: LaserLstmConfig): LaserConfig {
  return {
    vocabSize: m.vocabSize,
    padId: m.padId,
    embedDim: m.embedDim,
    hidden: m.hidden,
    layers: m.layers,
    bidirectional: m.bidirectional,
    pooling: 'max',
    decEmbedDim: 1,
    decHidden: 1,
    langEmbedDim: 1,
    targetLangs: [],
    dropout: 0,
  };
}

/**
 * LASER's deep BiLSTMs (LASER2: 5 layers) spend most of their time in the input-gate GEMMs of
 * every layer: batches run through one native call on packed sequences (packed.ts), so no padded
 * position is computed and batches can be large (the recurrent GEMM of each step gets more rows).
 */
class ImportedLaserEncoder extends LaserSentenceEncoder {
  readonly batchLimits = { maxTokens: 16384, maxSentences: 1024 };
  override vectors(seqs: Int32Array[]): Tensor {
    return encodePacked(this.net, seqs);
  }
  override vectorsAsync(seqs: Int32Array[]): Promise<Tensor> {
    return encodePackedAsync(this.net, seqs);
  }
}

export const laserLstmLoader: EncoderLoader = {
  kind: 'laser-lstm',
  summary: "LASER's BiLSTM encoder (LASER2/LASER3 checkpoints), imported with `xling import laser`",
  modelKeys: Object.keys(KEYS),
  adaptable: true,
  loadEncoder(dir, saved, load) {
    const m = saved.model as LaserLstmConfig;
    const tokenizer = LaserTokenizer.load(join(dir, saved.tokenizerSpec?.file ?? saved.tokenizer ?? LASER_TOKENIZER_FILE), m.vocabSize);
    const net = withWeights(
      withoutTableInit(() => new LaserEncoder(laserConfigOfImported(m))),
      load,
    );
    const c = net.cfg;
    return {
      encoder: new ImportedLaserEncoder(net, m.padId),
      tokenizer,
      dispose: () => net.dispose(),
      adaptable: () => ({
        module: net,
        modelConfig: m,
        // the padded, differentiable forward (LSTM layers with lengths, max-pool with padded steps at -1e9)
        forward: (seqs) => net.forward(padBatch(seqs, m.padId)),
        // the packed kernel reads net.embed.weight and the LSTM's parameters themselves: nothing is derived from them
        weightsChanged: () => {},
        describe: () =>
          `LASER BiLSTM ${c.layers}×${c.hidden}${c.bidirectional ? '×2' : ''}, embeddings ${c.vocabSize}×${c.embedDim}, max-pool → ${net.dim}, from ${m.source.checkpoint}; ${net.numParameters()} parameters`,
      }),
    };
  },
};

// The loaders of imported Hugging Face encoders (kinds hf-bert, hf-xlm-roberta, hf-distilbert):
// import-only kinds, made by `xling import hf` (./convert.ts), loaded like every model directory.
import { join } from 'node:path';
import { cpuHasBf16 } from '../../tensor/kernels.js';
import { HFTokenizer } from '../../text/hf-tokenizer.js';
import { EncoderLoader, LoadedEncoder, LoadWeights, SavedModelConfig, withWeights } from '../family.js';
import { HF_ARCHS, HF_MODEL_KEYS, HfArch, HfEncoder, HfModelConfig, HfSentenceEncoder } from './model.js';

let warned = false,
  warnedBf16 = false;

function hfLoader(arch: HfArch): EncoderLoader {
  return {
    kind: `hf-${arch}`,
    summary: `a Hugging Face ${arch} sentence encoder imported with xling import hf`,
    modelKeys: HF_MODEL_KEYS,
    adaptable: true,
    precisions: ['fp32', 'bf16'],
    loadEncoder(dir: string, saved: SavedModelConfig, load: LoadWeights, opts?: { precision?: 'fp32' | 'bf16' }): LoadedEncoder {
      const mc = saved.model as HfModelConfig;
      const f = join(dir, 'config.json');
      if (mc.arch !== arch) throw new Error(`${f}: kind hf-${arch} but model.arch ${JSON.stringify(mc.arch)}`);
      for (const k of HF_MODEL_KEYS) if (mc[k] === undefined) throw new Error(`${f}: 'model.${k}' is missing`);
      const tokFile = saved.tokenizerSpec?.file ?? saved.tokenizer;
      if (!tokFile) throw new Error(`${f}: 'tokenizer' is missing (an imported model keeps its tokenizer.json)`);
      const net = withWeights(new HfEncoder(mc), load);
      if (opts?.precision === 'bf16') {
        net.precision = 'bf16';
        if (!cpuHasBf16() && !warnedBf16) {
          warnedBf16 = true;
          process.stderr.write('warning: this CPU has no AVX512_BF16: bfloat16 products are emulated here, slower than --precision fp32\n');
        }
      }
      const tokenizer = HFTokenizer.load(join(dir, tokFile), {
        maxLength: mc.maxSeqLength,
        prompt: mc.prompt,
        padId: mc.padTokenId,
        onFirstTruncation: (n) => {
          if (warned) return;
          warned = true;
          process.stderr.write(`warning: inputs longer than ${n} tokens are cut to ${n} (the model's max_seq_length)\n`);
        },
      });
      return {
        encoder: new HfSentenceEncoder(net),
        tokenizer,
        dispose: () => {
          net.dispose();
          tokenizer.dispose();
        },
        adaptable: () => ({
          module: net,
          modelConfig: mc,
          forward: (seqs) => net.forwardPadded(seqs),
          weightsChanged: () => net.weightsChanged(),
          describe: () =>
            `${mc.arch} ${mc.layers}×${mc.hidden} (${mc.heads} heads), ${mc.pooling.join('+')} pooling${mc.dense.length ? ` + ${mc.dense.length} Dense` : ''} → ${net.dim}, from ${mc.source}; ${net.numParameters()} parameters`,
        }),
      };
    },
  };
}

export const hfLoaders: EncoderLoader[] = HF_ARCHS.map(hfLoader);

// xling import hf: a local Hugging Face snapshot (BERT, XLM-RoBERTa or DistilBERT with its
// sentence-transformers modules) → an xling model directory every command loads.
import { checkReplaceable } from '../embed/model-dir.js';
import { importHfSnapshot } from '../models/hf/convert.js';
import { writeDirAtomically } from '../util/atomic.js';
import { command } from './command.js';
import { checkPaths } from './io.js';

export const importHfCommand = command(
  ['import', 'hf'],
  {
    name: 'xling import hf',
    summary: 'import a local Hugging Face sentence encoder (BERT, XLM-RoBERTa, DistilBERT; sentence-transformers modules) as an xling model',
    options: {
      from: {
        type: 'string',
        required: true,
        metavar: 'DIR',
        help: 'the snapshot: config.json, model.safetensors, tokenizer.json (+ modules.json, 1_Pooling/, 2_Dense/ …)',
      },
      out: { type: 'string', alias: 'o', required: true, metavar: 'DIR', help: 'the xling model directory to write' },
      prompt: {
        type: 'string',
        metavar: 'NAME|TEXT',
        help: "put before every input: a prompt name of config_sentence_transformers.json (e.g. query) or the text itself (e.g. 'query: '); default: its default_prompt_name, else none",
      },
      maxLength: {
        type: 'number',
        metavar: 'N',
        range: { integer: true, min: 2 },
        help: "ids per input at most, special tokens included (default: sentence-transformers' max_seq_length)",
      },
    },
  },
  async (a) => {
    checkPaths([
      ['--from', a.from, 'in-dir'],
      ['--out', a.out, 'out-dir'],
    ]);
    checkReplaceable(a.out, '--out');
    const r = writeDirAtomically(a.out, (tmp) =>
      importHfSnapshot(a.from, tmp, { prompt: a.prompt, maxLength: a.maxLength, log: (s) => process.stderr.write(`[import hf] ${s}\n`) }),
    );
    process.stderr.write(`[import hf] ${r.config.kind} model → ${a.out}\n`);
  },
);

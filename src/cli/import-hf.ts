// xling import hf: a Hugging Face sentence encoder (BERT, XLM-RoBERTa or DistilBERT with its
// sentence-transformers modules), by its Hub name or from a local snapshot → an xling model directory
// every command loads.
import { checkReplaceable } from '../embed/model-dir.js';
import { importHf } from '../models/hf/hub.js';
import { command, usage } from './command.js';
import { checkPaths } from './io.js';

export const importHfCommand = command(
  ['import', 'hf'],
  {
    name: 'xling import hf',
    summary: 'import a Hugging Face sentence encoder (BERT, XLM-RoBERTa, DistilBERT; sentence-transformers modules) by its Hub name or from a local snapshot',
    description:
      "By name, its files are fetched into the Hugging Face cache that Python's huggingface_hub uses ($HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub), reusing what is already there; HF_ENDPOINT sets the Hub's address, HF_TOKEN the access token (gated and private models), HF_HUB_OFFLINE=1 reads the cache only.",
    positionals: [{ name: 'name', help: "the model's Hub name, e.g. sentence-transformers/LaBSE (or --from a local snapshot)" }],
    options: {
      from: {
        type: 'string',
        metavar: 'DIR',
        help: 'a local snapshot instead: config.json, model.safetensors, tokenizer.json (+ modules.json, 1_Pooling/, 2_Dense/ …)',
      },
      revision: { type: 'string', metavar: 'REV', help: 'with a Hub name: the branch, tag or commit (default main)' },
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
    examples: ['xling import hf sentence-transformers/LaBSE -o models/labse', 'xling import hf --from ~/snapshots/LaBSE -o models/labse'],
  },
  async (a) => {
    const name = a._[0];
    if (!name === !a.from) usage('give the model: its Hub name (xling import hf ORG/NAME -o DIR) or --from DIR, one of them');
    if (a.revision !== undefined && a.from) usage('--revision goes with a Hub name (a local snapshot is one revision already)');
    checkPaths([
      ['--from', a.from, 'in-dir'],
      ['--out', a.out, 'out-dir'],
    ]);
    checkReplaceable(a.out, '--out');
    const log = (s: string) => process.stderr.write(`[import hf] ${s}\n`);
    const r = await importHf({ name, from: a.from, revision: a.revision }, a.out, { prompt: a.prompt, maxLength: a.maxLength, log });
    process.stderr.write(`[import hf] ${r.config.kind} model → ${a.out}\n`);
  },
);

// Reference token ids for scripts/hf-fixtures.py, from transformers.js's tokenizer (an
// implementation independent of the `tokenizers` package xling uses):
//   node scripts/hf-fixtures-tokenize.mjs tokenizer.json sentences.txt MAX_LENGTH [PROMPT]
// prints a JSON list of id lists (prompt + sentence, special tokens added, cut to MAX_LENGTH).
// The cut is made here as Hugging Face's tokenizers (Python and Rust, hence sentence-transformers)
// make it: the sentence's tokens are cut so that the special tokens still fit ([CLS] a b … [SEP]).
// transformers.js's own `truncation` cuts the final ids instead and loses the closing [SEP] or </s>.
import { readFileSync } from 'node:fs';
import { PreTrainedTokenizer } from '@huggingface/transformers';

const [file, sentencesFile, maxLength, prompt = ''] = process.argv.slice(2);
const tok = new PreTrainedTokenizer(JSON.parse(readFileSync(file, 'utf8')), {});
const lines = readFileSync(sentencesFile, 'utf8')
  .split('\n')
  .filter((l) => l.length);
const max = Number(maxLength);
const ids = lines.map((s) => {
  const x = tok(prompt + s, { return_tensor: false }).input_ids;
  return x.length <= max ? x : [...x.slice(0, max - 1), x[x.length - 1]];
});
process.stdout.write(JSON.stringify(ids) + '\n');

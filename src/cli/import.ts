// xling import laser: a LASER BiLSTM checkpoint (LASER2, LASER3) + its SentencePiece model → an
// xling model directory (kind laser-lstm) every command loads unchanged.
import { join } from 'node:path';
import { loadNWayTsv } from '../train-data/corpus.js';
import { fitLanguageMeans } from '../embed/centering.js';
import { checkReplaceable, loadSentenceEncoder } from '../embed/model-dir.js';
import { readSafetensors, writeSafetensors } from '../io/safetensors.js';
import { convertLaserCheckpoint } from '../models/laser-lstm/convert.js';
import { writeDirAtomically } from '../util/atomic.js';
import { command } from './command.js';
import { checkPaths } from './io.js';

export const importLaserCommand = command(
  ['import', 'laser'],
  {
    name: 'xling import laser',
    summary: "import a LASER BiLSTM encoder (LASER2, LASER3's BiLSTM models) with its SentencePiece model as an xling model directory",
    options: {
      checkpoint: {
        type: 'string',
        required: true,
        metavar: 'FILE.pt',
        help: 'the checkpoint (torch.save, zip or legacy format; read without executing anything)',
      },
      spm: { type: 'string', required: true, metavar: 'FILE.spm', help: 'its SentencePiece model (laser2.spm, laser3-xxx.v1.spm)' },
      vocab: { type: 'string', metavar: 'FILE.cvocab', help: "the fairseq dictionary, where the checkpoint holds none (it replaces the checkpoint's)" },
      out: { type: 'string', alias: 'o', required: true, metavar: 'DIR', help: 'the model directory to write (replaced whole)' },
      center: {
        type: 'string',
        metavar: 'FILE.tsv',
        help: "fit per-language mean vectors on this N-way TSV sample (header of language codes); default: none, LASER's vectors as LASER gives them",
      },
      'center-sentences': { type: 'number', default: 2000, range: { int: true, min: 1 }, help: 'sentences per language for --center' },
      'max-len': {
        type: 'number',
        default: 1024,
        range: { int: true, min: 2 },
        help: 'token ids per sentence (incl. </s>); longer ones are cut, with a warning',
      },
    },
  },
  async (a) => {
    checkPaths([
      ['--checkpoint', a.checkpoint, 'in'],
      ['--spm', a.spm, 'in'],
      ['--vocab', a.vocab, 'in'],
      ['--center', a.center, 'in'],
      ['--out', a.out, 'out-dir'],
    ]);
    checkReplaceable(a.out, '--out');
    const sample = a.center ? await loadNWayTsv(a.center) : null;
    writeDirAtomically(a.out, (tmp) => {
      convertLaserCheckpoint({ checkpoint: a.checkpoint, spm: a.spm, vocab: a.vocab, maxLen: a['max-len'] }, tmp, (l) => process.stderr.write(l + '\n'));
      if (sample) {
        const model = loadSentenceEncoder(tmp);
        const byLang = new Map(sample.langs.map((l) => [l, sample.rows.map((r) => r.get(l)).filter((s): s is string => !!s)]));
        const means = fitLanguageMeans(model, byLang, a['center-sentences']);
        const file = join(tmp, 'model.safetensors');
        const st = readSafetensors(file);
        for (const [l, mu] of means)
          st.tensors[`center.${l}`] = { dtype: 'F32', shape: [mu.length], data: new Uint8Array(mu.buffer, mu.byteOffset, mu.byteLength) };
        writeSafetensors(file, st.tensors, st.metadata);
        process.stderr.write(`[import] per-language means of ${means.size} languages from ${a.center}\n`);
      }
    });
    process.stderr.write(`[import] wrote ${a.out} (kind laser-lstm)\n`);
  },
);

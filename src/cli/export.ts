// xling export: the encoder alone, for embedding.
import { exportEncoder } from '../embed/model-dir.js';
import { command } from './command.js';
import { checkPaths } from './io.js';

export const exportCommand = command(['export'], {
  name: 'xling export',
  summary: 'write a model directory holding only the encoder',
  options: {
    model: { type: 'string', required: true, metavar: 'DIR' },
    out: { type: 'string', alias: 'o', required: true, metavar: 'DIR' },
  },
}, async (a) => {
  checkPaths([['--model', a.model, 'in-dir'], ['--out', a.out, 'out-dir']]);
  exportEncoder(a.model, a.out);
});

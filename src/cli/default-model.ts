// The --model option of the commands that fall back to xling's default model (models/default of
// the package, src/embed/default-model.ts) when none is given.
export { modelOrDefault } from '../embed/default-model.js';

/** --model, no longer required: absent, the package's default model. */
export const DEFAULTED_MODEL_OPTION = {
  type: 'string',
  metavar: 'DIR',
  help: 'model directory (xling train / xling export); default: the model that comes with xling (models/default in the package)',
} as const;

// A worker thread of xling/lite's pool (./pool.ts): builds the model over the shared bytes, embeds slices.
import { parentPort, workerData } from 'node:worker_threads';
import { CenterPlan, LiteModel } from './model.js';
import { parseSafetensors } from './safetensors.js';

const { bytes, config, where } = workerData as { bytes: Uint8Array; config: ConstructorParameters<typeof LiteModel>[0]; where: string };
const model = new LiteModel(config, parseSafetensors(bytes, where), where);

parentPort!.on('message', (m: { id: number; sentences: string[]; plan: CenterPlan }) => {
  try {
    const rows = model.embedPlanned(m.sentences, m.plan);
    parentPort!.postMessage({ id: m.id, rows }, [rows.buffer as ArrayBuffer]);
  } catch (e) {
    parentPort!.postMessage({ id: m.id, error: (e as Error).message });
  }
});

// A worker thread of xling/lite's pool (./pool.ts): builds the model over the shared bytes (or the
// kernels' shared memory, with its own scratch slot there), says it is ready (id -1 - slot + 1), embeds slices.
import { parentPort, workerData } from 'node:worker_threads';
import { CenterPlan, LiteModel } from './model.js';
import { parseSafetensors } from './safetensors.js';
import { Arena, WasmMemory, instantiateKernel, kernelModule } from './wasm.js';

const data = workerData as {
  bytes?: Uint8Array;
  memory?: WasmMemory;
  arena?: Arena;
  slot: number;
  config: ConstructorParameters<typeof LiteModel>[0];
  where: string;
};
const hello = -data.slot; // the pool's id for this worker's start (-1 - index)
let model: LiteModel;
try {
  const { memory, arena, config, where } = data;
  const bytes = memory && arena ? new Uint8Array(memory.buffer, arena.base, arena.size) : data.bytes!;
  model = new LiteModel(config, parseSafetensors(bytes, where), where);
  if (memory && arena) {
    const module = await kernelModule(true);
    if (!module || !model.useWasm(await instantiateKernel(module, memory, arena, data.slot)))
      throw new Error(`${where}: a worker thread could not use the WebAssembly kernels its pool was made for`);
  }
  parentPort!.postMessage({ id: hello });
} catch (e) {
  parentPort!.postMessage({ id: hello, error: (e as Error).message });
}

parentPort!.on('message', (m: { id: number; sentences: string[]; plan: CenterPlan }) => {
  try {
    const rows = model.embedPlanned(m.sentences, m.plan);
    parentPort!.postMessage({ id: m.id, rows }, [rows.buffer as ArrayBuffer]);
  } catch (e) {
    parentPort!.postMessage({ id: m.id, error: (e as Error).message });
  }
});

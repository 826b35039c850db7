// A worker thread of xling/lite's pools (./pool.ts): builds the model over the shared bytes (or the
// kernels' shared memory, with its own scratch slot there), says it is ready (id -1 - slot + 1), embeds slices.
// A worker of an IdsPool (given a port and a flag) also encodes token ids: each such job's reply
// goes to its port, then the flag is raised for the caller waiting on it.
import { MessagePort, parentPort, workerData } from 'node:worker_threads';
import type { IdsJob } from './pool.js';
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
  port?: MessagePort;
  flag?: Int32Array;
};
const hello = -data.slot; // the pool's id for this worker's start (-1 - index)
let model: LiteModel;
let failed: string | null = null;
try {
  const { memory, arena, config, where } = data;
  const bytes = memory && arena ? new Uint8Array(memory.buffer, arena.base, arena.size) : data.bytes!;
  model = new LiteModel(config, parseSafetensors(bytes, where), where);
  if (memory && arena) {
    const module = await kernelModule(true);
    if (!module || !model.useWasm(await instantiateKernel(module, memory, arena, data.slot)))
      throw new Error(`${where}: a worker thread could not use the WebAssembly kernels its pool was made for`);
  }
  if (!data.port) parentPort!.postMessage({ id: hello });
} catch (e) {
  failed = (e as Error).message;
  if (!data.port) parentPort!.postMessage({ id: hello, error: failed });
}

const { port, flag } = data;
if (port && flag) {
  port.on('message', (m: IdsJob) => {
    try {
      if (failed !== null) throw new Error(failed);
      const seqs = Array.from({ length: m.offs.length - 1 }, (_, s) => m.ids.subarray(m.offs[s]!, m.offs[s + 1]!));
      const rows = model.encode(seqs, { normalize: m.normalize });
      port.postMessage({ rows }, [rows.buffer as ArrayBuffer]);
    } catch (e) {
      port.postMessage({ error: (e as Error).message });
    }
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
  });
}

// text jobs (a WorkerPool's slices, an IdsPool's embedText): the sentences tokenised here, the
// rows back with the number of sentences whose features were cut
parentPort!.on('message', (m: { id: number; sentences: string[]; plan: CenterPlan; normalize?: boolean }) => {
  try {
    if (failed !== null) throw new Error(failed);
    const before = model.tokenizer.truncated;
    const rows = model.embedPlanned(m.sentences, m.plan, m.normalize ?? true);
    parentPort!.postMessage({ id: m.id, rows, truncated: model.tokenizer.truncated - before }, [rows.buffer as ArrayBuffer]);
  } catch (e) {
    parentPort!.postMessage({ id: m.id, error: (e as Error).message });
  }
});

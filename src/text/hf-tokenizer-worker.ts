// The worker thread behind HFTokenizer (./hf-tokenizer.ts): Hugging Face's `tokenizers` (Rust)
// encodes only asynchronously, so it runs here and the calling thread waits for each batch.
// Protocol: a batch of strings arrives on `port`; the answer ({ ids, cut } or { error }) is posted
// back and `flag[0]` set to 1 (the caller sleeps on it with Atomics.wait).
import { MessagePort, workerData } from 'node:worker_threads';
import { Tokenizer } from 'tokenizers';

const { json, maxLength, port, sab } = workerData as { json: string; maxLength: number; port: MessagePort; sab: SharedArrayBuffer };
const flag = new Int32Array(sab);
let tok: Tokenizer | null = null;
let loadError: string | null = null;
try {
  tok = Tokenizer.fromString(json);
  if (maxLength > 0) tok.setTruncation(maxLength);
  else tok.disableTruncation();
  tok.disablePadding();
} catch (e) {
  loadError = (e as Error).message ?? String(e);
}

function reply(msg: unknown): void {
  port.postMessage(msg);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
}

port.on('message', (sentences: string[]) => {
  if (!tok) {
    reply({ error: loadError });
    return;
  }
  tok.encodeBatch(sentences).then(
    (enc) => {
      const ids = enc.map((e) => Int32Array.from(e.getIds()));
      let cut = 0;
      if (maxLength > 0) for (const e of enc) if (e.getOverflowing().length) cut++;
      reply({ ids, cut });
    },
    (e: unknown) => reply({ error: (e as Error).message ?? String(e) }),
  );
});

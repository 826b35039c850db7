// A Hugging Face tokenizer.json run by Hugging Face's own `tokenizers` package (the Rust
// implementation: normalisers, pre-tokenisers, WordPiece/Unigram/BPE models, post-processors such
// as [CLS] … [SEP] or <s> … </s>), not a re-implementation. Its encoder is asynchronous only, so
// it runs on a worker thread (./hf-tokenizer-worker.ts) and encode()/encodeBatch() wait for it:
// the TextTokenizer interface (and every embed path) stays synchronous. One round trip costs
// about 0.1 ms, so callers with many sentences use encodeBatch().
import { readFileSync } from 'node:fs';
import { MessageChannel, MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { TextTokenizer } from './text-tokenizer.js';

export interface HFTokenizerOptions {
  /** Ids per input at most, special tokens included (0: no truncation). */
  maxLength?: number;
  /** Text put before every input (a sentence-transformers prompt such as 'query: '). */
  prompt?: string;
  /** Special-token ids the model uses; default: looked up in tokenizer.json. */
  padId?: number;
  /** Called once, the first time an input is cut to maxLength. */
  onFirstTruncation?: (maxLength: number) => void;
}

interface TokenizerJson {
  model?: { type?: string; unk_token?: string; unk_id?: number | null; vocab?: unknown };
  added_tokens?: { id: number; content: string; special?: boolean }[];
  post_processor?: unknown;
}

/** Batches of at most this many strings go to the worker at once. */
const CHUNK = 4096;

export class HFTokenizer implements TextTokenizer {
  readonly vocabSize: number;
  readonly padId: number;
  readonly unkId: number;
  readonly bosId: number;
  readonly eosId: number;
  readonly maxLength: number | undefined;
  readonly prompt: string;
  /** Inputs cut to maxLength so far. */
  truncated = 0;
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly flag: Int32Array;
  private readonly onFirstTruncation?: (maxLength: number) => void;
  private dead: string | null = null;

  private constructor(
    readonly file: string,
    json: string,
    o: HFTokenizerOptions,
  ) {
    let spec: TokenizerJson;
    try {
      spec = JSON.parse(json) as TokenizerJson;
    } catch (e) {
      throw new Error(`${file}: invalid JSON: ${(e as Error).message}`);
    }
    if (!spec.model || typeof spec.model.type !== 'string') throw new Error(`${file}: not a Hugging Face tokenizer.json (no model.type)`);
    const ids = tokenIds(spec);
    const find = (...names: string[]): number | undefined => {
      for (const n of names) {
        const i = ids.get(n);
        if (i !== undefined) return i;
      }
      return undefined;
    };
    this.vocabSize = ids.size ? Math.max(...ids.values()) + 1 : 0;
    const unkName = spec.model.unk_token;
    this.unkId =
      (typeof spec.model.unk_id === 'number' ? spec.model.unk_id : undefined) ??
      (unkName !== undefined ? ids.get(unkName) : undefined) ??
      find('[UNK]', '<unk>') ??
      -1;
    this.padId = o.padId ?? find('[PAD]', '<pad>') ?? 0;
    this.bosId = find('[CLS]', '<s>') ?? -1;
    this.eosId = find('[SEP]', '</s>') ?? -1;
    this.maxLength = o.maxLength && o.maxLength > 0 ? o.maxLength : undefined;
    this.prompt = o.prompt ?? '';
    this.onFirstTruncation = o.onFirstTruncation;
    const { port1, port2 } = new MessageChannel();
    const sab = new SharedArrayBuffer(4);
    this.flag = new Int32Array(sab);
    this.port = port1;
    this.worker = new Worker(new URL('./hf-tokenizer-worker.js', import.meta.url), {
      workerData: { json, maxLength: this.maxLength ?? 0, port: port2, sab },
      transferList: [port2],
    });
    this.worker.unref();
    this.port.unref();
    this.worker.on('error', (e) => {
      this.dead = e.message;
    });
    // the first batch surfaces a tokenizer.json that the Rust side refuses
    this.encodeBatch(['']);
  }

  /** Loads a tokenizer.json (errors name the file). */
  static load(file: string, o: HFTokenizerOptions = {}): HFTokenizer {
    let json: string;
    try {
      json = readFileSync(file, 'utf8');
    } catch (e) {
      throw new Error(`cannot read ${file}: ${(e as Error).message}`);
    }
    return new HFTokenizer(file, json, o);
  }

  encode(s: string): Int32Array {
    return this.encodeBatch([s])[0]!;
  }

  /** The ids of each input (prompt first, special tokens as the post-processor adds them). */
  encodeBatch(sentences: string[]): Int32Array[] {
    const out: Int32Array[] = [];
    for (let i = 0; i < sentences.length; i += CHUNK) {
      const part = sentences.slice(i, i + CHUNK);
      const r = this.roundTrip(this.prompt ? part.map((s) => this.prompt + s) : part);
      if (r.cut) {
        if (this.truncated === 0) this.onFirstTruncation?.(this.maxLength!);
        this.truncated += r.cut;
      }
      for (const x of r.ids) out.push(x);
    }
    return out;
  }

  private roundTrip(batch: string[]): { ids: Int32Array[]; cut: number } {
    if (this.dead) throw new Error(`${this.file}: the tokenizer thread failed: ${this.dead}`);
    Atomics.store(this.flag, 0, 0);
    this.port.postMessage(batch);
    // wait in slices: a worker that died never answers
    const t0 = Date.now();
    while (Atomics.wait(this.flag, 0, 0, 1000) === 'timed-out') {
      if (this.dead) throw new Error(`${this.file}: the tokenizer thread failed: ${this.dead}`);
      if (Date.now() - t0 > 600_000) throw new Error(`${this.file}: the tokenizer thread did not answer in 10 minutes`);
    }
    const m = receiveMessageOnPort(this.port)?.message as { ids: Int32Array[]; cut: number } | { error: string } | undefined;
    if (!m) throw new Error(`${this.file}: the tokenizer thread sent no answer`);
    if ('error' in m) throw new Error(`${this.file}: ${m.error}`);
    return m;
  }

  /** Stops the worker thread (it would also end with the process). */
  dispose(): void {
    void this.worker.terminate();
    this.port.close();
  }
}

/** Token → id of the vocabulary and the added tokens of a tokenizer.json. */
function tokenIds(spec: TokenizerJson): Map<string, number> {
  const m = new Map<string, number>();
  const v = spec.model?.vocab;
  if (Array.isArray(v))
    v.forEach((e, i) => {
      if (Array.isArray(e) && typeof e[0] === 'string') m.set(e[0], i);
    });
  else if (v && typeof v === 'object') for (const [k, i] of Object.entries(v as Record<string, number>)) m.set(k, i);
  for (const a of spec.added_tokens ?? []) m.set(a.content, a.id);
  return m;
}

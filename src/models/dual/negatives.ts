// Hard negatives for the additive-margin loss (loss.hardNegatives / mineEvery / mineNprobe): every
// mineEvery steps the distinct training targets are embedded with the current model and put in a
// faiss index; each batch's sources are embedded and their nearest targets (not their own
// translation, not another text of their row) join the x→y softmax as negatives. Shared by the
// dual family's task and `xling train --init` (src/train/adapt.ts), which mine with whatever
// inference encoder the model has (SentenceEncoder), and checkpointed for an exact resume.
import { Example } from '../../train-data/examples.js';
import { FaissIndex } from '../../index/faiss.js';
import { fromArray, Tensor } from '../../tensor/tensor.js';
import { SentenceEncoder } from '../encoder.js';

/** FNV-1a over a token-id sequence: equal texts (same tokenizer) get equal keys. */
export function seqKey(s: Int32Array): number {
  let h = 0x811c9dc5 ^ s.length;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s[i]!, 0x01000193);
  return h >>> 0;
}

/**
 * Flat positions i·B + j of pairs that are not negatives of each other: they share a source or a
 * target text, or (given `rows`) come from the same row of the parallel corpus — with paths to
 * several target languages, (de, fr) and (es, it) of one row are all translations.
 */
export function collisions(src: Int32Array[], trg: Int32Array[], rows?: number[]): number[] {
  const B = src.length;
  const out: number[] = [];
  if (rows) {
    const byRow = new Map<number, number[]>();
    rows.forEach((r, i) => {
      const g = byRow.get(r);
      if (g) g.push(i);
      else byRow.set(r, [i]);
    });
    for (const g of byRow.values()) for (const i of g) for (const j of g) if (i !== j) out.push(i * B + j);
  }
  for (const side of [src, trg]) {
    const groups = new Map<number, number[]>();
    side.forEach((s, i) => {
      const k = seqKey(s);
      const g = groups.get(k);
      if (g) g.push(i);
      else groups.set(k, [i]);
    });
    for (const g of groups.values()) {
      if (g.length < 2) continue;
      for (const i of g)
        for (const j of g) if (i !== j && side[i]!.length === side[j]!.length && side[i]!.every((t, q) => t === side[j]![q])) out.push(i * B + j);
    }
  }
  return [...new Set(out)];
}

/** The loss section's mining settings. */
export interface MiningOptions {
  /** Negatives per example (0: none, the miner stays idle). */
  hardNegatives: number;
  /** Steps between mining rounds (the first round is at step 1). */
  mineEvery: number;
  /** IVF cells searched (the index is IVF from 4096 targets on, exact below). */
  mineNprobe: number;
}

/** Vectors of many sequences in chunks that suit the encoder (normalised rows). */
export function embedAll(enc: SentenceEncoder, seqs: Int32Array[]): Float32Array {
  const d = enc.dim;
  const maxS = Math.min(4096, enc.batchLimits?.maxSentences ?? 4096),
    maxT = enc.batchLimits?.maxTokens ?? 32000;
  const out = new Float32Array(seqs.length * d);
  for (let i = 0; i < seqs.length; ) {
    // in order, cut where the padded size would pass maxTokens (or at maxSentences)
    let j = i,
      longest = 0;
    while (j < seqs.length && j - i < maxS) {
      const l = Math.max(longest, seqs[j]!.length);
      if (j > i && l * (j - i + 1) > maxT) break;
      longest = l;
      j++;
    }
    out.set(enc.encode(seqs.slice(i, j), { normalize: true }), i * d);
    i = j;
  }
  return out;
}

export class HardNegativeMiner {
  /** The distinct targets (language, row, text key), the vectors of the last mining round, and its index. */
  private readonly targets: { lang: string; row: number; key: number }[] = [];
  private targetVecs: Float32Array | null = null;
  private dim = 0;
  private index: FaissIndex | null = null;

  constructor(
    examples: readonly Example[],
    private readonly ids: (lang: string, row: number) => Int32Array,
    private readonly o: MiningOptions,
  ) {
    if (o.hardNegatives <= 0) return;
    const seen = new Set<string>();
    for (const e of examples) {
      const key = `${e.trg[0]}\t${e.row}`;
      if (seen.has(key)) continue;
      seen.add(key);
      this.targets.push({ lang: e.trg[0]!, row: e.row, key: seqKey(ids(e.trg[0]!, e.row)) });
    }
  }

  /** Whether the loss gets hard negatives (hardNegatives > 0 and there are targets). */
  get enabled(): boolean {
    return this.targets.length > 0;
  }
  /** Whether a mining round has been made (or restored): negatives() finds some from now on. */
  get mined(): boolean {
    return this.index !== null;
  }
  /** "k hard negatives mined every N steps" for the training log ('' when off). */
  describe(): string {
    return this.enabled
      ? `${this.o.hardNegatives} hard negative${this.o.hardNegatives > 1 ? 's' : ''} mined every ${this.o.mineEvery} steps over ${this.targets.length} targets`
      : '';
  }

  /** Every mineEvery steps (from step 1): embed the distinct targets with the current model and index them. */
  beforeStep(step: number, encoder: () => SentenceEncoder): void {
    if (!this.enabled || (step - 1) % this.o.mineEvery !== 0) return;
    const enc = encoder();
    this.dim = enc.dim;
    this.targetVecs = embedAll(
      enc,
      this.targets.map((t) => this.ids(t.lang, t.row)),
    );
    this.buildIndex();
  }

  private buildIndex(): void {
    this.index?.dispose();
    this.index = null;
    const n = this.targets.length,
      d = this.dim;
    const nlist = Math.round(Math.sqrt(n));
    const index = FaissIndex.create(d, n >= 4096 ? `IVF${nlist},Flat` : 'Flat', 'ip');
    try {
      if (n >= 4096) {
        index.train(this.targetVecs!);
        index.setNprobe(this.o.mineNprobe);
      }
      index.add(this.targetVecs!);
    } catch (e) {
      index.dispose();
      throw e;
    }
    this.index = index;
  }

  /**
   * The hard negatives of a batch: the k nearest targets of each example's source (embedded with
   * `encoder()`, the current weights) from the last mining round, skipping its own target text and
   * every text of its row; [] before the first round (the encoder is not asked for then).
   */
  negatives(examples: readonly Example[], encoder: () => SentenceEncoder): Int32Array[] {
    if (!this.index) return [];
    const k = this.o.hardNegatives;
    const srcVecs = embedAll(
      encoder(),
      examples.map((e) => this.ids(e.src[0]!, e.row)),
    );
    const r = this.index.search(srcVecs, k + 2);
    const out: Int32Array[] = [];
    examples.forEach((e, i) => {
      const gold = seqKey(this.ids(e.trg[0]!, e.row));
      let got = 0;
      for (let j = 0; j < r.k && got < k; j++) {
        const l = Number(r.labels[i * r.k + j]);
        if (l < 0 || this.targets[l]!.key === gold || this.targets[l]!.row === e.row) continue;
        out.push(this.ids(this.targets[l]!.lang, this.targets[l]!.row));
        got++;
      }
    });
    return out;
  }

  /** The last round's target vectors, for the checkpoint (undefined before the first round). */
  checkpointState(): { tensors: Map<string, Tensor>; meta: unknown } | undefined {
    if (!this.targetVecs) return undefined;
    return { tensors: new Map([['target_vectors', fromArray(this.targetVecs, [this.targets.length, this.dim])]]), meta: { mined: true } };
  }

  /** Restores a checkpoint's round (its index is rebuilt from the vectors). */
  loadCheckpointState(s: { tensors: Map<string, Tensor>; meta: unknown }): void {
    const t = s.tensors.get('target_vectors');
    if (!t || !this.enabled) return;
    const [n, d] = t.shape as [number, number];
    if (t.shape.length !== 2 || n !== this.targets.length)
      throw new Error(
        `--resume: the checkpoint's mined target vectors [${t.shape.join(', ')}] do not match the ${this.targets.length} distinct training targets (resume with the data the run was started with)`,
      );
    this.dim = d;
    this.targetVecs = t.toFloat32Array();
    this.buildIndex();
  }

  dispose(): void {
    this.index?.dispose();
    this.index = null;
  }
}

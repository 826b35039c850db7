// The scorer's pair model in training: its examples from a parallel TSV (translations against their
// nearest wrong neighbours, none a sentence of the scorer's own sets), its words embedded by the
// sentence encoder, training with checkpoints (every 200 batches, each epoch, and when stopped) for
// --resume.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadNWayTsv } from '../../train-data/corpus.js';
import { vectorsFor } from '../../embed/input.js';
import { Adam } from '../../nn/optim.js';
import { loadTensors, saveTensors } from '../../nn/serialize.js';
import { Tensor } from '../../tensor/tensor.js';
import { pause } from '../../util/pause.js';
import { Progress } from '../../util/progress.js';
import { Rng } from '../../util/rng.js';
import { mineTables } from '../mine.js';
import { loadPairModel, PairExample, PairModel, PairModelConfig, PairTrainingPoint, PairTrainingStopped, savePairModel, trainPairModel } from './pair-model.js';
import { embedTextWords } from './pair-words.js';

/** A scorer's training stopped by its signal; what it did is kept in `work` (OUT.partial) for --resume. */
export class ScorerTrainingStopped extends Error {
  constructor(readonly work: string) {
    super(`scorer training stopped; what was done is kept in ${work}`);
    this.name = 'ScorerTrainingStopped';
  }
}

/** Lets the event loop run (signal handlers) when `everyMs` passed since the last time. */
function yielder(everyMs = 100): () => Promise<void> {
  let last = performance.now();
  return async () => {
    if (performance.now() - last < everyMs) return;
    await pause();
    last = performance.now();
  };
}

/** A language pair of the scorer's training: its sets' sentences and the translations the pair model learns from. */
export interface PairTrainingPair {
  srcLang: string;
  trgLang: string;
  sentences: { src: string[]; trg: string[] };
  rows: [string, string][];
}

/**
 * Up to `n` rows of each language pair of an N-way parallel TSV (both sides non-empty; drawn with
 * a fixed seed), none a sentence of `exclude` (the scorer's own sets: its features never see a
 * pair the pair model was trained on).
 */
export async function pairModelRows(
  file: string,
  pairs: { srcLang: string; trgLang: string; exclude: Set<string> }[],
  n: number,
  seed = 1,
): Promise<[string, string][][]> {
  const { langs, rows } = await loadNWayTsv(file);
  return pairs.map(({ srcLang: sl, trgLang: tl, exclude }) => {
    if (!langs.includes(sl) || !langs.includes(tl))
      throw new Error(`${file}: no column '${!langs.includes(sl) ? sl : tl}' for the pair model's ${sl}-${tl} rows (it has ${langs.join(' ')})`);
    const both = rows.filter((r) => r.get(sl) && r.get(tl) && !exclude.has(r.get(sl)!) && !exclude.has(r.get(tl)!));
    return new Rng(`${seed}:${sl}-${tl}:pair-model`)
      .shuffle(both)
      .slice(0, n)
      .map((r) => [r.get(sl)!, r.get(tl)!] as [string, string]);
  });
}

/**
 * Training examples of one language pair: each translation (label 1), the `negatives` nearest
 * wrong targets of its source and nearest wrong sources of its target by the model's vectors
 * (label 0; a neighbour with the same text on either side is not wrong and is passed over).
 */
function examplesOf(model: string, center: boolean, p: PairTrainingPair, sIds: number[][], tIds: number[][], negatives: number): PairExample[] {
  if (p.rows.length < 2) {
    process.stderr.write(
      `[scorer] pair model: ${p.srcLang}-${p.trgLang} has ${p.rows.length} translations outside the scorer's sets; it learns from the other pairs\n`,
    );
    return [];
  }
  const src = p.rows.map((r) => r[0]),
    trg = p.rows.map((r) => r[1]);
  const sv = vectorsFor(src, undefined, model, `${p.srcLang}-${p.trgLang} ${p.srcLang}`, {
    lang: p.srcLang,
    langFlag: '--src-lang',
    center,
    label: 'pair',
    quiet: true,
  });
  const tv = vectorsFor(trg, undefined, model, `${p.srcLang}-${p.trgLang} ${p.trgLang}`, {
    lang: p.trgLang,
    langFlag: '--trg-lang',
    center,
    label: 'pair',
    quiet: true,
  });
  const k = Math.min(negatives + 3, src.length);
  const { fwd, bwd } = mineTables(sv.data, tv.data, sv.d, { k, chunk: 16384 });
  const out: PairExample[] = [];
  for (let i = 0; i < src.length; i++) {
    out.push({ a: sIds[i]!, b: tIds[i]!, y: 1 });
    for (let j = 0, got = 0; j < k && got < negatives; j++) {
      const t = Number(fwd.labels[i * k + j]);
      if (t >= 0 && t !== i && trg[t] !== trg[i] && src[t] !== src[i]) {
        out.push({ a: sIds[i]!, b: tIds[t]!, y: 0 });
        got++;
      }
    }
    for (let j = 0, got = 0; j < k && got < negatives; j++) {
      const s = Number(bwd.labels[i * k + j]);
      if (s >= 0 && s !== i && src[s] !== src[i] && trg[s] !== trg[i]) {
        out.push({ a: sIds[s]!, b: tIds[i]!, y: 0 });
        got++;
      }
    }
  }
  return out;
}

export interface PairTrainingOptions {
  model: string;
  dim: number;
  center: boolean;
  hidden: number;
  pca: number;
  epochs: number;
  maxWords: number;
  /** Wrong neighbours per translation and direction. */
  negatives: number;
  /** Work directory of the run: its checkpoints (pair-model.safetensors, pair-optim.safetensors). */
  work: string;
  /** Resume from the work directory's checkpoint when it was made with the same `key`. */
  resume: boolean;
  key: string;
  /** SIGINT/SIGTERM: a checkpoint, then TrainingInterrupted. */
  signal?: AbortSignal;
}

/** The checkpoint of a pair model in training: the model and Adam's moments with where training stood. */
interface PairCheckpoint {
  model: string;
  optim: string;
  key: string;
}

function savePairCheckpoint(c: PairCheckpoint, pm: PairModel, adam: Adam, at: PairTrainingPoint): void {
  savePairModel(pm, c.model);
  const s = adam.stateDict();
  saveTensors(c.optim, s.tensors, {
    key: c.key,
    epoch: String(at.epoch),
    batch: String(at.batch),
    step: String(s.meta.step),
    loss_sum: String(at.lossSum ?? 0),
    loss_examples: String(at.examples ?? 0),
  });
}

/** The checkpoint's model, optimiser and point when it was made with the same key and configuration (else null, said on stderr). */
function resumePairCheckpoint(
  c: PairCheckpoint,
  config: PairModelConfig,
  o: PairTrainingOptions,
): { pm: PairModel; opt: Adam; start: PairTrainingPoint } | null {
  if (!(o.resume && existsSync(c.model) && existsSync(c.optim))) return null;
  try {
    const m = loadPairModel(c.model);
    const st = loadTensors(c.optim);
    if (!(st.metadata.key === o.key && JSON.stringify(m.config) === JSON.stringify(config) && Number(st.metadata.epoch) <= o.epochs)) {
      process.stderr.write(`[scorer] pair model in ${o.work} made with other arguments; trained again\n`);
      return null;
    }
    const opt = new Adam(m.parameters(), { lr: 1e-3 });
    opt.loadStateDict({ tensors: st.tensors, meta: { step: Number(st.metadata.step) } });
    const start = {
      epoch: Number(st.metadata.epoch),
      batch: Number(st.metadata.batch ?? 0),
      lossSum: Number(st.metadata.loss_sum ?? 0),
      examples: Number(st.metadata.loss_examples ?? 0),
    };
    process.stderr.write(
      `[scorer] --resume: pair model from ${c.model}, ${start.epoch} of ${o.epochs} epochs done${start.batch ? ` and ${start.batch} batches of the next` : ''}\n`,
    );
    return { pm: m, opt, start };
  } catch (err) {
    process.stderr.write(`[scorer] pair model checkpoint in ${o.work} unreadable (${(err as Error).message}); trained again\n`);
    return null;
  }
}

/** The words of every pair's sentences and rows embedded; each pair's sentences and rows as word rows. */
function pairWords(pairs: PairTrainingPair[], o: PairTrainingOptions) {
  const t0 = performance.now();
  const e = embedTextWords(
    o.model,
    pairs.flatMap((p) => [
      { key: p.srcLang, lang: p.srcLang, texts: [...p.sentences.src, ...p.rows.map((r) => r[0])] },
      { key: p.trgLang, lang: p.trgLang, texts: [...p.sentences.trg, ...p.rows.map((r) => r[1])] },
    ]),
    o,
  );
  process.stderr.write(`[scorer] pair model: ${e.n} words of ${e.keys} languages embedded in ${((performance.now() - t0) / 1000).toFixed(1)}s\n`);
  // each list: the pair's sentences, then its rows
  const ids = pairs.map((p, i) => {
    const s = e.ids[2 * i]!,
      t = e.ids[2 * i + 1]!,
      ns = p.sentences.src.length,
      nt = p.sentences.trg.length;
    return { sentences: { src: s.slice(0, ns), trg: t.slice(0, nt) }, rows: { src: s.slice(ns), trg: t.slice(nt) } };
  });
  return { vectors: e.vectors, n: e.n, ids };
}

/**
 * Trains a pair model on the language pairs' translations; returns it with the word table of every
 * word of the pairs' sentences and rows (by language) and each pair's sentences as word rows, for
 * the scorer's features.
 */
export async function trainScorerPairModel(
  pairs: PairTrainingPair[],
  o: PairTrainingOptions,
): Promise<{ pm: PairModel; table: Tensor; ids: { src: number[][]; trg: number[][] }[]; trained: Record<string, unknown> }> {
  const t0 = performance.now();
  const e = pairWords(pairs, o);
  const { ids } = e;
  const examples = pairs.flatMap((p, i) => examplesOf(o.model, o.center, p, ids[i]!.rows.src, ids[i]!.rows.trg, o.negatives));
  const positives = examples.reduce((a, x) => a + x.y, 0);
  if (!positives)
    throw new Error("the pair model has no translations to learn from outside the scorer's sets (more rows in --tables / --parallel, or fewer --rows)");
  const config: PairModelConfig = { dim: o.dim, pca: Math.min(o.pca, o.dim), hidden: o.hidden, maxWords: o.maxWords, center: o.center };
  const ckpt: PairCheckpoint = { model: join(o.work, 'pair-model.safetensors'), optim: join(o.work, 'pair-optim.safetensors'), key: o.key };
  const resumed = resumePairCheckpoint(ckpt, config, o);
  const start: PairTrainingPoint = resumed?.start ?? { epoch: 0, batch: 0 };
  let pm = resumed?.pm;
  if (!pm) {
    pm = new PairModel(config);
    pm.fitPca(e.vectors, e.n);
  }
  const table = pm.wordTable(e.vectors, e.n);
  process.stderr.write(
    `[scorer] pair model: ${examples.length} examples (${positives} translations) of ${pairs.length} language pairs, ${o.epochs} epochs, hidden ${o.hidden}, PCA ${config.pca}\n`,
  );
  const batch = 128,
    perEpoch = Math.ceil(examples.length / batch);
  const prog = new Progress({ label: 'pair model', unit: 'batches', total: Math.max(0, (o.epochs - start.epoch) * perEpoch - start.batch) });
  const losses: number[] = [];
  // the model and Adam's moments: after each epoch, and every 200 batches within one
  const save = (at: PairTrainingPoint, adam: Adam) => savePairCheckpoint(ckpt, pm, adam, at);
  await trainPairModel(
    pm,
    table,
    examples,
    {
      epochs: o.epochs,
      batch,
      start,
      seed: `pair-model:${o.key}`,
      pause: yielder(),
      signal: o.signal,
      onBatch: () => prog.tick(),
      checkpoint: { everyBatches: 200, save },
      onEpoch: (ep, loss, adam) => {
        losses.push(loss);
        save({ epoch: ep, batch: 0 }, adam);
        prog.note(`[scorer] pair model epoch ${ep}/${o.epochs}: mean loss ${loss.toFixed(4)}`);
      },
    },
    resumed?.opt,
  ).catch((e) => {
    if (e instanceof PairTrainingStopped) {
      prog.note(`[scorer] pair model: checkpoint at epoch ${e.at.epoch + 1}, batch ${e.at.batch} in ${o.work} (--resume continues)`);
      throw new ScorerTrainingStopped(o.work);
    }
    throw e;
  });
  prog.done();
  return {
    pm,
    table,
    ids: ids.map((x) => x.sentences),
    trained: { examples: examples.length, translations: positives, words: e.n, epochs: o.epochs, losses, seconds: Math.round((performance.now() - t0) / 1000) },
  };
}

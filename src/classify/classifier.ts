// Document classifiers over sentence-embedding document vectors, for cross-lingual transfer (train
// on English documents, test on any language): an averaged perceptron (as in the JMT paper) and a
// small MLP (as LASER's MLDoc setup: tanh hidden layers, dropout, Adam, the best epoch chosen on a
// held-out part of the training language). Saved as a directory (classifier.json +
// weights.safetensors); metrics: accuracy, macro-F1, per-class figures, the confusion matrix.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Linear, Module } from '../nn/index.js';
import { Adam } from '../nn/optim.js';
import { loadTensors, readJson, saveTensors, writeJson } from '../nn/serialize.js';
import { crossEntropy, dropout } from '../tensor/ops.js';
import { fromArray, manualSeed, noGrad, Tensor, tidy } from '../tensor/tensor.js';
import { Rng } from '../util/rng.js';
import { writeDirAtomically } from '../util/atomic.js';

export type ClassifierType = 'perceptron' | 'mlp';

export interface ClassifierOptions {
  type: ClassifierType;
  /** MLP hidden layer widths (tanh). */
  hidden: number[];
  dropout: number;
  epochs: number;
  lr: number;
  batch: number;
  /** Share of the training documents held out to pick the best epoch. */
  heldOut: number;
  seed: number;
}

export const CLASSIFIER_DEFAULTS: ClassifierOptions = { type: 'mlp', hidden: [64], dropout: 0.2, epochs: 40, lr: 1e-3, batch: 64, heldOut: 0.1, seed: 1 };

class Mlp extends Module {
  readonly layers: Linear[] = [];
  constructor(
    d: number,
    hidden: number[],
    classes: number,
    readonly p: number,
  ) {
    super();
    const widths = [d, ...hidden, classes];
    for (let i = 0; i + 1 < widths.length; i++) this.layers.push(this.module(`layers.${i}`, new Linear(widths[i]!, widths[i + 1]!)));
  }
  forward(x: Tensor): Tensor {
    return tidy(() => {
      let h = x;
      this.layers.forEach((l, i) => {
        h = l.forward(dropout(h, this.p, this.training));
        if (i + 1 < this.layers.length) h = h.tanh();
      });
      return h;
    });
  }
}

export interface TrainedClassifier {
  type: ClassifierType;
  labels: string[];
  dim: number;
  hidden: number[];
  /** Scores [n, classes] of document vectors [n, dim]. */
  scores(x: Float32Array): Float32Array;
  /** How the epoch (MLP) was chosen, for the log. */
  info: string;
  /** Writes the classifier directory (atomically: a temporary directory renamed over dir). */
  save(dir: string): void;
}

/** Writes files into a temporary directory and swaps it in as dir (refused over a directory that is not a classifier). */
function saveDir(dir: string, write: (tmp: string) => void): void {
  if (existsSync(dir) && readdirSync(dir).length && !existsSync(join(dir, 'classifier.json')))
    throw new Error(`--output ${dir} exists and is not a classifier directory (it would be replaced)`);
  writeDirAtomically(dir, write);
}

function argmaxRows(s: Float32Array, c: number): Int32Array {
  const n = s.length / c;
  return Int32Array.from({ length: n }, (_, i) => {
    let b = 0;
    for (let j = 1; j < c; j++) if (s[i * c + j]! > s[i * c + b]!) b = j;
    return b;
  });
}

export function predict(clf: TrainedClassifier, x: Float32Array): Int32Array {
  return argmaxRows(clf.scores(x), clf.labels.length);
}

/** Trains a classifier on document vectors x [n, d] with label indices y. */
export function trainClassifier(x: Float32Array, y: Int32Array, labels: string[], o: ClassifierOptions): TrainedClassifier {
  const n = y.length,
    d = x.length / n;
  if (!n) throw new Error('no training documents');
  return o.type === 'perceptron' ? trainPerceptron(x, y, d, labels, o) : trainMlp(x, y, d, labels, o);
}

/** Averaged multi-class perceptron (Freund & Schapire 1999; Collins 2002). */
function trainPerceptron(x: Float32Array, y: Int32Array, d: number, labels: string[], o: ClassifierOptions): TrainedClassifier {
  const C = labels.length,
    n = y.length;
  const w = new Float64Array(C * (d + 1)),
    sum = new Float64Array(C * (d + 1));
  const rng = new Rng(o.seed);
  let t = 0;
  for (let epoch = 0; epoch < o.epochs; epoch++) {
    for (const i of rng.shuffle(Array.from({ length: n }, (_, k) => k))) {
      let best = 0,
        bs = -Infinity;
      for (let c = 0; c < C; c++) {
        let s = w[c * (d + 1) + d]!;
        for (let j = 0; j < d; j++) s += w[c * (d + 1) + j]! * x[i * d + j]!;
        if (s > bs) {
          bs = s;
          best = c;
        }
      }
      t++;
      const g = y[i]!;
      if (best !== g) {
        for (const [c, sign] of [
          [g, 1],
          [best, -1],
        ] as const) {
          for (let j = 0; j <= d; j++) {
            const v = sign * (j < d ? x[i * d + j]! : 1);
            w[c * (d + 1) + j]! += v;
            sum[c * (d + 1) + j]! += t * v; // averaging trick: avg = w − sum/T
          }
        }
      }
    }
  }
  const avg = Float32Array.from(w, (v, k) => v - sum[k]! / (t + 1));
  return linearClassifier('perceptron', labels, d, avg, `averaged perceptron, ${o.epochs} epochs`);
}

function linearClassifier(type: ClassifierType, labels: string[], d: number, w: Float32Array, info: string): TrainedClassifier {
  const C = labels.length;
  return {
    type,
    labels,
    dim: d,
    hidden: [],
    info,
    scores(x) {
      const n = x.length / d,
        out = new Float32Array(n * C);
      for (let i = 0; i < n; i++)
        for (let c = 0; c < C; c++) {
          let s = w[c * (d + 1) + d]!;
          for (let j = 0; j < d; j++) s += w[c * (d + 1) + j]! * x[i * d + j]!;
          out[i * C + c] = s;
        }
      return out;
    },
    save(dir) {
      saveDir(dir, (tmp) => {
        saveTensors(join(tmp, 'weights.safetensors'), new Map([['weight', fromArray(w, [C, d + 1])]]));
        writeJson(join(tmp, 'classifier.json'), { format: 'xling-classifier', version: 1, type, labels, dim: d, hidden: [] });
      });
    },
  };
}

function mlpClassifier(net: Mlp, labels: string[], d: number, hidden: number[], info: string): TrainedClassifier {
  net.eval();
  return {
    type: 'mlp',
    labels,
    dim: d,
    hidden,
    info,
    scores: (x) => noGrad(() => tidy(() => net.forward(fromArray(x, [x.length / d, d])).toFloat32Array())),
    save(dir) {
      saveDir(dir, (tmp) => {
        saveTensors(join(tmp, 'weights.safetensors'), net.stateDict());
        writeJson(join(tmp, 'classifier.json'), { format: 'xling-classifier', version: 1, type: 'mlp', labels, dim: d, hidden });
      });
    },
  };
}

/** MLP with tanh hidden layers, dropout and Adam; the weights of the best held-out epoch are kept. */
function trainMlp(x: Float32Array, y: Int32Array, d: number, labels: string[], o: ClassifierOptions): TrainedClassifier {
  const n = y.length,
    C = labels.length;
  manualSeed(o.seed);
  const rng = new Rng(o.seed);
  const order = rng.shuffle(Array.from({ length: n }, (_, i) => i));
  const nHeld = Math.min(n - 1, Math.round(n * o.heldOut));
  const held = order.slice(0, nHeld),
    train = order.slice(nHeld);
  const rows = (idx: number[]) => {
    const out = new Float32Array(idx.length * d);
    idx.forEach((i, k) => out.set(x.subarray(i * d, (i + 1) * d), k * d));
    return out;
  };
  const heldX = rows(held),
    heldY = held.map((i) => y[i]!);
  const net = new Mlp(d, o.hidden, C, o.dropout);
  const opt = new Adam(net.parameters(), { lr: o.lr });
  let best = { acc: -1, epoch: 0, state: new Map<string, Float32Array>() };
  for (let epoch = 1; epoch <= o.epochs; epoch++) {
    net.train();
    const perm = rng.shuffle([...train]);
    for (let b = 0; b < perm.length; b += o.batch) {
      const idx = perm.slice(b, b + o.batch);
      tidy(() => {
        opt.zeroGrad();
        const loss = crossEntropy(net.forward(fromArray(rows(idx), [idx.length, d])), fromArray(BigInt64Array.from(idx, (i) => BigInt(y[i]!))));
        loss.backward();
        opt.step();
      });
    }
    if (!held.length) {
      best = { acc: 0, epoch, state: snapshot(net) };
      continue;
    }
    net.eval();
    const pred = argmaxRows(
      noGrad(() => tidy(() => net.forward(fromArray(heldX, [held.length, d])).toFloat32Array())),
      C,
    );
    const acc = heldY.filter((g, k) => pred[k] === g).length / held.length;
    if (acc > best.acc) best = { acc, epoch, state: snapshot(net) };
  }
  noGrad(() => {
    for (const [k, t] of net.stateDict()) {
      const v = fromArray(best.state.get(k)!, t.shape);
      t.copy_(v);
      v.dispose();
    }
  });
  return mlpClassifier(
    net,
    labels,
    d,
    o.hidden,
    `MLP ${[d, ...o.hidden, C].join('→')}, best held-out accuracy ${(100 * best.acc).toFixed(1)}% at epoch ${best.epoch} of ${o.epochs} (${held.length} held-out documents)`,
  );
}

function snapshot(m: Module): Map<string, Float32Array> {
  return new Map([...m.stateDict()].map(([k, t]) => [k, t.toFloat32Array()]));
}

/** Loads a classifier directory written by save(). */
export function loadClassifier(dir: string): TrainedClassifier {
  if (!existsSync(join(dir, 'classifier.json'))) throw new Error(`--classifier ${dir}: not a classifier directory (no classifier.json)`);
  const c = readJson<{ format?: string; type: ClassifierType; labels: string[]; dim: number; hidden: number[] }>(join(dir, 'classifier.json'));
  if (c.format !== 'xling-classifier') throw new Error(`${join(dir, 'classifier.json')}: not an xling classifier`);
  const { tensors } = loadTensors(join(dir, 'weights.safetensors'));
  try {
    if (c.type === 'perceptron') return linearClassifier('perceptron', c.labels, c.dim, tensors.get('weight')!.toFloat32Array(), 'averaged perceptron');
    const net = new Mlp(c.dim, c.hidden, c.labels.length, 0);
    net.loadStateDict(tensors);
    return mlpClassifier(net, c.labels, c.dim, c.hidden, 'MLP');
  } finally {
    for (const t of tensors.values()) t.dispose();
  }
}

export interface ClassMetrics {
  label: string;
  precision: number;
  recall: number;
  f1: number;
  support: number;
}
export interface Evaluation {
  accuracy: number;
  macro_f1: number /** Classes averaged by macro_f1 (gold ∪ predicted). */;
  macro_classes: number;
  perClass: ClassMetrics[];
  confusion: number[][];
  labels: string[];
  n: number;
}

/** Accuracy, macro-F1 (mean of per-class F1 over the classes gold or predicted), per-class figures and the confusion matrix (rows = gold). */
export function evaluate(gold: Int32Array, pred: Int32Array, labels: string[]): Evaluation {
  const C = labels.length;
  const confusion = labels.map(() => new Array<number>(C).fill(0));
  gold.forEach((g, i) => {
    confusion[g]![pred[i]!]!++;
  });
  const perClass = labels.map((label, c) => {
    const tp = confusion[c]![c]!,
      support = confusion[c]!.reduce((a, b) => a + b, 0),
      predicted = confusion.reduce((a, r) => a + r[c]!, 0);
    const precision = predicted ? tp / predicted : 0,
      recall = support ? tp / support : 0;
    return { label, precision, recall, f1: precision + recall ? (2 * precision * recall) / (precision + recall) : 0, support };
  });
  // macro-F1 over the classes that occur in the gold labels or the predictions (scikit-learn's
  // f1_score(average='macro') over the labels it finds in y_true ∪ y_pred): a class predicted
  // but never gold counts with F1 0
  const present = labels.map((_, c) => c).filter((c) => perClass[c]!.support > 0 || confusion.some((r) => r[c]! > 0));
  return {
    accuracy: gold.length ? gold.filter((g, i) => pred[i] === g).length / gold.length : NaN,
    macro_f1: present.reduce((a, c) => a + perClass[c]!.f1, 0) / Math.max(1, present.length),
    macro_classes: present.length,
    perClass,
    confusion,
    labels,
    n: gold.length,
  };
}

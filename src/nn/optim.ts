// Optimizers (the update rules of torch.optim, run as in-place ATen ops per parameter),
// global-norm gradient clipping and learning-rate schedules.
import { cat, zerosLike } from '../tensor/ops.js';
import { callOp, keep, noGrad, opId, Tensor, tidy } from '../tensor/tensor.js';
import { sparseAdamStep, zerosLazy } from '../tensor/kernels.js';

export interface Optimizer {
  lr: number;
  step(): void;
  zeroGrad(): void;
  /** Optimizer state as named tensors + plain values (for checkpoints). */
  stateDict(): { tensors: Map<string, Tensor>; meta: Record<string, number> };
  loadStateDict(s: { tensors: Map<string, Tensor>; meta: Record<string, number> }): void;
}

abstract class Base implements Optimizer {
  constructor(
    readonly params: Tensor[],
    public lr: number,
  ) {
    if (!(lr > 0)) throw new Error(`optimizer: lr must be > 0, got ${lr}`);
  }
  zeroGrad(): void {
    for (const p of this.params) p.zeroGrad();
  }
  abstract step(): void;
  /** Runs `update` for each parameter that has a gradient, without autograd, its temporaries freed. */
  protected eachGradient(update: (p: Tensor, g: Tensor, i: number) => void): void {
    noGrad(() => {
      this.params.forEach((p, i) => {
        tidy(() => {
          const g = p.grad;
          if (g) update(p, g, i);
        });
      });
    });
  }
  abstract stateDict(): { tensors: Map<string, Tensor>; meta: Record<string, number> };
  abstract loadStateDict(s: { tensors: Map<string, Tensor>; meta: Record<string, number> }): void;
  protected loadSlots(slots: Tensor[][], names: string[], s: Map<string, Tensor>): void {
    noGrad(() => {
      for (let k = 0; k < names.length; k++) {
        for (let i = 0; i < this.params.length; i++) {
          const v = s.get(`${names[k]}.${i}`);
          if (!v) throw new Error(`optimizer state: missing '${names[k]}.${i}'`);
          slots[k]![i]!.copy_(v);
        }
      }
    });
  }
}

export interface AdamOptions {
  lr?: number;
  betas?: [number, number];
  eps?: number;
  weightDecay?: number;
  decoupled?: boolean;
}

/** The moments, hyper-parameters and checkpoint state that Adam and SparseAdam share. */
abstract class AdamMoments extends Base {
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  stepCount = 0;
  protected readonly m: Tensor[];
  protected readonly v: Tensor[];
  constructor(params: Tensor[], o: AdamOptions, zeros: (p: Tensor) => Tensor) {
    super(params, o.lr ?? 1e-3);
    [this.beta1, this.beta2] = o.betas ?? [0.9, 0.999];
    this.eps = o.eps ?? 1e-8;
    this.m = noGrad(() => keep(params.map(zeros)));
    this.v = noGrad(() => keep(params.map(zeros)));
  }
  stateDict() {
    const tensors = new Map<string, Tensor>();
    this.m.forEach((x, i) => tensors.set(`exp_avg.${i}`, x));
    this.v.forEach((x, i) => tensors.set(`exp_avg_sq.${i}`, x));
    return { tensors, meta: { step: this.stepCount, lr: this.lr } };
  }
  loadStateDict(s: { tensors: Map<string, Tensor>; meta: Record<string, number> }): void {
    this.loadSlots([this.m, this.v], ['exp_avg', 'exp_avg_sq'], s.tensors);
    this.stepCount = s.meta.step ?? 0;
  }
}

/** Adam (L2 weight decay added to the gradient) or AdamW (decoupled decay) — torch.optim semantics. */
export class Adam extends AdamMoments {
  readonly weightDecay: number;
  readonly decoupled: boolean;
  constructor(params: Tensor[], o: AdamOptions = {}) {
    super(params, o, (p) => zerosLike(p));
    this.weightDecay = o.weightDecay ?? 0;
    this.decoupled = o.decoupled ?? false;
  }
  step(): void {
    this.stepCount++;
    const t = this.stepCount;
    const bc1 = 1 - this.beta1 ** t,
      bc2 = 1 - this.beta2 ** t;
    const stepSize = this.lr / bc1;
    this.eachGradient((p, grad, i) => {
      let g = grad;
      if (this.weightDecay) {
        if (this.decoupled) p.mul_(1 - this.lr * this.weightDecay);
        else g = g.add(p, this.weightDecay);
      }
      this.m[i]!.lerp_(g, 1 - this.beta1);
      this.v[i]!.mul_(this.beta2).addcmul_(g, g, 1 - this.beta2);
      const denom = this.v[i]!.sqrt().div_(Math.sqrt(bc2)).add_(this.eps);
      p.addcdiv_(this.m[i]!, denom, -stepSize);
    });
  }
}

export class AdamW extends Adam {
  constructor(params: Tensor[], o: AdamOptions = {}) {
    super(params, { weightDecay: 0.01, ...o, decoupled: true });
  }
}

/**
 * Adam over row-sparse gradients (torch.optim.SparseAdam semantics): only the rows a step's
 * gradient touches have their moments and values updated, in one fused native pass per table.
 * For large hashed-feature tables, where a batch touches a small share of the rows.
 */
export class SparseAdam extends AdamMoments {
  constructor(params: Tensor[], o: Omit<AdamOptions, 'weightDecay' | 'decoupled'> = {}) {
    // moments whose pages are mapped when a row is first updated: most rows of a large hashed
    // table may never be
    super(params, o, (p) => zerosLazy(p.shape, p.dtype));
  }
  step(): void {
    this.stepCount++;
    for (let i = 0; i < this.params.length; i++) {
      const g = this.params[i]!.grad;
      if (!g) continue;
      try {
        sparseAdamStep(this.params[i]!, this.m[i]!, this.v[i]!, g, this.lr, this.beta1, this.beta2, this.eps, this.stepCount);
      } finally {
        g.dispose();
      }
    }
  }
}

/**
 * Plain SGD over row-sparse gradients: p[rows] −= lr · g[rows] (word2vec's update), for large
 * embedding tables trained with skip-gram.
 */
export class SparseSGD extends Base {
  constructor(params: Tensor[], o: { lr: number }) {
    super(params, o.lr);
  }
  step(): void {
    noGrad(() => {
      for (const p of this.params) {
        const g = p.grad;
        if (!g) continue;
        tidy(() => {
          const c = callOp(SPARSE.coalesce, [g]) as Tensor;
          const rows = (callOp(SPARSE.indices, [c]) as Tensor).select(0, 0);
          p.indexAdd_(0, rows, callOp(SPARSE.values, [c]) as Tensor, -this.lr);
        });
        g.dispose();
      }
    });
  }
  stateDict() {
    return { tensors: new Map<string, Tensor>(), meta: { lr: this.lr } };
  }
  loadStateDict(): void {
    /* stateless */
  }
}

const SPARSE = { coalesce: opId('coalesce'), indices: opId('_indices'), values: opId('_values') };

export interface SGDOptions {
  lr: number;
  momentum?: number;
  weightDecay?: number;
  nesterov?: boolean;
}

export class SGD extends Base {
  readonly momentum: number;
  readonly weightDecay: number;
  readonly nesterov: boolean;
  private readonly buf: Tensor[];
  private started = false;
  constructor(params: Tensor[], o: SGDOptions) {
    super(params, o.lr);
    this.momentum = o.momentum ?? 0;
    this.weightDecay = o.weightDecay ?? 0;
    this.nesterov = o.nesterov ?? false;
    this.buf = this.momentum ? noGrad(() => keep(params.map((p) => zerosLike(p)))) : [];
  }
  step(): void {
    this.eachGradient((p, grad, i) => {
      let g = grad;
      if (this.weightDecay) g = g.add(p, this.weightDecay);
      if (this.momentum) {
        const b = this.buf[i]!;
        if (!this.started) b.copy_(g);
        else b.mul_(this.momentum).add_(g);
        g = this.nesterov ? g.add(b, this.momentum) : b;
      }
      p.add_(g, -this.lr);
    });
    this.started = true;
  }
  stateDict() {
    const tensors = new Map<string, Tensor>();
    this.buf.forEach((x, i) => tensors.set(`momentum_buffer.${i}`, x));
    return { tensors, meta: { lr: this.lr, started: this.started ? 1 : 0 } };
  }
  loadStateDict(s: { tensors: Map<string, Tensor>; meta: Record<string, number> }): void {
    if (this.momentum) this.loadSlots([this.buf], ['momentum_buffer'], s.tensors);
    this.started = !!s.meta.started;
  }
}

/** Scales gradients so their global L2 norm is at most maxNorm. Returns the norm before clipping. */
export function clipGradNorm(params: Tensor[], maxNorm: number): number {
  return noGrad(() =>
    tidy(() => {
      const grads = params.map((p) => p.grad).filter((g): g is Tensor => g !== null);
      if (!grads.length) return 0;
      const norms = grads.map((g) => g.norm(2).view([1]));
      const total = cat(norms).norm(2).item();
      const coef = maxNorm / (total + 1e-6);
      if (coef < 1) for (const g of grads) g.mul_(coef);
      return total;
    }),
  );
}

// ---- learning-rate schedules: plain functions of the step (and state for plateau)

/** Linear warmup to base, then inverse square root decay (the Transformer schedule). */
export function warmupInvSqrt(base: number, warmup: number): (step: number) => number {
  return (step) => {
    const s = Math.max(step, 1);
    if (warmup <= 0) return base;
    return s < warmup ? (base * s) / warmup : base * Math.sqrt(warmup / s);
  };
}

/** Multiplies by gamma every stepSize steps. */
export function stepDecay(base: number, stepSize: number, gamma: number): (step: number) => number {
  return (step) => base * gamma ** Math.floor(step / stepSize);
}

/** Decay on plateau: call observe(metric) after each validation (lower is better). */
export class PlateauDecay {
  best = Infinity;
  bad = 0;
  constructor(
    public lr: number,
    readonly factor = 0.5,
    readonly patience = 2,
    readonly minLr = 1e-6,
    readonly threshold = 1e-4,
  ) {}
  observe(metric: number): number {
    if (metric < this.best * (1 - this.threshold)) {
      this.best = metric;
      this.bad = 0;
    } else if (++this.bad > this.patience) {
      this.lr = Math.max(this.minLr, this.lr * this.factor);
      this.bad = 0;
    }
    return this.lr;
  }
  state() {
    return { lr: this.lr, best: this.best, bad: this.bad };
  }
  load(s: { lr: number; best: number; bad: number }): void {
    Object.assign(this, s);
  }
}

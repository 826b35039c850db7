// Module base: named parameters, buffers and children; train/eval; state dicts whose names
// match PyTorch's, so weights move between xling and Python unchanged.
import { keep, noGrad, Tensor } from '../tensor/tensor.js';

export class Module {
  training = true;
  private readonly _params = new Map<string, Tensor>();
  private readonly _buffers = new Map<string, Tensor>();
  private readonly _children = new Map<string, Module>();

  /** Registers a trainable tensor (kept out of tidy scopes, requiresGrad on). */
  protected param(name: string, t: Tensor): Tensor {
    keep(t);
    t.requiresGrad_(true);
    this._params.set(name, t);
    return t;
  }

  /** Registers a non-trainable tensor saved in the state dict. */
  protected buffer(name: string, t: Tensor): Tensor {
    keep(t);
    this._buffers.set(name, t);
    return t;
  }

  /**
   * Replaces a registered parameter or buffer by a frozen tensor saved under the same name (a
   * buffer from now on: no gradient, not in parameters()), e.g. an inference-only int8 table; the
   * old tensor is disposed.
   */
  protected replaceFrozen(name: string, t: Tensor): Tensor {
    const old = this._params.get(name) ?? this._buffers.get(name);
    if (!old) throw new Error(`Module: no tensor '${name}' to replace`);
    keep(t);
    this._params.delete(name);
    this._buffers.set(name, t);
    if (old !== t) old.dispose();
    return t;
  }

  protected module<M extends Module>(name: string, m: M): M {
    this._children.set(name, m);
    return m;
  }

  namedChildren(): [string, Module][] {
    return [...this._children];
  }

  /** This module ('' ) and every descendant, by dotted path (as PyTorch's named_modules). */
  namedModules(prefix = ''): [string, Module][] {
    const out: [string, Module][] = [[prefix, this]];
    for (const [n, c] of this._children) out.push(...c.namedModules(prefix ? `${prefix}.${n}` : n));
    return out;
  }

  namedParameters(prefix = ''): [string, Tensor][] {
    const out: [string, Tensor][] = [];
    for (const [n, p] of this._params) out.push([prefix + n, p]);
    for (const [n, c] of this._children) out.push(...c.namedParameters(`${prefix}${n}.`));
    return out;
  }

  parameters(): Tensor[] {
    return this.namedParameters().map(([, p]) => p);
  }

  namedBuffers(prefix = ''): [string, Tensor][] {
    const out: [string, Tensor][] = [];
    for (const [n, b] of this._buffers) out.push([prefix + n, b]);
    for (const [n, c] of this._children) out.push(...c.namedBuffers(`${prefix}${n}.`));
    return out;
  }

  /** Number of trainable scalars. */
  numParameters(): number {
    return this.parameters().reduce((a, p) => a + p.numel, 0);
  }

  train(mode = true): this {
    this.training = mode;
    for (const c of this._children.values()) c.train(mode);
    return this;
  }
  eval(): this {
    return this.train(false);
  }

  zeroGrad(): void {
    for (const p of this.parameters()) p.zeroGrad();
  }

  /** Parameters and buffers by PyTorch-style dotted name (the live tensors, not copies). */
  stateDict(): Map<string, Tensor> {
    return new Map([...this.namedParameters(), ...this.namedBuffers()]);
  }

  /**
   * Copies values into this module's tensors. strict: every name must match both ways.
   * Shapes must match; dtypes are converted.
   */
  loadStateDict(sd: Map<string, Tensor> | Record<string, Tensor>, strict = true): { missing: string[]; unexpected: string[] } {
    const src = sd instanceof Map ? sd : new Map(Object.entries(sd));
    const own = this.stateDict();
    const missing = [...own.keys()].filter((k) => !src.has(k));
    const unexpected = [...src.keys()].filter((k) => !own.has(k));
    if (strict && (missing.length || unexpected.length)) {
      throw new Error(`loadStateDict: missing [${missing.join(', ')}], unexpected [${unexpected.join(', ')}]`);
    }
    noGrad(() => {
      for (const [k, t] of own) {
        const v = src.get(k);
        if (!v) continue;
        const a = t.shape.join(','),
          b = v.shape.join(',');
        if (a !== b) throw new Error(`loadStateDict: '${k}' has shape [${b}], expected [${a}]`);
        t.copy_(v);
      }
    });
    return { missing, unexpected };
  }

  /** Frees every parameter and buffer. */
  dispose(): void {
    for (const [, t] of this.stateDict()) t.dispose();
  }
}

/** An indexed list of modules (children named 0, 1, …), like nn.ModuleList. */
export class ModuleList<M extends Module = Module> extends Module {
  readonly items: M[] = [];
  append(m: M): this {
    this.module(String(this.items.length), m);
    this.items.push(m);
    return this;
  }
}

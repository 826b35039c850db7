// Masked pooling over time. mask: bool [B, T], true = a real token (padding excluded).
import { Tensor, tidy } from '../tensor/tensor.js';
import { Linear } from './layers.js';
import { Module } from './module.js';

/** Max over real positions of h [B, T, D]. */
export function maxPool(h: Tensor, mask: Tensor): Tensor {
  return tidy(() => h.maskedFill(mask.logicalNot().unsqueeze(-1), -Infinity).max(1)[0]);
}

/** Mean over real positions of h [B, T, D]. */
export function meanPool(h: Tensor, mask: Tensor): Tensor {
  return tidy(() => {
    const m = mask.unsqueeze(-1).to(h.dtype);
    return h.mul(m).sum(1).div(m.sum(1).clampMin(1));
  });
}

/** The first position (e.g. a [CLS]-style token). */
export function firstToken(h: Tensor): Tensor {
  return h.select(1, 0);
}

/** Hidden state at each sequence's last real position (for LSTM-last encoders). */
export function lastToken(h: Tensor, mask: Tensor): Tensor {
  return tidy(() => {
    const last = mask.to('int64').sum(1).sub(1).clampMin(0); // [B]
    const D = h.size(2);
    const idx = last.view([-1, 1, 1]).expand([h.size(0), 1, D]);
    return h.gather(1, idx).squeeze(1);
  });
}

/** Attention pooling: softmax over positions of a learned score, weighted sum. */
export class AttentionPool extends Module {
  readonly score: Linear;
  constructor(readonly dim: number) {
    super();
    this.score = this.module('score', new Linear(dim, 1));
  }
  forward(h: Tensor, mask: Tensor): Tensor {
    return tidy(() => {
      const s = this.score.forward(h).squeeze(-1).maskedFill(mask.logicalNot(), -Infinity); // [B, T]
      const w = s.softmax(-1).unsqueeze(-1);
      return h.mul(w).sum(1);
    });
  }
}

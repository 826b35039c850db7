// Additive margin softmax over in-batch negatives (Yang et al. 2019, eq. 3–5): for a batch of
// translation pairs (x_i, y_i) with L2-normalised vectors, the logit of the positive is
// s·(cos(x_i, y_i) − m) and of every other target s·cos(x_i, y_j); cross entropy of the positive,
// from x to y and (bidirectional) from y to x, summed. Extra targets z (hard negatives) join the
// x→y softmax as negatives of every example.
import { arange, cat, crossEntropy, normalize } from '../../tensor/ops.js';
import { fromArray, Tensor, tidy } from '../../tensor/tensor.js';

export interface MarginLossOptions {
  margin: number;
  scale: number;
  /** Both directions (BiDE) or x→y only (DE). */
  bidirectional: boolean;
}

/**
 * x, y [B, d] and z [K, d] normalised. exclude: flat positions i·B + j (i ≠ j) of in-batch pairs
 * that are not negatives (the same sentence in two examples of an N-way corpus); they are masked
 * out of both softmaxes.
 */
export function additiveMarginLoss(x: Tensor, y: Tensor, o: MarginLossOptions, z?: Tensor | null, exclude?: ArrayLike<number>): Tensor {
  return tidy(() => {
    const B = x.size(0);
    const labels = arange(B);
    // s·(x·yᵀ − m·I): the margin only on the positive (the diagonal)
    let sim = x.matmul(y.t());
    const diag = arange(0, B * B, B + 1);
    sim = sim
      .view([-1])
      .indexAdd(0, diag, fromArray(new Float32Array(B).fill(-o.margin)))
      .view([B, B])
      .mul(o.scale);
    if (exclude?.length)
      sim = sim
        .view([-1])
        .indexFill(0, fromArray(BigInt64Array.from(Array.from(exclude, BigInt))), -Infinity)
        .view([B, B]);
    const fwd = z?.size(0) ? cat([sim, x.matmul(z.t()).mul(o.scale)], 1) : sim;
    const loss = crossEntropy(fwd, labels);
    return o.bidirectional ? loss.add(crossEntropy(sim.t(), labels)) : loss;
  });
}

/**
 * The loss of one batch from its raw (not normalised) vectors [2B + K, D]: B sources, their B
 * targets, then K hard negatives. With `matryoshka` widths the loss is summed over the vectors cut
 * to each width (each re-normalised); [] = the full width only.
 */
export function batchMarginLoss(raw: Tensor, B: number, o: MarginLossOptions & { matryoshka: readonly number[] }, exclude?: ArrayLike<number>): Tensor {
  return tidy(() => {
    const full = raw.size(1),
      K = raw.size(0) - 2 * B;
    const widths = o.matryoshka.length ? o.matryoshka : [full];
    let total: Tensor | null = null;
    for (const d of widths) {
      if (d > full) throw new Error(`loss.matryoshka: width ${d} is wider than the model's vectors (${full})`);
      const v = normalize(d === full ? raw : raw.narrow(1, 0, d), 1);
      const z = K > 0 ? v.narrow(0, 2 * B, K) : null;
      const l = additiveMarginLoss(v.narrow(0, 0, B), v.narrow(0, B, B), o, z, exclude);
      total = total ? total.add(l) : l;
    }
    return total!;
  });
}

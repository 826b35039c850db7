// The two objectives of the joint multi-task model (Singla et al. 2018).
import { arange } from '../../tensor/ops.js';
import { fromArray, Tensor, tidy } from '../../tensor/tensor.js';

/**
 * Skip-gram with negative sampling (Mikolov et al. 2013), negatives shared by the batch:
 * −mean_i [ log σ(u_i·v_i) + Σ_k log σ(−u_i·n_k) ]. u: word rows [P, d], v: their context rows
 * [P, d], n: negative context rows [K, d].
 */
export function skipGramLoss(u: Tensor, v: Tensor, n: Tensor): Tensor {
  return tidy(() => {
    const pos = u.mul(v).sum([1]).logSigmoid();
    const neg = u.matmul(n.t()).neg().logSigmoid().sum([1]);
    return pos.add(neg).mean().neg();
  });
}

/** Pairwise L2 distances ‖a_i − b_j‖ [A, B]. */
export function l2Distances(a: Tensor, b: Tensor): Tensor {
  return tidy(() => {
    const aa = a.mul(a).sum([1], true),
      bb = b.mul(b).sum([1], true).t();
    return aa.add(bb).sub(a.matmul(b.t()).mul(2)).clampMin(1e-12).sqrt();
  });
}

/**
 * Hinge loss on L2 distance between the sentence vectors of translation pairs (S_i, T_i):
 * mean_i Σ_k max(0, m + d(S_i, T_i) − d(S_i, T_{neg[i][k]})), and (bidirectional) the same with S
 * and T swapped (negatives negBack). neg / negBack: k indices per row into the batch, row-major.
 */
export function distanceHingeLoss(S: Tensor, T: Tensor, margin: number, neg: Int32Array, negBack?: Int32Array): Tensor {
  return tidy(() => {
    const B = S.size(0);
    const one = (D: Tensor, idx: Int32Array) => {
      const k = idx.length / B;
      const flat = D.view([-1]);
      const pos = flat.indexSelect(0, arange(0, B * B, B + 1)).view([B, 1]);
      const rows = BigInt64Array.from(idx, (j, q) => BigInt(Math.floor(q / k) * B + j));
      const negs = flat.indexSelect(0, fromArray(rows)).view([B, k]);
      return pos.add(margin).sub(negs).relu().sum([1]).mean();
    };
    const D = l2Distances(S, T);
    const l = one(D, neg);
    return negBack ? l.add(one(D.t().contiguous(), negBack)) : l;
  });
}

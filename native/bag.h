// Embedding-bag kernels of the addon: tensor primitives like aten::embedding_bag (no model logic).
#pragma once
#include <ATen/ATen.h>

namespace xling {

// out[b] = Σ_{j in [offsets[b], offsets[b+1])} w_j · weight[ids[j]] (w_j = 1 without weights), with
// autograd: the weight's gradient is a coalesced sparse COO tensor over the rows the bags used.
// weight [R, D] float32; ids [N] int32/int64 in [0, R); offsets [B+1] int64, non-decreasing,
// offsets[0] = 0, offsets[B] = N; perSampleWeights: undefined or [N] float32 (no gradient).
at::Tensor embeddingBag(const at::Tensor& weight, const at::Tensor& ids, const at::Tensor& offsets, const at::Tensor& perSampleWeights);

// The same bags over an int8 table with one float32 scale per row, inference only (no autograd):
// out[b] = Σ w_j · (scale[ids[j]] · table[ids[j]]), each row dequantised as it is read (a quarter
// of the float table's bytes move), the sums equal to embeddingBag over the dequantised table
// (table.float() * scale[:, None]). table [R, D] int8; scale [R] float32; ids, offsets and
// perSampleWeights as embeddingBag.
at::Tensor embeddingBagInt8(const at::Tensor& table, const at::Tensor& scale, const at::Tensor& ids, const at::Tensor& offsets, const at::Tensor& perSampleWeights);

// One torch.optim.SparseAdam step on the rows of a sparse gradient, in place:
// m ← β1·m + (1−β1)·g, v ← β2·v + (1−β2)·g², p ← p − lr·√(1−β2^t)/(1−β1^t) · m / (√v + ε).
void sparseAdamStep(at::Tensor& param, at::Tensor& expAvg, at::Tensor& expAvgSq, const at::Tensor& grad,
                    double lr, double beta1, double beta2, double eps, int64_t step);

}  // namespace xling

// LSTM kernels of the addon: tensor primitives like aten::lstm (no model logic).
#pragma once
#include <ATen/ATen.h>

#include <vector>

namespace xling {

// Sentence vectors of a 1-layer (Bi)LSTM from per-vocabulary input projections (inference only).
at::Tensor lstmTableEncode(const at::Tensor& ids, const std::vector<int64_t>& lengths,
                           const std::vector<at::Tensor>& tables, const std::vector<at::Tensor>& whh, int pooling);

// Sentence vectors of a multi-layer (Bi)LSTM over embedded token ids, on packed sequences (inference only).
at::Tensor lstmStackEncode(const at::Tensor& ids, const std::vector<int64_t>& lengths, const at::Tensor& emb,
                           const std::vector<at::Tensor>& weights, int64_t numLayers, bool bidirectional, int pooling);

// The recurrence of one (bi)directional LSTM layer over precomputed input gates, with autograd.
// Returns {output [T, B, D*H], h_n [D, B, H], c_n [D, B, H]}.
std::vector<at::Tensor> lstmRecurrence(const at::Tensor& xg, const at::Tensor& whh, const at::Tensor& h0,
                                       const at::Tensor& c0, const std::vector<int64_t>& lengths, double fill);

}  // namespace xling

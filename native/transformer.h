// Transformer encoder kernels of the addon: tensor primitives like aten's
// _transformer_encoder_layer_fwd (no model logic: the caller supplies the weights and the layout).
#pragma once
#include <ATen/ATen.h>

#include <vector>

namespace xling {

// Post-norm Transformer encoder layers (x = LN(x + MHA(x)); x = LN(x + W2·act(W1·x + b1) + b2))
// over packed sequences: x [N, D] holds the tokens of every sequence one after another (lengths
// sum to N), so no position is padding and attention runs within each sequence. Per layer, 12
// float32 tensors in this order: W_qkv [3D, D] (Q, K, V stacked as rows), b_qkv [3D], W_o [D, D],
// b_o [D], LN1 weight, LN1 bias [D], W_1 [F, D], b_1 [F], W_2 [D, F], b_2 [D], LN2 weight, LN2
// bias [D] (PyTorch's Linear layout). activation: 0 exact GELU, 1 tanh GELU, 2 ReLU. Scores are
// q·kᵀ/√(D/heads). W_qkv, W_o, W_1 and W_2 may instead all be bfloat16: their products then take
// the activations rounded to bfloat16 (float32 accumulation; attention, biases, residuals and
// layer norms stay float32). Inference only (no autograd). Returns [N, D].
at::Tensor packedEncoderLayers(const at::Tensor& x, const std::vector<int64_t>& lengths, const std::vector<at::Tensor>& weights,
                               int64_t heads, double eps, int activation);

}  // namespace xling

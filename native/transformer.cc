// Packed post-norm Transformer encoder layers (transformer.h). A tensor primitive in the manner of
// aten::_transformer_encoder_layer_fwd: the caller gives the weights; no model logic here.
//
// Why a kernel: a sentence encoder runs 12 such layers over length-sorted batches whose sentences
// still differ in length. Packing the tokens of a batch one after another ([N, D], no padding)
// means the four GEMMs of a layer (QKV, output, FFN in and out: ~95% of the FLOPs) run over real
// tokens only, and attention runs per sequence and head on [n, n] blocks without a mask (the
// additive mask of the padded form is exp(min) = 0, the same result). The GEMMs go to oneDNN's
// sgemm, which libtorch already loads (AVX-512 where the CPU has it; Debian's OpenBLAS picks AVX2
// kernels on the same machines); biases and residuals are put in the output first and the GEMM
// adds into it (beta = 1), so no extra pass over the activations.
#include "transformer.h"

#include "sgemm.h"

#include <ATen/Parallel.h>

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

namespace xling {
namespace {

// C[M, N] = beta·C + alpha·A[M, K]·op(B) on row-major blocks, op(B) = Bᵀ (B [N, K]) or B ([K, N]).
void gemm(bool transB, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda, const float* B, int64_t ldb,
          float beta, float* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  if (Sgemm sg = oneDnnSgemm()) {
    TORCH_CHECK(sg('N', transB ? 'T' : 'N', M, N, K, alpha, A, lda, B, ldb, beta, C, ldc) == 0, "packedEncoderLayers: dnnl_sgemm failed");
    return;
  }
  auto a = at::from_blob(const_cast<float*>(A), {M, K}, {lda, 1}, at::kFloat);
  auto b = transB ? at::from_blob(const_cast<float*>(B), {N, K}, {ldb, 1}, at::kFloat).t()
                  : at::from_blob(const_cast<float*>(B), {K, N}, {ldb, 1}, at::kFloat);
  auto c = at::from_blob(C, {M, N}, {ldc, 1}, at::kFloat);
  if (beta == 0.0f) c.copy_(at::mm(a, b).mul_(alpha));
  else c.addmm_(a, b, beta, alpha);
}

// C[M, N] = C + A[M, K]·Wᵀ for a weight W [N, K] of float32, or of bfloat16: then A is rounded to
// bfloat16 (nearest even, ATen's conversion) and the product runs in oneDNN's bf16 GEMM (exact
// products, float32 accumulation); without it, the same rounded operands in float32.
void gemmWeight(int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const at::Tensor& W, float* C, int64_t ldc) {
  if (W.scalar_type() == at::kFloat) return gemm(true, M, N, K, 1.0f, A, lda, W.data_ptr<float>(), K, 1.0f, C, ldc);
  if (M == 0 || N == 0) return;
  at::Tensor a = at::from_blob(const_cast<float*>(A), {M, K}, {lda, 1}, at::kFloat).to(at::kBFloat16).contiguous();
  if (GemmBf16 g = oneDnnGemmBf16()) {
    const auto* a16 = reinterpret_cast<const uint16_t*>(a.data_ptr<at::BFloat16>());
    const auto* w16 = reinterpret_cast<const uint16_t*>(W.data_ptr<at::BFloat16>());
    if (g('N', 'T', M, N, K, 1.0f, a16, K, w16, K, 1.0f, C, ldc) == 0) return;
  }
  at::Tensor a32 = a.to(at::kFloat), w32 = W.to(at::kFloat);
  gemm(true, M, N, K, 1.0f, a32.data_ptr<float>(), K, w32.data_ptr<float>(), K, 1.0f, C, ldc);
}

// Multi-head self-attention within each packed sequence: qkv [N, 3D] (Q | K | V per token) →
// ctx [N, D], heads side by side. One task per (sequence, head).
void attention(const float* qkv, float* ctx, const std::vector<int64_t>& offsets, const std::vector<int64_t>& lengths, int64_t H,
               int64_t hd) {
  const int64_t B = static_cast<int64_t>(lengths.size()), D = H * hd, ld = 3 * D;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const int64_t maxLen = lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
  at::parallel_for(0, B * H, 1, [&](int64_t lo, int64_t hi) {
    std::vector<float> s(static_cast<size_t>(maxLen * maxLen));
    for (int64_t task = lo; task < hi; task++) {
      const int64_t b = task / H, h = task % H, n = lengths[b];
      const float* q = qkv + offsets[b] * ld + h * hd;
      gemm(true, n, n, hd, scale, q, ld, q + D, ld, 0.0f, s.data(), n);
      for (int64_t i = 0; i < n; i++) {
        float* row = s.data() + i * n;
        float mx = row[0];
        for (int64_t j = 1; j < n; j++) mx = std::max(mx, row[j]);
        float sum = 0.0f;
        for (int64_t j = 0; j < n; j++) { row[j] = std::exp(row[j] - mx); sum += row[j]; }
        const float inv = 1.0f / sum;
        for (int64_t j = 0; j < n; j++) row[j] *= inv;
      }
      gemm(false, n, hd, n, 1.0f, s.data(), n, q + 2 * D, ld, 0.0f, ctx + offsets[b] * D + h * hd, D);
    }
  });
}

void checkWeight(const at::Tensor& t, std::initializer_list<int64_t> shape, int64_t layer, const char* what,
                 at::ScalarType dtype = at::kFloat) {
  TORCH_CHECK(t.defined() && t.scalar_type() == dtype && t.device().is_cpu() && t.sizes() == at::IntArrayRef(shape),
              "packedEncoderLayers: layer ", layer, " ", what, " must be ", dtype == at::kFloat ? "float32" : "bfloat16", " ", at::IntArrayRef(shape), ", got ",
              t.defined() ? t.sizes() : at::IntArrayRef{}, t.defined() ? std::string(" ") + c10::toString(t.scalar_type()) : std::string(" (undefined)"));
}

}  // namespace

at::Tensor packedEncoderLayers(const at::Tensor& x, const std::vector<int64_t>& lengths, const std::vector<at::Tensor>& weights,
                               int64_t heads, double eps, int activation) {
  TORCH_CHECK(x.dim() == 2 && x.scalar_type() == at::kFloat && x.device().is_cpu(), "packedEncoderLayers: x must be a 2-D float32 CPU tensor, got ",
              x.sizes(), " ", x.scalar_type());
  const int64_t N = x.size(0), D = x.size(1);
  TORCH_CHECK(heads >= 1 && D % heads == 0, "packedEncoderLayers: width ", D, " is not a multiple of ", heads, " heads");
  TORCH_CHECK(weights.size() % 12 == 0, "packedEncoderLayers: 12 weights per layer, got ", weights.size());
  TORCH_CHECK(activation >= 0 && activation <= 2, "packedEncoderLayers: activation must be 0 (gelu), 1 (gelu tanh) or 2 (relu)");
  std::vector<int64_t> offsets(lengths.size());
  int64_t total = 0;
  for (size_t b = 0; b < lengths.size(); b++) {
    TORCH_CHECK(lengths[b] >= 1, "packedEncoderLayers: sequence ", b, " has length ", lengths[b]);
    offsets[b] = total;
    total += lengths[b];
  }
  TORCH_CHECK(total == N, "packedEncoderLayers: lengths sum to ", total, " but x has ", N, " rows");
  const int64_t L = static_cast<int64_t>(weights.size() / 12);
  const int64_t F = L ? weights[6].size(0) : 0;
  // the four matrices are all float32 or all bfloat16 (the first one says which); the rest float32
  const at::ScalarType mdt = L && weights[0].defined() && weights[0].scalar_type() == at::kBFloat16 ? at::kBFloat16 : at::kFloat;
  for (int64_t l = 0; l < L; l++) {
    const at::Tensor* w = &weights[12 * l];
    checkWeight(w[0], {3 * D, D}, l, "W_qkv", mdt);
    checkWeight(w[1], {3 * D}, l, "b_qkv");
    checkWeight(w[2], {D, D}, l, "W_o", mdt);
    checkWeight(w[3], {D}, l, "b_o");
    checkWeight(w[4], {D}, l, "LN1 weight");
    checkWeight(w[5], {D}, l, "LN1 bias");
    checkWeight(w[6], {F, D}, l, "W_1", mdt);
    checkWeight(w[7], {F}, l, "b_1");
    checkWeight(w[8], {D, F}, l, "W_2", mdt);
    checkWeight(w[9], {D}, l, "b_2");
    checkWeight(w[10], {D}, l, "LN2 weight");
    checkWeight(w[11], {D}, l, "LN2 bias");
  }
  at::NoGradGuard noGrad;
  at::Tensor cur = x.contiguous();
  if (N == 0 || L == 0) return cur.clone();
  const int64_t H = heads, hd = D / H;
  auto qkv = at::empty({N, 3 * D}, at::kFloat);
  auto ctx = at::empty({N, D}, at::kFloat);
  for (int64_t l = 0; l < L; l++) {
    std::vector<at::Tensor> w(weights.begin() + 12 * l, weights.begin() + 12 * (l + 1));
    for (auto& t : w) t = t.contiguous();
    // Q, K, V: bias first, the GEMM adds x·W_qkvᵀ
    qkv.copy_(w[1].expand({N, 3 * D}));
    gemmWeight(N, 3 * D, D, cur.data_ptr<float>(), D, w[0], qkv.data_ptr<float>(), 3 * D);
    attention(qkv.data_ptr<float>(), ctx.data_ptr<float>(), offsets, lengths, H, hd);
    // h = LN1(x + b_o + ctx·W_oᵀ)
    auto h = at::add(cur, w[3]);
    gemmWeight(N, D, D, ctx.data_ptr<float>(), D, w[2], h.data_ptr<float>(), D);
    h = at::layer_norm(h, {D}, w[4], w[5], eps);
    // f = act(b_1 + h·W_1ᵀ)
    auto f = w[7].expand({N, F}).contiguous();
    gemmWeight(N, F, D, h.data_ptr<float>(), D, w[6], f.data_ptr<float>(), F);
    if (activation == 0) at::gelu_(f, "none");
    else if (activation == 1) at::gelu_(f, "tanh");
    else at::relu_(f);
    // x = LN2(h + b_2 + f·W_2ᵀ)
    auto y = at::add(h, w[9]);
    gemmWeight(N, D, F, f.data_ptr<float>(), F, w[8], y.data_ptr<float>(), D);
    cur = at::layer_norm(y, {D}, w[10], w[11], eps);
  }
  return cur;
}

}  // namespace xling

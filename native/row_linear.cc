// rowLinear (row_linear.h): register tiles of 4 rows × 16 columns over the transposed weight,
// each element accumulated over k in order; edge tiles run the same arithmetic (a partial row
// tile computes its missing rows from row 0 and drops them).
#include "row_linear.h"

#include <ATen/Parallel.h>

namespace xling {
namespace {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// AVX-512, AVX2 and baseline x86-64 code, picked at load time; multiply-adds fused where the CPU
// has FMA (every element the same way: vector lanes and the scalar edge alike)
#define XL_KERNEL __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), optimize("fp-contract=fast")))
#else
#define XL_KERNEL
#endif

typedef float v8 __attribute__((vector_size(32), aligned(4)));  // 8 floats, unaligned loads allowed
constexpr int64_t TR = 4, TC = 16;

// Rows [0, rows) (rows ≤ TR) × columns [c0, c0 + TC) of y from x (stride K) and wt [K, N]:
// accumulators in registers, one broadcast and two multiply-adds per row and k.
XL_KERNEL void tile(const float* __restrict x, int64_t rows, const float* __restrict wt, int64_t K, int64_t N, int64_t c0,
                    const float* __restrict bias, float* __restrict y) {
  v8 acc[TR][2] = {};
  const float* x0 = x;
  const float* x1 = x + (rows > 1 ? K : 0);
  const float* x2 = x + (rows > 2 ? 2 * K : 0);
  const float* x3 = x + (rows > 3 ? 3 * K : 0);
  for (int64_t k = 0; k < K; k++) {
    const v8 w0 = *reinterpret_cast<const v8*>(wt + k * N + c0);
    const v8 w1 = *reinterpret_cast<const v8*>(wt + k * N + c0 + 8);
    acc[0][0] += x0[k] * w0; acc[0][1] += x0[k] * w1;
    acc[1][0] += x1[k] * w0; acc[1][1] += x1[k] * w1;
    acc[2][0] += x2[k] * w0; acc[2][1] += x2[k] * w1;
    acc[3][0] += x3[k] * w0; acc[3][1] += x3[k] * w1;
  }
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < TC; c++) {
      const float v = acc[r][c / 8][c % 8];
      y[r * N + c0 + c] = bias ? v + bias[c0 + c] : v;
    }
}

// The columns past the last whole tile, one at a time (the same sum over k in order).
XL_KERNEL void edgeColumns(const float* __restrict x, int64_t rows, const float* __restrict wt, int64_t K, int64_t N, int64_t c0,
                           const float* __restrict bias, float* __restrict y) {
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = c0; c < N; c++) {
      float acc = 0.0f;
      for (int64_t k = 0; k < K; k++) acc += x[r * K + k] * wt[k * N + c];
      y[r * N + c] = bias ? acc + bias[c] : acc;
    }
}

}  // namespace

at::Tensor rowLinear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  TORCH_CHECK(x.dim() == 2 && x.scalar_type() == at::kFloat && x.device().is_cpu(), "rowLinear: x must be a 2-D float32 CPU tensor, got ", x.sizes(), " ", x.scalar_type());
  TORCH_CHECK(weight.dim() == 2 && weight.scalar_type() == at::kFloat && weight.device().is_cpu() && weight.size(1) == x.size(1),
              "rowLinear: weight must be a float32 [N, ", x.size(1), "] CPU tensor, got ", weight.sizes(), " ", weight.scalar_type());
  if (bias.defined()) TORCH_CHECK(bias.dim() == 1 && bias.size(0) == weight.size(0) && bias.scalar_type() == at::kFloat && bias.device().is_cpu(), "rowLinear: bias must be float32 [", weight.size(0), "]");
  TORCH_CHECK(!at::GradMode::is_enabled() || !(x.requires_grad() || weight.requires_grad() || (bias.defined() && bias.requires_grad())),
              "rowLinear: inference only (no gradient); call it under no-grad");
  auto xc = x.contiguous(), wt = weight.t().contiguous();
  auto bc = bias.defined() ? bias.contiguous() : at::Tensor();
  const int64_t B = xc.size(0), K = xc.size(1), N = wt.size(1);
  auto out = at::empty({B, N}, xc.options());
  const float* X = xc.data_ptr<float>();
  const float* W = wt.data_ptr<float>();
  const float* b = bc.defined() ? bc.data_ptr<float>() : nullptr;
  float* Y = out.data_ptr<float>();
  const int64_t tiles = (B + TR - 1) / TR, full = N - N % TC;
  at::parallel_for(0, tiles, 4, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; t++) {
      const int64_t r0 = t * TR, rows = std::min(TR, B - r0);
      for (int64_t c0 = 0; c0 < full; c0 += TC) tile(X + r0 * K, rows, W, K, N, c0, b, Y + r0 * N);
      if (full < N) edgeColumns(X + r0 * K, rows, W, K, N, full, b, Y + r0 * N);
    }
  });
  return out;
}

}  // namespace xling

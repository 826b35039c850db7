// Embedding bags with row-sparse gradients, and the SparseAdam update over those rows.
//
// Why not aten::embedding_bag(sparse=True) + torch.optim.SparseAdam: ATen's sparse backward
// emits one gradient row per input id (hundreds of thousands for a batch of hashed n-gram
// features, most of them repeats), which the optimiser then has to coalesce (sort + reduce)
// before it can update anything. Here the backward reduces into one row per distinct id
// directly (a scratch slot per table row) and hands autograd an already-coalesced tensor; the
// optimiser step is one fused pass over those rows.
#include "bag.h"

#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace xling {
namespace {

// Row loops, compiled for AVX-512, AVX2 and baseline x86-64 (picked at load time): the kernels
// below spend their time in them, on rows of a large table read in random order.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define XL_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define XL_VECTOR_CLONES
#endif

// y[0..n) += s * x[0..n)
XL_VECTOR_CLONES void axpy(float* __restrict y, const float* __restrict x, float s, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] += s * x[i];
}

// y[0..n) += w * (scale * float(q[0..n))): the dequantised row (as q.float() * scale rounds it)
// weighted as axpy weights a float row, so the sums equal a float bag over the dequantised table.
XL_VECTOR_CLONES void axpyInt8(float* __restrict y, const int8_t* __restrict q, float scale, float w, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] += w * (static_cast<float>(q[i]) * scale);
}

// Asks for the cache lines of a table row that a bag reads a few ids from now: the rows of a
// hashed table are read in random order, so each is a cache (and often TLB) miss, and without
// this the loop waits for one row at a time. Into L2 (locality 1, prefetcht2): measured on the
// 2²⁰ × 256 n-gram table (2-core EPYC), L2 beat L1 (prefetcht0) and non-temporal (prefetchnta)
// requests, the float bag by ~30%, the int8 bag (with its scale prefetched too) by ~40%.
inline void prefetchRow(const void* row, int64_t bytes) {
  const char* p = static_cast<const char*>(row);
  for (int64_t c = 0; c < bytes; c += 64) __builtin_prefetch(p + c, 0, 1);
}

// How many ids ahead the bag loops prefetch (the best distances measured: 8 float rows of 1 KiB,
// 16 int8 rows of 256 B).
constexpr int64_t kPrefetchAheadFloat = 8, kPrefetchAheadInt8 = 16;

// One SparseAdam update of a row (torch.optim.SparseAdam's arithmetic).
XL_VECTOR_CLONES void adamRow(float* __restrict p, float* __restrict m, float* __restrict v, const float* __restrict g,
                              int64_t n, float b1, float b2, float eps, float stepSize) {
  for (int64_t c = 0; c < n; c++) {
    const float mc = m[c] + (g[c] - m[c]) * (1.0f - b1);
    const float vc = v[c] + (g[c] * g[c] - v[c]) * (1.0f - b2);
    m[c] = mc;
    v[c] = vc;
    p[c] -= stepSize * mc / (std::sqrt(vc) + eps);
  }
}

// Calls f with the ids' data as int32_t* or int64_t* (no conversion copy).
template <typename F>
void withIds(const at::Tensor& ids, F&& f) {
  if (ids.scalar_type() == at::kInt) f(ids.data_ptr<int32_t>());
  else f(ids.data_ptr<int64_t>());
}

// ids, offsets and per-sample weights against a table of R rows (`name` prefixes the errors).
void checkBagIndex(const char* name, int64_t R, const at::Tensor& ids, const at::Tensor& offsets, const at::Tensor& psw) {
  TORCH_CHECK(ids.dim() == 1 && (ids.scalar_type() == at::kLong || ids.scalar_type() == at::kInt) && ids.device().is_cpu(), name, ": ids must be a 1-D int32/int64 CPU tensor");
  TORCH_CHECK(offsets.dim() == 1 && offsets.scalar_type() == at::kLong && offsets.size(0) >= 1 && offsets.device().is_cpu(), name, ": offsets must be a 1-D int64 tensor [B+1]");
  const int64_t B = offsets.size(0) - 1, N = ids.size(0);
  auto off = offsets.contiguous();
  const int64_t* o = off.data_ptr<int64_t>();
  TORCH_CHECK(o[0] == 0 && o[B] == N, name, ": offsets must start at 0 and end at the number of ids (", N, "), got ", o[0], " … ", o[B]);
  for (int64_t b = 0; b < B; b++) TORCH_CHECK(o[b] <= o[b + 1], name, ": offsets must be non-decreasing (at bag ", b, ")");
  if (psw.defined()) TORCH_CHECK(psw.dim() == 1 && psw.size(0) == N && psw.scalar_type() == at::kFloat && psw.device().is_cpu(), name, ": perSampleWeights must be float32 [", N, "]");
  withIds(ids.contiguous(), [&](auto* p) {
    for (int64_t j = 0; j < N; j++) TORCH_CHECK(p[j] >= 0 && p[j] < R, name, ": id ", static_cast<int64_t>(p[j]), " at position ", j, " is out of range [0, ", R, ")");
  });
}

void checkBagArgs(const at::Tensor& weight, const at::Tensor& ids, const at::Tensor& offsets, const at::Tensor& psw) {
  TORCH_CHECK(weight.dim() == 2 && weight.scalar_type() == at::kFloat && weight.device().is_cpu(), "embeddingBag: weight must be a 2-D float32 CPU tensor, got ", weight.sizes(), " ", weight.scalar_type());
  checkBagIndex("embeddingBag", weight.size(0), ids, offsets, psw);
}

// ids, offsets and weights as contiguous tensors (checked).
at::Tensor bagForward(const at::Tensor& weight, const at::Tensor& ids, const at::Tensor& off, const at::Tensor& psw) {
  auto w = weight.contiguous();
  const int64_t B = off.size(0) - 1, D = w.size(1);
  auto out = at::zeros({B, D}, w.options());
  const float* W = w.data_ptr<float>();
  const int64_t* O = off.data_ptr<int64_t>();
  const float* S = psw.defined() ? psw.data_ptr<float>() : nullptr;
  float* Y = out.data_ptr<float>();
  withIds(ids, [&](auto* I) {
    at::parallel_for(0, B, 16, [&](int64_t lo, int64_t hi) {
      const int64_t end = O[hi];
      for (int64_t b = lo; b < hi; b++)
        for (int64_t j = O[b]; j < O[b + 1]; j++) {
          if (j + kPrefetchAheadFloat < end) prefetchRow(W + static_cast<int64_t>(I[j + kPrefetchAheadFloat]) * D, D * static_cast<int64_t>(sizeof(float)));
          axpy(Y + b * D, W + static_cast<int64_t>(I[j]) * D, S ? S[j] : 1.0f, D);
        }
    });
  });
  return out;
}

// The int8 bags (checked, contiguous ids/offsets/weights): threads over bags, each row
// dequantised in the inner loop; rows a few ids ahead are prefetched.
at::Tensor bagForwardInt8(const at::Tensor& table, const at::Tensor& scale, const at::Tensor& ids, const at::Tensor& off, const at::Tensor& psw) {
  auto q = table.contiguous();
  auto sc = scale.contiguous();
  const int64_t B = off.size(0) - 1, D = q.size(1);
  auto out = at::zeros({B, D}, at::TensorOptions().dtype(at::kFloat));
  const int8_t* Q = q.data_ptr<int8_t>();
  const float* SC = sc.data_ptr<float>();
  const int64_t* O = off.data_ptr<int64_t>();
  const float* S = psw.defined() ? psw.data_ptr<float>() : nullptr;
  float* Y = out.data_ptr<float>();
  withIds(ids, [&](auto* I) {
    at::parallel_for(0, B, 16, [&](int64_t lo, int64_t hi) {
      const int64_t end = O[hi];
      for (int64_t b = lo; b < hi; b++)
        for (int64_t j = O[b]; j < O[b + 1]; j++) {
          if (j + kPrefetchAheadInt8 < end) {
            // the row and its scale (a random read of its own in a 4 MiB array)
            const int64_t ahead = static_cast<int64_t>(I[j + kPrefetchAheadInt8]);
            prefetchRow(Q + ahead * D, D);
            __builtin_prefetch(SC + ahead, 0, 1);
          }
          const int64_t r = static_cast<int64_t>(I[j]);
          axpyInt8(Y + b * D, Q + r * D, SC[r], S ? S[j] : 1.0f, D);
        }
    });
  });
  return out;
}

// The weight's gradient as a coalesced sparse COO tensor: distinct ids in ascending order, each
// row the sum over its uses of w_j · dOut[bag(j)].
at::Tensor bagBackward(const at::Tensor& dOut, const at::Tensor& ids, const at::Tensor& off, const at::Tensor& psw, int64_t R) {
  auto g = dOut.contiguous();
  const int64_t B = off.size(0) - 1, N = ids.size(0), D = g.size(1);
  const int64_t* O = off.data_ptr<int64_t>();
  const float* S = psw.defined() ? psw.data_ptr<float>() : nullptr;
  // distinct ids, ascending; slot[id] = their rank (a scratch array over the table's rows)
  thread_local std::vector<int32_t> slot;
  if (static_cast<int64_t>(slot.size()) < R) slot.assign(R, -1);
  std::vector<int64_t> uniq;
  // the slots must be -1 again whatever happens below (an allocation can throw)
  struct Reset {
    std::vector<int32_t>& slot; const std::vector<int64_t>& uniq;
    ~Reset() { for (auto u : uniq) slot[u] = -1; }
  } reset{slot, uniq};
  withIds(ids, [&](auto* I) {
    uniq.reserve(std::min<int64_t>(N, R));
    for (int64_t j = 0; j < N; j++) {
      if (slot[I[j]] < 0) { slot[I[j]] = 0; uniq.push_back(I[j]); }
    }
  });
  std::sort(uniq.begin(), uniq.end());
  const int64_t U = static_cast<int64_t>(uniq.size());
  for (int64_t u = 0; u < U; u++) slot[uniq[u]] = static_cast<int32_t>(u);
  auto values = at::zeros({U, D}, g.options());
  float* V = values.data_ptr<float>();
  const float* G = g.data_ptr<float>();
  const int32_t* rank = slot.data();  // the calling thread's scratch: worker threads have their own thread_local
  // columns split across threads: every thread walks all ids, no two write the same floats
  const int64_t grain = std::max<int64_t>(16, D / std::max(1, at::get_num_threads()));
  withIds(ids, [&](auto* I) {
    at::parallel_for(0, D, grain, [&](int64_t c0, int64_t c1) {
      for (int64_t b = 0; b < B; b++)
        for (int64_t j = O[b]; j < O[b + 1]; j++) axpy(V + static_cast<int64_t>(rank[I[j]]) * D + c0, G + b * D + c0, S ? S[j] : 1.0f, c1 - c0);
    });
  });
  auto indices = at::from_blob(uniq.data(), {1, U}, at::kLong).clone();
  auto sp = at::_sparse_coo_tensor_unsafe(indices, values, {R, D}, g.options().layout(at::kSparse));
  sp._coalesced_(true);
  return sp;
}

struct EmbeddingBagFn : public torch::autograd::Function<EmbeddingBagFn> {
  // psw: the per-sample weights, or an empty tensor when hasWeights is false (autograd's apply
  // cannot take undefined tensors)
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, const at::Tensor& weight, const at::Tensor& ids,
                                                const at::Tensor& offsets, const at::Tensor& psw, bool hasWeights) {
    const at::Tensor w = hasWeights ? psw : at::Tensor();
    ctx->saved_data["ids"] = ids;
    ctx->saved_data["offsets"] = offsets;
    ctx->saved_data["psw"] = psw;
    ctx->saved_data["hasWeights"] = hasWeights;
    ctx->saved_data["rows"] = weight.size(0);
    return {bagForward(weight, ids, offsets, w)};
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx, torch::autograd::variable_list go) {
    const at::Tensor psw = ctx->saved_data["hasWeights"].toBool() ? ctx->saved_data["psw"].toTensor() : at::Tensor();
    auto grad = bagBackward(go[0], ctx->saved_data["ids"].toTensor(), ctx->saved_data["offsets"].toTensor(), psw, ctx->saved_data["rows"].toInt());
    return {grad, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor embeddingBag(const at::Tensor& weight, const at::Tensor& ids, const at::Tensor& offsets, const at::Tensor& perSampleWeights) {
  checkBagArgs(weight, ids, offsets, perSampleWeights);
  TORCH_CHECK(!perSampleWeights.defined() || !perSampleWeights.requires_grad(), "embeddingBag: perSampleWeights get no gradient");
  auto id = ids.contiguous(), off = offsets.contiguous();
  auto psw = perSampleWeights.defined() ? perSampleWeights.contiguous() : at::Tensor();
  if (!weight.requires_grad() || !at::GradMode::is_enabled()) return bagForward(weight, id, off, psw);
  const bool hasWeights = psw.defined();
  return EmbeddingBagFn::apply(weight, id, off, hasWeights ? psw : at::empty({0}, weight.options()), hasWeights)[0];
}

at::Tensor embeddingBagInt8(const at::Tensor& table, const at::Tensor& scale, const at::Tensor& ids, const at::Tensor& offsets, const at::Tensor& perSampleWeights) {
  TORCH_CHECK(table.dim() == 2 && table.scalar_type() == at::kChar && table.device().is_cpu(), "embeddingBagInt8: table must be a 2-D int8 CPU tensor, got ", table.sizes(), " ", table.scalar_type());
  TORCH_CHECK(scale.dim() == 1 && scale.size(0) == table.size(0) && scale.scalar_type() == at::kFloat && scale.device().is_cpu(),
              "embeddingBagInt8: scale must be a float32 CPU tensor [", table.size(0), "] (one per table row), got ", scale.sizes(), " ", scale.scalar_type());
  checkBagIndex("embeddingBagInt8", table.size(0), ids, offsets, perSampleWeights);
  TORCH_CHECK(!perSampleWeights.defined() || !(perSampleWeights.requires_grad() && at::GradMode::is_enabled()), "embeddingBagInt8: inference only (no gradient); perSampleWeights must not require one");
  auto psw = perSampleWeights.defined() ? perSampleWeights.contiguous() : at::Tensor();
  return bagForwardInt8(table, scale, ids.contiguous(), offsets.contiguous(), psw);
}

void sparseAdamStep(at::Tensor& param, at::Tensor& expAvg, at::Tensor& expAvgSq, const at::Tensor& grad,
                    double lr, double beta1, double beta2, double eps, int64_t step) {
  TORCH_CHECK(param.dim() == 2 && param.scalar_type() == at::kFloat && param.is_contiguous(), "sparseAdamStep: the parameter must be a contiguous 2-D float32 tensor");
  TORCH_CHECK(expAvg.sizes() == param.sizes() && expAvgSq.sizes() == param.sizes() && expAvg.is_contiguous() && expAvgSq.is_contiguous() &&
              expAvg.scalar_type() == at::kFloat && expAvgSq.scalar_type() == at::kFloat, "sparseAdamStep: moment buffers must match the parameter");
  TORCH_CHECK(grad.is_sparse() && grad.sparse_dim() == 1 && grad.sizes() == param.sizes(), "sparseAdamStep: the gradient must be a sparse tensor of the parameter's shape (row-sparse)");
  TORCH_CHECK(step >= 1 && lr > 0 && beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1 && eps > 0, "sparseAdamStep: bad hyper-parameters");
  auto g = grad.is_coalesced() ? grad : grad.coalesce();
  auto idx = g._indices().select(0, 0).contiguous();
  auto vals = g._values().contiguous().to(at::kFloat);
  const int64_t U = idx.size(0), D = param.size(1), R = param.size(0);
  const int64_t* I = idx.data_ptr<int64_t>();
  for (int64_t u = 0; u < U; u++) TORCH_CHECK(I[u] >= 0 && I[u] < R, "sparseAdamStep: row ", I[u], " out of range");
  const float* G = vals.data_ptr<float>();
  float* P = param.data_ptr<float>();
  float* M = expAvg.data_ptr<float>();
  float* V = expAvgSq.data_ptr<float>();
  const float b1 = static_cast<float>(beta1), b2 = static_cast<float>(beta2), e = static_cast<float>(eps);
  const double bc1 = 1.0 - std::pow(beta1, static_cast<double>(step)), bc2 = 1.0 - std::pow(beta2, static_cast<double>(step));
  const float stepSize = static_cast<float>(lr * std::sqrt(bc2) / bc1);
  at::parallel_for(0, U, 64, [&](int64_t lo, int64_t hi) {
    for (int64_t u = lo; u < hi; u++) adamRow(P + I[u] * D, M + I[u] * D, V + I[u] * D, G + u * D, D, b1, b2, e, stepSize);
  });
}

}  // namespace xling

// gather_dot.h: row gathers with prefetching and float16 → float32 conversion in registers.
#include "gather_dot.h"

#include <ATen/Parallel.h>
#include <immintrin.h>

#include <cmath>
#include <cstdlib>
#include <limits>

namespace xling {
namespace {

// candidates prefetched ahead of the one being scored
constexpr int64_t kAhead = 8;

inline void prefetchRow(const char* p, int64_t bytes) {
  for (int64_t o = 0; o < bytes; o += 64) __builtin_prefetch(p + o, 0, 0);
}

// The 8 lanes' partial sums, combined in one fixed order by every dot below (their bits agree).
inline float sumLanes(const float* lanes) {
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

// Without AVX2: the same 8 lanes of fused multiply-adds, combined in the same order, so every
// machine gives the same bits (cluster shards on mixed machines build the same graph).
template <typename T>
float dotLanes(const T* a, const float* b, int64_t d) {
  float lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t t = 0;
  for (; t + 8 <= d; t += 8)
    for (int l = 0; l < 8; l++) lanes[l] = std::fma(static_cast<float>(a[t + l]), b[t + l], lanes[l]);
  float s = sumLanes(lanes);
  for (; t < d; t++) s = std::fma(static_cast<float>(a[t]), b[t], s);
  return s;
}
float dotF32(const float* a, const float* b, int64_t d) { return dotLanes(a, b, d); }
float dotF16(const at::Half* a, const float* b, int64_t d) { return dotLanes(a, b, d); }

// AVX2 + FMA (+ F16C): 8 lanes, summed in a fixed order, then the tail in order (fused, as the
// portable loop: the compiler's own contraction would differ between the two)
__attribute__((target("avx2,fma"))) float dotF32Avx2(const float* a, const float* b, int64_t d) {
  __m256 acc = _mm256_setzero_ps();
  int64_t t = 0;
  for (; t + 8 <= d; t += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + t), _mm256_loadu_ps(b + t), acc);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc);
  float s = sumLanes(lanes);
  for (; t < d; t++) s = std::fma(a[t], b[t], s);
  return s;
}

__attribute__((target("avx2,fma,f16c"))) float dotF16Avx2(const at::Half* a, const float* b, int64_t d) {
  __m256 acc = _mm256_setzero_ps();
  int64_t t = 0;
  for (; t + 8 <= d; t += 8) {
    __m256 x = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + t)));
    acc = _mm256_fmadd_ps(x, _mm256_loadu_ps(b + t), acc);
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc);
  float s = sumLanes(lanes);
  for (; t < d; t++) s = std::fma(static_cast<float>(a[t]), b[t], s);
  return s;
}

// XLING_GATHER_DOT_PLAIN: the portable loop even where AVX2 is there (tests compare the two)
bool hasAvx2() {
  static const bool ok = !std::getenv("XLING_GATHER_DOT_PLAIN") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
  return ok;
}

template <typename T, typename Dot>
void scoreAll(const T* table, int64_t d, const int64_t* ids, int64_t K, const float* q, float* out, int64_t lo, int64_t hi, Dot dot) {
  const int64_t rowBytes = d * static_cast<int64_t>(sizeof(T));
  const float ninf = -std::numeric_limits<float>::infinity();
  for (int64_t i = lo; i < hi; i++) {
    const int64_t* c = ids + i * K;
    for (int64_t j = 0; j < std::min(K, kAhead); j++)
      if (c[j] >= 0) prefetchRow(reinterpret_cast<const char*>(table + c[j] * d), rowBytes);
    for (int64_t j = 0; j < K; j++) {
      if (j + kAhead < K && c[j + kAhead] >= 0) prefetchRow(reinterpret_cast<const char*>(table + c[j + kAhead] * d), rowBytes);
      // the next query's first rows while this one's last are scored
      else if (j + kAhead >= K && i + 1 < hi) {
        const int64_t nj = j + kAhead - K, id = ids[(i + 1) * K + nj];
        if (nj < K && id >= 0) prefetchRow(reinterpret_cast<const char*>(table + id * d), rowBytes);
      }
      out[i * K + j] = c[j] < 0 ? ninf : dot(table + c[j] * d, q + i * d, d);
    }
  }
}

}  // namespace

at::Tensor gatherDot(const at::Tensor& table, const at::Tensor& ids, const at::Tensor& q) {
  TORCH_CHECK(table.dim() == 2 && (table.scalar_type() == at::kHalf || table.scalar_type() == at::kFloat) && table.device().is_cpu(),
              "gatherDot: table must be a 2-D float16 or float32 CPU tensor, got ", table.sizes(), " ", table.scalar_type());
  TORCH_CHECK(ids.dim() == 2 && ids.scalar_type() == at::kLong && ids.device().is_cpu(), "gatherDot: ids must be a 2-D int64 CPU tensor [n, K], got ", ids.sizes(), " ", ids.scalar_type());
  TORCH_CHECK(q.dim() == 2 && q.scalar_type() == at::kFloat && q.device().is_cpu(), "gatherDot: q must be a 2-D float32 CPU tensor [n, d], got ", q.sizes(), " ", q.scalar_type());
  const int64_t N = table.size(0), d = table.size(1), n = ids.size(0), K = ids.size(1);
  TORCH_CHECK(q.size(0) == n && q.size(1) == d, "gatherDot: q must be [", n, ", ", d, "] (ids' rows, table's columns), got ", q.sizes());
  auto tc = table.contiguous();
  auto ic = ids.contiguous();
  auto qc = q.contiguous();
  const int64_t* c = ic.data_ptr<int64_t>();
  for (int64_t x = 0; x < n * K; x++) TORCH_CHECK(c[x] < N, "gatherDot: id ", c[x], " at [", x / K, ", ", x % K, "] is out of range [0, ", N, ")");
  auto out = at::empty({n, K}, at::kFloat);
  float* o = out.data_ptr<float>();
  const float* qp = qc.data_ptr<float>();
  const bool fast = hasAvx2();
  at::parallel_for(0, n, 16, [&](int64_t lo, int64_t hi) {
    if (tc.scalar_type() == at::kHalf) {
      const at::Half* t = tc.data_ptr<at::Half>();
      if (fast) scoreAll(t, d, c, K, qp, o, lo, hi, dotF16Avx2);
      else scoreAll(t, d, c, K, qp, o, lo, hi, dotF16);
    } else {
      const float* t = tc.data_ptr<float>();
      if (fast) scoreAll(t, d, c, K, qp, o, lo, hi, dotF32Avx2);
      else scoreAll(t, d, c, K, qp, o, lo, hi, dotF32);
    }
  });
  return out;
}

}  // namespace xling

// Exact Hamming k-NN of packed binary codes (xling's IndexBinaryFlat search, src/index/binary.ts).
//
// The distances of a query to a chunk of base rows are 64-bit popcounts of XORed words (a row of
// any byte length: whole words, then the last 1–7 bytes as one zero-padded word), written to a
// small buffer; the selection then keeps a max-heap of the k best (distance, id) pairs and only
// looks at a row whose distance is below the heap's worst. Base rows are visited in ascending id
// order, so a row at the worst distance never enters (its id is larger than every id kept): the
// result is the first k of all rows sorted by (distance, id), the TypeScript kernel's tie rule.
// Rows of a multiple of 512 bits take an AVX-512 VPOPCNTDQ path where the CPU has it (checked at
// load time; measured ~2× the 64-bit popcount loop at 512 and 1024 bits on an AMD EPYC, Zen 4).
// The base is walked in blocks of ~256 KiB that a block of queries reuses while they are in cache;
// OpenMP threads take query blocks (and, when there are fewer queries than threads, slices of the
// base, merged at the end).
#include "hamming.h"

#include <omp.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define XL_HAVE_ZMM 1
#endif

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common.h"

namespace xling {
namespace {

// Popcount loops compiled for x86-64-v2 (the POPCNT instruction) and baseline x86-64 (where
// __builtin_popcountll is a bit trick), picked at load time: no -march flag, the addon still runs
// on any x86-64. Elsewhere (aarch64) the compiler's default popcount is used.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define XL_POPCNT_CLONES __attribute__((target_clones("arch=x86-64-v2", "default")))
#else
#define XL_POPCNT_CLONES
#endif
#define XL_INLINE inline __attribute__((always_inline))

constexpr int64_t kChunk = 256;             // rows whose distances are computed before selecting
constexpr int64_t kBlockBytes = 256 << 10;  // base bytes a query block scans before moving on
constexpr int64_t kQueryBlock = 32;

XL_INLINE uint64_t load64(const uint8_t* p) {
  uint64_t x;
  std::memcpy(&x, p, 8);
  return x;
}

// The k best (distance, id) pairs so far: a max-heap by (distance, id) over caller-owned arrays.
struct Top {
  int32_t* d;
  int64_t* id;
  int64_t k;
  int64_t n = 0;
  static bool less(int32_t da, int64_t ia, int32_t db, int64_t ib) { return da < db || (da == db && ia < ib); }
  int32_t worst() const { return n < k ? INT32_MAX : d[0]; }
  void siftDown(int64_t i, int64_t m, int32_t dist, int64_t idx) {
    for (;;) {
      int64_t c = 2 * i + 1;
      if (c >= m) break;
      if (c + 1 < m && less(d[c], id[c], d[c + 1], id[c + 1])) c++;
      if (!less(dist, idx, d[c], id[c])) break;
      d[i] = d[c];
      id[i] = id[c];
      i = c;
    }
    d[i] = dist;
    id[i] = idx;
  }
  // Called with a pair better than the worst kept (or while fewer than k are kept).
  void push(int32_t dist, int64_t idx) {
    if (n < k) {
      int64_t i = n++;
      while (i > 0) {
        int64_t p = (i - 1) / 2;
        if (!less(d[p], id[p], dist, idx)) break;
        d[i] = d[p];
        id[i] = id[p];
        i = p;
      }
      d[i] = dist;
      id[i] = idx;
    } else {
      siftDown(0, n, dist, idx);
    }
  }
  // Ascending by (distance, id), in place (heap sort).
  void sort() {
    for (int64_t m = n; m > 1; m--) {
      int32_t dl = d[m - 1];
      int64_t il = id[m - 1];
      d[m - 1] = d[0];
      id[m - 1] = id[0];
      siftDown(0, m - 1, dl, il);
    }
  }
};

// Distances of one query (W whole words) to `rows` consecutive base rows.
template <int W>
XL_INLINE void distWords(const uint64_t* q, const uint8_t* b, int64_t rows, int32_t* out) {
  for (int64_t r = 0; r < rows; r++) {
    const uint8_t* p = b + r * (W * 8);
    int32_t s = 0;
    for (int w = 0; w < W; w++) s += __builtin_popcountll(load64(p + 8 * w) ^ q[w]);
    out[r] = s;
  }
}

// Any row length: `words` whole words, then a tail of 1–7 bytes (q[words] holds the query's tail).
XL_INLINE void distAny(const uint64_t* q, int64_t words, int64_t tail, int64_t bytes, const uint8_t* b, int64_t rows, int32_t* out) {
  for (int64_t r = 0; r < rows; r++) {
    const uint8_t* p = b + r * bytes;
    int32_t s = 0;
    for (int64_t w = 0; w < words; w++) s += __builtin_popcountll(load64(p + 8 * w) ^ q[w]);
    if (tail) {
      uint64_t x = 0;
      std::memcpy(&x, p + 8 * words, static_cast<size_t>(tail));
      s += __builtin_popcountll(x ^ q[words]);
    }
    out[r] = s;
  }
}

#ifdef XL_HAVE_ZMM
// GCC 12's AVX-512 headers warn about their own _mm512_undefined_* placeholders once inlined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define XL_ZMM __attribute__((target("avx512f,avx512vpopcntdq"), always_inline)) inline
// A row's XOR popcounts (nv × 512 bits) as 8 lanes.
XL_ZMM __m512i zmmCounts(const uint64_t* q, int64_t nv, const uint8_t* p) {
  __m512i acc = _mm512_popcnt_epi64(_mm512_xor_si512(_mm512_loadu_si512(p), _mm512_loadu_si512(q)));
  for (int64_t v = 1; v < nv; v++)
    acc = _mm512_add_epi64(acc, _mm512_popcnt_epi64(_mm512_xor_si512(_mm512_loadu_si512(p + 64 * v), _mm512_loadu_si512(q + 8 * v))));
  return acc;
}
XL_ZMM __m512i zmmPairs(__m512i x, __m512i y) { return _mm512_add_epi64(_mm512_unpacklo_epi64(x, y), _mm512_unpackhi_epi64(x, y)); }
XL_ZMM __m512i zmmLanes(__m512i x, __m512i y) { return _mm512_add_epi64(_mm512_shuffle_i64x2(x, y, 0x88), _mm512_shuffle_i64x2(x, y, 0xDD)); }

// Rows of a multiple of 512 bits with AVX-512 VPOPCNTDQ: 8 rows' lane counts summed across lanes
// at once (unpacks and 128-bit shuffles leave one vector of the 8 rows' totals, in order).
__attribute__((target("avx512f,avx512vpopcntdq"))) void distZmm(const uint64_t* q, int64_t words, const uint8_t* b, int64_t rows, int32_t* out) {
  const int64_t nv = words / 8, bytes = words * 8;
  int64_t r = 0;
  for (; r + 8 <= rows; r += 8) {
    const uint8_t* p = b + r * bytes;
    const __m512i s01 = zmmPairs(zmmCounts(q, nv, p), zmmCounts(q, nv, p + bytes));
    const __m512i s23 = zmmPairs(zmmCounts(q, nv, p + 2 * bytes), zmmCounts(q, nv, p + 3 * bytes));
    const __m512i s45 = zmmPairs(zmmCounts(q, nv, p + 4 * bytes), zmmCounts(q, nv, p + 5 * bytes));
    const __m512i s67 = zmmPairs(zmmCounts(q, nv, p + 6 * bytes), zmmCounts(q, nv, p + 7 * bytes));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + r), _mm512_cvtepi64_epi32(zmmLanes(zmmLanes(s01, s23), zmmLanes(s45, s67))));
  }
  for (; r < rows; r++) out[r] = static_cast<int32_t>(_mm512_reduce_add_epi64(zmmCounts(q, nv, b + r * bytes)));
}
#pragma GCC diagnostic pop
// Picked once at load time; XLING_NO_AVX512=1 keeps the POPCNT path (tests of both paths, timings).
const bool kZmm = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vpopcntdq") && !std::getenv("XLING_NO_AVX512");
#endif

// Base rows [r0, r1) against nqb queries (their words at q + i * stride) into their heaps.
XL_POPCNT_CLONES void scanBlock(const uint64_t* q, int64_t stride, int64_t nqb, const uint8_t* base, int64_t bytes, int64_t r0, int64_t r1,
                                Top* tops, int32_t* buf) {
  const int64_t words = bytes / 8, tail = bytes % 8;
  for (int64_t i = 0; i < nqb; i++) {
    const uint64_t* qi = q + i * stride;
    Top& top = tops[i];
    for (int64_t c0 = r0; c0 < r1; c0 += kChunk) {
      const int64_t rows = std::min(kChunk, r1 - c0);
      const uint8_t* b = base + c0 * bytes;
#ifdef XL_HAVE_ZMM
      if (kZmm && !tail && words % 8 == 0) distZmm(qi, words, b, rows, buf);
      else
#endif
      if (!tail) {
        switch (words) {
          case 1: distWords<1>(qi, b, rows, buf); break;
          case 2: distWords<2>(qi, b, rows, buf); break;
          case 4: distWords<4>(qi, b, rows, buf); break;
          case 8: distWords<8>(qi, b, rows, buf); break;
          case 16: distWords<16>(qi, b, rows, buf); break;
          default: distAny(qi, words, 0, bytes, b, rows, buf);
        }
      } else {
        distAny(qi, words, tail, bytes, b, rows, buf);
      }
      int32_t worst = top.worst();
      for (int64_t r = 0; r < rows; r++)
        if (buf[r] < worst) {
          top.push(buf[r], c0 + r);
          worst = top.worst();
        }
    }
  }
}

}  // namespace

void hammingKnn(const uint8_t* queries, int64_t nq, const uint8_t* base, int64_t nb, int64_t bytes, int64_t k, int threads,
                int32_t* distances, int64_t* labels) {
  if (nq <= 0) return;
  const int64_t words = bytes / 8, tail = bytes % 8, stride = words + (tail ? 1 : 0);
  const int64_t blockRows = std::max<int64_t>(kChunk, (kBlockBytes / bytes) / kChunk * kChunk);
  const int64_t qBlocks = (nq + kQueryBlock - 1) / kQueryBlock;
  threads = std::max(1, threads);
  // Fewer query blocks than threads: the base is cut into slices too (each at least a few
  // blocks' worth), each (query block, slice) task keeps its own top k, merged per query below.
  int64_t slices = 1;
  if (qBlocks < threads) slices = std::max<int64_t>(1, std::min<int64_t>(threads, nb / std::max<int64_t>(4 * kChunk, k)));
  const int64_t sliceRows = (nb + slices - 1) / slices;
  std::vector<int32_t> pd;
  std::vector<int64_t> pi, pn;
  if (slices > 1) {
    pd.resize(static_cast<size_t>(nq * slices * k));
    pi.resize(static_cast<size_t>(nq * slices * k));
    pn.resize(static_cast<size_t>(nq * slices));
  }
  const int64_t tasks = qBlocks * slices;
#pragma omp parallel num_threads(static_cast<int>(std::min<int64_t>(threads, tasks)))
  {
    std::vector<uint64_t> qw(static_cast<size_t>(kQueryBlock * stride));
    std::vector<int32_t> buf(kChunk);
    std::vector<Top> tops(kQueryBlock);
#pragma omp for schedule(dynamic, 1)
    for (int64_t t = 0; t < tasks; t++) {
      const int64_t qb = t / slices, s = t % slices;
      const int64_t q0 = qb * kQueryBlock, nqb = std::min(kQueryBlock, nq - q0);
      const int64_t r0 = s * sliceRows, r1 = std::min(nb, r0 + sliceRows);
      for (int64_t i = 0; i < nqb; i++) {
        const uint8_t* src = queries + (q0 + i) * bytes;
        uint64_t* dst = qw.data() + i * stride;
        for (int64_t w = 0; w < words; w++) dst[w] = load64(src + 8 * w);
        if (tail) {
          dst[words] = 0;
          std::memcpy(dst + words, src + 8 * words, static_cast<size_t>(tail));
        }
        const size_t at = slices > 1 ? static_cast<size_t>(((q0 + i) * slices + s) * k) : static_cast<size_t>((q0 + i) * k);
        tops[i] = Top{slices > 1 ? pd.data() + at : distances + at, slices > 1 ? pi.data() + at : labels + at, k, 0};
      }
      for (int64_t b0 = r0; b0 < r1; b0 += blockRows) scanBlock(qw.data(), stride, nqb, base, bytes, b0, std::min(r1, b0 + blockRows), tops.data(), buf.data());
      for (int64_t i = 0; i < nqb; i++) {
        if (slices > 1) pn[static_cast<size_t>((q0 + i) * slices + s)] = tops[i].n;
        else tops[i].sort();  // k <= nb: the heap is full
      }
    }
  }
  if (slices == 1) return;
  // Merge each query's slices: the first k of their pairs by (distance, id).
#pragma omp parallel num_threads(static_cast<int>(std::min<int64_t>(threads, nq)))
  {
    std::vector<std::pair<int32_t, int64_t>> all;
#pragma omp for schedule(static)
    for (int64_t qi = 0; qi < nq; qi++) {
      all.clear();
      for (int64_t s = 0; s < slices; s++) {
        const size_t at = static_cast<size_t>((qi * slices + s) * k);
        for (int64_t j = 0; j < pn[static_cast<size_t>(qi * slices + s)]; j++) all.emplace_back(pd[at + j], pi[at + j]);
      }
      std::partial_sort(all.begin(), all.begin() + k, all.end());
      for (int64_t j = 0; j < k; j++) {
        distances[qi * k + j] = all[static_cast<size_t>(j)].first;
        labels[qi * k + j] = all[static_cast<size_t>(j)].second;
      }
    }
  }
}

namespace {

const uint8_t* codesArg(Napi::Env env, const Napi::Value& v, const char* what, size_t& length) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
    throwJs(env, std::string("hamming.knn: ") + what + " must be a Uint8Array of packed codes");
  auto a = v.As<Napi::Uint8Array>();
  length = a.ElementLength();
  return a.Data();
}

// knn(queries: Uint8Array [nq·bytes], base: Uint8Array [nb·bytes], bytes, k, threads, async?)
//   -> { distances: Int32Array [nq·k], labels: BigInt64Array [nq·k] } (or a promise of it: the
//   search then runs on a libuv worker, the inputs held until it settles; they must not change
//   meanwhile).
XL_FN(Knn) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 5, "hamming.knn");
    size_t ql, bl;
    const uint8_t* q = codesArg(env, info[0], "queries", ql);
    const uint8_t* b = codesArg(env, info[1], "base", bl);
    const int64_t bytes = toInt(env, info[2], "hamming.knn: bytes");
    if (bytes <= 0 || bytes > (1 << 24)) throwJs(env, "hamming.knn: bytes (the code length) must be in [1, 16777216], got " + std::to_string(bytes));
    if (ql % static_cast<size_t>(bytes)) throwJs(env, "hamming.knn: queries of " + std::to_string(ql) + " bytes are not whole codes of " + std::to_string(bytes) + " bytes");
    if (bl % static_cast<size_t>(bytes)) throwJs(env, "hamming.knn: base of " + std::to_string(bl) + " bytes is not whole codes of " + std::to_string(bytes) + " bytes");
    const int64_t nq = static_cast<int64_t>(ql) / bytes, nb = static_cast<int64_t>(bl) / bytes;
    const int64_t k = toInt(env, info[3], "hamming.knn: k");
    if (k < 1) throwJs(env, "hamming.knn: k must be >= 1, got " + std::to_string(k));
    if (k > nb) throwJs(env, "hamming.knn: k (" + std::to_string(k) + ") exceeds the base's " + std::to_string(nb) + " codes");
    const int64_t threads = toInt(env, info[4], "hamming.knn: threads");
    if (threads < 0 || threads > 1024) throwJs(env, "hamming.knn: threads must be in [0, 1024] (0: OpenMP's default), got " + std::to_string(threads));
    const int nt = threads ? static_cast<int>(threads) : omp_get_max_threads();
    const bool async = info.Length() > 5 && info[5].ToBoolean().Value();
    auto D = Napi::Int32Array::New(env, static_cast<size_t>(nq * k));
    auto I = Napi::BigInt64Array::New(env, static_cast<size_t>(nq * k));
    int32_t* dp = D.Data();
    int64_t* ip = I.Data();
    auto work = [=] { hammingKnn(q, nq, b, nb, bytes, k, nt, dp, ip); };
    auto result = [](Napi::Env e, Napi::Int32Array d, Napi::BigInt64Array i) {
      auto o = Napi::Object::New(e);
      o.Set("distances", d);
      o.Set("labels", i);
      return Napi::Value(o);
    };
    if (!async) {
      work();
      return result(env, D, I);
    }
    auto refs = std::make_shared<std::vector<Napi::ObjectReference>>();
    for (const Napi::Value& v : {info[0], info[1], Napi::Value(D), Napi::Value(I)}) refs->push_back(Napi::Persistent(v.As<Napi::Object>()));
    return PromiseWorker::queue(
        env, work,
        [refs, result](Napi::Env e) { return result(e, (*refs)[2].Value().As<Napi::Int32Array>(), (*refs)[3].Value().As<Napi::BigInt64Array>()); },
        [refs] { refs->clear(); });
  });
}

}  // namespace

void initHamming(Napi::Env env, Napi::Object exports) {
  auto f = Napi::Object::New(env);
  f.Set("knn", Napi::Function::New(env, Knn, "knn"));
#ifdef XL_HAVE_ZMM
  // which popcount path rows of a multiple of 512 bits take (others: 64-bit popcounts)
  f.Set("simd", Napi::String::New(env, kZmm ? "avx512-vpopcntdq" : "popcnt64"));
#else
  f.Set("simd", Napi::String::New(env, "popcnt64"));
#endif
  exports.Set("hamming", f);
}

}  // namespace xling

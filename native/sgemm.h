// oneDNN's row-major sgemm, looked up once in the libdnnl that libtorch loaded (sgemm.cc).
#pragma once
#include <cstdint>

namespace xling {

// dnnl_sgemm: C[M, N] = alpha·op(A)·op(B) + beta·C, row-major, transa/transb 'N' or 'T'; returns 0
// on success (a dnnl_status_t).
using Sgemm = int (*)(char, char, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t, float, float*,
                      int64_t);

// Null where libdnnl is not loaded, or with XLING_NO_DNNL_SGEMM set in the environment. Inside an
// OpenMP region it runs on the calling thread; outside it uses the OpenMP threads.
Sgemm oneDnnSgemm();

// dnnl_gemm_bf16bf16f32: the same contract with bfloat16 A and B (raw 16-bit words) and a float32 C
// (products exact in float32, float32 accumulation). Null as oneDnnSgemm, or where this libdnnl
// lacks it.
using GemmBf16 = int (*)(char, char, int64_t, int64_t, int64_t, float, const uint16_t*, int64_t, const uint16_t*, int64_t, float,
                         float*, int64_t);
GemmBf16 oneDnnGemmBf16();

// Whether the CPU multiplies bfloat16 natively (AVX512_BF16, cpuid leaf 7 sub-leaf 1, EAX bit 5):
// elsewhere oneDNN emulates it, slower than float32.
bool cpuHasBf16();

}  // namespace xling

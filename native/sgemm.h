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

}  // namespace xling

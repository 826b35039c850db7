// Where the addon's single-precision GEMMs go: oneDNN's sgemm, which libtorch already loads. It
// has AVX-512 kernels; Debian's OpenBLAS 0.3.21 runs its AVX2 (Haswell) kernels on the AVX-512 CPUs
// of these machines at about 0.6× the speed (bench/RESULTS.md).
//
// faiss (linked statically, libfaiss.a) calls the Fortran BLAS `sgemm_` for every large product:
// exact k-NN (flat indexes, mining, coarse assignment of IVF indexes), OPQ rotations, k-means and
// PQ training. The `sgemm_` below is hidden: the static link binds faiss's references inside this
// addon to it, while libtorch and any other library keep the process's BLAS. It forwards to
// dnnl_sgemm (a column-major product is the row-major product of the transposes with the operands
// swapped) and falls back to the next `sgemm_` in the search order (OpenBLAS, which the addon links)
// without libdnnl, with XLING_NO_DNNL_SGEMM set, or if oneDNN refuses the call.
#include "sgemm.h"

#include <cpuid.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>

#include <cstdlib>
#include <initializer_list>

namespace xling {

namespace {

// A function of the libdnnl that libtorch already loaded; null without it or with XLING_NO_DNNL_SGEMM.
void* oneDnnSymbol(const char* name) {
  if (std::getenv("XLING_NO_DNNL_SGEMM")) return nullptr;
  void* lib = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_NOLOAD);
  return lib ? dlsym(lib, name) : nullptr;
}

}  // namespace

namespace {

// Asynchronous signals blocked on the calling thread while oneDNN computes (the synchronous ones,
// which a fault raises, stay deliverable): a signal handled during a multi-threaded dnnl_sgemm —
// the V8 profiler's SIGPROF, a SIGINT/SIGTERM/SIGWINCH that Node handles, any handled signal sent
// to the process — corrupted the heap (glibc "corrupted size vs. prev_size" in oneDNN's free, for
// every exact k-NN of a few thousand rows under a stream of SIGUSR2). A signal that arrives
// meanwhile is delivered when the product ends.
class SignalsBlocked {
 public:
  SignalsBlocked() {
    sigset_t all;
    sigfillset(&all);
    for (int s : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT}) sigdelset(&all, s);
    ok_ = pthread_sigmask(SIG_BLOCK, &all, &old_) == 0;
  }
  ~SignalsBlocked() {
    if (ok_) pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SignalsBlocked(const SignalsBlocked&) = delete;
  SignalsBlocked& operator=(const SignalsBlocked&) = delete;

 private:
  sigset_t old_;
  bool ok_ = false;
};

Sgemm rawSgemm() {
  static const Sgemm fn = reinterpret_cast<Sgemm>(oneDnnSymbol("dnnl_sgemm"));
  return fn;
}

GemmBf16 rawGemmBf16() {
  static const GemmBf16 fn = reinterpret_cast<GemmBf16>(oneDnnSymbol("dnnl_gemm_bf16bf16f32"));
  return fn;
}

int guardedSgemm(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                 int64_t ldb, float beta, float* c, int64_t ldc) {
  SignalsBlocked blocked;
  return rawSgemm()(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

int guardedGemmBf16(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const uint16_t* a, int64_t lda,
                    const uint16_t* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  SignalsBlocked blocked;
  return rawGemmBf16()(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace

Sgemm oneDnnSgemm() { return rawSgemm() ? &guardedSgemm : nullptr; }

GemmBf16 oneDnnGemmBf16() { return rawGemmBf16() ? &guardedGemmBf16 : nullptr; }

bool cpuHasBf16() {
  static const bool has = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid_max(0, nullptr) < 7) return false;
    __cpuid_count(7, 1, a, b, c, d);
    return (a & (1u << 5)) != 0;
  }();
  return has;
}

}  // namespace xling

namespace {

using FortranSgemm = int (*)(const char*, const char*, const int*, const int*, const int*, const float*, const float*, const int*,
                             const float*, const int*, const float*, float*, const int*);

FortranSgemm blasSgemm() {
  static const FortranSgemm fn = reinterpret_cast<FortranSgemm>(dlsym(RTLD_NEXT, "sgemm_"));
  return fn;
}

char rowMajorTrans(char t) { return (t == 'N' || t == 'n') ? 'N' : 'T'; }

}  // namespace

// Fortran BLAS sgemm (column-major, LP64 integers as faiss is built with: FINTEGER=int).
extern "C" __attribute__((visibility("hidden"))) int sgemm_(const char* transa, const char* transb, const int* m, const int* n,
                                                             const int* k, const float* alpha, const float* a, const int* lda,
                                                             const float* b, const int* ldb, const float* beta, float* c,
                                                             const int* ldc) {
  if (xling::Sgemm sg = xling::oneDnnSgemm()) {
    if (*m == 0 || *n == 0) return 0;
    if (*k == 0 || *alpha == 0.0f) {  // C = beta·C (oneDNN leaves C as it is when k = 0)
      for (int j = 0; j < *n; j++)
        for (int i = 0; i < *m; i++) c[i + int64_t(j) * *ldc] = *beta == 0.0f ? 0.0f : *beta * c[i + int64_t(j) * *ldc];
      return 0;
    }
    // column-major C[m, n] = op(A)·op(B) is row-major Cᵀ[n, m] = op(B)ᵀ·op(A)ᵀ over the same memory
    if (sg(rowMajorTrans(*transb), rowMajorTrans(*transa), *n, *m, *k, *alpha, b, *ldb, a, *lda, *beta, c, *ldc) == 0) return 0;
  }
  if (FortranSgemm f = blasSgemm()) return f(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  // no BLAS after this addon (a build against a faiss without one): the reference loops
  const bool ta = rowMajorTrans(*transa) == 'T', tb = rowMajorTrans(*transb) == 'T';
  for (int j = 0; j < *n; j++)
    for (int i = 0; i < *m; i++) {
      double s = 0;
      for (int l = 0; l < *k; l++) s += double(ta ? a[l + i * *lda] : a[i + l * *lda]) * (tb ? b[j + l * *ldb] : b[l + j * *ldb]);
      float& out = c[i + j * *ldc];
      out = *alpha * float(s) + (*beta == 0.0f ? 0.0f : *beta * out);
    }
  return 0;
}

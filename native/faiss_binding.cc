// faiss binding: indexes as type-tagged externals, float32/int64 typed arrays in and out.
// Every call validates its arguments and runs inside guard(), so faiss assertions become JS
// Errors. Long calls (train, add, search, exact k-NN) also have Promise variants that run on a
// libuv worker; an index in use by a worker refuses other calls until it is done.
#include <faiss/AutoTune.h>
#include <faiss/Clustering.h>
#include <faiss/IVFlib.h>
#include <faiss/Index.h>
#include <faiss/IndexFlat.h>
#include <faiss/IndexHNSW.h>
#include <faiss/IndexIDMap.h>
#include <faiss/IndexIVF.h>
#include <faiss/IndexIVFFastScan.h>
#include <faiss/IndexIVFPQ.h>
#include <faiss/IndexIVFPQFastScan.h>
#include <faiss/IndexPQ.h>
#include <faiss/IndexPreTransform.h>
#include <faiss/VectorTransform.h>
#include <faiss/clone_index.h>
#include <faiss/impl/FaissException.h>
#include <faiss/impl/IDSelector.h>
#include <faiss/impl/io.h>
#include <faiss/index_factory.h>
#include <faiss/index_io.h>
#include <faiss/invlists/InvertedLists.h>
#include <faiss/utils/distances.h>
#include <fcntl.h>
#include <omp.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>

#include <mutex>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>

#include "common.h"

// The addon's Fortran BLAS sgemm (sgemm.cc), which faiss's own products call too.
extern "C" int sgemm_(const char*, const char*, const int*, const int*, const int*, const float*, const float*, const int*, const float*,
                      const int*, const float*, float*, const int*);

namespace xling {
namespace {

const napi_type_tag kIndexTag = {0x786c696e67666169ULL, 0x7373696e64657821ULL};

std::atomic<int> faissThreads{0};  // 0 = faiss/OpenMP default

struct IndexHolder {
  faiss::Index* index = nullptr;
  std::atomic<int> busy{0};
  bool orphaned = false;  // JS handle collected while a worker still used it
  ~IndexHolder() { delete index; }
};

// The index under pre-transforms (OPQ, PCA) and ID maps: what decides how ids, merging and
// parameters behave.
faiss::Index* innerIndex(faiss::Index* idx) {
  for (;;) {
    if (auto* pt = dynamic_cast<faiss::IndexPreTransform*>(idx)) idx = pt->index;
    else if (auto* m = dynamic_cast<faiss::IndexIDMap*>(idx)) idx = m->index;  // also IndexIDMap2
    else return idx;
  }
}

// faiss 1.7.3's IVF search (parallel_mode 0) splits the queries into one slice per OpenMP thread
// and each thread runs its own coarse-quantizer search: concurrent BLAS calls whose OpenBLAS threads
// contend with each other and with the OpenMP team. parallel_mode 3 assigns all queries with one
// BLAS call, then scans the lists with the queries split over the threads (the same results).
// `setParams("parallel_mode=0")` restores faiss's default. Fast-scan IVF indexes keep faiss's
// default: searched alternately with both on the same index (50k × 128, IVF256,PQ32x4fs, nprobe
// 16, 1,000 queries, 2 threads), parallel_mode 0 was faster in 6 of 6 pairs (~15%).
void searchDefaults(faiss::Index* idx) {
  auto* ivf = dynamic_cast<faiss::IndexIVF*>(innerIndex(idx));
  if (ivf && !dynamic_cast<faiss::IndexIVFFastScan*>(ivf)) ivf->parallel_mode = 3;
}

Napi::Value wrapIndex(Napi::Env env, faiss::Index* idx) {
  auto* h = new IndexHolder();
  h->index = idx;
  searchDefaults(idx);
  auto ext = Napi::External<IndexHolder>::New(env, h, [](Napi::Env, IndexHolder* p) {
    if (p->busy.load() == 0) delete p;
    else p->orphaned = true;  // the worker using it frees it when done (both on the JS thread)
  });
  ext.TypeTag(&kIndexTag);
  return ext;
}

IndexHolder* holderOf(Napi::Env env, const Napi::Value& v, const char* fn, bool allowBusy = false) {
  if (!v.IsExternal() || !v.As<Napi::External<IndexHolder>>().CheckTypeTag(&kIndexTag))
    throwJs(env, std::string(fn) + ": expected a faiss index");
  auto* h = v.As<Napi::External<IndexHolder>>().Data();
  if (!h->index) throwJs(env, std::string(fn) + ": index was disposed");
  if (!allowBusy && h->busy.load() > 0) throwJs(env, std::string(fn) + ": index is busy with an asynchronous call");
  return h;
}

struct FloatView {
  const float* data = nullptr;
  size_t length = 0;
};

FloatView floats(Napi::Env env, const Napi::Value& v, const char* what) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_float32_array)
    throwJs(env, std::string(what) + ": expected a Float32Array");
  auto a = v.As<Napi::Float32Array>();
  return {a.Data(), a.ElementLength()};
}

size_t rowsOf(Napi::Env env, const FloatView& f, int64_t d, const char* what) {
  if (d <= 0) throwJs(env, std::string(what) + ": dimension must be positive");
  if (f.length % static_cast<size_t>(d) != 0)
    throwJs(env, std::string(what) + ": array length " + std::to_string(f.length) + " is not a multiple of the dimension " + std::to_string(d));
  return f.length / static_cast<size_t>(d);
}

const int64_t* ids(Napi::Env env, const Napi::Value& v, size_t n, const char* what) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_bigint64_array)
    throwJs(env, std::string(what) + ": ids must be a BigInt64Array");
  auto a = v.As<Napi::BigInt64Array>();
  if (a.ElementLength() != n) throwJs(env, std::string(what) + ": " + std::to_string(a.ElementLength()) + " ids for " + std::to_string(n) + " vectors");
  return a.Data();
}

int64_t kOf(Napi::Env env, const Napi::Value& v, const char* what) {
  int64_t k = toInt(env, v, what);
  if (k <= 0) throwJs(env, std::string(what) + ": k must be >= 1, got " + std::to_string(k));
  if (k > 100000) throwJs(env, std::string(what) + ": k must be <= 100000");
  return k;
}

faiss::MetricType metricOf(Napi::Env env, const Napi::Value& v) {
  std::string m = v.IsString() ? v.As<Napi::String>().Utf8Value() : "";
  if (m == "ip") return faiss::METRIC_INNER_PRODUCT;
  if (m == "l2") return faiss::METRIC_L2;
  throwJs(env, "metric must be 'ip' or 'l2'");
}

void applyThreads() {
  int n = faissThreads.load();
  if (n > 0) omp_set_num_threads(n);
}

// An IVF index's HNSW coarse quantizer (IVFn_HNSWm) is the graph over its centroids that faiss
// builds inside train(), once k-means has found them, with every OpenMP thread: hnsw_add_vertices
// links each new centroid to those inserted so far, so with more than one thread the graph depends
// on thread timing, and with it the lists the rest of training (the residuals the product quantizer
// learns from) and every add assign vectors to through it. Two trainings on the same vectors, or one
// on a 2-core and one on a 16-core machine, gave different indexes (k-means and the product
// quantizer alone do not: their results are the same with any number of threads). Before training,
// such a quantizer is swapped for one that inserts on a single thread, which is reproducible (the
// levels come from HNSW's seeded generator, the insertion order is fixed); it is written and read
// as the same IndexHNSWFlat. The price: the nlist centroids are linked on one thread, small beside
// the k-means that found them.
struct SerialHNSWFlat : faiss::IndexHNSWFlat {
  SerialHNSWFlat(int d, int M, faiss::MetricType metric) : faiss::IndexHNSWFlat(d, M, metric) {}
  void add(idx_t n, const float* x) override {
    int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    try {
      faiss::IndexHNSWFlat::add(n, x);
    } catch (...) {
      omp_set_num_threads(threads);
      throw;
    }
    omp_set_num_threads(threads);
  }
};

void deterministicQuantizer(faiss::Index* idx) {
  auto* ivf = dynamic_cast<faiss::IndexIVF*>(innerIndex(idx));
  if (!ivf || ivf->is_trained || !ivf->quantizer || ivf->quantizer->ntotal != 0) return;
  auto* q = ivf->quantizer;
  if (typeid(*q) != typeid(faiss::IndexHNSWFlat)) return;
  auto* old = static_cast<faiss::IndexHNSWFlat*>(q);
  auto* serial = new SerialHNSWFlat(static_cast<int>(old->d), old->hnsw.nb_neighbors(1), old->metric_type);
  serial->hnsw.efConstruction = old->hnsw.efConstruction;
  serial->hnsw.efSearch = old->hnsw.efSearch;
  serial->hnsw.upper_beam = old->hnsw.upper_beam;
  if (ivf->own_fields) delete old;
  ivf->quantizer = serial;
  ivf->own_fields = true;
}

// train(), with an HNSW coarse quantizer built reproducibly (above).
void trainIndex(faiss::Index* idx, size_t n, const float* x) {
  deterministicQuantizer(idx);
  idx->train(static_cast<faiss::Index::idx_t>(n), x);
}

// ---- synchronous entry points

XL_FN(IndexFactory) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 3, "indexFactory");
    int64_t d = toInt(env, info[0], "indexFactory(d)");
    if (d <= 0 || d > 65536) throwJs(env, "indexFactory: dimension must be in [1, 65536]");
    if (!info[1].IsString()) throwJs(env, "indexFactory: description must be a string");
    auto desc = info[1].As<Napi::String>().Utf8Value();
    return wrapIndex(env, faiss::index_factory(static_cast<int>(d), desc.c_str(), metricOf(env, info[2])));
  });
}

XL_FN(ReadIndex) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 1, "readIndex");
    if (!info[0].IsString()) throwJs(env, "readIndex: path must be a string");
    auto path = info[0].As<Napi::String>().Utf8Value();
    bool mmap = info.Length() > 1 && info[1].ToBoolean().Value();
    return wrapIndex(env, faiss::read_index(path.c_str(), mmap ? faiss::IO_FLAG_MMAP : 0));
  });
}

XL_FN(WriteIndex) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 2, "writeIndex");
    auto* h = holderOf(env, info[0], "writeIndex");
    if (!info[1].IsString()) throwJs(env, "writeIndex: path must be a string");
    faiss::write_index(h->index, info[1].As<Napi::String>().Utf8Value().c_str());
    return env.Undefined();
  });
}

XL_FN(Info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 1, "info");
    auto* h = holderOf(env, info[0], "info", true);
    auto o = Napi::Object::New(env);
    o.Set("d", Napi::Number::New(env, h->index->d));
    o.Set("ntotal", Napi::Number::New(env, static_cast<double>(h->index->ntotal)));
    o.Set("isTrained", Napi::Boolean::New(env, h->index->is_trained));
    o.Set("metric", Napi::String::New(env, h->index->metric_type == faiss::METRIC_INNER_PRODUCT ? "ip" : "l2"));
    o.Set("busy", Napi::Boolean::New(env, h->busy.load() > 0));
    // how the index holds ids: IVF lists and ID maps store the ids given to add_with_ids; any
    // other index numbers its vectors 0..ntotal-1 and cannot take ids
    faiss::Index* inner = innerIndex(h->index);
    auto* ivf = dynamic_cast<faiss::IndexIVF*>(inner);
    o.Set("ivf", Napi::Boolean::New(env, ivf != nullptr));
    o.Set("nlist", Napi::Number::New(env, ivf ? static_cast<double>(ivf->nlist) : 0.0));
    o.Set("idMap", Napi::Boolean::New(env, dynamic_cast<faiss::IndexIDMap*>(h->index) != nullptr));
    o.Set("hnsw", Napi::Boolean::New(env, dynamic_cast<faiss::IndexHNSW*>(inner) != nullptr));
    return o;
  });
}

XL_FN(Train) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 2, "train");
    auto* h = holderOf(env, info[0], "train");
    auto x = floats(env, info[1], "train");
    size_t n = rowsOf(env, x, h->index->d, "train");
    if (!n) throwJs(env, "train: no training vectors");
    applyThreads();
    trainIndex(h->index, n, x.data);
    return env.Undefined();
  });
}

XL_FN(Add) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 2, "add");
    auto* h = holderOf(env, info[0], "add");
    auto x = floats(env, info[1], "add");
    size_t n = rowsOf(env, x, h->index->d, "add");
    if (!h->index->is_trained) throwJs(env, "add: the index is not trained (call train() first)");
    applyThreads();
    if (info.Length() > 2 && !info[2].IsUndefined() && !info[2].IsNull())
      h->index->add_with_ids(static_cast<faiss::Index::idx_t>(n), x.data, ids(env, info[2], n, "addWithIds"));
    else
      h->index->add(static_cast<faiss::Index::idx_t>(n), x.data);
    return env.Undefined();
  });
}

Napi::Object searchResult(Napi::Env env, size_t n, int64_t k, Napi::Float32Array& D, Napi::BigInt64Array& I) {
  auto o = Napi::Object::New(env);
  o.Set("distances", D);
  o.Set("labels", I);
  o.Set("n", Napi::Number::New(env, static_cast<double>(n)));
  o.Set("k", Napi::Number::New(env, static_cast<double>(k)));
  return o;
}

// Per-call search parameters (faiss SearchParameters): nprobe for an IVF index, also under
// pre-transforms (OPQ, PCA) and ID maps, without touching the index's own setting (which other
// concurrent searches read). nprobe <= 0: the index's setting. Throws for an index without lists.
void searchWith(const faiss::Index* idx, faiss::Index::idx_t n, const float* x, int64_t k, float* D, int64_t* I, int nprobe) {
  if (nprobe <= 0) { idx->search(n, x, k, D, I); return; }
  if (auto* pt = dynamic_cast<const faiss::IndexPreTransform*>(idx)) {
    const float* xt = pt->apply_chain(n, x);
    std::unique_ptr<const float[]> del(xt == x ? nullptr : xt);
    searchWith(pt->index, n, xt, k, D, I, nprobe);
    return;
  }
  if (auto* m = dynamic_cast<const faiss::IndexIDMap*>(idx)) {
    searchWith(m->index, n, x, k, D, I, nprobe);
    for (int64_t i = 0; i < n * k; i++) if (I[i] >= 0) I[i] = m->id_map[I[i]];
    return;
  }
  if (auto* ivf = dynamic_cast<const faiss::IndexIVF*>(idx)) {
    faiss::SearchParametersIVF p;
    p.nprobe = static_cast<size_t>(nprobe);
    ivf->search(n, x, k, D, I, &p);
    return;
  }
  throw std::invalid_argument("nprobe applies to IVF indexes only");
}

// The optional search parameters argument: {nprobe?: number} (or undefined/null).
int searchNprobe(Napi::Env env, const Napi::CallbackInfo& info, size_t at, const char* fn) {
  if (info.Length() <= at || info[at].IsUndefined() || info[at].IsNull()) return 0;
  if (!info[at].IsObject()) throwJs(env, std::string(fn) + ": search parameters must be an object such as {nprobe: 8}");
  auto v = info[at].As<Napi::Object>().Get("nprobe");
  if (v.IsUndefined() || v.IsNull()) return 0;
  if (!v.IsNumber()) throwJs(env, std::string(fn) + ": nprobe must be a positive integer");
  double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= 1 && d <= 1e9) || d != std::floor(d)) throwJs(env, std::string(fn) + ": nprobe must be a positive integer");
  if (!dynamic_cast<faiss::IndexIVF*>(innerIndex(holderOf(env, info[0], fn, true)->index))) throwJs(env, std::string(fn) + ": nprobe applies to IVF indexes only");
  return static_cast<int>(d);
}

XL_FN(Search) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 3, "search");
    auto* h = holderOf(env, info[0], "search");
    auto q = floats(env, info[1], "search");
    size_t n = rowsOf(env, q, h->index->d, "search");
    int64_t k = kOf(env, info[2], "search");
    if (!h->index->is_trained) throwJs(env, "search: the index is not trained");
    auto D = Napi::Float32Array::New(env, n * k);
    auto I = Napi::BigInt64Array::New(env, n * k);
    applyThreads();
    int nprobe = searchNprobe(env, info, 3, "search");
    if (n) searchWith(h->index, static_cast<faiss::Index::idx_t>(n), q.data, k, D.Data(), I.Data(), nprobe);
    return searchResult(env, n, k, D, I);
  });
}

XL_FN(SetParams) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 2, "setParams");
    auto* h = holderOf(env, info[0], "setParams");
    if (!info[1].IsString()) throwJs(env, "setParams: expected a string such as 'nprobe=64'");
    std::string params = info[1].As<Napi::String>().Utf8Value();
    // parallel_mode (IVF indexes: how a search splits work over threads) is not a ParameterSpace name
    static const std::string pm = "parallel_mode=";
    if (params.rfind(pm, 0) == 0) {
      auto* ivf = dynamic_cast<faiss::IndexIVF*>(innerIndex(h->index));
      if (!ivf) throwJs(env, "setParams: parallel_mode applies to IVF indexes only");
      char* end = nullptr;
      long v = std::strtol(params.c_str() + pm.size(), &end, 10);
      if (*end || v < 0 || v > 3) throwJs(env, "setParams: parallel_mode must be 0, 1, 2 or 3");
      ivf->parallel_mode = static_cast<int>(v);
      return env.Undefined();
    }
    faiss::ParameterSpace().set_index_parameters(h->index, params.c_str());
    return env.Undefined();
  });
}

XL_FN(SetTrainingParams) {
  // Training knobs index_factory strings cannot express: polysemous training of PQ codes
  // (a centroid permutation only Hamming-distance filtering uses; minutes of popcount loops
  // on Debian's generic build) and OPQ's alternating-optimisation iterations (faiss default 50,
  // each with a 1024×1024 SVD for d = 1024). Returns what it found and set.
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 3, "setTrainingParams");
    auto* h = holderOf(env, info[0], "setTrainingParams");
    bool polysemous = info[1].ToBoolean().Value();
    int64_t opqIters = toInt(env, info[2], "setTrainingParams(opqIters)");
    auto out = Napi::Object::New(env);
    faiss::Index* idx = h->index;
    if (auto* m = dynamic_cast<faiss::IndexIDMap*>(idx)) idx = m->index;  // e.g. IDMap2,PQ8 of a sharded build
    if (auto* pt = dynamic_cast<faiss::IndexPreTransform*>(idx)) {
      int opq = 0;
      for (auto* vt : pt->chain)
        if (auto* m = dynamic_cast<faiss::OPQMatrix*>(vt)) {
          if (opqIters > 0) m->niter = static_cast<int>(opqIters);
          opq = m->niter;
        }
      if (opq) out.Set("opqIters", opq);
      idx = pt->index;
    }
    if (auto* ivfpq = dynamic_cast<faiss::IndexIVFPQ*>(idx)) {
      ivfpq->do_polysemous_training = polysemous;
      out.Set("polysemous", polysemous);
    } else if (auto* pq = dynamic_cast<faiss::IndexPQ*>(idx)) {
      pq->do_polysemous_training = polysemous;
      out.Set("polysemous", polysemous);
    }
    return out;
  });
}

XL_FN(MergeFrom) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 2, "mergeFrom");
    auto* a = holderOf(env, info[0], "mergeFrom");
    auto* b = holderOf(env, info[1], "mergeFrom(other)");
    if (a == b) throwJs(env, "mergeFrom: cannot merge an index into itself");
    if (a->index->d != b->index->d) throwJs(env, "mergeFrom: dimensions differ");
    // faiss 1.7.3 appends to a fast-scan index's block lists only when they are empty, and throws
    // inside an OpenMP loop otherwise (which ends the process): refused here. Merge the IVF-PQ
    // with 4-bit codes (PQ…x4) and convert it with toFastScan.
    if (dynamic_cast<faiss::IndexIVFFastScan*>(innerIndex(a->index)) || dynamic_cast<faiss::IndexIVFFastScan*>(innerIndex(b->index)))
      throwJs(env, "mergeFrom: fast-scan indexes (PQ…x4fs) cannot be merged; merge the IVF-PQ with 4-bit codes (PQ…x4) and convert it to fast-scan afterwards");
    // IVF indexes (also under OPQ/PCA pre-transforms) move their inverted lists; flat-code
    // indexes append their codes. Ids are kept as they are.
    if (faiss::ivflib::try_extract_index_ivf(a->index)) faiss::ivflib::merge_into(a->index, b->index, false);
    else a->index->merge_from(*b->index, 0);
    return env.Undefined();
  });
}

// ids(index) -> the stored ids (an ID map's, or every IVF list's, in list order), or null when
// the index numbers its vectors 0..ntotal-1 itself.
XL_FN(Ids) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 1, "ids");
    auto* h = holderOf(env, info[0], "ids");
    if (auto* m = dynamic_cast<faiss::IndexIDMap*>(h->index)) {
      auto out = Napi::BigInt64Array::New(env, m->id_map.size());
      std::copy(m->id_map.begin(), m->id_map.end(), out.Data());
      return out;
    }
    auto* ivf = dynamic_cast<faiss::IndexIVF*>(innerIndex(h->index));
    if (!ivf) return env.Null();
    auto out = Napi::BigInt64Array::New(env, static_cast<size_t>(ivf->ntotal));
    size_t at = 0;
    for (size_t l = 0; l < ivf->nlist; l++) {
      size_t n = ivf->invlists->list_size(l);
      if (!n) continue;
      if (at + n > out.ElementLength()) throwJs(env, "ids: the inverted lists hold more ids than ntotal");
      faiss::InvertedLists::ScopedIds ids(ivf->invlists, l);
      std::copy(ids.get(), ids.get() + n, out.Data() + at);
      at += n;
    }
    if (at != out.ElementLength()) throwJs(env, "ids: the inverted lists hold fewer ids than ntotal");
    return out;
  });
}

XL_FN(Reconstruct) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 3, "reconstruct");
    auto* h = holderOf(env, info[0], "reconstruct");
    int64_t i0 = toInt(env, info[1], "reconstruct(start)"), n = toInt(env, info[2], "reconstruct(n)");
    if (i0 < 0 || n < 0 || i0 + n > h->index->ntotal)
      throwJs(env, "reconstruct: rows [" + std::to_string(i0) + ", " + std::to_string(i0 + n) + ") out of range (ntotal " + std::to_string(h->index->ntotal) + ")");
    auto out = Napi::Float32Array::New(env, static_cast<size_t>(n) * h->index->d);
    if (n) h->index->reconstruct_n(i0, n, out.Data());
    return out;
  });
}

XL_FN(Reset) {
  return guard(info.Env(), [&]() -> Napi::Value {
    holderOf(info.Env(), info[0], "reset")->index->reset();
    return info.Env().Undefined();
  });
}

XL_FN(RemoveIds) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 2, "removeIds");
    auto* h = holderOf(env, info[0], "removeIds");
    if (!info[1].IsTypedArray() || info[1].As<Napi::TypedArray>().TypedArrayType() != napi_bigint64_array)
      throwJs(env, "removeIds: ids must be a BigInt64Array");
    auto a = info[1].As<Napi::BigInt64Array>();
    faiss::IDSelectorBatch sel(a.ElementLength(), a.Data());
    return Napi::Number::New(env, static_cast<double>(h->index->remove_ids(sel)));
  });
}

// toFastScan(index) -> a new index: an IVF-PQ with 4-bit codes (IVF…,PQ…x4, also under OPQ/PCA,
// any coarse quantizer) in faiss's fast-scan layout (IndexIVFPQFastScan: codes packed in blocks
// of 32, distances from 8-bit look-up tables in SIMD registers), with the same lists and ids. The
// given index is left as it is (the new one is built from a serialised copy of it).
XL_FN(ToFastScan) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 1, "toFastScan");
    auto* h = holderOf(env, info[0], "toFastScan");
    faiss::Index* top = h->index;
    auto* pt = dynamic_cast<faiss::IndexPreTransform*>(top);
    auto* pq = dynamic_cast<faiss::IndexIVFPQ*>(pt ? pt->index : top);
    if (!pq || pq->pq.nbits != 4 || !pq->is_trained)
      throwJs(env, "toFastScan: expected a trained IVF-PQ index with 4-bit codes (a factory such as IVF4096,PQ32x4, also under OPQ)");
    faiss::VectorIOWriter w;
    faiss::write_index(top, &w);
    faiss::VectorIOReader r;
    r.data.swap(w.data);
    faiss::Index* c = faiss::read_index(&r);
    auto* cpt = dynamic_cast<faiss::IndexPreTransform*>(c);
    std::unique_ptr<faiss::IndexIVFPQ> orig(dynamic_cast<faiss::IndexIVFPQ*>(cpt ? cpt->index : c));
    std::unique_ptr<faiss::Index> chain(cpt);
    if (cpt) cpt->index = nullptr;  // owned by `orig` until replaced
    std::unique_ptr<faiss::IndexIVFPQFastScan> fs(new faiss::IndexIVFPQFastScan(*orig, 32));
    // the new index takes the quantizer over; the copied lists are packed into its own
    fs->orig_invlists = nullptr;
    fs->own_fields = true;
    orig->own_fields = false;
    orig.reset();
    if (!cpt) return wrapIndex(env, fs.release());
    cpt->index = fs.release();
    return wrapIndex(env, chain.release());
  });
}

XL_FN(Clone) {
  return guard(info.Env(), [&]() -> Napi::Value {
    return wrapIndex(info.Env(), faiss::clone_index(holderOf(info.Env(), info[0], "clone")->index));
  });
}

XL_FN(Dispose) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    if (!info[0].IsExternal() || !info[0].As<Napi::External<IndexHolder>>().CheckTypeTag(&kIndexTag)) throwJs(env, "dispose: expected a faiss index");
    auto* h = info[0].As<Napi::External<IndexHolder>>().Data();
    if (h->busy.load() > 0) throwJs(env, "dispose: index is busy with an asynchronous call");
    delete h->index;
    h->index = nullptr;
    return env.Undefined();
  });
}

// kmeans(x, d, k, niter, seed, spherical, maxPointsPerCentroid) -> { centroids, objective }
XL_FN(Kmeans) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 3, "kmeans");
    auto x = floats(env, info[0], "kmeans");
    int64_t d = toInt(env, info[1], "kmeans(d)");
    size_t n = rowsOf(env, x, d, "kmeans");
    int64_t k = kOf(env, info[2], "kmeans(k)");
    if (static_cast<size_t>(k) > n) throwJs(env, "kmeans: k (" + std::to_string(k) + ") exceeds the number of points (" + std::to_string(n) + ")");
    faiss::ClusteringParameters cp;
    if (info.Length() > 3 && info[3].IsNumber()) cp.niter = static_cast<int>(toInt(env, info[3], "kmeans(niter)"));
    if (info.Length() > 4 && info[4].IsNumber()) cp.seed = static_cast<int>(toInt(env, info[4], "kmeans(seed)"));
    if (info.Length() > 5) cp.spherical = info[5].ToBoolean().Value();
    // faiss samples k × this many points (256 by default); 0 keeps the default
    if (info.Length() > 6 && info[6].IsNumber()) {
      int64_t m = toInt(env, info[6], "kmeans(maxPointsPerCentroid)");
      if (m < 0 || m > (1 << 24)) throwJs(env, "kmeans: maxPointsPerCentroid must be in [0, 2^24], got " + std::to_string(m));
      if (m > 0) cp.max_points_per_centroid = static_cast<int>(m);
    }
    cp.verbose = false;
    applyThreads();
    faiss::Clustering clus(static_cast<int>(d), static_cast<int>(k), cp);
    faiss::IndexFlatL2 assign(static_cast<int>(d));
    clus.train(static_cast<faiss::Index::idx_t>(n), x.data, assign);
    auto c = Napi::Float32Array::New(env, clus.centroids.size());
    std::memcpy(c.Data(), clus.centroids.data(), clus.centroids.size() * sizeof(float));
    auto o = Napi::Object::New(env);
    o.Set("centroids", c);
    o.Set("objective", Napi::Number::New(env, clus.iteration_stats.empty() ? 0.0 : clus.iteration_stats.back().obj));
    return o;
  });
}

XL_FN(SetThreads) {
  return guard(info.Env(), [&]() -> Napi::Value {
    int64_t n = toInt(info.Env(), info[0], "setThreads");
    if (n < 1) throwJs(info.Env(), "setThreads: need at least 1 thread");
    faissThreads = static_cast<int>(n);
    omp_set_num_threads(static_cast<int>(n));
    return info.Env().Undefined();
  });
}

XL_FN(GetThreads) { return Napi::Number::New(info.Env(), faissThreads.load() > 0 ? faissThreads.load() : omp_get_max_threads()); }

// ---- asynchronous entry points

// Queues `work` on a libuv worker under the faiss thread setting. The index holder stays alive
// (busy) and the JS inputs referenced until the promise settles; outputs are JS arrays allocated
// up front (their backing stores never move).
Napi::Value queue(Napi::Env env, IndexHolder* h, std::function<void()> work, const std::vector<Napi::Value>& keep, PromiseWorker::Result result) {
  auto refs = std::make_shared<std::vector<Napi::ObjectReference>>();
  for (auto& v : keep) refs->push_back(Napi::Persistent(v.As<Napi::Object>()));
  if (h) h->busy++;
  return PromiseWorker::queue(env, [work = std::move(work)] { applyThreads(); work(); }, std::move(result), [h, refs] {
    if (h && --h->busy == 0 && h->orphaned) delete h;
    refs->clear();
  });
}

// ---- training progress: faiss reports k-means and OPQ iterations only by printing them (its
// `verbose` flags, printf to stdout) and warns with fprintf(stderr). While a training with a
// progress callback runs, fds 1 and 2 are pipes read by a thread: faiss's lines go to the callback
// (split at '\n' and at the '\r' of its k-means iteration lines), anything else written meanwhile
// (the JS side's own stderr lines) is passed on to the original descriptor unchanged.

// Turns on the verbose flags of every trainable part: pre-transforms (OPQ), the IVF level (its
// k-means parameters, its product quantizer), a PQ index.
void setVerbose(faiss::Index* idx, bool on) {
  for (;;) {
    idx->verbose = on;
    if (auto* pt = dynamic_cast<faiss::IndexPreTransform*>(idx)) {
      for (auto* vt : pt->chain)
        if (auto* lt = dynamic_cast<faiss::LinearTransform*>(vt)) lt->verbose = on;
      idx = pt->index;
    } else if (auto* m = dynamic_cast<faiss::IndexIDMap*>(idx)) {
      idx = m->index;
    } else break;
  }
  if (auto* ivf = dynamic_cast<faiss::IndexIVF*>(idx)) {
    ivf->cp.verbose = on;
    if (auto* ivfpq = dynamic_cast<faiss::IndexIVFPQ*>(ivf)) ivfpq->pq.verbose = on;
  } else if (auto* pq = dynamic_cast<faiss::IndexPQ*>(idx)) {
    pq->pq.verbose = on;
  }
}

bool faissLine(const std::string& l) {
  static const char* prefixes[] = {"WARNING clustering", "Clustering ", "  Iteration ", "    Iteration ", "  Preprocessing", "OPQMatrix::", "  OPQMatrix::",
                                   "    encode / decode", "    X * recons", "Training ", "training ", "computing residuals", "Sampling a subset",
                                   "IVF quantizer", "Adding centroids", "But training", "Number of training points", "Outer iteration", "Objective improved",
                                   "Input data encoded", "  Using ", "doing polysemous", "IndexIVFPQ::", "IndexIVF::", "precomputing IVFPQ", "IndexPreTransform::", "   Training chain", "   Applying transform", "   Training sub-index", "Train", "Apply PCA", "Revert PCA", "Progressive dim"};
  for (auto* p : prefixes)
    if (l.rfind(p, 0) == 0) return true;
  return false;
}

std::mutex captureMutex;  // one captured training at a time (the descriptors are process-wide)

class OutputCapture {
 public:
  explicit OutputCapture(Napi::ThreadSafeFunction tsfn) : tsfn_(std::move(tsfn)) {}
  // Redirects fds 1 and 2 into pipes and starts the reader; false (nothing changed) if it cannot.
  bool start() {
    std::fflush(stdout);
    std::fflush(stderr);
    int p1[2], p2[2];
    if (pipe(p1) != 0) return false;
    if (pipe(p2) != 0) { close(p1[0]); close(p1[1]); return false; }
    saved_[0] = dup(1);
    saved_[1] = dup(2);
    if (saved_[0] < 0 || saved_[1] < 0 || dup2(p1[1], 1) < 0 || dup2(p2[1], 2) < 0) {
      if (saved_[0] >= 0) { dup2(saved_[0], 1); close(saved_[0]); }
      if (saved_[1] >= 0) { dup2(saved_[1], 2); close(saved_[1]); }
      for (int fd : {p1[0], p1[1], p2[0], p2[1]}) close(fd);
      return false;
    }
    close(p1[1]);
    close(p2[1]);
    read_[0] = p1[0];
    read_[1] = p2[0];
    // faiss prints with printf: line-buffer stdout so that each line reaches the pipe when printed
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    reader_ = std::thread([this] { run(); });
    return true;
  }
  void stop() {
    std::fflush(stdout);
    std::fflush(stderr);
    dup2(saved_[0], 1);
    dup2(saved_[1], 2);  // the pipes' write ends are now closed: the reader sees end of file
    reader_.join();
    close(saved_[0]);
    close(saved_[1]);
    close(read_[0]);
    close(read_[1]);
  }

 private:
  void run() {
    std::string pending[2];
    bool open[2] = {true, true};
    char buf[4096];
    while (open[0] || open[1]) {
      pollfd fds[2] = {{open[0] ? read_[0] : -1, POLLIN, 0}, {open[1] ? read_[1] : -1, POLLIN, 0}};
      if (poll(fds, 2, -1) < 0) { if (errno == EINTR) continue; break; }
      for (int s = 0; s < 2; s++) {
        if (!open[s] || !(fds[s].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        ssize_t n = read(read_[s], buf, sizeof buf);
        if (n <= 0) { open[s] = false; flushLine(s, pending[s], true); continue; }
        pending[s].append(buf, static_cast<size_t>(n));
        size_t at;
        while ((at = pending[s].find_first_of("\r\n")) != std::string::npos) {
          std::string line = pending[s].substr(0, at + 1);
          pending[s].erase(0, at + 1);
          flushLine(s, line, false);
        }
      }
    }
  }
  void flushLine(int s, std::string& line, bool last) {
    if (line.empty()) return;
    std::string text = line;
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    if (faissLine(text)) {
      auto* copy = new std::string(std::move(text));
      if (tsfn_.BlockingCall(copy, [](Napi::Env env, Napi::Function fn, std::string* l) {
            fn.Call({Napi::String::New(env, *l)});
            delete l;
          }) != napi_ok)
        delete copy;
    } else if (!text.empty()) {
      for (size_t done = 0; done < line.size();) {
        ssize_t w = write(saved_[s], line.data() + done, line.size() - done);
        if (w <= 0) break;
        done += static_cast<size_t>(w);
      }
    }
    if (last) line.clear();
  }
  Napi::ThreadSafeFunction tsfn_;
  int saved_[2] = {-1, -1};
  int read_[2] = {-1, -1};
  std::thread reader_;
};

// trainAsync(index, x[, onLine]): with onLine, faiss's verbose training lines (k-means and OPQ
// iterations, its warnings) are passed to onLine(line) on the JS thread while it trains.
XL_FN(TrainAsync) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 2, "trainAsync");
    auto* h = holderOf(env, info[0], "trainAsync");
    auto x = floats(env, info[1], "trainAsync");
    size_t n = rowsOf(env, x, h->index->d, "trainAsync");
    if (!n) throwJs(env, "trainAsync: no training vectors");
    faiss::Index* idx = h->index;
    if (info.Length() < 3 || !info[2].IsFunction())
      return queue(env, h, [=] { trainIndex(idx, n, x.data); }, {info[1]}, [](Napi::Env e) { return e.Undefined(); });
    auto tsfn = std::make_shared<Napi::ThreadSafeFunction>(Napi::ThreadSafeFunction::New(env, info[2].As<Napi::Function>(), "xling faiss training", 0, 1));
    return queue(env, h, [=] {
      // a last call with "\0done" (after every captured line), then the function is released
      struct Release {
        std::shared_ptr<Napi::ThreadSafeFunction> f;
        ~Release() {
          f->BlockingCall([](Napi::Env env, Napi::Function fn) { fn.Call({Napi::String::New(env, std::string("\0done", 5))}); });
          f->Release();
        }
      } release{tsfn};
      std::lock_guard<std::mutex> lock(captureMutex);
      OutputCapture cap(*tsfn);
      bool captured = cap.start();
      setVerbose(idx, captured);
      try {
        trainIndex(idx, n, x.data);
      } catch (...) {
        setVerbose(idx, false);
        if (captured) cap.stop();
        throw;
      }
      setVerbose(idx, false);
      if (captured) cap.stop();
    }, {info[1]}, [](Napi::Env e) { return e.Undefined(); });
  });
}

XL_FN(AddAsync) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 2, "addAsync");
    auto* h = holderOf(env, info[0], "addAsync");
    auto x = floats(env, info[1], "addAsync");
    size_t n = rowsOf(env, x, h->index->d, "addAsync");
    if (!h->index->is_trained) throwJs(env, "addAsync: the index is not trained (call train() first)");
    faiss::Index* idx = h->index;
    std::vector<Napi::Value> keep{info[1]};
    const int64_t* idp = nullptr;
    if (info.Length() > 2 && !info[2].IsUndefined() && !info[2].IsNull()) { idp = ids(env, info[2], n, "addAsync"); keep.push_back(info[2]); }
    return queue(env, h, [=] {
      if (idp) idx->add_with_ids(static_cast<faiss::Index::idx_t>(n), x.data, idp);
      else idx->add(static_cast<faiss::Index::idx_t>(n), x.data);
    }, keep, [](Napi::Env e) { return e.Undefined(); });
  });
}

XL_FN(SearchAsync) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 3, "searchAsync");
    auto* h = holderOf(env, info[0], "searchAsync", true);
    auto q = floats(env, info[1], "searchAsync");
    size_t n = rowsOf(env, q, h->index->d, "searchAsync");
    int64_t k = kOf(env, info[2], "searchAsync");
    if (!h->index->is_trained) throwJs(env, "searchAsync: the index is not trained");
    auto D = Napi::Float32Array::New(env, n * k);
    auto I = Napi::BigInt64Array::New(env, n * k);
    float* dp = D.Data();
    int64_t* ip = I.Data();
    faiss::Index* idx = h->index;
    auto dRef = std::make_shared<Napi::Reference<Napi::Float32Array>>(Napi::Persistent(D));
    auto iRef = std::make_shared<Napi::Reference<Napi::BigInt64Array>>(Napi::Persistent(I));
    int nprobe = searchNprobe(env, info, 3, "searchAsync");
    return queue(env, h, [=] { if (n) searchWith(idx, static_cast<faiss::Index::idx_t>(n), q.data, k, dp, ip, nprobe); }, {info[1]},
                                 [=](Napi::Env e) {
                                   auto Dv = dRef->Value();
                                   auto Iv = iRef->Value();
                                   return Napi::Value(searchResult(e, n, k, Dv, Iv));
                                 });
  });
}

// knn(xq, xb, d, k, metric, async) -> exact k-NN of each query among xb (no index).
XL_FN(Knn) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 5, "knn");
    auto q = floats(env, info[0], "knn(queries)");
    auto b = floats(env, info[1], "knn(base)");
    int64_t d = toInt(env, info[2], "knn(d)");
    size_t nq = rowsOf(env, q, d, "knn(queries)"), nb = rowsOf(env, b, d, "knn(base)");
    int64_t k = kOf(env, info[3], "knn");
    auto metric = metricOf(env, info[4]);
    bool async = info.Length() > 5 && info[5].ToBoolean().Value();
    auto D = Napi::Float32Array::New(env, nq * k);
    auto I = Napi::BigInt64Array::New(env, nq * k);
    float* dp = D.Data();
    int64_t* ip = I.Data();
    auto work = [=] {
      if (!nq) return;
      if (!nb) { std::fill(dp, dp + nq * k, metric == faiss::METRIC_L2 ? INFINITY : -INFINITY); std::fill(ip, ip + nq * k, -1); return; }
      if (metric == faiss::METRIC_INNER_PRODUCT) faiss::knn_inner_product(q.data, b.data, d, nq, nb, k, dp, ip);
      else faiss::knn_L2sqr(q.data, b.data, d, nq, nb, k, dp, ip);
    };
    if (!async) {
      applyThreads();
      work();
      return searchResult(env, nq, k, D, I);
    }
    auto dRef = std::make_shared<Napi::Reference<Napi::Float32Array>>(Napi::Persistent(D));
    auto iRef = std::make_shared<Napi::Reference<Napi::BigInt64Array>>(Napi::Persistent(I));
    return queue(env, nullptr, work, {info[0], info[1]}, [=](Napi::Env e) {
      auto Dv = dRef->Value();
      auto Iv = iRef->Value();
      return Napi::Value(searchResult(e, nq, k, Dv, Iv));
    });
  });
}

// sgemm(transA, transB, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc) -> undefined: the Fortran
// BLAS product faiss's searches and trainings call (column-major, C updated in place), through the
// addon's route (sgemm.cc: oneDNN, or the BLAS it links). For tests and for callers of faiss's
// layout; every size is checked against the arrays first.
XL_FN(BlasSgemm) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 13, "sgemm");
    auto trans = [&](const Napi::Value& v, const char* what) {
      std::string t = v.IsString() ? v.As<Napi::String>().Utf8Value() : "";
      if (t != "N" && t != "T") throwJs(env, std::string("sgemm(") + what + "): expected 'N' or 'T'");
      return t[0];
    };
    char ta = trans(info[0], "transA"), tb = trans(info[1], "transB");
    int64_t m = toInt(env, info[2], "sgemm(m)"), n = toInt(env, info[3], "sgemm(n)"), k = toInt(env, info[4], "sgemm(k)");
    if (m < 0 || n < 0 || k < 0 || m > INT32_MAX || n > INT32_MAX || k > INT32_MAX) throwJs(env, "sgemm: m, n and k must be in [0, 2^31)");
    if (!info[5].IsNumber() || !info[10].IsNumber()) throwJs(env, "sgemm: alpha and beta must be numbers");
    float alpha = info[5].As<Napi::Number>().FloatValue(), beta = info[10].As<Napi::Number>().FloatValue();
    auto a = floats(env, info[6], "sgemm(A)");
    auto b = floats(env, info[8], "sgemm(B)");
    if (!info[11].IsTypedArray() || info[11].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array) throwJs(env, "sgemm(C): expected a Float32Array");
    auto c = info[11].As<Napi::Float32Array>();
    int64_t lda = toInt(env, info[7], "sgemm(lda)"), ldb = toInt(env, info[9], "sgemm(ldb)"), ldc = toInt(env, info[12], "sgemm(ldc)");
    // column-major: op(A) is m × k (A stored m × k, or k × m when transposed), op(B) k × n, C m × n
    int64_t aRows = ta == 'N' ? m : k, aCols = ta == 'N' ? k : m, bRows = tb == 'N' ? k : n, bCols = tb == 'N' ? n : k;
    auto check = [&](const char* what, int64_t rows, int64_t cols, int64_t ld, size_t length) {
      if (ld < std::max<int64_t>(1, rows) || ld > INT32_MAX) throwJs(env, std::string("sgemm(") + what + "): leading dimension " + std::to_string(ld) + " < " + std::to_string(std::max<int64_t>(1, rows)));
      if (rows > 0 && cols > 0 && static_cast<size_t>(ld * (cols - 1) + rows) > length)
        throwJs(env, std::string("sgemm(") + what + "): " + std::to_string(length) + " values, the layout needs " + std::to_string(ld * (cols - 1) + rows));
    };
    check("A", aRows, aCols, lda, a.length);
    check("B", bRows, bCols, ldb, b.length);
    check("C", m, n, ldc, c.ElementLength());
    int mi = int(m), ni = int(n), ki = int(k), ldai = int(lda), ldbi = int(ldb), ldci = int(ldc);
    if (m > 0 && n > 0) {
      applyThreads();
      sgemm_(&ta, &tb, &mi, &ni, &ki, &alpha, a.data, &ldai, b.data, &ldbi, &beta, c.Data(), &ldci);
    }
    return env.Undefined();
  });
}

}  // namespace

void initFaiss(Napi::Env env, Napi::Object exports) {
  auto f = Napi::Object::New(env);
#define REG(name, fn) f.Set(name, Napi::Function::New(env, fn, name))
  REG("indexFactory", IndexFactory);
  REG("readIndex", ReadIndex);
  REG("writeIndex", WriteIndex);
  REG("info", Info);
  REG("train", Train);
  REG("add", Add);
  REG("search", Search);
  REG("setParams", SetParams);
  REG("setTrainingParams", SetTrainingParams);
  REG("mergeFrom", MergeFrom);
  REG("ids", Ids);
  REG("reconstruct", Reconstruct);
  REG("reset", Reset);
  REG("removeIds", RemoveIds);
  REG("clone", Clone);
  REG("toFastScan", ToFastScan);
  REG("dispose", Dispose);
  REG("kmeans", Kmeans);
  REG("setThreads", SetThreads);
  REG("getThreads", GetThreads);
  REG("trainAsync", TrainAsync);
  REG("addAsync", AddAsync);
  REG("searchAsync", SearchAsync);
  REG("knn", Knn);
  REG("sgemm", BlasSgemm);
#undef REG
  exports.Set("faiss", f);
}

}  // namespace xling

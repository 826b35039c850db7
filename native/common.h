// Shared helpers for the xling addon: every native entry point runs inside XL_GUARD so that
// any C++ exception (c10::Error, faiss::FaissException, std::exception) becomes a JS Error
// carrying the native message, and the process never aborts on misuse.
#pragma once
#include <napi.h>

#include <exception>
#include <functional>
#include <string>

namespace xling {

// Message of an exception without libtorch's multi-line C++ backtrace.
std::string nativeMessage(const std::exception& e);

[[noreturn]] inline void throwJs(Napi::Env env, const std::string& msg) {
  throw Napi::Error::New(env, msg);
}

// Wraps a native callback body. Napi::Error passes through unchanged.
template <typename F>
auto guard(Napi::Env env, F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const Napi::Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Napi::Error::New(env, nativeMessage(e));
  } catch (...) {
    throw Napi::Error::New(env, "xling native: unknown C++ exception");
  }
}

// Runs `work` on a libuv worker thread and settles a promise with `result(env)` on the main thread.
// Every async entry point uses it: the closures own the inputs (tensors, handles) and are
// destroyed — `release` run — on the main thread as soon as the promise settles.
class PromiseWorker : public Napi::AsyncWorker {
 public:
  using Work = std::function<void()>;
  using Result = std::function<Napi::Value(Napi::Env)>;
  static Napi::Promise queue(Napi::Env env, Work work, Result result, std::function<void()> release = nullptr) {
    auto* w = new PromiseWorker(env, std::move(work), std::move(result), std::move(release));
    auto p = w->deferred_.Promise();
    w->Queue();
    return p;
  }
  void Execute() override {
    try {
      work_();
    } catch (const std::exception& e) {
      SetError(nativeMessage(e));
    } catch (...) {
      SetError("xling native: unknown C++ exception");
    }
  }
  void OnOK() override {
    Napi::Value v;
    try {
      v = result_(Env());
    } catch (const Napi::Error& e) {
      free();
      deferred_.Reject(e.Value());
      return;
    }
    free();
    deferred_.Resolve(v);
  }
  void OnError(const Napi::Error& e) override {
    free();
    deferred_.Reject(e.Value());
  }

 private:
  PromiseWorker(Napi::Env env, Work work, Result result, std::function<void()> release)
      : Napi::AsyncWorker(env), work_(std::move(work)), result_(std::move(result)), release_(std::move(release)), deferred_(Napi::Promise::Deferred::New(env)) {}
  void free() {
    if (release_) release_();
    work_ = nullptr;
    result_ = nullptr;
    release_ = nullptr;
  }
  Work work_;
  Result result_;
  std::function<void()> release_;
  Napi::Promise::Deferred deferred_;
};

#define XL_FN(name) Napi::Value name(const Napi::CallbackInfo& info)

inline void expectArgs(const Napi::CallbackInfo& info, size_t n, const char* fn) {
  if (info.Length() < n)
    throwJs(info.Env(), std::string(fn) + ": expected " + std::to_string(n) + " arguments, got " +
                            std::to_string(info.Length()));
}

inline int64_t toInt(Napi::Env env, const Napi::Value& v, const char* what) {
  if (v.IsNumber()) {
    double d = v.As<Napi::Number>().DoubleValue();
    if (d != static_cast<double>(static_cast<int64_t>(d)))
      throwJs(env, std::string(what) + ": expected an integer, got " + std::to_string(d));
    return static_cast<int64_t>(d);
  }
  if (v.IsBigInt()) {
    bool lossless = true;
    return v.As<Napi::BigInt>().Int64Value(&lossless);
  }
  throwJs(env, std::string(what) + ": expected an integer");
}

void initTorch(Napi::Env env, Napi::Object exports);
void installCpuAllocator();
Napi::Value EmptyCpuCache(const Napi::CallbackInfo& info);
Napi::Value CpuCacheStats(const Napi::CallbackInfo& info);
void initFaiss(Napi::Env env, Napi::Object exports);
void initFormat(Napi::Env env, Napi::Object exports);
void initHamming(Napi::Env env, Napi::Object exports);

}  // namespace xling

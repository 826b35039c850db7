// Shared helpers for the xling addon: every native entry point runs inside XL_GUARD so that
// any C++ exception (c10::Error, faiss::FaissException, std::exception) becomes a JS Error
// carrying the native message, and the process never aborts on misuse.
#pragma once
#include <napi.h>

#include <exception>
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

}  // namespace xling

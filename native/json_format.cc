// Float rows as JSON text: the shortest decimal that reads back as the same float32
// (std::to_chars, as serde_json writes f32 for TEI). A server's responses are mostly numbers, and
// formatting them in JavaScript (doubles widened from float32: 17 digits each) cost more event-loop
// time than the embedding itself. joinRowsAsync does the same on a libuv worker thread.
#include <charconv>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "common.h"

namespace xling {
namespace {

// One row as "[x,y,…]" appended to out (NaN/±inf as null, as JSON.stringify writes them).
void appendRow(std::string& out, const float* x, int64_t d) {
  char buf[32];
  out.push_back('[');
  for (int64_t j = 0; j < d; j++) {
    if (j) out.push_back(',');
    const float v = x[j];
    if (!std::isfinite(v)) { out.append("null"); continue; }
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, r.ptr);
  }
  out.push_back(']');
}

const float* rowsArg(const Napi::CallbackInfo& info, const char* name, int64_t& d, size_t& n) {
  auto env = info.Env();
  if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array) throwJs(env, std::string(name) + ": expected a Float32Array");
  auto a = info[0].As<Napi::Float32Array>();
  d = toInt(env, info[1], (std::string(name) + ": d").c_str());
  if (d <= 0 || a.ElementLength() % static_cast<size_t>(d) != 0) throwJs(env, std::string(name) + ": the array is not whole rows of d values");
  n = a.ElementLength() / static_cast<size_t>(d);
  return a.Data();
}

// joinRows(Float32Array, d, parts: string[n + 1]) -> Buffer of UTF-8 text
// parts[0] row_0 parts[1] row_1 … row_{n-1} parts[n]: a whole response body in one pass, without
// JavaScript strings for the numbers (a server sends it as it is).
XL_FN(JoinRows) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 3, "joinRows");
    int64_t d;
    size_t n;
    const float* x = rowsArg(info, "joinRows", d, n);
    if (!info[2].IsArray() || info[2].As<Napi::Array>().Length() != n + 1) throwJs(env, "joinRows: parts must be an array of rows + 1 strings");
    auto parts = info[2].As<Napi::Array>();
    std::vector<std::string> glue(n + 1);
    size_t bytes = 0;
    for (size_t i = 0; i <= n; i++) {
      Napi::Value p = parts.Get(static_cast<uint32_t>(i));
      if (!p.IsString()) throwJs(env, "joinRows: parts[" + std::to_string(i) + "] is not a string");
      glue[i] = p.As<Napi::String>().Utf8Value();
      bytes += glue[i].size();
    }
    std::string s;
    s.reserve(bytes + n * static_cast<size_t>(d) * 11 + 2 * n);  // ~10 characters a number
    s.append(glue[0]);
    for (size_t i = 0; i < n; i++) {
      appendRow(s, x + i * d, d);
      s.append(glue[i + 1]);
    }
    return Napi::Buffer<char>::Copy(env, s.data(), s.size());
  });
}

// joinRowsAsync(Float32Array, d, parts) -> Promise<Buffer>: joinRows formatted on a libuv worker
// thread (a server's event loop stays free while a response's numbers are written). The rows'
// array is held by a reference until the promise settles; the text becomes the Buffer's memory
// (no copy back).
XL_FN(JoinRowsAsync) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 3, "joinRowsAsync");
    int64_t d;
    size_t n;
    const float* x = rowsArg(info, "joinRowsAsync", d, n);
    if (!info[2].IsArray() || info[2].As<Napi::Array>().Length() != n + 1) throwJs(env, "joinRowsAsync: parts must be an array of rows + 1 strings");
    auto parts = info[2].As<Napi::Array>();
    auto glue = std::make_shared<std::vector<std::string>>(n + 1);
    size_t bytes = 0;
    for (size_t i = 0; i <= n; i++) {
      Napi::Value p = parts.Get(static_cast<uint32_t>(i));
      if (!p.IsString()) throwJs(env, "joinRowsAsync: parts[" + std::to_string(i) + "] is not a string");
      (*glue)[i] = p.As<Napi::String>().Utf8Value();
      bytes += (*glue)[i].size();
    }
    auto* rowsRef = new Napi::ObjectReference(Napi::Persistent(info[0].As<Napi::Object>()));
    auto out = std::make_shared<std::string*>(nullptr);
    return PromiseWorker::queue(
        env,
        [x, d, n, glue, bytes, out] {
          auto* s = new std::string();
          *out = s;
          s->reserve(bytes + n * static_cast<size_t>(d) * 11 + 2 * n);
          s->append((*glue)[0]);
          for (size_t i = 0; i < n; i++) {
            appendRow(*s, x + i * d, d);
            s->append((*glue)[i + 1]);
          }
        },
        [out](Napi::Env env) -> Napi::Value {
          std::string* s = *out;
          auto b = Napi::Buffer<char>::New(env, s->data(), s->size(), [](Napi::Env, char*, std::string* owned) { delete owned; }, s);
          *out = nullptr;  // the Buffer owns it now
          return b;
        },
        [rowsRef, out] {
          delete rowsRef;
          delete *out;  // still set only when the promise was rejected
          *out = nullptr;
        });
  });
}

}  // namespace

void initFormat(Napi::Env env, Napi::Object exports) {
  auto f = Napi::Object::New(env);
  f.Set("joinRows", Napi::Function::New(env, JoinRows, "joinRows"));
  f.Set("joinRowsAsync", Napi::Function::New(env, JoinRowsAsync, "joinRowsAsync"));
  exports.Set("format", f);
}

}  // namespace xling

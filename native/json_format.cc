// Float rows as JSON text: the shortest decimal that reads back as the same float32
// (std::to_chars, as serde_json writes f32 for TEI). A server's responses are mostly numbers, and
// formatting them in JavaScript (doubles widened from float32: 17 digits each) cost more event-loop
// time than the embedding itself.
#include <charconv>
#include <cmath>
#include <string>

#include "common.h"

namespace xling {
namespace {

// formatRows(Float32Array, d) -> string[]: one "[x,y,…]" per row of d values; NaN/±inf as null (as JSON.stringify)
XL_FN(FormatRows) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 2, "formatRows");
    if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array) throwJs(env, "formatRows: expected a Float32Array");
    auto a = info[0].As<Napi::Float32Array>();
    const int64_t d = toInt(env, info[1], "formatRows: d");
    if (d <= 0 || a.ElementLength() % static_cast<size_t>(d) != 0) throwJs(env, "formatRows: the array is not whole rows of d values");
    const size_t n = a.ElementLength() / static_cast<size_t>(d);
    const float* x = a.Data();
    auto out = Napi::Array::New(env, n);
    std::string s;
    char buf[32];
    for (size_t i = 0; i < n; i++) {
      s.clear();
      s.push_back('[');
      for (int64_t j = 0; j < d; j++) {
        if (j) s.push_back(',');
        const float v = x[i * d + j];
        if (!std::isfinite(v)) { s.append("null"); continue; }
        auto r = std::to_chars(buf, buf + sizeof buf, v);
        s.append(buf, r.ptr);
      }
      s.push_back(']');
      out.Set(static_cast<uint32_t>(i), Napi::String::New(env, s));
    }
    return out;
  });
}

}  // namespace

void initFormat(Napi::Env env, Napi::Object exports) {
  auto f = Napi::Object::New(env);
  f.Set("formatRows", Napi::Function::New(env, FormatRows, "formatRows"));
  exports.Set("format", f);
}

}  // namespace xling

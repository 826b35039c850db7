// libtorch binding. Design (like tch-rs, but generic): JS resolves an ATen operator once by
// name + overload to an integer id, then calls it with plain JS values; arguments are converted
// by the operator's schema and run through the c10 Dispatcher (so autograd, type promotion and
// all of ATen's checks apply). Only what the dispatcher cannot express lives here: tensor
// creation/export, autograd entry points, grad mode, seeds, threads.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/generated/variable_factories.h>
#include <torch/version.h>


#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <atomic>
#include <limits>
#include <memory>
#include <cstring>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "common.h"
#include "bag.h"
#include "gather_dot.h"
#include "row_linear.h"
#include "lstm.h"
#include "transformer.h"
#include "sgemm.h"

namespace xling {
namespace {

// Distinguishes our tensor handles from any other JS external (faiss indexes, user values).
const napi_type_tag kTensorTag = {0x786c696e67746e73ULL, 0x7465727465727465ULL};

struct Holder {
  at::Tensor t;
  int64_t reported = 0;  // bytes reported to V8 via AdjustExternalMemory
};

std::atomic<int64_t> liveHandles{0};
std::atomic<int64_t> liveBytes{0};

std::atomic<uint64_t> maskCounter{0x9e3779b97f4a7c15ULL};

inline uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }


int64_t storageBytes(const at::Tensor& t) {
  if (!t.defined() || !t.has_storage()) return 0;
  // Report each tensor's own element bytes: views over-report, which only makes GC eager.
  return static_cast<int64_t>(t.numel()) * static_cast<int64_t>(t.element_size());
}

void releaseHolder(Napi::Env env, Holder* h) {
  if (h->reported) {
    Napi::MemoryManagement::AdjustExternalMemory(env, -h->reported);
    liveBytes -= h->reported;
    h->reported = 0;
  }
  if (h->t.defined()) {
    h->t = at::Tensor();
    liveHandles--;
  }
}

Napi::Value wrap(Napi::Env env, at::Tensor t) {
  auto* h = new Holder{std::move(t), 0};
  if (h->t.defined()) {
    liveHandles++;
    h->reported = storageBytes(h->t);
    if (h->reported) {
      Napi::MemoryManagement::AdjustExternalMemory(env, h->reported);
      liveBytes += h->reported;
    }
  }
  auto ext = Napi::External<Holder>::New(env, h, [](Napi::Env env, Holder* p) {
    releaseHolder(env, p);
    delete p;
  });
  ext.TypeTag(&kTensorTag);
  return ext;
}

Holder* holderOf(Napi::Env env, const Napi::Value& v, const std::string& what) {
  if (!v.IsExternal() || !v.As<Napi::External<Holder>>().CheckTypeTag(&kTensorTag))
    throwJs(env, what + ": expected a Tensor");
  return v.As<Napi::External<Holder>>().Data();
}

const at::Tensor& tensorOf(Napi::Env env, const Napi::Value& v, const std::string& what) {
  Holder* h = holderOf(env, v, what);
  if (!h->t.defined()) throwJs(env, what + ": tensor was disposed");
  return h->t;
}

// ---------------------------------------------------------------------------------------------
// Operators by schema.

std::mutex opsMutex;
std::deque<c10::OperatorHandle> ops;  // deque: stable references while growing
std::unordered_map<std::string, int32_t> opIds;

const c10::OperatorHandle& opById(Napi::Env env, const Napi::Value& v) {
  int64_t id = toInt(env, v, "op id");
  std::lock_guard<std::mutex> lock(opsMutex);
  if (id < 0 || id >= static_cast<int64_t>(ops.size())) throwJs(env, "unknown op id " + std::to_string(id));
  return ops[id];
}

std::string argLabel(const c10::OperatorHandle& op, const c10::Argument& a) {
  return op.schema().name() + (op.schema().overload_name().empty() ? "" : "." + op.schema().overload_name()) +
         ": argument '" + a.name() + "'";
}

double toDouble(Napi::Env env, const Napi::Value& v, const std::string& what) {
  if (v.IsNumber()) return v.As<Napi::Number>().DoubleValue();
  if (v.IsBoolean()) return v.As<Napi::Boolean>().Value() ? 1.0 : 0.0;
  throwJs(env, what + ": expected a number");
}

c10::IValue toIValue(Napi::Env env, const Napi::Value& v, const c10::TypePtr& type, const std::string& what);

c10::IValue listToIValue(Napi::Env env, const Napi::Value& v, const c10::ListTypePtr& lt, const std::string& what) {
  const auto& elem = lt->getElementType();
  auto kind = elem->kind();
  // int[1] style arguments accept a bare number.
  if (!v.IsArray()) {
    if ((kind == c10::TypeKind::IntType || kind == c10::TypeKind::SymIntType) && v.IsNumber())
      return c10::IValue(std::vector<int64_t>{toInt(env, v, what.c_str())});
    throwJs(env, what + ": expected an array");
  }
  auto arr = v.As<Napi::Array>();
  uint32_t n = arr.Length();
  switch (kind) {
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType: {
      std::vector<int64_t> out(n);
      for (uint32_t i = 0; i < n; i++) out[i] = toInt(env, arr.Get(i), what.c_str());
      return c10::IValue(out);
    }
    case c10::TypeKind::FloatType: {
      std::vector<double> out(n);
      for (uint32_t i = 0; i < n; i++) out[i] = toDouble(env, arr.Get(i), what);
      return c10::IValue(out);
    }
    case c10::TypeKind::BoolType: {
      c10::List<bool> out;
      for (uint32_t i = 0; i < n; i++) {
        auto e = arr.Get(i);
        if (!e.IsBoolean()) throwJs(env, what + ": expected booleans");
        out.push_back(e.As<Napi::Boolean>().Value());
      }
      return c10::IValue(out);
    }
    case c10::TypeKind::TensorType: {
      c10::List<at::Tensor> out;
      out.reserve(n);
      for (uint32_t i = 0; i < n; i++) out.push_back(tensorOf(env, arr.Get(i), what + "[" + std::to_string(i) + "]"));
      return c10::IValue(out);
    }
    case c10::TypeKind::OptionalType: {
      auto inner = elem->castRaw<c10::OptionalType>()->getElementType();
      if (inner->kind() == c10::TypeKind::TensorType) {
        c10::List<c10::optional<at::Tensor>> out;
        for (uint32_t i = 0; i < n; i++) {
          auto e = arr.Get(i);
          if (e.IsNull() || e.IsUndefined()) out.push_back(c10::nullopt);
          else out.push_back(tensorOf(env, e, what + "[" + std::to_string(i) + "]"));
        }
        return c10::IValue(out);
      }
      break;
    }
    default:
      break;
  }
  throwJs(env, what + ": unsupported list type " + lt->str());
}

c10::IValue toIValue(Napi::Env env, const Napi::Value& v, const c10::TypePtr& type, const std::string& what) {
  switch (type->kind()) {
    case c10::TypeKind::TensorType:
      return c10::IValue(tensorOf(env, v, what));
    case c10::TypeKind::OptionalType:
      if (v.IsNull() || v.IsUndefined()) return c10::IValue();
      return toIValue(env, v, type->castRaw<c10::OptionalType>()->getElementType(), what);
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType:
      return c10::IValue(toInt(env, v, what.c_str()));
    case c10::TypeKind::FloatType:
      return c10::IValue(toDouble(env, v, what));
    case c10::TypeKind::BoolType:
      if (!v.IsBoolean()) throwJs(env, what + ": expected a boolean");
      return c10::IValue(v.As<Napi::Boolean>().Value());
    case c10::TypeKind::NumberType:  // Scalar
      if (v.IsBoolean()) return c10::IValue(c10::Scalar(v.As<Napi::Boolean>().Value()));
      if (v.IsNumber()) {
        double d = v.As<Napi::Number>().DoubleValue();
        if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15)
          return c10::IValue(c10::Scalar(static_cast<int64_t>(d)));
        return c10::IValue(c10::Scalar(d));
      }
      throwJs(env, what + ": expected a number");
    case c10::TypeKind::StringType:
      if (!v.IsString()) throwJs(env, what + ": expected a string");
      return c10::IValue(v.As<Napi::String>().Utf8Value());
    case c10::TypeKind::DeviceObjType:
      if (!v.IsString()) throwJs(env, what + ": expected a device string such as 'cpu' or 'cuda:0'");
      return c10::IValue(c10::Device(v.As<Napi::String>().Utf8Value()));
    case c10::TypeKind::ListType:
      return listToIValue(env, v, type->cast<c10::ListType>(), what);
    default:
      throwJs(env, what + ": unsupported argument type " + type->str());
  }
}

Napi::Value fromIValue(Napi::Env env, const c10::IValue& v) {
  if (v.isTensor()) return wrap(env, v.toTensor());
  if (v.isNone()) return env.Null();
  if (v.isInt()) return Napi::Number::New(env, static_cast<double>(v.toInt()));
  if (v.isDouble()) return Napi::Number::New(env, v.toDouble());
  if (v.isBool()) return Napi::Boolean::New(env, v.toBool());
  if (v.isScalar()) return Napi::Number::New(env, v.toScalar().toDouble());
  if (v.isTensorList()) {
    auto list = v.toTensorList();
    auto arr = Napi::Array::New(env, list.size());
    for (size_t i = 0; i < list.size(); i++) arr.Set(i, wrap(env, list.get(i)));
    return arr;
  }
  if (v.isTuple()) {
    const auto& elems = v.toTupleRef().elements();
    auto arr = Napi::Array::New(env, elems.size());
    for (size_t i = 0; i < elems.size(); i++) arr.Set(i, fromIValue(env, elems[i]));
    return arr;
  }
  if (v.isIntList()) {
    auto list = v.toIntVector();
    auto arr = Napi::Array::New(env, list.size());
    for (size_t i = 0; i < list.size(); i++) arr.Set(i, Napi::Number::New(env, static_cast<double>(list[i])));
    return arr;
  }
  if (v.isString()) return Napi::String::New(env, v.toStringRef());
  throwJs(env, "unsupported return type " + v.tagKind());
}

// Builds the dispatcher stack from JS arguments, filling defaults from the schema.
std::vector<c10::IValue> buildStack(Napi::Env env, const c10::OperatorHandle& op, const Napi::Value& argsV) {
  if (!argsV.IsArray()) throwJs(env, op.schema().name() + ": arguments must be an array");
  auto args = argsV.As<Napi::Array>();
  const auto& schema = op.schema();
  const auto& formals = schema.arguments();
  if (args.Length() > formals.size())
    throwJs(env, schema.name() + ": too many arguments (" + std::to_string(args.Length()) + " > " +
                     std::to_string(formals.size()) + ")");
  std::vector<c10::IValue> stack;
  stack.reserve(formals.size());
  for (size_t i = 0; i < formals.size(); i++) {
    const auto& a = formals[i];
    Napi::Value v = i < args.Length() ? args.Get(static_cast<uint32_t>(i)) : env.Undefined();
    if (v.IsUndefined()) {
      if (a.default_value()) {
        stack.push_back(*a.default_value());
        continue;
      }
      if (a.type()->kind() != c10::TypeKind::OptionalType) throwJs(env, argLabel(op, a) + " is required");
    }
    stack.push_back(toIValue(env, v, a.type(), argLabel(op, a)));
  }
  return stack;
}

Napi::Value stackToJs(Napi::Env env, const std::vector<c10::IValue>& stack) {
  if (stack.empty()) return env.Undefined();
  if (stack.size() == 1) return fromIValue(env, stack[0]);
  auto arr = Napi::Array::New(env, stack.size());
  for (size_t i = 0; i < stack.size(); i++) arr.Set(i, fromIValue(env, stack[i]));
  return arr;
}

// op(name, overload) -> id
XL_FN(OpLookup) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 2, "op");
    if (!info[0].IsString() || !info[1].IsString()) throwJs(env, "op: name and overload must be strings");
    std::string name = info[0].As<Napi::String>().Utf8Value();
    std::string overload = info[1].As<Napi::String>().Utf8Value();
    std::string key = name + "." + overload;
    std::lock_guard<std::mutex> lock(opsMutex);
    auto it = opIds.find(key);
    if (it != opIds.end()) return Napi::Number::New(env, it->second);
    auto handle = c10::Dispatcher::singleton().findSchema({name, overload});
    if (!handle) throwJs(env, "no ATen operator " + name + (overload.empty() ? "" : "." + overload));
    ops.push_back(*handle);
    int32_t id = static_cast<int32_t>(ops.size() - 1);
    opIds[key] = id;
    return Napi::Number::New(env, id);
  });
}

XL_FN(OpSchema) {
  return guard(info.Env(), [&]() -> Napi::Value {
    expectArgs(info, 1, "opSchema");
    std::stringstream ss;
    ss << opById(info.Env(), info[0]).schema();
    return Napi::String::New(info.Env(), ss.str());
  });
}

// call(id, args[], discard?) -> result (Tensor | Tensor[] | number | boolean | null)
XL_FN(Call) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 2, "call");
    const auto& op = opById(env, info[0]);
    auto stack = buildStack(env, op, info[1]);
    op.callBoxed(&stack);
    if (info.Length() > 2 && info[2].ToBoolean().Value()) return env.Undefined();
    return stackToJs(env, stack);
  });
}

// Queues `work` on a libuv worker thread in no-grad mode: inference off the event loop (servers).
Napi::Promise queueInference(Napi::Env env, std::function<void()> work, PromiseWorker::Result result) {
  return PromiseWorker::queue(env, [work = std::move(work)] {
    // once per worker thread: at::init_num_threads() costs ~7 ms a call, which made every async
    // inference call (and the server) 50× slower than the work itself
    thread_local bool threadsReady = false;
    if (!threadsReady) { at::init_num_threads(); threadsReady = true; }
    at::NoGradGuard noGrad;
    work();
  }, std::move(result));
}

// The same for a job that returns one tensor.
Napi::Promise queueTensor(Napi::Env env, std::function<at::Tensor()> job) {
  auto out = std::make_shared<at::Tensor>();
  return queueInference(env, [job = std::move(job), out] { *out = job(); }, [out](Napi::Env e) { return wrap(e, std::move(*out)); });
}

XL_FN(CallAsync) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 2, "callAsync");
    const auto& op = opById(env, info[0]);
    auto stack = std::make_shared<std::vector<c10::IValue>>(buildStack(env, op, info[1]));
    return queueInference(env, [op, stack] { op.callBoxed(stack.get()); }, [stack](Napi::Env e) { return stackToJs(e, *stack); });
  });
}

// ---------------------------------------------------------------------------------------------
// Creation and export.

std::vector<int64_t> shapeOf(Napi::Env env, const Napi::Value& v) {
  if (!v.IsArray()) throwJs(env, "shape: expected an array of integers");
  auto arr = v.As<Napi::Array>();
  std::vector<int64_t> shape(arr.Length());
  for (uint32_t i = 0; i < arr.Length(); i++) {
    shape[i] = toInt(env, arr.Get(i), "shape");
    if (shape[i] < 0) throwJs(env, "shape: negative dimension " + std::to_string(shape[i]));
  }
  return shape;
}

at::ScalarType dtypeOf(Napi::Env env, const Napi::Value& v) {
  int64_t code = toInt(env, v, "dtype");
  switch (static_cast<at::ScalarType>(code)) {
    case at::kFloat: case at::kDouble: case at::kHalf: case at::kBFloat16:
    case at::kLong: case at::kInt: case at::kShort: case at::kByte: case at::kChar: case at::kBool:
      return static_cast<at::ScalarType>(code);
    default:
      throwJs(env, "unsupported dtype code " + std::to_string(code));
  }
}

// fromBuffer(typedArrayOrBuffer, shape, dtype) -> Tensor (copies the bytes)
XL_FN(FromBuffer) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 3, "fromBuffer");
    const uint8_t* data = nullptr;
    size_t bytes = 0;
    if (info[0].IsTypedArray()) {
      auto ta = info[0].As<Napi::TypedArray>();
      data = static_cast<const uint8_t*>(ta.ArrayBuffer().Data()) + ta.ByteOffset();
      bytes = ta.ByteLength();
    } else if (info[0].IsBuffer()) {
      auto b = info[0].As<Napi::Buffer<uint8_t>>();
      data = b.Data();
      bytes = b.Length();
    } else if (info[0].IsArrayBuffer()) {
      auto b = info[0].As<Napi::ArrayBuffer>();
      data = static_cast<const uint8_t*>(b.Data());
      bytes = b.ByteLength();
    } else {
      throwJs(env, "fromBuffer: expected a typed array or buffer");
    }
    auto shape = shapeOf(env, info[1]);
    auto dtype = dtypeOf(env, info[2]);
    auto t = at::empty(shape, at::TensorOptions().dtype(dtype));
    size_t need = static_cast<size_t>(t.numel()) * t.element_size();
    if (need != bytes)
      throwJs(env, "fromBuffer: data has " + std::to_string(bytes) + " bytes but shape needs " + std::to_string(need));
    if (need) std::memcpy(t.data_ptr(), data, need);
    return wrap(env, t);
  });
}

// toBuffer(t) -> ArrayBuffer with the tensor's elements in row-major order (copied to CPU).
XL_FN(ToBuffer) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 1, "toBuffer");
    auto t = tensorOf(env, info[0], "toBuffer").detach().to(at::kCPU).contiguous();
    size_t bytes = static_cast<size_t>(t.numel()) * t.element_size();
    auto buf = Napi::ArrayBuffer::New(env, bytes);
    if (bytes) std::memcpy(buf.Data(), t.data_ptr(), bytes);
    return buf;
  });
}

// copyInto(t, typedArray): writes the tensor's elements into an existing typed array.
XL_FN(CopyInto) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 2, "copyInto");
    auto t = tensorOf(env, info[0], "copyInto").detach().to(at::kCPU).contiguous();
    if (!info[1].IsTypedArray()) throwJs(env, "copyInto: expected a typed array");
    auto ta = info[1].As<Napi::TypedArray>();
    size_t bytes = static_cast<size_t>(t.numel()) * t.element_size();
    if (ta.ByteLength() != bytes)
      throwJs(env, "copyInto: target has " + std::to_string(ta.ByteLength()) + " bytes, tensor has " + std::to_string(bytes));
    if (bytes) std::memcpy(static_cast<uint8_t*>(ta.ArrayBuffer().Data()) + ta.ByteOffset(), t.data_ptr(), bytes);
    return env.Undefined();
  });
}

// meta(t) -> [dtypeCode, device, requiresGrad, isLeaf, ...shape]
XL_FN(Meta) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 1, "meta");
    const auto& t = tensorOf(env, info[0], "meta");
    auto arr = Napi::Array::New(env, 4 + t.dim());
    arr.Set(0u, Napi::Number::New(env, static_cast<int>(t.scalar_type())));
    arr.Set(1u, Napi::String::New(env, t.device().str()));
    arr.Set(2u, Napi::Boolean::New(env, t.requires_grad()));
    arr.Set(3u, Napi::Boolean::New(env, t.is_leaf()));
    for (int64_t i = 0; i < t.dim(); i++) arr.Set(static_cast<uint32_t>(4 + i), Napi::Number::New(env, static_cast<double>(t.size(i))));
    return arr;
  });
}

XL_FN(Shape) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 1, "shape");
    const auto& t = tensorOf(env, info[0], "shape");
    auto arr = Napi::Array::New(env, t.dim());
    for (int64_t i = 0; i < t.dim(); i++) arr.Set(static_cast<uint32_t>(i), Napi::Number::New(env, static_cast<double>(t.size(i))));
    return arr;
  });
}

XL_FN(Item) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 1, "item");
    const auto& t = tensorOf(env, info[0], "item");
    if (t.numel() != 1) throwJs(env, "item: tensor has " + std::to_string(t.numel()) + " elements, expected 1");
    auto s = t.item();
    if (s.isBoolean()) return Napi::Boolean::New(env, s.toBool());
    return Napi::Number::New(env, s.toDouble());
  });
}

XL_FN(Dispose) {
  return guard(info.Env(), [&]() -> Napi::Value {
    expectArgs(info, 1, "dispose");
    releaseHolder(info.Env(), holderOf(info.Env(), info[0], "dispose"));
    return info.Env().Undefined();
  });
}

XL_FN(IsDisposed) {
  return guard(info.Env(), [&]() -> Napi::Value {
    expectArgs(info, 1, "isDisposed");
    return Napi::Boolean::New(info.Env(), !holderOf(info.Env(), info[0], "isDisposed")->t.defined());
  });
}

// ---------------------------------------------------------------------------------------------
// Autograd.

XL_FN(SetRequiresGrad) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 2, "setRequiresGrad");
    auto t = tensorOf(env, info[0], "setRequiresGrad");
    t.set_requires_grad(info[1].ToBoolean().Value());
    return env.Undefined();
  });
}

XL_FN(Grad) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 1, "grad");
    const auto& g = tensorOf(env, info[0], "grad").grad();
    if (!g.defined()) return env.Null();
    return wrap(env, g);
  });
}

// setGrad(t, g | null): replaces (or clears) the accumulated gradient.
XL_FN(SetGrad) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 2, "setGrad");
    auto t = tensorOf(env, info[0], "setGrad");
    if (info[1].IsNull() || info[1].IsUndefined()) t.mutable_grad().reset();
    else t.mutable_grad() = tensorOf(env, info[1], "setGrad(grad)");
    return env.Undefined();
  });
}

// backward(t, grad | null, retainGraph)
XL_FN(Backward) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 1, "backward");
    const auto& t = tensorOf(env, info[0], "backward");
    at::Tensor g;
    if (info.Length() > 1 && !info[1].IsNull() && !info[1].IsUndefined()) g = tensorOf(env, info[1], "backward(grad)");
    bool retain = info.Length() > 2 && info[2].ToBoolean().Value();
    if (!t.requires_grad()) throwJs(env, "backward: tensor does not require grad (was it computed in a no-grad scope?)");
    if (!g.defined() && t.numel() != 1) throwJs(env, "backward: a gradient is needed for a non-scalar output");
    t.backward(g, retain);
    return env.Undefined();
  });
}

// setGradEnabled(bool) -> previous
XL_FN(SetGradEnabled) {
  return guard(info.Env(), [&]() -> Napi::Value {
    expectArgs(info, 1, "setGradEnabled");
    bool prev = at::GradMode::is_enabled();
    at::GradMode::set_enabled(info[0].ToBoolean().Value());
    return Napi::Boolean::New(info.Env(), prev);
  });
}

XL_FN(IsGradEnabled) { return Napi::Boolean::New(info.Env(), at::GradMode::is_enabled()); }

// ---------------------------------------------------------------------------------------------
// Runtime.

XL_FN(ManualSeed) {
  return guard(info.Env(), [&]() -> Napi::Value {
    expectArgs(info, 1, "manualSeed");
    int64_t seed = toInt(info.Env(), info[0], "manualSeed");
    at::manual_seed(static_cast<uint64_t>(seed));
    uint64_t sm = static_cast<uint64_t>(seed);
    maskCounter = splitmix64(sm);
    return info.Env().Undefined();
  });
}

XL_FN(SetNumThreads) {
  return guard(info.Env(), [&]() -> Napi::Value {
    expectArgs(info, 1, "setNumThreads");
    int64_t n = toInt(info.Env(), info[0], "setNumThreads");
    if (n < 1) throwJs(info.Env(), "setNumThreads: need at least 1 thread");
    at::set_num_threads(static_cast<int>(n));
    return info.Env().Undefined();
  });
}

// ---------------------------------------------------------------------------------------------
// Dropout masks. libtorch 1.13's CPU bernoulli_ draws one number at a time from a locked
// mt19937 (the costliest op of a Transformer training step here); this fills the inverted-dropout
// mask (0 or 1/(1-p)) in parallel with a counter-seeded xoshiro256+ per 64K-element block, so the
// result depends only on the seed, not on the thread count.

// dropoutMask(shape, p, dtypeCode) -> tensor of 0 or 1/(1-p)
XL_FN(DropoutMask) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 3, "dropoutMask");
    auto shape = shapeOf(env, info[0]);
    double p = info[1].IsNumber() ? info[1].As<Napi::Number>().DoubleValue() : -1;
    if (!(p >= 0 && p < 1)) throwJs(env, "dropoutMask: p must be in [0, 1)");
    auto dtype = dtypeOf(env, info[2]);
    if (dtype != at::kFloat && dtype != at::kDouble) throwJs(env, "dropoutMask: dtype must be float32 or float64");
    auto out = at::empty(shape, at::TensorOptions().dtype(at::kFloat));
    const int64_t n = out.numel();
    float* data = out.data_ptr<float>();
    const float scale = static_cast<float>(1.0 / (1.0 - p));
    // keep when the top 32 bits of a draw are >= threshold
    const uint64_t threshold = static_cast<uint64_t>(p * 4294967296.0);
    const uint64_t seed = maskCounter.fetch_add(0x632be59bd9b4e019ULL);
    constexpr int64_t kBlock = 1 << 16;
    const int64_t blocks = (n + kBlock - 1) / kBlock;
    at::parallel_for(0, blocks, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; b++) {
        uint64_t sm = seed ^ (static_cast<uint64_t>(b) * 0xd1342543de82ef95ULL);
        uint64_t s0 = splitmix64(sm), s1 = splitmix64(sm), s2 = splitmix64(sm), s3 = splitmix64(sm);
        const int64_t end = std::min(n, (b + 1) * kBlock);
        for (int64_t i = b * kBlock; i < end; i += 2) {
          const uint64_t r = s0 + s3;
          const uint64_t t = s1 << 17;
          s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= t; s3 = rotl(s3, 45);
          data[i] = (r >> 32) >= threshold ? scale : 0.f;
          if (i + 1 < end) data[i + 1] = (r & 0xffffffffULL) >= threshold ? scale : 0.f;
        }
      }
    });
    if (dtype == at::kDouble) out = out.to(at::kDouble);
    return wrap(env, out);
  });
}

XL_FN(GetNumThreads) { return Napi::Number::New(info.Env(), at::get_num_threads()); }
XL_FN(HasCuda) { return Napi::Boolean::New(info.Env(), at::hasCUDA()); }

XL_FN(MemoryStats) {
  auto env = info.Env();
  auto o = Napi::Object::New(env);
  o.Set("handles", Napi::Number::New(env, static_cast<double>(liveHandles.load())));
  o.Set("bytes", Napi::Number::New(env, static_cast<double>(liveBytes.load())));
  return o;
}


struct TableArgs {
  at::Tensor ids;
  std::vector<int64_t> lengths;
  std::vector<at::Tensor> tables, whh;
  int pooling;
};

TableArgs tableArgs(const Napi::CallbackInfo& info, const char* name) {
  auto env = info.Env();
  expectArgs(info, 5, name);
  TableArgs a;
  a.ids = tensorOf(env, info[0], std::string(name) + "(ids)");
  if (!info[1].IsArray() || !info[2].IsArray() || !info[3].IsArray()) throwJs(env, std::string(name) + ": lengths, tables and w_hh must be arrays");
  auto L = info[1].As<Napi::Array>(), Tb = info[2].As<Napi::Array>(), W = info[3].As<Napi::Array>();
  for (uint32_t i = 0; i < L.Length(); i++) a.lengths.push_back(toInt(env, L.Get(i), "lengths"));
  for (uint32_t i = 0; i < Tb.Length(); i++) a.tables.push_back(tensorOf(env, Tb.Get(i), std::string(name) + "(tables)"));
  for (uint32_t i = 0; i < W.Length(); i++) a.whh.push_back(tensorOf(env, W.Get(i), std::string(name) + "(w_hh)"));
  auto pool = info[4].ToString().Utf8Value();
  if (pool != "max" && pool != "last") throwJs(env, std::string(name) + ": pooling must be 'max' or 'last'");
  a.pooling = pool == "max" ? 0 : 1;
  return a;
}

XL_FN(LstmTableEncode) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto a = tableArgs(info, "lstmTableEncode");
    return wrap(info.Env(), lstmTableEncode(a.ids, a.lengths, a.tables, a.whh, a.pooling));
  });
}

XL_FN(LstmTableEncodeAsync) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto a = std::make_shared<TableArgs>(tableArgs(info, "lstmTableEncodeAsync"));
    return queueTensor(info.Env(), [a] { return lstmTableEncode(a->ids, a->lengths, a->tables, a->whh, a->pooling); });
  });
}

struct StackArgs {
  at::Tensor ids, emb;
  std::vector<int64_t> lengths;
  std::vector<at::Tensor> weights;
  int64_t layers;
  bool bidirectional;
  int pooling;
};

// (ids, lengths, emb, weights, layers, bidirectional, pooling 'max' | 'last')
StackArgs stackArgs(const Napi::CallbackInfo& info, const char* name) {
  auto env = info.Env();
  expectArgs(info, 7, name);
  StackArgs a;
  a.ids = tensorOf(env, info[0], std::string(name) + "(ids)");
  if (!info[1].IsArray() || !info[3].IsArray()) throwJs(env, std::string(name) + ": lengths and weights must be arrays");
  auto L = info[1].As<Napi::Array>(), W = info[3].As<Napi::Array>();
  for (uint32_t i = 0; i < L.Length(); i++) a.lengths.push_back(toInt(env, L.Get(i), "lengths"));
  a.emb = tensorOf(env, info[2], std::string(name) + "(emb)");
  for (uint32_t i = 0; i < W.Length(); i++) a.weights.push_back(tensorOf(env, W.Get(i), std::string(name) + "(weights)"));
  a.layers = toInt(env, info[4], "layers");
  if (!info[5].IsBoolean()) throwJs(env, std::string(name) + ": bidirectional must be a boolean");
  a.bidirectional = info[5].As<Napi::Boolean>().Value();
  auto pool = info[6].ToString().Utf8Value();
  if (pool != "max" && pool != "last") throwJs(env, std::string(name) + ": pooling must be 'max' or 'last'");
  a.pooling = pool == "max" ? 0 : 1;
  return a;
}

XL_FN(LstmStackEncode) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto a = stackArgs(info, "lstmStackEncode");
    return wrap(info.Env(), lstmStackEncode(a.ids, a.lengths, a.emb, a.weights, a.layers, a.bidirectional, a.pooling));
  });
}

XL_FN(LstmStackEncodeAsync) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto a = std::make_shared<StackArgs>(stackArgs(info, "lstmStackEncodeAsync"));
    return queueTensor(info.Env(), [a] { return lstmStackEncode(a->ids, a->lengths, a->emb, a->weights, a->layers, a->bidirectional, a->pooling); });
  });
}

// lstmRecurrence(xg, whh, h0, c0, lengths, fill) -> [output, h_n, c_n] (see native/lstm.cc)
XL_FN(LstmRecurrence) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 6, "lstmRecurrence");
    if (!info[4].IsArray()) throwJs(env, "lstmRecurrence: lengths must be an array");
    std::vector<int64_t> lengths;
    auto L = info[4].As<Napi::Array>();
    for (uint32_t i = 0; i < L.Length(); i++) lengths.push_back(toInt(env, L.Get(i), "lstmRecurrence: lengths"));
    auto r = lstmRecurrence(tensorOf(env, info[0], "lstmRecurrence(xg)"), tensorOf(env, info[1], "lstmRecurrence(w_hh)"),
                            tensorOf(env, info[2], "lstmRecurrence(h0)"), tensorOf(env, info[3], "lstmRecurrence(c0)"), lengths,
                            toDouble(env, info[5], "lstmRecurrence: fill"));
    auto arr = Napi::Array::New(env, r.size());
    for (uint32_t i = 0; i < r.size(); i++) arr.Set(i, wrap(env, std::move(r[i])));
    return arr;
  });
}

struct BagArgs {
  at::Tensor weight, ids, offsets, perSampleWeights;  // perSampleWeights undefined when null
};

BagArgs bagArgs(const Napi::CallbackInfo& info, const char* name) {
  auto env = info.Env();
  expectArgs(info, 4, name);
  auto arg = [&](int i, const char* what) { return tensorOf(env, info[i], std::string(name) + "(" + what + ")"); };
  BagArgs a{arg(0, "weight"), arg(1, "ids"), arg(2, "offsets"), at::Tensor()};
  if (!info[3].IsNull() && !info[3].IsUndefined()) a.perSampleWeights = arg(3, "perSampleWeights");
  return a;
}

XL_FN(EmbeddingBag) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto a = bagArgs(info, "embeddingBag");
    return wrap(info.Env(), embeddingBag(a.weight, a.ids, a.offsets, a.perSampleWeights));
  });
}

// embeddingBagAsync(weight, ids, offsets, perSampleWeights|null) -> Promise<tensor>: the same bags
// on a libuv worker thread, without autograd (inference: a server's event loop stays free).
XL_FN(EmbeddingBagAsync) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto a = bagArgs(info, "embeddingBagAsync");
    return queueTensor(info.Env(), [a] { return embeddingBag(a.weight, a.ids, a.offsets, a.perSampleWeights); });
  });
}

// embeddingBagInt8(table, scale, ids, offsets, perSampleWeights|null) -> tensor: the bags over an
// int8 table with per-row float32 scales (inference only, native/bag.h); embeddingBagInt8Async:
// the same on a libuv worker thread.
struct BagInt8Args {
  at::Tensor table, scale, ids, offsets, perSampleWeights;  // perSampleWeights undefined when null
};

BagInt8Args bagInt8Args(const Napi::CallbackInfo& info, const char* name) {
  auto env = info.Env();
  expectArgs(info, 5, name);
  auto arg = [&](int i, const char* what) { return tensorOf(env, info[i], std::string(name) + "(" + what + ")"); };
  BagInt8Args a{arg(0, "table"), arg(1, "scale"), arg(2, "ids"), arg(3, "offsets"), at::Tensor()};
  if (!info[4].IsNull() && !info[4].IsUndefined()) a.perSampleWeights = arg(4, "perSampleWeights");
  return a;
}

XL_FN(EmbeddingBagInt8) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto a = bagInt8Args(info, "embeddingBagInt8");
    return wrap(info.Env(), embeddingBagInt8(a.table, a.scale, a.ids, a.offsets, a.perSampleWeights));
  });
}

XL_FN(EmbeddingBagInt8Async) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto a = bagInt8Args(info, "embeddingBagInt8Async");
    return queueTensor(info.Env(), [a] { return embeddingBagInt8(a.table, a.scale, a.ids, a.offsets, a.perSampleWeights); });
  });
}

// rowLinear(x, weight, bias|null) -> tensor: x · weightᵀ + bias with every row independent of the
// batch (row_linear.h); rowLinearAsync: the same on a libuv worker thread.
struct RowLinearArgs { at::Tensor x, weight, bias; };
RowLinearArgs rowLinearArgs(const Napi::CallbackInfo& info, const char* name) {
  auto env = info.Env();
  expectArgs(info, 3, name);
  auto arg = [&](int i, const char* what) { return tensorOf(env, info[i], std::string(name) + "(" + what + ")"); };
  RowLinearArgs a{arg(0, "x"), arg(1, "weight"), at::Tensor()};
  if (!info[2].IsNull() && !info[2].IsUndefined()) a.bias = arg(2, "bias");
  return a;
}

XL_FN(RowLinear) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto a = rowLinearArgs(info, "rowLinear");
    return wrap(info.Env(), rowLinear(a.x, a.weight, a.bias));
  });
}

XL_FN(RowLinearAsync) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto a = rowLinearArgs(info, "rowLinearAsync");
    return queueTensor(info.Env(), [a] { return rowLinear(a.x, a.weight, a.bias); });
  });
}

// gatherDot(table, ids, q) -> tensor [n, K]: inner products of gathered rows with the queries
// (gather_dot.h): an approximate search's candidates re-ranked.
XL_FN(GatherDot) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 3, "gatherDot");
    return wrap(env, gatherDot(tensorOf(env, info[0], "gatherDot(table)"), tensorOf(env, info[1], "gatherDot(ids)"), tensorOf(env, info[2], "gatherDot(q)")));
  });
}

// packedEncoderLayers(x, lengths[], weights[], heads, eps, activation) -> tensor: post-norm
// Transformer encoder layers over packed sequences (transformer.h); ...Async: on a worker thread.
struct EncoderLayerArgs {
  at::Tensor x;
  std::vector<int64_t> lengths;
  std::vector<at::Tensor> weights;
  int64_t heads;
  double eps;
  int activation;
};
EncoderLayerArgs encoderLayerArgs(const Napi::CallbackInfo& info, const char* name) {
  auto env = info.Env();
  expectArgs(info, 6, name);
  if (!info[1].IsArray() || !info[2].IsArray()) throwJs(env, std::string(name) + ": lengths and weights must be arrays");
  EncoderLayerArgs a;
  a.x = tensorOf(env, info[0], std::string(name) + "(x)");
  auto L = info[1].As<Napi::Array>(), W = info[2].As<Napi::Array>();
  for (uint32_t i = 0; i < L.Length(); i++) a.lengths.push_back(toInt(env, L.Get(i), "lengths"));
  for (uint32_t i = 0; i < W.Length(); i++) a.weights.push_back(tensorOf(env, W.Get(i), std::string(name) + "(weights[" + std::to_string(i) + "])"));
  a.heads = toInt(env, info[3], "heads");
  a.eps = toDouble(env, info[4], std::string(name) + ": eps");
  a.activation = static_cast<int>(toInt(env, info[5], "activation"));
  return a;
}

XL_FN(PackedEncoderLayers) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto a = encoderLayerArgs(info, "packedEncoderLayers");
    return wrap(info.Env(), packedEncoderLayers(a.x, a.lengths, a.weights, a.heads, a.eps, a.activation));
  });
}

XL_FN(PackedEncoderLayersAsync) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto a = std::make_shared<EncoderLayerArgs>(encoderLayerArgs(info, "packedEncoderLayersAsync"));
    return queueTensor(info.Env(), [a] { return packedEncoderLayers(a->x, a->lengths, a->weights, a->heads, a->eps, a->activation); });
  });
}

// cpuHasBf16(): whether bfloat16 products run natively here (AVX512_BF16; elsewhere oneDNN emulates them).
XL_FN(CpuHasBf16) {
  return guard(info.Env(), [&]() -> Napi::Value { return Napi::Boolean::New(info.Env(), cpuHasBf16() && oneDnnGemmBf16() != nullptr); });
}

XL_FN(SparseAdamStep) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 9, "sparseAdamStep");
    at::Tensor p = tensorOf(env, info[0], "sparseAdamStep(param)"), m = tensorOf(env, info[1], "sparseAdamStep(exp_avg)"),
               v = tensorOf(env, info[2], "sparseAdamStep(exp_avg_sq)");
    sparseAdamStep(p, m, v, tensorOf(env, info[3], "sparseAdamStep(grad)"), toDouble(env, info[4], "sparseAdamStep: lr"),
                   toDouble(env, info[5], "sparseAdamStep: beta1"), toDouble(env, info[6], "sparseAdamStep: beta2"),
                   toDouble(env, info[7], "sparseAdamStep: eps"), toInt(env, info[8], "sparseAdamStep: step"));
    return env.Undefined();
  });
}

// ---------------------------------------------------------------------------------------------
// Tensor bytes to and from files without a copy in JS. On this kind of VM first-touching fresh
// memory costs seconds per GiB: reading a 1 GiB safetensors table through JS buffers touched four
// fresh copies of it; these read into (or write from) the tensor's own storage.

// entries: [[tensor, fileOffset], …]; each tensor must be contiguous CPU memory.
std::vector<std::pair<at::Tensor, int64_t>> fileEntries(Napi::Env env, const Napi::Value& v, const char* fn) {
  if (!v.IsArray()) throwJs(env, std::string(fn) + ": entries must be an array of [tensor, offset]");
  auto arr = v.As<Napi::Array>();
  std::vector<std::pair<at::Tensor, int64_t>> out;
  for (uint32_t i = 0; i < arr.Length(); i++) {
    auto e = arr.Get(i);
    if (!e.IsArray() || e.As<Napi::Array>().Length() != 2) throwJs(env, std::string(fn) + ": entries must be [tensor, offset] pairs");
    const auto& t = tensorOf(env, e.As<Napi::Array>().Get(0u), fn);
    if (!t.is_contiguous() || !t.device().is_cpu()) throwJs(env, std::string(fn) + ": tensors must be contiguous CPU tensors");
    int64_t off = toInt(env, e.As<Napi::Array>().Get(1u), fn);
    if (off < 0) throwJs(env, std::string(fn) + ": negative file offset");
    out.emplace_back(t, off);
  }
  return out;
}

XL_FN(ReadInto) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 2, "readInto");
    if (!info[0].IsString()) throwJs(env, "readInto: path must be a string");
    const auto path = info[0].As<Napi::String>().Utf8Value();
    auto entries = fileEntries(env, info[1], "readInto");
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throwJs(env, path + ": " + std::strerror(errno));
    try {
      for (auto& [t, off] : entries) {
        char* p = static_cast<char*>(t.data_ptr());
        const size_t n = static_cast<size_t>(t.numel()) * t.element_size();
        size_t done = 0;
        while (done < n) {
          ssize_t r = ::pread(fd, p + done, std::min<size_t>(n - done, size_t(1) << 30), off + static_cast<off_t>(done));
          if (r < 0 && errno == EINTR) continue;
          if (r <= 0) throwJs(env, path + ": " + (r < 0 ? std::string(std::strerror(errno)) : "unexpected end of file") + " at byte " + std::to_string(off + done));
          done += static_cast<size_t>(r);
        }
      }
    } catch (...) { ::close(fd); throw; }
    ::close(fd);
    return env.Undefined();
  });
}

// writeFrom(fd, entries): pwrite each tensor's bytes at its offset of an open file descriptor.
XL_FN(WriteFrom) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 2, "writeFrom");
    const int fd = static_cast<int>(toInt(env, info[0], "writeFrom(fd)"));
    auto entries = fileEntries(env, info[1], "writeFrom");
    for (auto& [t, off] : entries) {
      const char* p = static_cast<const char*>(t.data_ptr());
      const size_t n = static_cast<size_t>(t.numel()) * t.element_size();
      size_t done = 0;
      while (done < n) {
        ssize_t w = ::pwrite(fd, p + done, std::min<size_t>(n - done, size_t(1) << 30), off + static_cast<off_t>(done));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) throwJs(env, std::string("writeFrom: ") + std::strerror(errno));
        done += static_cast<size_t>(w);
      }
    }
    return env.Undefined();
  });
}

// fillNormal(tensor, mean, std): N(mean, std²) in parallel from the generator seeded by
// manualSeed (like dropoutMask; ATen's CPU normal_ is one serial stream: 13 s for 268M values).
XL_FN(FillNormal) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 3, "fillNormal");
    at::Tensor t = tensorOf(env, info[0], "fillNormal");
    if (!t.is_contiguous() || t.scalar_type() != at::kFloat) throwJs(env, "fillNormal: a contiguous float32 tensor");
    const float mean = static_cast<float>(toDouble(env, info[1], "fillNormal: mean")), sd = static_cast<float>(toDouble(env, info[2], "fillNormal: std"));
    const int64_t n = t.numel();
    float* data = t.data_ptr<float>();
    const uint64_t seed = maskCounter.fetch_add(0x632be59bd9b4e019ULL);
    constexpr int64_t kBlock = 1 << 16;
    at::parallel_for(0, (n + kBlock - 1) / kBlock, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; b++) {
        uint64_t sm = seed ^ (static_cast<uint64_t>(b) * 0xd1342543de82ef95ULL);
        const int64_t end = std::min(n, (b + 1) * kBlock);
        for (int64_t i = b * kBlock; i < end; i += 2) {
          // Box–Muller on two uniforms in (0, 1]
          const double u1 = (static_cast<double>(splitmix64(sm) >> 11) + 1.0) * 0x1.0p-53;
          const double u2 = static_cast<double>(splitmix64(sm) >> 11) * 0x1.0p-53;
          const double r = std::sqrt(-2.0 * std::log(u1));
          data[i] = mean + sd * static_cast<float>(r * std::cos(2 * M_PI * u2));
          if (i + 1 < end) data[i + 1] = mean + sd * static_cast<float>(r * std::sin(2 * M_PI * u2));
        }
      }
    });
    return env.Undefined();
  });
}

// zerosLazy(shape, dtype): zeros whose pages are mapped on first write (calloc on fresh memory):
// optimiser moments of a large table, most of whose rows a run may never touch.
XL_FN(ZerosLazy) {
  return guard(info.Env(), [&]() -> Napi::Value {
    auto env = info.Env();
    expectArgs(info, 2, "zerosLazy");
    auto shape = shapeOf(env, info[0]);
    auto dtype = dtypeOf(env, info[1]);
    int64_t numel = 1;
    for (auto d : shape) numel *= d;
    const size_t bytes = std::max<size_t>(1, static_cast<size_t>(numel) * c10::elementSize(dtype));
    void* p = std::calloc(1, bytes);
    if (!p) throwJs(env, "zerosLazy: out of memory (" + std::to_string(bytes) + " bytes)");
    return wrap(env, at::from_blob(p, shape, [](void* q) { std::free(q); }, at::TensorOptions().dtype(dtype)));
  });
}

XL_FN(Version) { return Napi::String::New(info.Env(), TORCH_VERSION); }

}  // namespace

void initTorch(Napi::Env env, Napi::Object exports) {
  installCpuAllocator();
  auto torch = Napi::Object::New(env);
#define REG(name, fn) torch.Set(name, Napi::Function::New(env, fn, name))
  REG("op", OpLookup);
  REG("opSchema", OpSchema);
  REG("call", Call);
  REG("callAsync", CallAsync);
  REG("fromBuffer", FromBuffer);
  REG("toBuffer", ToBuffer);
  REG("copyInto", CopyInto);
  REG("meta", Meta);
  REG("shape", Shape);
  REG("item", Item);
  REG("dispose", Dispose);
  REG("isDisposed", IsDisposed);
  REG("setRequiresGrad", SetRequiresGrad);
  REG("grad", Grad);
  REG("setGrad", SetGrad);
  REG("backward", Backward);
  REG("setGradEnabled", SetGradEnabled);
  REG("isGradEnabled", IsGradEnabled);
  REG("manualSeed", ManualSeed);
  REG("setNumThreads", SetNumThreads);
  REG("getNumThreads", GetNumThreads);
  REG("hasCuda", HasCuda);
  REG("memoryStats", MemoryStats);
  REG("version", Version);
  REG("lstmTableEncode", LstmTableEncode);
  REG("lstmTableEncodeAsync", LstmTableEncodeAsync);
  REG("lstmRecurrence", LstmRecurrence);
  REG("lstmStackEncode", LstmStackEncode);
  REG("lstmStackEncodeAsync", LstmStackEncodeAsync);
  REG("embeddingBag", EmbeddingBag);
  REG("embeddingBagAsync", EmbeddingBagAsync);
  REG("embeddingBagInt8", EmbeddingBagInt8);
  REG("embeddingBagInt8Async", EmbeddingBagInt8Async);
  REG("rowLinear", RowLinear);
  REG("rowLinearAsync", RowLinearAsync);
  REG("gatherDot", GatherDot);
  REG("packedEncoderLayers", PackedEncoderLayers);
  REG("packedEncoderLayersAsync", PackedEncoderLayersAsync);
  REG("cpuHasBf16", CpuHasBf16);
  REG("sparseAdamStep", SparseAdamStep);
  REG("readInto", ReadInto);
  REG("writeFrom", WriteFrom);
  REG("fillNormal", FillNormal);
  REG("zerosLazy", ZerosLazy);
  REG("emptyCpuCache", EmptyCpuCache);
  REG("dropoutMask", DropoutMask);
  REG("cpuCacheStats", CpuCacheStats);
#undef REG
  exports.Set("torch", torch);
}

}  // namespace xling

// Entry point of the xling addon: a thin binding over libtorch and faiss. No model logic here.
#include <c10/util/Exception.h>

#include "common.h"

namespace xling {

std::string nativeMessage(const std::exception& e) {
  if (auto* ce = dynamic_cast<const c10::Error*>(&e)) return ce->what_without_backtrace();
  return e.what();
}

}  // namespace xling

static Napi::Object Init(Napi::Env env, Napi::Object exports) {
  xling::initTorch(env, exports);
  xling::initFaiss(env, exports);
  xling::initFormat(env, exports);
  xling::initHamming(env, exports);
  return exports;
}

NODE_API_MODULE(xling, Init)

// faiss binding (filled in by the index work).
#include "common.h"

namespace xling {
void initFaiss(Napi::Env env, Napi::Object exports) {}
}  // namespace xling

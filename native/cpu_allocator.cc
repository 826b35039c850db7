// A caching CPU allocator for libtorch. Training and embedding loops allocate the same large
// buffers every step; glibc hands such blocks back to the kernel (munmap) and the next step
// page-faults fresh zeroed memory in. Blocks of >= 256 KiB are kept in a best-fit free list
// (a cached block serves requests down to half its size, since batch shapes vary from step to
// step); the cache is bounded (XLING_CPU_CACHE_MB, default 1/8 of RAM up to 2 GiB) and can be
// emptied with emptyCpuCache(). Blocks of >= 32 MiB are 2 MiB-aligned and marked for transparent
// huge pages: large tables read row by row in random order (hashed n-gram embeddings and their
// Adam moments) otherwise take a TLB miss per row.
#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <unordered_map>

#include "common.h"

namespace xling {
namespace {

constexpr size_t kAlign = 64;
constexpr size_t kMinCached = 256 << 10;
constexpr size_t kHuge = size_t(32) << 20;
constexpr size_t kHugePage = size_t(2) << 20;

// posix_memalign, huge-page aligned and advised for large blocks.
bool allocBlock(void** p, size_t sz) {
  if (sz < kHuge) return posix_memalign(p, kAlign, sz) == 0 && *p;
  if (posix_memalign(p, kHugePage, sz) != 0 || !*p) return false;
  madvise(*p, sz & ~(kHugePage - 1), MADV_HUGEPAGE);  // a hint: failure changes nothing
  return true;
}

// Size classes: 8 steps per power of two, so a reused block wastes at most 12.5%.
size_t roundSize(size_t n) {
  if (n < kMinCached) return (n + kAlign - 1) & ~(kAlign - 1);
  size_t p = 1;
  while ((p << 1) <= n) p <<= 1;
  size_t step = p / 8;
  return (n + step - 1) / step * step;
}

class CachingCPUAllocator final : public c10::Allocator {
 public:
  CachingCPUAllocator() {
    const char* env = std::getenv("XLING_CPU_CACHE_MB");
    if (env) {
      limit_ = static_cast<size_t>(std::atoll(env)) << 20;
    } else {
      struct sysinfo si {};
      size_t ram = sysinfo(&si) == 0 ? static_cast<size_t>(si.totalram) * si.mem_unit : (size_t(8) << 30);
      limit_ = std::min(ram / 8, size_t(2) << 30);
    }
  }

  c10::DataPtr allocate(size_t nbytes) const override {
    void* p = self().take(nbytes);
    return {p, p, &CachingCPUAllocator::release, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &CachingCPUAllocator::release; }

  static CachingCPUAllocator& self() {
    static CachingCPUAllocator* a = new CachingCPUAllocator();  // never destroyed: tensors may outlive statics
    return *a;
  }

  static void release(void* p) {
    if (p) self().give(p);
  }

  void emptyCache() {
    std::lock_guard<std::mutex> g(mu_);
    for (auto& kv : free_) std::free(kv.second);
    free_.clear();
    cached_ = 0;
  }

  void stats(size_t& cached, size_t& live, size_t& limit) {
    std::lock_guard<std::mutex> g(mu_);
    cached = cached_;
    live = liveBytes_;
    limit = limit_;
  }

 private:
  void* take(size_t nbytes) {
    if (nbytes == 0) nbytes = 1;
    size_t sz = roundSize(nbytes);
    if (sz >= kMinCached) {
      std::lock_guard<std::mutex> g(mu_);
      auto it = free_.lower_bound(sz);  // smallest cached block that fits
      if (it != free_.end() && it->first <= 2 * sz) {
        void* p = it->second;
        size_t have = it->first;
        free_.erase(it);
        cached_ -= have;
        sizes_[p] = have;
        liveBytes_ += have;
        return p;
      }
    }
    void* p = nullptr;
    if (!allocBlock(&p, sz)) {
      emptyCache();  // retry once without the cache
      if (!allocBlock(&p, sz)) throw std::bad_alloc();
    }
    if (sz >= kMinCached) {
      std::lock_guard<std::mutex> g(mu_);
      sizes_[p] = sz;
      liveBytes_ += sz;
    }
    return p;
  }

  void give(void* p) {
    {
      std::lock_guard<std::mutex> g(mu_);
      auto it = sizes_.find(p);
      if (it != sizes_.end()) {
        size_t sz = it->second;
        sizes_.erase(it);
        liveBytes_ -= sz;
        // Over the limit: evict the largest cached blocks first (they are the rarest fits).
        while (cached_ + sz > limit_ && !free_.empty()) {
          auto last = std::prev(free_.end());
          cached_ -= last->first;
          std::free(last->second);
          free_.erase(last);
        }
        if (cached_ + sz <= limit_) {
          free_.emplace(sz, p);
          cached_ += sz;
          return;
        }
      }
    }
    std::free(p);
  }

  std::mutex mu_;
  std::multimap<size_t, void*> free_;
  std::unordered_map<void*, size_t> sizes_;
  size_t cached_ = 0, liveBytes_ = 0, limit_ = 0;
};

}  // namespace

void installCpuAllocator() {
  if (std::getenv("XLING_NO_CPU_CACHE")) return;
  c10::SetCPUAllocator(&CachingCPUAllocator::self(), /*priority=*/1);
}

Napi::Value EmptyCpuCache(const Napi::CallbackInfo& info) {
  CachingCPUAllocator::self().emptyCache();
  return info.Env().Undefined();
}

Napi::Value CpuCacheStats(const Napi::CallbackInfo& info) {
  size_t cached, live, limit;
  CachingCPUAllocator::self().stats(cached, live, limit);
  auto o = Napi::Object::New(info.Env());
  o.Set("cachedBytes", Napi::Number::New(info.Env(), static_cast<double>(cached)));
  o.Set("liveLargeBytes", Napi::Number::New(info.Env(), static_cast<double>(live)));
  o.Set("limitBytes", Napi::Number::New(info.Env(), static_cast<double>(limit)));
  return o;
}

}  // namespace xling

#include "cuda_host_pages.hpp"

#include <unistd.h>

#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>

namespace rig::cu {
namespace {

struct Registration {
  size_t bytes;
  DevicePtr device;
  Context context;  // the context that registered it
  bool ours;        // false: the program registered it, and unregisters it
  int holders;
};

struct Registry {
  std::mutex mu;
  std::map<uintptr_t, Registration> ranges;  // by start
};

Registry &registry() {
  static Registry *r = new Registry();  // lives for the process
  return *r;
}

// The registration whose range holds the byte at p, or end.
std::map<uintptr_t, Registration>::iterator containing(Registry &r, uintptr_t p) {
  auto it = r.ranges.upper_bound(p);
  if (it == r.ranges.begin()) return r.ranges.end();
  --it;
  return p < it->first + it->second.bytes ? it : r.ranges.end();
}

}  // namespace

size_t host_page_bytes() {
  static const size_t bytes = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return bytes;
}

std::optional<DevicePtr> hold_host_pages(const Api &api, void *p, size_t n, std::string *why) {
  Registry &r = registry();
  auto start = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> g(r.mu);
  if (auto it = containing(r, start); it != r.ranges.end()) {
    if (start + n > it->first + it->second.bytes) {
      *why = "the memory overlaps host memory registered with CUDA otherwise";
      return std::nullopt;
    }
    it->second.holders++;
    return it->second.device + (start - it->first);
  }
  if (auto next = r.ranges.upper_bound(start); next != r.ranges.end() && next->first < start + n) {
    *why = "the memory overlaps host memory registered with CUDA otherwise";
    return std::nullopt;
  }
  Context context = nullptr;
  api.cuCtxGetCurrent(&context);
  bool ours = true;
  Result result = api.cuMemHostRegister(p, n, kMemHostRegisterPortable | kMemHostRegisterDeviceMap);
  // The program registered the pages itself: use its registration.
  if (result == kErrorHostMemoryAlreadyRegistered) ours = false;
  else if (result != kSuccess) {
    *why = "cuMemHostRegister: " + api.describe(result);
    return std::nullopt;
  }
  DevicePtr device = 0;
  if (Result got = api.cuMemHostGetDevicePointer(&device, p, 0); got != kSuccess) {
    if (ours) api.cuMemHostUnregister(p);
    *why = "cuMemHostGetDevicePointer: " + api.describe(got);
    return std::nullopt;
  }
  r.ranges.emplace(start, Registration{n, device, context, ours, 1});
  return device;
}

void release_host_pages(const Api &api, void *p) {
  Registry &r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  auto it = containing(r, reinterpret_cast<uintptr_t>(p));
  if (it == r.ranges.end() || --it->second.holders > 0) return;
  if (it->second.ours) api.cuMemHostUnregister(reinterpret_cast<void *>(it->first));
  r.ranges.erase(it);
}

void forget_host_pages(Context context) {
  Registry &r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  std::erase_if(r.ranges, [&](const auto &entry) { return entry.second.context == context; });
}

}  // namespace rig::cu

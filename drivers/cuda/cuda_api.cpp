// Loads the CUDA Driver API from libcuda.so.1 with dlopen, once per process.
#include "cuda_api.h"

#include <dlfcn.h>

namespace rig::cu {
namespace {

struct Loaded {
  Api api;
  std::string why;  // empty once loaded and initialised
};

Loaded load() {
  Loaded l;
  // Never closed: the functions serve the process to its end.
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *error = dlerror();
    l.why = std::string("libcuda.so.1 could not be loaded (no NVIDIA driver is installed?): ") +
            (error ? error : "dlopen failed");
    return l;
  }
#define RIG_CUDA_REQUIRE(name, symbol, parameters)                                      \
  l.api.name = reinterpret_cast<name##_t>(dlsym(library, symbol));                      \
  if (!l.api.name) {                                                                    \
    l.why = std::string("libcuda.so.1 has no ") + symbol + ": its driver predates CUDA 12"; \
    return l;                                                                           \
  }
  RIG_CUDA_FUNCTIONS(RIG_CUDA_REQUIRE)
#undef RIG_CUDA_REQUIRE
#define RIG_CUDA_OPTIONAL(name, symbol, parameters) \
  l.api.name = reinterpret_cast<name##_t>(dlsym(library, symbol));
  RIG_CUDA_OPTIONAL_FUNCTIONS(RIG_CUDA_OPTIONAL)
#undef RIG_CUDA_OPTIONAL
  if (Result r = l.api.cuInit(0); r != kSuccess) l.why = "cuInit: " + l.api.describe(r);
  return l;
}

}  // namespace

std::string Api::describe(Result r) const {
  const char *name = nullptr, *text = nullptr;
  if (cuGetErrorName(r, &name) != kSuccess || !name) return "CUDA error " + std::to_string(r);
  if (cuGetErrorString(r, &text) != kSuccess || !text) return name;
  return std::string(name) + ": " + text;
}

const Api *load_api(std::string *why) {
  static const Loaded *loaded = new Loaded(load());  // lives for the process
  if (!loaded->why.empty()) {
    *why = loaded->why;
    return nullptr;
  }
  return &loaded->api;
}

bool breaks_context(Result r) {
  switch (r) {
    case kErrorDeinitialized:
    case kErrorDeviceUnavailable:
    case kErrorEccUncorrectable:
    case kErrorNvlinkUncorrectable:
    case kErrorIllegalAddress:
    case kErrorLaunchTimeout:
    case kErrorLaunchIncompatibleTexturing:
    case kErrorContextIsDestroyed:
    case kErrorAssert:
    case kErrorHardwareStackError:
    case kErrorIllegalInstruction:
    case kErrorMisalignedAddress:
    case kErrorInvalidAddressSpace:
    case kErrorInvalidPc:
    case kErrorLaunchFailed:
    case kErrorExternalDevice:
    case kErrorUnknown:
      return true;
    default:
      return false;
  }
}

}  // namespace rig::cu

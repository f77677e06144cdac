#include "hsa_runtime.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <utility>

namespace rig::rocr {
namespace {

constexpr const char *kLibrary = "libhsa-runtime64.so.1";

// Resolves every function of the table; the reason where one is missing.
std::string load_api(HsaApi &api) {
  void *library = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *why = dlerror();
    return why ? why : std::string(kLibrary) + ": cannot be loaded";
  }
#define RIG_HSA_RESOLVE(name)                                             \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(library, #name)); \
  if (!api.name) return std::string(kLibrary) + " has no function " #name;
  RIG_HSA_FUNCTIONS(RIG_HSA_RESOLVE)
#undef RIG_HSA_RESOLVE
  return "";
}

// Finds a GPU's Device pool and group memory, or the host's pools.
struct PoolSearch {
  const HsaApi *api;
  bool gpu;
  GpuAgent *found_gpu;
  HsaRuntime *found_host;
};

hsa_status_t note_pool(hsa_amd_memory_pool_t pool, void *data) {
  auto &s = *static_cast<PoolSearch *>(data);
  const HsaApi &api = *s.api;
  auto segment = pool_info<hsa_amd_segment_t>(api, pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, HSA_AMD_SEGMENT_PRIVATE);
  if (s.gpu && segment == HSA_AMD_SEGMENT_GROUP) {
    s.found_gpu->group_bytes = static_cast<uint32_t>(pool_info<size_t>(api, pool, HSA_AMD_MEMORY_POOL_INFO_SIZE, 0));
    return HSA_STATUS_SUCCESS;
  }
  if (segment != HSA_AMD_SEGMENT_GLOBAL ||
      !pool_info<bool>(api, pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, false))
    return HSA_STATUS_SUCCESS;
  auto flags = pool_info<uint32_t>(api, pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, 0);
  if (s.gpu) {
    if ((flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED) && !s.found_gpu->has_device_pool) {
      s.found_gpu->device_pool = pool;
      s.found_gpu->has_device_pool = true;
    }
    return HSA_STATUS_SUCCESS;
  }
  bool kernarg = flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT;
  if (kernarg && !s.found_host->has_kernarg_pool) {
    s.found_host->kernarg_pool = pool;
    s.found_host->has_kernarg_pool = true;
  }
  if ((flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED) && !kernarg && !s.found_host->has_pinned_pool) {
    s.found_host->pinned_pool = pool;
    s.found_host->has_pinned_pool = true;
  }
  return HSA_STATUS_SUCCESS;
}

struct AgentSearch {
  HsaRuntime *runtime;
  bool found_cpu = false;
};

hsa_status_t note_agent(hsa_agent_t agent, void *data) {
  auto &s = *static_cast<AgentSearch *>(data);
  HsaRuntime &r = *s.runtime;
  auto type = agent_info<hsa_device_type_t>(r.api, agent, HSA_AGENT_INFO_DEVICE, HSA_DEVICE_TYPE_DSP);
  if (type == HSA_DEVICE_TYPE_GPU) {
    GpuAgent gpu;
    gpu.agent = agent;
    PoolSearch search{&r.api, true, &gpu, nullptr};
    r.api.hsa_amd_agent_iterate_memory_pools(agent, note_pool, &search);
    r.gpus.push_back(gpu);
  } else if (type == HSA_DEVICE_TYPE_CPU && !s.found_cpu) {
    s.found_cpu = true;
    r.cpu = agent;
    PoolSearch search{&r.api, false, nullptr, &r};
    r.api.hsa_amd_agent_iterate_memory_pools(agent, note_pool, &search);
    if (!r.has_pinned_pool && r.has_kernarg_pool) {  // it is fine-grained too
      r.pinned_pool = r.kernarg_pool;
      r.has_pinned_pool = true;
    }
  }
  return HSA_STATUS_SUCCESS;
}

// The memory faults of the agents devices watch (watch_memory_faults).
struct FaultWatch {
  std::mutex mu;
  std::vector<std::pair<uint64_t, FaultSink *>> sinks;  // agent handle, sink
};

FaultWatch &fault_watch() {
  static FaultWatch *w = new FaultWatch();  // lives for the process, as ROCr's handler
  return *w;
}

std::string memory_fault_text(const hsa_amd_gpu_memory_fault_info_t &f) {
  static const std::pair<uint32_t, const char *> reasons[] = {
      {HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT, "page not present"},
      {HSA_AMD_MEMORY_FAULT_READ_ONLY, "write to a read-only page"},
      {HSA_AMD_MEMORY_FAULT_NX, "execution of a no-execute page"},
      {HSA_AMD_MEMORY_FAULT_HOST_ONLY, "access to a host-only page"},
      {HSA_AMD_MEMORY_FAULT_DRAMECC, "DRAM ECC failure"},
      {HSA_AMD_MEMORY_FAULT_SRAMECC, "SRAM ECC failure"},
      {HSA_AMD_MEMORY_FAULT_HANG, "GPU reset after a hang"},
  };
  char address[32];
  std::snprintf(address, sizeof address, "0x%" PRIx64, f.virtual_address);
  std::string why = std::string("GPU memory fault at ") + address;
  if (f.fault_reason_mask & HSA_AMD_MEMORY_FAULT_IMPRECISE) why += " (imprecise)";
  const char *sep = ": ";
  for (const auto &[bit, text] : reasons)
    if (f.fault_reason_mask & bit) {
      why += sep;
      why += text;
      sep = ", ";
    }
  return why;
}

// ROCr's system event handler: a fault of a watched agent goes to its
// devices and the process goes on; any other keeps ROCr's default, which
// reports it and aborts.
hsa_status_t on_system_event(const hsa_amd_event_t *event, void *) {
  if (!event || event->event_type != HSA_AMD_GPU_MEMORY_FAULT_EVENT) return HSA_STATUS_ERROR;
  const hsa_amd_gpu_memory_fault_info_t &f = event->memory_fault;
  FaultWatch &w = fault_watch();
  std::lock_guard<std::mutex> g(w.mu);
  bool watched = false;
  for (const auto &[agent, sink] : w.sinks)
    if (agent == f.agent.handle) {
      sink->report(memory_fault_text(f));
      watched = true;
    }
  return watched ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR;
}

std::string text_of(const HsaApi &api, hsa_status_t status) {
  const char *text = nullptr;
  if (api.hsa_status_string && api.hsa_status_string(status, &text) == HSA_STATUS_SUCCESS && text) return text;
  char number[32];
  std::snprintf(number, sizeof number, "HSA status 0x%x", static_cast<unsigned>(status));
  return number;
}

void initialise(HsaRuntime &r) {
  r.failure = load_api(r.api);
  if (!r.failure.empty()) return;
  r.pid = getpid();
  if (hsa_status_t s = r.api.hsa_init(); s != HSA_STATUS_SUCCESS) {
    r.failure = "hsa_init failed: " + text_of(r.api, s);
    // Without the amdgpu kernel driver ROCr answers "out of resources":
    // name the device file it lacks.
    if (access("/dev/kfd", R_OK | W_OK) != 0) r.failure += std::string(" (/dev/kfd: ") + std::strerror(errno) + ")";
    return;
  }
  AgentSearch search{&r};
  if (hsa_status_t s = r.api.hsa_iterate_agents(note_agent, &search); s != HSA_STATUS_SUCCESS) {
    r.failure = "hsa_iterate_agents failed: " + text_of(r.api, s);
    return;
  }
  if (r.gpus.empty()) {
    r.failure = "the HSA runtime found no GPU agent";
    return;
  }
  uint64_t hz = 0;
  if (r.api.hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &hz) == HSA_STATUS_SUCCESS && hz > 0)
    r.timestamp_hz = hz;
  // Fails where another library of the process registered a handler first:
  // its faults then go to that handler.
  r.api.hsa_amd_register_system_event_handler(on_system_event, nullptr);
}

}  // namespace

const HsaRuntime &hsa_runtime() {
  static const HsaRuntime *runtime = [] {
    auto *r = new HsaRuntime();  // never unloaded: ROCr serves the process until it exits
    initialise(*r);
    return r;
  }();
  return *runtime;
}

std::string status_text(hsa_status_t status) { return text_of(hsa_runtime().api, status); }

void watch_memory_faults(hsa_agent_t agent, FaultSink *sink) {
  FaultWatch &w = fault_watch();
  std::lock_guard<std::mutex> g(w.mu);
  w.sinks.emplace_back(agent.handle, sink);
}

void unwatch_memory_faults(FaultSink *sink) {
  FaultWatch &w = fault_watch();
  std::lock_guard<std::mutex> g(w.mu);
  std::erase_if(w.sinks, [&](const auto &entry) { return entry.second == sink; });
}

}  // namespace rig::rocr

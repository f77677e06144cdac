// ROCr (HSA) as the ROCr driver sees it: the runtime's functions, loaded
// with dlopen("libhsa-runtime64.so.1") at the first use and never linked,
// so that librig loads and every other driver works where ROCm is absent;
// and what hsa_init found, once per process: the GPU agents in
// hsa_iterate_agents order (AMD:n is the nth), their memory pools, and
// the host's.
#pragma once

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace rig::rocr {

// Every function the driver calls, each typed as the header declares it.
// clang-format off
#define RIG_HSA_FUNCTIONS(X)                                                                           \
  X(hsa_init) X(hsa_status_string) X(hsa_system_get_info) X(hsa_iterate_agents) X(hsa_agent_get_info)  \
  X(hsa_amd_agent_iterate_memory_pools) X(hsa_amd_memory_pool_get_info)                                \
  X(hsa_amd_agent_memory_pool_get_info) X(hsa_amd_memory_pool_allocate) X(hsa_amd_memory_pool_free)    \
  X(hsa_amd_agents_allow_access) X(hsa_amd_memory_lock) X(hsa_amd_memory_unlock)                       \
  X(hsa_amd_pointer_info)                                                                              \
  X(hsa_signal_create) X(hsa_signal_destroy) X(hsa_signal_load_scacquire) X(hsa_signal_load_relaxed)   \
  X(hsa_signal_store_screlease) X(hsa_signal_subtract_screlease) X(hsa_amd_signal_wait_any)            \
  X(hsa_queue_create) X(hsa_queue_destroy) X(hsa_queue_load_read_index_scacquire)                      \
  X(hsa_queue_load_write_index_relaxed) X(hsa_queue_store_write_index_screlease)                       \
  X(hsa_amd_memory_async_copy)                                                                         \
  X(hsa_code_object_reader_create_from_memory) X(hsa_code_object_reader_destroy)                       \
  X(hsa_executable_create_alt) X(hsa_executable_load_agent_code_object) X(hsa_executable_freeze)       \
  X(hsa_executable_destroy) X(hsa_executable_get_symbol_by_name) X(hsa_executable_symbol_get_info)     \
  X(hsa_amd_register_system_event_handler)
// clang-format on

struct HsaApi {
#define RIG_HSA_POINTER(name) decltype(&::name) name = nullptr;
  RIG_HSA_FUNCTIONS(RIG_HSA_POINTER)
#undef RIG_HSA_POINTER
};

// A GPU agent and the pools the driver allocates from.
struct GpuAgent {
  hsa_agent_t agent{};
  // Coarse-grained global memory that the runtime allocates: Device memory.
  hsa_amd_memory_pool_t device_pool{};
  bool has_device_pool = false;
  uint32_t group_bytes = 0;  // group (LDS) memory a work-group may have
};

struct HsaRuntime {
  HsaApi api;
  // Why ROCr serves no device (dlerror(), a missing function, hsa_init's
  // status); empty where it is usable.
  std::string failure;
  std::vector<GpuAgent> gpus;
  // The host: its first CPU agent, its fine-grained pool (Pinned memory)
  // and its kernarg pool (kernel arguments, words' values, fill patterns).
  hsa_agent_t cpu{};
  hsa_amd_memory_pool_t pinned_pool{}, kernarg_pool{};
  bool has_pinned_pool = false, has_kernarg_pool = false;
  uint64_t timestamp_hz = 1000000000;  // units of a wait's timeout
  pid_t pid = 0;                       // the process that ran hsa_init
};

// The runtime, loaded and initialised by the first call (thread-safe);
// it stays for the life of the process.
const HsaRuntime &hsa_runtime();

// status as the runtime spells it, with its number where it has no text.
std::string status_text(hsa_status_t status);

// An agent's or a pool's attribute, or fallback where ROCr answers none.
template <class T>
T agent_info(const HsaApi &api, hsa_agent_t agent, int attribute, T fallback) {
  T value = fallback;
  if (api.hsa_agent_get_info(agent, static_cast<hsa_agent_info_t>(attribute), &value) != HSA_STATUS_SUCCESS)
    return fallback;
  return value;
}
template <class T>
T pool_info(const HsaApi &api, hsa_amd_memory_pool_t pool, hsa_amd_memory_pool_info_t attribute, T fallback) {
  T value = fallback;
  if (api.hsa_amd_memory_pool_get_info(pool, attribute, &value) != HSA_STATUS_SUCCESS) return fallback;
  return value;
}

// Receives the memory faults ROCr reports for an agent (a GPU's page
// fault), on ROCr's event thread.  report must take no lock that a caller
// of ROCr may hold.
struct FaultSink {
  virtual ~FaultSink() = default;
  virtual void report(const std::string &why) = 0;
};
// From watch until unwatch returns, sink receives agent's memory faults,
// which then do not end the process as ROCr's default handler does.
void watch_memory_faults(hsa_agent_t agent, FaultSink *sink);
void unwatch_memory_faults(FaultSink *sink);

}  // namespace rig::rocr

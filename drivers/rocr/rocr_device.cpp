// An AMD GPU's device: its facts, memory, timeline and stop (the design is
// in rocr_device.hpp; the encoding of work in rocr_work.cpp, code in
// rocr_code.cpp).
#include "rocr_device.hpp"

#include "rig_internal/options.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>


namespace rig::rocr {
namespace {

void check(hsa_status_t s, const char *what) {
  if (s != HSA_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + " failed: " + status_text(s));
}

// A queue error: the device's fault.
void on_queue_error(hsa_status_t status, hsa_queue_t *, void *engine) {
  static_cast<Engine *>(engine)->report("queue error: " + status_text(status));
}

// The PCI address "0000:41:00.0" of the agent, from its domain and BDF id.
std::optional<std::string> bus_address(const HsaApi &api, hsa_agent_t agent) {
  uint32_t bdf = 0, domain = 0;
  if (api.hsa_agent_get_info(agent, static_cast<hsa_agent_info_t>(HSA_AMD_AGENT_INFO_BDFID), &bdf) !=
      HSA_STATUS_SUCCESS)
    return std::nullopt;
  domain = agent_info<uint32_t>(api, agent, HSA_AMD_AGENT_INFO_DOMAIN, 0);
  char text[32];
  std::snprintf(text, sizeof text, "%04x:%02x:%02x.%x", domain & 0xffff, (bdf >> 8) & 0xff, (bdf >> 3) & 0x1f, bdf & 7);
  return std::string(text);
}

// The NUMA node sysfs states for the PCI function at bus, where it does.
std::optional<int> numa_node_of(const std::optional<std::string> &bus) {
  if (!bus) return std::nullopt;
  std::ifstream file("/sys/bus/pci/devices/" + *bus + "/numa_node");
  int node = -1;
  if (!(file >> node) || node < 0) return std::nullopt;
  return node;
}

// The largest power of two that divides every allocation of the pool,
// at most a page (as rig's alignment fact allows).
int64_t alignment_of(const HsaApi &api, hsa_amd_memory_pool_t pool) {
  auto a = static_cast<int64_t>(pool_info<size_t>(api, pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT, 0));
  if (a <= 0 || (a & (a - 1)) != 0) return 64;
  return std::min<int64_t>(a, 4096);
}

uint64_t page_bytes() { return static_cast<uint64_t>(sysconf(_SC_PAGESIZE)); }

}  // namespace

// ---- AddressBook -----------------------------------------------------------

void AddressBook::add(const void *start, uint64_t bytes, bool host) {
  auto s = reinterpret_cast<uintptr_t>(start);
  std::lock_guard<std::mutex> g(mu_);
  ranges_[s] = {s + bytes, host};
}

void AddressBook::remove(const void *start) {
  std::lock_guard<std::mutex> g(mu_);
  ranges_.erase(reinterpret_cast<uintptr_t>(start));
}

bool AddressBook::is_host(const void *address) const {
  auto a = reinterpret_cast<uintptr_t>(address);
  std::lock_guard<std::mutex> g(mu_);
  auto it = ranges_.upper_bound(a);
  if (it == ranges_.begin()) return false;
  --it;
  return a < it->second.first && it->second.second;
}

// ---- Engine ----------------------------------------------------------------

Engine::Engine(const HsaRuntime &runtime, const GpuAgent &g, const AddressBook &b, uint64_t start)
    : rt(runtime), api(runtime.api), gpu(g), book(&b) {
  try {
    build(start);
  } catch (...) {
    release();
    throw;
  }
}

Engine::~Engine() { release(); }

void Engine::build(uint64_t start) {
  max_group_threads = agent_info<uint32_t>(api, gpu.agent, HSA_AGENT_INFO_WORKGROUP_MAX_SIZE, 1024);
  check(api.hsa_signal_create(kTop - static_cast<int64_t>(start), 0, nullptr, &timeline), "hsa_signal_create");
  check(api.hsa_signal_create(0, 0, nullptr, &wake), "hsa_signal_create");
  // Signals only the GPU waits for: ROCr makes them without an interrupt.
  signals.assign(signal_ring.count(), hsa_signal_t{0});
  for (hsa_signal_t &s : signals) check(api.hsa_signal_create(0, 1, &gpu.agent, &s), "hsa_signal_create");
  roles.assign(signals.size(), SignalRole::Gate);
  in_flight.assign(flight_ring.count(), InFlight{});

  if (!rt.has_kernarg_pool) throw std::runtime_error("the host has no kernel argument memory pool");
  uint64_t ring_bytes = uint64_t{1} << 20;
  host_bytes = ring_bytes + 256 * kPatternBytes;
  void *host = nullptr;
  check(api.hsa_amd_memory_pool_allocate(rt.kernarg_pool, host_bytes, 0, &host), "hsa_amd_memory_pool_allocate");
  host_memory = static_cast<char *>(host);
  check(api.hsa_amd_agents_allow_access(1, &gpu.agent, nullptr, host_memory), "hsa_amd_agents_allow_access");
  patterns = reinterpret_cast<uint8_t *>(host_memory + ring_bytes);
  for (unsigned v = 0; v < 256; v++) std::memset(patterns + v * kPatternBytes, static_cast<int>(v), kPatternBytes);

  uint32_t most = agent_info<uint32_t>(api, gpu.agent, HSA_AGENT_INFO_QUEUE_MAX_SIZE, 4096);
  uint32_t least = agent_info<uint32_t>(api, gpu.agent, HSA_AGENT_INFO_QUEUE_MIN_SIZE, 64);
  uint32_t size = std::max(std::min<uint32_t>(4096, most), least);
  check(api.hsa_queue_create(gpu.agent, size, HSA_QUEUE_TYPE_SINGLE, on_queue_error, this, UINT32_MAX, UINT32_MAX,
                             &queue),
        "hsa_queue_create");
  watch_memory_faults(gpu.agent, this);
}

void Engine::release() {
  unwatch_memory_faults(this);
  if (queue) api.hsa_queue_destroy(queue);
  queue = nullptr;
  for (hsa_signal_t s : signals)
    if (s.handle) api.hsa_signal_destroy(s);
  signals.clear();
  if (timeline.handle) api.hsa_signal_destroy(timeline);
  if (wake.handle) api.hsa_signal_destroy(wake);
  timeline.handle = wake.handle = 0;
  if (host_memory) api.hsa_amd_memory_pool_free(host_memory);
  host_memory = nullptr;
  delete fault_.exchange(nullptr);
}

void Engine::report(const std::string &why) {
  auto *text = new std::string(why);
  const std::string *none = nullptr;
  if (!fault_.compare_exchange_strong(none, text, std::memory_order_acq_rel)) delete text;
  api.hsa_signal_store_screlease(wake, 1);
}

uint64_t Engine::word() const { return static_cast<uint64_t>(kTop - api.hsa_signal_load_scacquire(timeline)); }

// ---- RocrDevice ------------------------------------------------------------

RocrDevice::RocrDevice(const HsaRuntime &runtime, size_t index, const std::string &config, uint64_t start)
    : rt_(runtime) {
  const HsaApi &api = rt_.api;
  const GpuAgent &g = rt_.gpus.at(index);
  Options options(config, {"hang_ms"});
  int64_t hang_ms = options.integer("hang_ms", 0);
  if (hang_ms < 0) options.refuse("hang_ms", "negative");
  if (!g.has_device_pool) throw std::runtime_error("the GPU agent has no coarse-grained memory pool");

  engine_ = std::make_shared<Engine>(rt_, g, book_, start);
  book_.add(engine_->host_memory, engine_->host_bytes, true);
  agent_ = g.agent.handle;
  max_threads_ = engine_->max_group_threads;
  for (const GpuAgent &other : rt_.gpus) {
    if (other.agent.handle == g.agent.handle || !other.has_device_pool) continue;
    auto access = HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED;
    api.hsa_amd_agent_memory_pool_get_info(g.agent, other.device_pool, HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS, &access);
    if (access != HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED) peers_.push_back(other.agent.handle);
  }

  char name[64] = {};
  api.hsa_agent_get_info(g.agent, HSA_AGENT_INFO_NAME, name);
  name[sizeof name - 1] = 0;
  facts_.arch = name;
  facts_.bus = bus_address(api, g.agent);
  facts_.numa_node = numa_node_of(facts_.bus);
  facts_.alignment = alignment_of(api, g.device_pool);
  if (rt_.has_pinned_pool) facts_.alignment = std::min(facts_.alignment, alignment_of(api, rt_.pinned_pool));
  uint32_t caches[4] = {};
  api.hsa_agent_get_info(g.agent, HSA_AGENT_INFO_CACHE_SIZE, caches);
  uint32_t largest = *std::max_element(caches, caches + 4);
  if (caches[1] > 0 || largest > 0) facts_.cache_bytes = caches[1] > 0 ? caches[1] : largest;  // L2 where stated
  facts_.budget = static_cast<int64_t>(pool_info<size_t>(api, g.device_pool, HSA_AMD_MEMORY_POOL_INFO_SIZE, 0));
  if (hang_ms > 0) facts_.hang_ms = hang_ms;
  facts_.maps_host = true;
  facts_.queue_waits = false;  // rig waits on the host (rocr_device.hpp, Waits)
  facts_.queues = {"COMPUTE:0", "COPY:0"};
  facts_.copy_engine = 1;
  facts_.commit_every = 1;  // each submit rings the queue's doorbell
  facts_.own_word = true;
  facts_.word_region = &word_region_;
}

Region RocrDevice::alloc(Memory m, int64_t n) {
  const HsaApi &api = rt_.api;
  bool host = m == Memory::Pinned;
  if (m == Memory::Mapped || (host && !rt_.has_pinned_pool)) return nullptr;  // rig falls back to Pinned
  const GpuAgent &g = engine_->gpu;
  void *p = nullptr;
  hsa_status_t s =
      api.hsa_amd_memory_pool_allocate(host ? rt_.pinned_pool : g.device_pool, static_cast<size_t>(n), 0, &p);
  if (s == HSA_STATUS_ERROR_OUT_OF_RESOURCES || s == HSA_STATUS_ERROR_INVALID_ALLOCATION) return nullptr;
  if (s != HSA_STATUS_SUCCESS) throw Fault("hsa_amd_memory_pool_allocate failed: " + status_text(s));
  if (host) {
    s = api.hsa_amd_agents_allow_access(1, &g.agent, nullptr, p);
    if (s != HSA_STATUS_SUCCESS) {
      api.hsa_amd_memory_pool_free(p);
      throw Fault("hsa_amd_agents_allow_access failed: " + status_text(s));
    }
  }
  book_.add(p, static_cast<uint64_t>(n), host);
  return new RocrRegion{host ? RegionKind::Pinned : RegionKind::Device, p, nullptr, static_cast<uint64_t>(n)};
}

void RocrDevice::free(Region r) {
  const HsaApi &api = rt_.api;
  auto *region = static_cast<RocrRegion *>(r);
  if (region->kind == RegionKind::Word) {
    // The device has stopped: what ran its work goes.
    if (engine_) book_.remove(engine_->host_memory);
    engine_.reset();
    return;
  }
  book_.remove(region->address);
  switch (region->kind) {
    case RegionKind::Device:
    case RegionKind::Pinned:
      api.hsa_amd_memory_pool_free(region->address);
      break;
    case RegionKind::HostLock:
      api.hsa_amd_memory_unlock(region->host);
      break;
    default:
      break;  // an access allowed lasts as the memory does
  }
  delete region;
}

rig_edge_location_t RocrDevice::locate(Region r) const {
  return rig_edge_location_t{static_cast<RocrRegion *>(r)->address, 0, 0};
}

bool RocrDevice::peer(const DriverDevice &other) const {
  auto *theirs = dynamic_cast<const RocrDevice *>(&other);
  return theirs && std::find(peers_.begin(), peers_.end(), theirs->agent_) != peers_.end();
}

Region RocrDevice::map_peer(DriverDevice &, Region r) {
  auto &theirs = *static_cast<RocrRegion *>(r);
  hsa_agent_t agent{agent_};
  if (rt_.api.hsa_amd_agents_allow_access(1, &agent, nullptr, theirs.address) != HSA_STATUS_SUCCESS) return nullptr;
  book_.add(theirs.address, theirs.bytes, false);
  return new RocrRegion{RegionKind::PeerMap, theirs.address, nullptr, theirs.bytes};
}

Region RocrDevice::map_host(void *p, int64_t n) {
  const HsaApi &api = rt_.api;
  hsa_agent_t agent{agent_};
  uint64_t page = page_bytes();
  uint64_t bytes = (static_cast<uint64_t>(n) + page - 1) / page * page;
  // Host memory ROCr allocated, such as another AMD device's Pinned
  // memory, is not locked again: the GPU is allowed to it.
  hsa_amd_pointer_info_t info{};
  info.size = sizeof info;
  if (api.hsa_amd_pointer_info(p, &info, nullptr, nullptr, nullptr) == HSA_STATUS_SUCCESS &&
      info.type == HSA_EXT_POINTER_TYPE_HSA) {
    void *base = info.hostBaseAddress ? info.hostBaseAddress : info.agentBaseAddress;
    if (api.hsa_amd_agents_allow_access(1, &agent, nullptr, base) != HSA_STATUS_SUCCESS) return nullptr;
    book_.add(p, bytes, true);
    return new RocrRegion{RegionKind::HostGrant, p, nullptr, bytes};
  }
  void *address = nullptr;
  if (api.hsa_amd_memory_lock(p, bytes, &agent, 1, &address) != HSA_STATUS_SUCCESS) return nullptr;
  book_.add(address, bytes, true);
  return new RocrRegion{RegionKind::HostLock, address, p, bytes};
}

void RocrDevice::sleep(uint64_t seen, int64_t still_ms) {
  Engine &e = *engine_;
  if (const std::string *why = e.fault()) throw Fault(*why);
  hsa_signal_t signals[2] = {e.timeline, e.wake};
  hsa_signal_condition_t conditions[2] = {HSA_SIGNAL_CONDITION_NE, HSA_SIGNAL_CONDITION_NE};
  hsa_signal_value_t values[2] = {kTop - static_cast<int64_t>(seen), 0};
  uint64_t ms = static_cast<uint64_t>(std::max<int64_t>(still_ms, 0));
  uint64_t ticks = ms > UINT64_MAX / rt_.timestamp_hz ? UINT64_MAX : ms * rt_.timestamp_hz / 1000;
  hsa_signal_value_t satisfied = 0;
  rig_unblock();
  rt_.api.hsa_amd_signal_wait_any(2, signals, conditions, values, ticks, HSA_WAIT_STATE_BLOCKED, &satisfied);
  rig_block();
  if (const std::string *why = e.fault()) throw Fault(*why);
}

void RocrDevice::stop(const std::optional<std::string> &, uint64_t last) {
  std::shared_ptr<Engine> engine = engine_;
  Engine &e = *engine;
  const HsaApi &api = rt_.api;
  std::vector<hsa_signal_t> outstanding;
  {
    std::lock_guard<std::mutex> g(e.mu);
    e.stopped = true;
    // Its packets end here; then nothing waits for the gates and launches
    // that the copy commands wait for.
    if (e.queue) api.hsa_queue_destroy(e.queue);
    e.queue = nullptr;
    for (uint64_t i = e.signal_ring.tail(); i < e.signal_ring.head(); i++) {
      size_t k = i % e.signals.size();
      if (e.roles[k] == SignalRole::Gate)
        api.hsa_signal_store_screlease(e.signals[k], 0);
      else if (api.hsa_signal_load_scacquire(e.signals[k]) > 0)
        outstanding.push_back(e.signals[k]);
    }
  }
  auto write_last = [engine, last] {
    engine->api.hsa_signal_store_screlease(engine->timeline, kTop - static_cast<int64_t>(last));
  };
  if (outstanding.empty()) return write_last();
  // The copy engine still holds commands: the word moves once they end.
  std::thread([outstanding = std::move(outstanding), write_last, &api] {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    for (hsa_signal_t s : outstanding)
      while (api.hsa_signal_load_scacquire(s) > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    write_last();
  }).detach();
}

}  // namespace rig::rocr

// The ROCr driver's encoding of work, without a GPU: the driver runs over a
// fake HSA whose "GPU" executes what the driver wrote as a GPU would, AQL
// packets in order (each with its barrier bit, barrier-AND packets blocking
// until their signals reach zero, dispatches calling a host function as
// the kernel) and copy commands once their dependency signals are zero.
// The fake runs in two orders, copy commands first or AQL packets first,
// so that a dependency the driver forgets changes the bytes or moves the
// word too early.
//
// Asserts the driver's obligations: DRV-76 (signaled reads the word),
// DRV-81 (sleep returns at once once the word moved), DRV-86 (sleep raises
// the fault), DRV-90..92 (stop writes the last value, once no work runs),
// DRV-41 (alloc of memory the device lacks is none), DRV-55 (an image the
// device refuses is an Error), DRV-56 (entry is Absent for a missing
// function), DRV-58 (a second entry makes nothing new); and rig.txt's
// Order on one device as the driver keeps it: device order (ORD-02), a
// part after the parts its after list names (ORD-03, as rig lists them),
// a words part after every earlier part and before the later parts of its
// queue (ORD-04, ORD-05), following transitively (ORD-01).
#include "../../drivers/rocr/rocr_device.hpp"

#include <criterion/criterion.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <thread>

extern "C" void rig_unblock(void) {}
extern "C" void rig_block(void) {}

using namespace rig;
using namespace rig::rocr;

namespace fake {

constexpr uint64_t kGpu = 0x100, kCpu = 0x200;
constexpr uint64_t kDevicePool = 1, kPinnedPool = 2, kKernargPool = 3;
constexpr uint32_t kQueueSize = 64;

struct Signal {
  std::atomic<int64_t> value;
};
Signal &signal(hsa_signal_t s) { return *reinterpret_cast<Signal *>(s.handle); }

struct Queue {
  hsa_queue_t q;  // first: the driver's pointer is this
  std::atomic<uint64_t> write{0}, read{0};
  void (*callback)(hsa_status_t, hsa_queue_t *, void *) = nullptr;
  void *data = nullptr;
  bool destroyed = false;
};

struct Command {
  void *dst;
  const void *src;
  size_t bytes;
  std::vector<hsa_signal_t> deps;
  hsa_signal_t done;
};

using Kernel = void (*)(const void *kernarg);

struct State {
  std::mutex mu;  // the copy list: a stop's thread reads signals meanwhile
  std::vector<Queue *> queues;
  std::deque<Command> commands;
  std::set<void *> allocations;
  std::map<std::string, Kernel> kernels;
  uint64_t device_bytes = uint64_t{1} << 30;
  ~State() {
    for (void *p : allocations) std::free(p);
    for (Queue *q : queues) {
      std::free(q->q.base_address);
      delete reinterpret_cast<Signal *>(q->q.doorbell_signal.handle);
      delete q;
    }
  }
} state;

hsa_status_t agent_info(hsa_agent_t agent, hsa_agent_info_t attribute, void *value) {
  switch (static_cast<int>(attribute)) {
    case HSA_AGENT_INFO_NAME:
      std::strcpy(static_cast<char *>(value), "gfx90a");
      break;
    case HSA_AGENT_INFO_DEVICE:
      *static_cast<hsa_device_type_t *>(value) = agent.handle == kGpu ? HSA_DEVICE_TYPE_GPU : HSA_DEVICE_TYPE_CPU;
      break;
    case HSA_AGENT_INFO_WORKGROUP_MAX_SIZE:
      *static_cast<uint32_t *>(value) = 1024;
      break;
    case HSA_AGENT_INFO_QUEUE_MAX_SIZE:
    case HSA_AGENT_INFO_QUEUE_MIN_SIZE:
      *static_cast<uint32_t *>(value) = kQueueSize;
      break;
    case HSA_AGENT_INFO_CACHE_SIZE: {
      uint32_t sizes[4] = {16 << 10, 8 << 20, 0, 0};
      std::memcpy(value, sizes, sizeof sizes);
      break;
    }
    case HSA_AGENT_INFO_PROFILE:
      *static_cast<hsa_profile_t *>(value) = HSA_PROFILE_BASE;
      break;
    case HSA_AMD_AGENT_INFO_BDFID:
      *static_cast<uint32_t *>(value) = 0xc108;
      break;  // c1:01.0
    case HSA_AMD_AGENT_INFO_DOMAIN:
      *static_cast<uint32_t *>(value) = 0;
      break;
    default:
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t pool_info(hsa_amd_memory_pool_t pool, hsa_amd_memory_pool_info_t attribute, void *value) {
  switch (attribute) {
    case HSA_AMD_MEMORY_POOL_INFO_SIZE:
      *static_cast<size_t *>(value) = pool.handle == kDevicePool ? state.device_bytes : size_t{1} << 34;
      return HSA_STATUS_SUCCESS;
    case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT:
      *static_cast<size_t *>(value) = 4096;
      return HSA_STATUS_SUCCESS;
    default:
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
}

hsa_status_t agent_pool_info(hsa_agent_t, hsa_amd_memory_pool_t, hsa_amd_agent_memory_pool_info_t, void *value) {
  *static_cast<hsa_amd_memory_pool_access_t *>(value) = HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t pool_allocate(hsa_amd_memory_pool_t pool, size_t size, uint32_t, void **out) {
  if (pool.handle == kDevicePool && size > state.device_bytes) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  *out = std::aligned_alloc(4096, (size + 4095) / 4096 * 4096);
  state.allocations.insert(*out);
  return HSA_STATUS_SUCCESS;
}
hsa_status_t pool_free(void *p) {
  cr_assert(state.allocations.erase(p) == 1, "a free of memory the pools did not allocate");
  std::free(p);
  return HSA_STATUS_SUCCESS;
}
hsa_status_t allow_access(uint32_t, const hsa_agent_t *, const uint32_t *, const void *) { return HSA_STATUS_SUCCESS; }
hsa_status_t lock(void *host, size_t, hsa_agent_t *, int, void **agent_ptr) {
  *agent_ptr = host;
  return HSA_STATUS_SUCCESS;
}
hsa_status_t unlock(void *) { return HSA_STATUS_SUCCESS; }
hsa_status_t pointer_info(const void *p, hsa_amd_pointer_info_t *info, void *(*)(size_t), uint32_t *, hsa_agent_t **) {
  info->type = state.allocations.count(const_cast<void *>(p)) ? HSA_EXT_POINTER_TYPE_HSA : HSA_EXT_POINTER_TYPE_UNKNOWN;
  info->hostBaseAddress = info->agentBaseAddress = const_cast<void *>(p);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t signal_create(hsa_signal_value_t v, uint32_t, const hsa_agent_t *, hsa_signal_t *out) {
  out->handle = reinterpret_cast<uint64_t>(new Signal{v});
  return HSA_STATUS_SUCCESS;
}
hsa_status_t signal_destroy(hsa_signal_t s) {
  delete &signal(s);
  return HSA_STATUS_SUCCESS;
}
hsa_signal_value_t signal_load(hsa_signal_t s) { return signal(s).value.load(); }
void signal_store(hsa_signal_t s, hsa_signal_value_t v) { signal(s).value.store(v); }
void signal_subtract(hsa_signal_t s, hsa_signal_value_t v) { signal(s).value.fetch_sub(v); }
uint32_t wait_any(uint32_t count, hsa_signal_t *signals, hsa_signal_condition_t *conditions, hsa_signal_value_t *values,
                  uint64_t, hsa_wait_state_t, hsa_signal_value_t *satisfied) {
  for (uint32_t i = 0; i < count; i++) {
    cr_assert_eq(conditions[i], HSA_SIGNAL_CONDITION_NE);
    if (signal_load(signals[i]) != values[i]) {
      *satisfied = signal_load(signals[i]);
      return i;
    }
  }
  return count;  // the fake never blocks: a timeout
}

hsa_status_t queue_create(hsa_agent_t, uint32_t size, hsa_queue_type32_t,
                          void (*callback)(hsa_status_t, hsa_queue_t *, void *), void *data, uint32_t, uint32_t,
                          hsa_queue_t **out) {
  auto *q = new Queue();
  q->q.size = size;
  q->q.base_address = std::aligned_alloc(64, size * 64);
  for (uint32_t i = 0; i < size; i++)
    *reinterpret_cast<uint16_t *>(static_cast<char *>(q->q.base_address) + i * 64) = HSA_PACKET_TYPE_INVALID;
  signal_create(0, 0, nullptr, &q->q.doorbell_signal);
  q->callback = callback;
  q->data = data;
  state.queues.push_back(q);
  *out = &q->q;
  return HSA_STATUS_SUCCESS;
}
Queue &queue(const hsa_queue_t *q) { return *reinterpret_cast<Queue *>(const_cast<hsa_queue_t *>(q)); }
hsa_status_t queue_destroy(hsa_queue_t *q) {
  queue(q).destroyed = true;
  return HSA_STATUS_SUCCESS;
}
uint64_t read_index(const hsa_queue_t *q) { return queue(q).read.load(); }
uint64_t write_index(const hsa_queue_t *q) { return queue(q).write.load(); }
void store_write_index(const hsa_queue_t *q, uint64_t v) { queue(q).write.store(v); }

hsa_status_t async_copy(void *dst, hsa_agent_t dst_agent, const void *src, hsa_agent_t src_agent, size_t size,
                        uint32_t count, const hsa_signal_t *deps, hsa_signal_t done) {
  // ROCr copies with the source's agent where it is a GPU, else the
  // destination's: the driver's GPU must be one of them.
  cr_assert(src_agent.handle == kGpu || dst_agent.handle == kGpu, "a copy with no GPU agent");
  cr_assert(done.handle != 0);
  std::lock_guard<std::mutex> g(state.mu);
  state.commands.push_back({dst, src, size, std::vector<hsa_signal_t>(deps, deps + count), done});
  return HSA_STATUS_SUCCESS;
}

// A code object is the text "kernels: a b c", naming host functions.
hsa_status_t reader_create(const void *bytes, size_t n, hsa_code_object_reader_t *out) {
  out->handle = reinterpret_cast<uint64_t>(new std::string(static_cast<const char *>(bytes), n));
  return HSA_STATUS_SUCCESS;
}
hsa_status_t reader_destroy(hsa_code_object_reader_t r) {
  delete reinterpret_cast<std::string *>(r.handle);
  return HSA_STATUS_SUCCESS;
}
hsa_status_t executable_create(hsa_profile_t, hsa_default_float_rounding_mode_t, const char *, hsa_executable_t *out) {
  out->handle = reinterpret_cast<uint64_t>(new std::string());
  return HSA_STATUS_SUCCESS;
}
hsa_status_t executable_load(hsa_executable_t e, hsa_agent_t, hsa_code_object_reader_t r, const char *,
                             hsa_loaded_code_object_t *) {
  const std::string &text = *reinterpret_cast<std::string *>(r.handle);
  if (text.rfind("kernels:", 0) != 0) return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  *reinterpret_cast<std::string *>(e.handle) = text.substr(8) + " ";
  return HSA_STATUS_SUCCESS;
}
hsa_status_t executable_freeze(hsa_executable_t, const char *) { return HSA_STATUS_SUCCESS; }
hsa_status_t executable_destroy(hsa_executable_t e) {
  delete reinterpret_cast<std::string *>(e.handle);
  return HSA_STATUS_SUCCESS;
}
hsa_status_t symbol_by_name(hsa_executable_t e, const char *name, const hsa_agent_t *, hsa_executable_symbol_t *out) {
  std::string n = name;
  if (n.size() < 3 || n.substr(n.size() - 3) != ".kd") return HSA_STATUS_ERROR_INVALID_SYMBOL_NAME;
  n.resize(n.size() - 3);
  const std::string &names = *reinterpret_cast<std::string *>(e.handle);
  auto it = state.kernels.find(n);
  if (names.find(" " + n + " ") == std::string::npos || it == state.kernels.end())
    return HSA_STATUS_ERROR_INVALID_SYMBOL_NAME;
  out->handle = reinterpret_cast<uint64_t>(it->second);
  return HSA_STATUS_SUCCESS;
}
hsa_status_t symbol_info(hsa_executable_symbol_t s, hsa_executable_symbol_info_t attribute, void *value) {
  switch (attribute) {
    case HSA_EXECUTABLE_SYMBOL_INFO_TYPE:
      *static_cast<hsa_symbol_kind_t *>(value) = HSA_SYMBOL_KIND_KERNEL;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT:
      *static_cast<uint64_t *>(value) = s.handle;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE:
      *static_cast<uint32_t *>(value) = 24;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT:
      *static_cast<uint32_t *>(value) = 16;
      break;
    default:
      *static_cast<uint32_t *>(value) = 0;
      break;
  }
  return HSA_STATUS_SUCCESS;
}

// The runtime as hsa_init would have found one GPU.
const HsaRuntime &runtime() {
  static HsaRuntime *r = [] {
    auto *rt = new HsaRuntime();
    HsaApi &a = rt->api;
    a.hsa_agent_get_info = agent_info;
    a.hsa_amd_memory_pool_get_info = pool_info;
    a.hsa_amd_agent_memory_pool_get_info = agent_pool_info;
    a.hsa_amd_memory_pool_allocate = pool_allocate;
    a.hsa_amd_memory_pool_free = pool_free;
    a.hsa_amd_agents_allow_access = allow_access;
    a.hsa_amd_memory_lock = lock;
    a.hsa_amd_memory_unlock = unlock;
    a.hsa_amd_pointer_info = pointer_info;
    a.hsa_signal_create = signal_create;
    a.hsa_signal_destroy = signal_destroy;
    a.hsa_signal_load_scacquire = signal_load;
    a.hsa_signal_load_relaxed = signal_load;
    a.hsa_signal_store_screlease = signal_store;
    a.hsa_signal_subtract_screlease = signal_subtract;
    a.hsa_amd_signal_wait_any = wait_any;
    a.hsa_queue_create = queue_create;
    a.hsa_queue_destroy = queue_destroy;
    a.hsa_queue_load_read_index_scacquire = read_index;
    a.hsa_queue_load_write_index_relaxed = write_index;
    a.hsa_queue_store_write_index_screlease = store_write_index;
    a.hsa_amd_memory_async_copy = async_copy;
    a.hsa_code_object_reader_create_from_memory = reader_create;
    a.hsa_code_object_reader_destroy = reader_destroy;
    a.hsa_executable_create_alt = executable_create;
    a.hsa_executable_load_agent_code_object = executable_load;
    a.hsa_executable_freeze = executable_freeze;
    a.hsa_executable_destroy = executable_destroy;
    a.hsa_executable_get_symbol_by_name = symbol_by_name;
    a.hsa_executable_symbol_get_info = symbol_info;
    GpuAgent gpu;
    gpu.agent.handle = kGpu;
    gpu.device_pool.handle = kDevicePool;
    gpu.has_device_pool = true;
    gpu.group_bytes = 64 << 10;
    rt->gpus.push_back(gpu);
    rt->cpu.handle = kCpu;
    rt->pinned_pool.handle = kPinnedPool;
    rt->kernarg_pool.handle = kKernargPool;
    rt->has_pinned_pool = rt->has_kernarg_pool = true;
    return rt;
  }();
  return *r;
}

bool ready(const std::vector<hsa_signal_t> &deps) {
  return std::all_of(deps.begin(), deps.end(), [](hsa_signal_t s) { return s.handle == 0 || signal_load(s) == 0; });
}

// Runs a copy command whose signals are zero, the latest first.
bool run_copies() {
  std::lock_guard<std::mutex> g(state.mu);
  for (auto it = state.commands.rbegin(); it != state.commands.rend(); ++it) {
    if (!ready(it->deps)) continue;
    auto *d = static_cast<char *>(it->dst);
    auto *s = static_cast<const char *>(it->src);
    cr_assert(d + it->bytes <= s || s + it->bytes <= d, "a copy command over overlapping bytes");
    std::memcpy(d, s, it->bytes);
    signal_subtract(it->done, 1);
    state.commands.erase(std::next(it).base());
    return true;
  }
  return false;
}

// Processes the next packet of a queue, unless it waits: one at a time,
// so that copy commands may run between any two packets.
bool run_packet() {
  for (Queue *q : state.queues) {
    if (q->destroyed || q->read.load() == q->write.load()) continue;
    char *slot = static_cast<char *>(q->q.base_address) + (q->read.load() % q->q.size) * 64;
    uint16_t header = *reinterpret_cast<uint16_t *>(slot);
    cr_assert(header & (1 << HSA_PACKET_HEADER_BARRIER), "a packet without the barrier bit");
    cr_assert_eq((header >> HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE) & 3, HSA_FENCE_SCOPE_SYSTEM);
    hsa_signal_t completion;
    if ((header & 0xff) == HSA_PACKET_TYPE_BARRIER_AND) {
      auto *p = reinterpret_cast<hsa_barrier_and_packet_t *>(slot);
      if (!ready(std::vector<hsa_signal_t>(p->dep_signal, p->dep_signal + 5))) continue;
      completion = p->completion_signal;
    } else {
      cr_assert_eq(header & 0xff, HSA_PACKET_TYPE_KERNEL_DISPATCH);
      auto *p = reinterpret_cast<hsa_kernel_dispatch_packet_t *>(slot);
      reinterpret_cast<Kernel>(p->kernel_object)(p->kernarg_address);
      completion = p->completion_signal;
    }
    if (completion.handle) signal_subtract(completion, 1);
    *reinterpret_cast<uint16_t *>(slot) = HSA_PACKET_TYPE_INVALID;
    q->read++;
    return true;
  }
  return false;
}

enum class Order { CopiesFirst, PacketsFirst };

// Runs the GPU until nothing moves.
void run(Order order) {
  for (;;) {
    bool moved = order == Order::CopiesFirst ? run_copies() || run_packet() : run_packet() || run_copies();
    if (!moved) return;
  }
}

}  // namespace fake

namespace {

// Kernels: host functions over their kernel arguments.
struct StoreArgs {
  uint64_t *dst;
  uint64_t value;
};
void store_kernel(const void *args) {
  auto *a = static_cast<const StoreArgs *>(args);
  *a->dst = a->value;
}
void increment_kernel(const void *args) { (**static_cast<uint64_t *const *>(args))++; }

void setup_kernels() {
  fake::state.kernels["store"] = store_kernel;
  fake::state.kernels["increment"] = increment_kernel;
}

struct Device {
  RocrDevice d{fake::runtime(), 0, "", 0};
  uint64_t next = 1;
  std::vector<DriverDevice::Image> images;
  std::vector<Region> regions;
  ~Device() {
    for (DriverDevice::Image i : images) d.unload(i);
    for (Region r : regions) d.free(r);
  }

  // The entry of the kernel name, from an image of both kernels.
  const void *entry(const char *name) {
    std::string code = "kernels: store increment";
    auto image = d.image(code.data(), code.size());
    cr_assert(std::holds_alternative<DriverDevice::Image>(image));
    images.push_back(std::get<DriverDevice::Image>(image));
    auto e = d.entry(images.back(), name);
    cr_assert(std::holds_alternative<DriverDevice::Entry>(e));
    return std::get<DriverDevice::Entry>(e).handle;
  }

  void *memory(Memory m, int64_t n) {
    Region r = d.alloc(m, n);
    cr_assert_not_null(r);
    regions.push_back(r);
    return d.locate(r).address;
  }
  // Submits parts as the next value; answers room's answer.
  rig_edge_room_t submit(std::vector<rig_edge_part_t> parts) {
    rig_edge_work_t w{next, parts.data(), static_cast<uint32_t>(parts.size()), nullptr, 0};
    rig_edge_room_t room = d.room(w);
    if (room != RIG_ROOM) return room;
    d.submit(w);
    next++;
    return RIG_ROOM;
  }
};

rig_edge_location_t at(void *p) { return {p, 0, 0}; }

rig_edge_part_t copy_part(void *dst, const void *src, uint64_t width, uint64_t rows = 1, uint64_t src_pitch = 0,
                          uint64_t dst_pitch = 0) {
  rig_edge_part_t p{};
  p.kind = RIG_PART_COPY;
  p.queue = 1;
  p.u.copy = {at(const_cast<void *>(src)),  at(dst), width, rows, src_pitch ? src_pitch : width,
              dst_pitch ? dst_pitch : width};
  return p;
}
rig_edge_part_t fill_part(void *dst, uint64_t n, uint8_t value) {
  rig_edge_part_t p{};
  p.kind = RIG_PART_FILL;
  p.queue = 1;
  p.u.fill = {at(dst), n, value};
  return p;
}
rig_edge_part_t launch_part(const void *entry, const void *params, uint64_t bytes) {
  rig_edge_part_t p{};
  p.kind = RIG_PART_LAUNCH;
  p.queue = 0;
  p.u.launch = {entry, params, bytes, {1, 1, 1}, {64, 1, 1}, 0, nullptr, 0};
  return p;
}

bool all_bytes(const void *p, uint64_t n, uint8_t v) {
  auto *b = static_cast<const uint8_t *>(p);
  return std::all_of(b, b + n, [&](uint8_t x) { return x == v; });
}

const fake::Order kOrders[] = {fake::Order::CopiesFirst, fake::Order::PacketsFirst};

}  // namespace

TestSuite(rocr_encoding, .init = setup_kernels);

Test(rocr_encoding, facts) {
  Device dev;
  const Facts &f = dev.d.facts();
  cr_assert_eq(f.arch, "gfx90a");
  cr_assert_eq(f.bus.value_or(""), "0000:c1:01.0");
  cr_assert_eq(f.cache_bytes.value_or(0), 8 << 20);  // L2
  cr_assert_eq(f.budget, int64_t{1} << 30);
  cr_assert(f.own_word && f.word_region && !f.queue_waits && f.maps_host && !f.host_addresses);
  cr_assert_eq(f.copy_engine, 1);
  cr_assert_eq(dev.d.signaled(), 0u);  // DRV-76: the word reads start at open
  RocrDevice later(fake::runtime(), 0, "hang_ms=250", 41);
  cr_assert_eq(later.signaled(), 41u);
  cr_assert_eq(later.facts().hang_ms.value_or(0), 250);
}

Test(rocr_encoding, memory) { /* DRV-41 */
  Device dev;
  cr_assert_null(dev.d.alloc(Memory::Mapped, 64), "Mapped memory: rig falls back to Pinned");
  cr_assert_null(dev.d.alloc(Memory::Device, int64_t{2} << 30), "more than the pool holds");
  Region r = dev.d.alloc(Memory::Pinned, 4096);
  cr_assert_not_null(r);
  dev.d.free(r);
}

Test(rocr_encoding, fills_and_strided_copies_reach_their_bytes) { /* ORD-02 */
  for (fake::Order order : kOrders) {
    Device dev;
    const uint64_t n = 100003;  // no power of two: the doubling's last step is short
    auto *a = static_cast<uint8_t *>(dev.memory(Memory::Device, 100004));
    auto *host = static_cast<uint8_t *>(dev.memory(Memory::Pinned, 4096));
    for (int i = 0; i < 4096; i++) host[i] = static_cast<uint8_t>(i);
    cr_assert_eq(dev.submit({fill_part(a, n, 0x5a)}), RIG_ROOM);
    // Rows of 10 bytes, 64 apart on the host, 16 apart on the device.
    cr_assert_eq(dev.submit({copy_part(a + 16, host, 10, 8, 64, 16)}), RIG_ROOM);
    // The packets alone move nothing: each value's last waits for its copies.
    while (fake::run_packet()) {
    }
    cr_assert_eq(dev.d.signaled(), 0u);
    fake::run(order);
    cr_assert_eq(dev.d.signaled(), 2u);
    for (int r = 0; r < 8; r++) cr_assert(std::memcmp(a + 16 + r * 16, host + r * 64, 10) == 0, "row %d", r);
    cr_assert(all_bytes(a, 16, 0x5a) && all_bytes(a + 26, 6, 0x5a) && all_bytes(a + 144, n - 144, 0x5a));
  }
}

Test(rocr_encoding, device_order_and_after_lists) { /* ORD-01, ORD-02, ORD-03 */
  for (fake::Order order : kOrders) {
    Device dev;
    const void *store = dev.entry("store"), *increment = dev.entry("increment");
    auto *a = static_cast<uint64_t *>(dev.memory(Memory::Device, 64));
    auto *b = static_cast<uint64_t *>(dev.memory(Memory::Device, 64));
    auto *host = static_cast<uint64_t *>(dev.memory(Memory::Pinned, 64));
    // Value 1: a launch stores 7 in a[0], then a copy, after it, takes a
    // to b.  Value 2: a copy takes b to the host, then a launch, after it,
    // increments the host's word.  Value 3: that word is copied into a[1].
    StoreArgs s{a, 7};
    rig_edge_part_t v1[] = {launch_part(store, &s, sizeof s), copy_part(b, a, 8)};
    uint32_t after0[] = {0};
    v1[1].after = after0;
    v1[1].after_count = 1;
    cr_assert_eq(dev.submit({v1[0], v1[1]}), RIG_ROOM);
    uint64_t *counter = host;
    rig_edge_part_t v2[] = {copy_part(host, b, 8), launch_part(increment, &counter, sizeof counter)};
    v2[1].after = after0;
    v2[1].after_count = 1;
    cr_assert_eq(dev.submit({v2[0], v2[1]}), RIG_ROOM);
    cr_assert_eq(dev.submit({copy_part(a + 1, host, 8)}), RIG_ROOM);
    fake::run(order);
    cr_assert_eq(dev.d.signaled(), 3u);
    cr_assert_eq(a[0], 7u);
    cr_assert_eq(*b, 7u);
    cr_assert_eq(*host, 8u);
    cr_assert_eq(a[1], 8u);
  }
}

Test(rocr_encoding, a_words_part_follows_every_earlier_part) { /* ORD-04, ORD-05 */
  for (fake::Order order : kOrders) {
    Device dev;
    const void *store = dev.entry("store");
    auto *a = static_cast<uint64_t *>(dev.memory(Memory::Device, 64));
    // The launch stores 1 in a[0]; the words part, on the other queue and
    // named after nothing, writes 2 there after it, 3 into a[1], then 4
    // into a[0]: in order.
    StoreArgs s{a, 1};
    rig_edge_word_write_t writes[] = {{at(a), 2}, {at(a + 1), 3}, {at(a), 4}};
    rig_edge_part_t words{};
    words.kind = RIG_PART_WORDS;
    words.queue = 1;
    words.u.words = {writes, 3};
    // A copy on the words part's queue, after it, takes a[0] to a[2].
    cr_assert_eq(dev.submit({launch_part(store, &s, sizeof s), words, copy_part(a + 2, a, 8)}), RIG_ROOM);
    fake::run(order);
    cr_assert_eq(a[0], 4u);
    cr_assert_eq(a[1], 3u);
    cr_assert_eq(a[2], 4u);
  }
}

Test(rocr_encoding, room_answers_later_then_never) { /* SUB-26 (RIG_LATER), SUB-23 (RIG_NEVER) */
  Device dev;
  auto *a = static_cast<uint8_t *>(dev.memory(Memory::Device, 4096));
  // Each value of one copy takes two packets of the queue's 64: its gate
  // and its last.
  int taken = 0;
  while (dev.submit({copy_part(a + 8, a, 8)}) == RIG_ROOM) taken++;
  cr_assert_eq(taken, 32);
  fake::run(fake::Order::PacketsFirst);
  cr_assert_eq(dev.d.signaled(), 32u);
  cr_assert_eq(dev.submit({copy_part(a + 8, a, 8)}), RIG_ROOM);
  // A part on no queue of the device, and more copy commands than a value holds.
  rig_edge_part_t lost = copy_part(a + 8, a, 8);
  lost.queue = 2;
  cr_assert_eq(dev.submit({lost}), RIG_NEVER);
  cr_assert_eq(dev.submit({copy_part(a + 1, a, 1, kMaxCopyCommands + 1, 2, 2)}), RIG_NEVER);
  rig_edge_part_t wide = launch_part(dev.entry("store"), nullptr, 0);
  wide.u.launch.threads[0] = 2048;
  cr_assert_eq(dev.submit({wide}), RIG_NEVER);
}

Test(rocr_encoding, entry_absent_and_image_refused) { /* DRV-55, DRV-56 */
  Device dev;
  std::string code = "kernels: store";
  auto image = std::get<DriverDevice::Image>(dev.d.image(code.data(), code.size()));
  cr_assert(std::holds_alternative<DriverDevice::Absent>(dev.d.entry(image, "missing")));
  auto first = std::get<DriverDevice::Entry>(dev.d.entry(image, "store"));
  auto second = std::get<DriverDevice::Entry>(dev.d.entry(image, "store"));
  cr_assert_eq(first.handle, second.handle, "a second entry made something new");  // DRV-58
  dev.d.unload(image);
  std::string bad = "not a code object";
  cr_assert(std::holds_alternative<std::string>(dev.d.image(bad.data(), bad.size())));
}

Test(rocr_encoding, sleep_returns_once_moved_and_raises_the_fault) { /* DRV-81, DRV-86 */
  Device dev;
  dev.d.sleep(5, 1000);  // the word reads 0, not 5: at once
  fake::Queue *q = fake::state.queues.back();
  q->callback(static_cast<hsa_status_t>(HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION), &q->q, q->data);
  bool raised = false;
  try {
    dev.d.sleep(0, 1000);
  } catch (const Fault &) {
    raised = true;
  }
  cr_assert(raised, "sleep did not raise the queue's fault");
}

Test(rocr_encoding, stop_writes_the_last_value_once_copies_end) { /* DRV-90, DRV-91, DRV-92 */
  Device dev;
  const void *store = dev.entry("store");
  auto *a = static_cast<uint64_t *>(dev.memory(Memory::Device, 64));
  auto *b = static_cast<uint64_t *>(dev.memory(Memory::Device, 64));
  StoreArgs s{a, 9};
  rig_edge_part_t parts[] = {launch_part(store, &s, sizeof s), copy_part(b, a, 8)};
  uint32_t after0[] = {0};
  parts[1].after = after0;
  parts[1].after_count = 1;
  cr_assert_eq(dev.submit({parts[0], parts[1]}), RIG_ROOM);
  // Nothing ran: the stop ends the packets and releases the copy command,
  // and the word moves to the last value only once that command has run.
  dev.d.stop(std::nullopt, 1);
  cr_assert(fake::state.queues.back()->destroyed);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  cr_assert_eq(dev.d.signaled(), 0u);
  fake::run(fake::Order::CopiesFirst);
  for (int i = 0; i < 2000 && dev.d.signaled() != 1; i++) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  cr_assert_eq(dev.d.signaled(), 1u);
  // A stop with no work running writes the value before it returns.
  Device idle;
  idle.d.stop(std::nullopt, 0);
  cr_assert_eq(idle.d.signaled(), 0u);
  idle.d.free(idle.d.facts().word_region);
}

// A CUDA device: its open (facts, streams, word), memory, peers, DMA,
// sleep and stop.  Code is in cuda_code.cpp, queues in cuda_queues.cpp.
#include "cuda_device.hpp"

#include "cuda_host_pages.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

namespace rig::cuda {
namespace {

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// Events made at open: two per value with copies, and one per part a part
// on the other stream follows; grow() adds more.
constexpr size_t kInitialEvents = 16;
constexpr size_t kInitialParts = 64;
// A device whose kernels no watchdog bounds declares this hang bound.
constexpr int64_t kHangMs = 10000;

// cuDeviceGetPCIBusId's answer as Linux names PCI functions: a 4-digit
// domain, lower-case hex ("0000:41:00.0").
std::optional<std::string> bus_address(const cu::Api &api, cu::Device device) {
  char text[64] = "";
  if (api.cuDeviceGetPCIBusId(text, sizeof text, device) != cu::kSuccess) return std::nullopt;
  unsigned domain, bus, slot, function;
  if (std::sscanf(text, "%x:%x:%x.%x", &domain, &bus, &slot, &function) != 4) return std::nullopt;
  char out[32];
  std::snprintf(out, sizeof out, "%04x:%02x:%02x.%x", domain, bus, slot, function);
  return std::string(out);
}

// The NUMA node sysfs states for a PCI function, or -1.
int sysfs_numa_node(const std::string &bus) {
  std::ifstream in("/sys/bus/pci/devices/" + bus + "/numa_node");
  int node = -1;
  if (!(in >> node)) return -1;
  return node;
}

// True iff fn is a PCI bus address ("0000:41:00.0") of a function of this
// machine.
bool names_pci_function(const std::string &fn) {
  if (fn.size() != 12 || fn[4] != ':' || fn[7] != ':' || fn[10] != '.') return false;
  for (size_t i = 0; i < fn.size(); i++)
    if (i != 4 && i != 7 && i != 10 && !std::isxdigit(static_cast<unsigned char>(fn[i]))) return false;
  return access(("/sys/bus/pci/devices/" + fn).c_str(), F_OK) == 0;
}

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Throws std::runtime_error, which fails the open, where r is an error.
void opening(const cu::Api &api, cu::Result r, const char *what) {
  if (r != cu::kSuccess) throw std::runtime_error(std::string(what) + ": " + api.describe(r));
}

// The device's attribute a, or -1 where CUDA does not say.
int device_attribute(const cu::Api &api, cu::Device device, cu::DeviceAttribute a) {
  int value = 0;
  return api.cuDeviceGetAttribute(&value, a, device) == cu::kSuccess ? value : -1;
}

// The device's facts but its word (make_word).  hang_ms overrides the hang
// bound (0: none).
Facts device_facts(const cu::Api &api, cu::Device device, std::optional<int64_t> hang_ms) {
  auto attribute = [&](cu::DeviceAttribute a) { return device_attribute(api, device, a); };
  Facts f;
  f.arch = "sm_" + std::to_string(attribute(cu::kAttrComputeCapabilityMajor)) +
           std::to_string(attribute(cu::kAttrComputeCapabilityMinor));
  f.bus = bus_address(api, device);
  f.alignment = 256;  // cuMemAlloc's; cuMemHostAlloc's is a page
  if (int l2 = attribute(cu::kAttrL2CacheSize); l2 > 0) f.cache_bytes = l2;
  size_t total = 0;
  opening(api, api.cuDeviceTotalMem(&total, device), "cuDeviceTotalMem");
  f.budget = static_cast<int64_t>(std::min<size_t>(total, INT64_MAX));
  if (hang_ms)
    f.hang_ms = *hang_ms > 0 ? hang_ms : std::nullopt;
  else if (attribute(cu::kAttrKernelExecTimeout) == 0)
    f.hang_ms = kHangMs;
  int node = attribute(cu::kAttrHostNumaId);
  if (node < 0 && f.bus) node = sysfs_numa_node(*f.bus);
  if (node >= 0) f.numa_node = node;
  f.maps_host = true;
  f.queue_waits = attribute(cu::kAttrCanUse64BitStreamMemOps) == 1;
  f.queues = {"COMPUTE:0", "COPY:0"};
  f.copy_engine = 1;
  f.commit_every = 1;
  return f;
}

// The device's bounds on launches and copies; 0 where CUDA does not say,
// which refuses what they bound.
CudaLimits device_limits(const cu::Api &api, cu::Device device) {
  auto bound = [&](cu::DeviceAttribute a) {
    return static_cast<uint64_t>(std::max(0, device_attribute(api, device, a)));
  };
  CudaLimits l;
  l.grid[0] = bound(cu::kAttrMaxGridDimX);
  l.grid[1] = bound(cu::kAttrMaxGridDimY);
  l.grid[2] = bound(cu::kAttrMaxGridDimZ);
  l.block[0] = bound(cu::kAttrMaxBlockDimX);
  l.block[1] = bound(cu::kAttrMaxBlockDimY);
  l.block[2] = bound(cu::kAttrMaxBlockDimZ);
  l.threads = bound(cu::kAttrMaxThreadsPerBlock);
  l.shared_optin = bound(cu::kAttrMaxSharedMemoryPerBlockOptin);
  l.pitch = bound(cu::kAttrMaxPitch);
  int version = 0;
  api.cuDriverGetVersion(&version);
  // CUDA 12.1 raised a launch's parameters from 4 KiB to 32764 bytes.
  l.param_bytes = version >= 12010 ? 32764 : 4096;
  return l;
}

}  // namespace

CudaDevice::CudaDevice(const cu::Api &api, int ordinal, int count, uint64_t start, std::optional<int64_t> hang_ms,
                       const std::string &context)
    : api_(api), ordinal_(ordinal) {
  opening(api, api.cuDeviceGet(&device_, ordinal), "cuDeviceGet");
  auto attribute = [&](cu::DeviceAttribute a) { return device_attribute(api, device_, a); };
  if (attribute(cu::kAttrUnifiedAddressing) != 1)
    throw std::runtime_error("the device has no unified addressing, which rig needs");
  if (attribute(cu::kAttrHostRegisterSupported) != 1 || attribute(cu::kAttrCanMapHostMemory) != 1 ||
      attribute(cu::kAttrCanUseHostPointerForRegisteredMem) != 1)
    throw std::runtime_error("the device does not map registered host memory, which rig's timeline word needs");
  context_ = context.empty() ? cu::ContextHold::primary(api, device_)
                             : cu::ContextHold::named(api, device_, ordinal, context);
  try {
    auto scope = current();
    facts_ = device_facts(api, device_, hang_ms);
    limits_ = device_limits(api, device_);
    dma_buf_ = attribute(cu::kAttrDmaBufSupported) == 1;
    can_access_peer_.assign(static_cast<size_t>(count), 0);
    peer_enabled_.assign(static_cast<size_t>(count), 0);
    for (int j = 0; j < count; j++) {
      cu::Device other;
      int can = 0;
      if (j != ordinal && api.cuDeviceGet(&other, j) == cu::kSuccess &&
          api.cuDeviceCanAccessPeer(&can, device_, other) == cu::kSuccess)
        can_access_peer_[static_cast<size_t>(j)] = can != 0;
    }
    make_word(start);
    opening(api, api.cuStreamCreate(&compute_, cu::kStreamNonBlocking), "cuStreamCreate");
    opening(api, api.cuStreamCreate(&copy_, cu::kStreamNonBlocking), "cuStreamCreate");
    for (size_t i = 0; i < kInitialEvents; i++) {
      cu::Event e;
      opening(api, api.cuEventCreate(&e, cu::kEventDisableTiming), "cuEventCreate");
      all_events_.push_back(e);
    }
    events_ = all_events_;
    event_of_.reserve(kInitialParts);
  } catch (...) {
    release_queues();
    release_word();
    throw;
  }
}

void CudaDevice::make_word(uint64_t start) {
  size_t bytes = cu::host_page_bytes();
  void *page = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) throw std::runtime_error("no memory for the timeline word");
  word_ = new (page) std::atomic<uint64_t>(start);
  word_region_ = new CudaRegion{CudaRegion::Word, 0, page, bytes};
  opening(api_, api_.cuMemHostRegister(page, bytes, cu::kMemHostRegisterPortable | cu::kMemHostRegisterDeviceMap),
          "cuMemHostRegister of the timeline word");
  opening(api_, api_.cuMemHostGetDevicePointer(&word_region_->address, page, 0), "cuMemHostGetDevicePointer");
  facts_.word = word_;
  facts_.own_word = true;
  facts_.word_region = word_region_;
}

CudaDevice::~CudaDevice() {
  // This runs for a device that never served, such as one whose facts rig
  // refused, and as rig frees a retired record, whose stop and the free of
  // its word ran first.
  release_queues();
  release_word();
}

void CudaDevice::release_word() {
  if (!word_region_) return;
  if (context_->abandoned()) {
    // Gone with its context, or else left to its page: unregister it
    // without the context, so that a later registration of the address
    // cannot find it.
    api_.cuMemHostUnregister(word_region_->host);
  } else {
    auto scope = current();
    api_.cuMemHostUnregister(word_region_->host);
  }
  munmap(word_region_->host, word_region_->bytes);
  delete word_region_;
  word_region_ = nullptr;
  word_ = nullptr;
}

void CudaDevice::release_queues() {
  std::lock_guard<std::mutex> g(grown_mu_);
  if (!context_->abandoned()) {
    // Streams and events still in use go once their work is done.
    auto scope = current();
    if (compute_) api_.cuStreamDestroy(compute_);
    if (copy_) api_.cuStreamDestroy(copy_);
    for (cu::Event e : all_events_) api_.cuEventDestroy(e);
  }
  compute_ = copy_ = nullptr;
  all_events_.clear();
}

void CudaDevice::fail(const char *what, cu::Result r) {
  std::string why = std::string(what) + ": " + api_.describe(r);
  if (cu::breaks_context(r)) {
    std::lock_guard<std::mutex> g(fault_mu_);
    if (!faulted_.load()) {
      fault_ = why;
      faulted_.store(true, std::memory_order_release);
    }
    why = fault_;
  }
  throw Fault(why);
}

void CudaDevice::raise_recorded_fault() {
  if (!faulted_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> g(fault_mu_);
  throw Fault(fault_);
}

cu::Result CudaDevice::work_error() {
  auto scope = current();
  for (cu::Stream s : {compute_, copy_}) {
    cu::Result r = api_.cuStreamQuery(s);
    if (r != cu::kSuccess && r != cu::kErrorNotReady) return r;
  }
  return cu::kSuccess;
}

// ---- Memory ------------------------------------------------------------

Region CudaDevice::alloc(Memory m, int64_t n) {
  auto scope = current();
  auto bytes = static_cast<size_t>(n);
  if (m == Memory::Device) {
    cu::DevicePtr address = 0;
    cu::Result r = api_.cuMemAlloc(&address, bytes);
    if (r == cu::kErrorOutOfMemory) return nullptr;
    check(r, "cuMemAlloc");
    return new CudaRegion{CudaRegion::Device, address, nullptr, bytes};
  }
  if (m == Memory::Pinned) {
    void *host = nullptr;
    cu::Result r = api_.cuMemHostAlloc(&host, bytes, cu::kMemHostAllocPortable | cu::kMemHostAllocDeviceMap);
    if (r == cu::kErrorOutOfMemory) return nullptr;
    check(r, "cuMemHostAlloc");
    cu::DevicePtr address = 0;
    r = api_.cuMemHostGetDevicePointer(&address, host, 0);
    // rig gives Pinned memory one address for the host and the work.
    if (r != cu::kSuccess || address != reinterpret_cast<uintptr_t>(host)) {
      api_.cuMemFreeHost(host);
      if (r != cu::kSuccess) check(r, "cuMemHostGetDevicePointer");
      return nullptr;
    }
    return new CudaRegion{CudaRegion::Pinned, address, host, bytes};
  }
  return nullptr;  // no host-visible window on device memory: rig falls back to Pinned
}

void CudaDevice::free(Region r) {
  std::unique_ptr<CudaRegion> region(static_cast<CudaRegion *>(r));
  if (region.get() == word_region_) {
    region.release();
    release_word();
    return;
  }
  // Peer access stays enabled for the context; the memory of a context
  // released after a fault went with it.
  if (region->kind == CudaRegion::Peer || context_->abandoned()) return;
  auto scope = current();
  if (region->kind == CudaRegion::HostPages) {
    cu::release_host_pages(api_, region->host);
    return;
  }
  cu::Result result = region->kind == CudaRegion::Device ? api_.cuMemFree(region->address)
                                                          : api_.cuMemFreeHost(region->host);
  // After the stop rig drops a free's faults.
  if (result != cu::kSuccess && !stopped_.load()) fail("freeing memory", result);
}

rig_edge_location_t CudaDevice::locate(Region r) const {
  return rig_edge_location_t{reinterpret_cast<void *>(static_cast<CudaRegion *>(r)->address), 0, 0};
}

bool CudaDevice::peer(const DriverDevice &other) const {
  auto *o = dynamic_cast<const CudaDevice *>(&other);
  return o && o->ordinal_ != ordinal_ && static_cast<size_t>(o->ordinal_) < can_access_peer_.size() &&
         can_access_peer_[static_cast<size_t>(o->ordinal_)];
}

Region CudaDevice::map_peer(DriverDevice &other, Region r) {
  auto &o = static_cast<CudaDevice &>(other);
  auto *theirs = static_cast<CudaRegion *>(r);
  {
    std::lock_guard<std::mutex> g(peers_mu_);
    auto k = static_cast<size_t>(o.ordinal_);
    if (!peer_enabled_[k]) {
      auto scope = current();
      // Access to all of the peer context's memory, for good.
      cu::Result result = api_.cuCtxEnablePeerAccess(o.context_->handle(), 0);
      if (result != cu::kSuccess && result != cu::kErrorPeerAccessAlreadyEnabled)
        fail("cuCtxEnablePeerAccess", result);
      peer_enabled_[k] = 1;
    }
  }
  // Unified addressing: the peer's memory has the same address here.
  return new CudaRegion{CudaRegion::Peer, theirs->address, theirs->host, theirs->bytes};
}

Region CudaDevice::map_host(void *p, int64_t n) {
  auto scope = current();
  size_t bytes = round_up(static_cast<size_t>(n), cu::host_page_bytes());
  std::string why;
  std::optional<cu::DevicePtr> address = cu::hold_host_pages(api_, p, bytes, &why);
  if (!address) {
    // A context that broke fails every call; other refusals (pages mapped
    // read-only, no room to lock them) leave the memory unmapped.
    if (cu::Result r = work_error(); cu::breaks_context(r)) fail("cuMemHostRegister", r);
    return nullptr;
  }
  return new CudaRegion{CudaRegion::HostPages, *address, p, bytes};
}

std::variant<DriverDevice::Dma, std::string> CudaDevice::dma(Region r, const std::string &fn) {
  if (!names_pci_function(fn)) return fn + " names no PCI function of this machine";
  auto *region = static_cast<CudaRegion *>(r);
  if (region->kind != CudaRegion::Device)
    return std::string("CUDA exports only the device's own memory as a dma-buf, not Pinned memory");
  if (!dma_buf_) return std::string("the device exports no dma-buf (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED is 0)");
  // CUDA exports whole host pages of one allocation.
  cu::DevicePtr first = region->address / cu::host_page_bytes() * cu::host_page_bytes();
  size_t bytes = round_up(region->address + region->bytes, cu::host_page_bytes()) - first;
  auto scope = current();
  int fd = -1;
  cu::Result result = api_.cuMemGetHandleForAddressRange(&fd, first, bytes, cu::kMemRangeHandleTypeDmaBufFd, 0);
  if (result != cu::kSuccess) {
    if (cu::breaks_context(result)) fail("cuMemGetHandleForAddressRange", result);
    return "cuMemGetHandleForAddressRange: " + api_.describe(result);
  }
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  Dma d;
  d.kind = RIG_DMA_DMABUF;
  d.fd = fd;
  d.offset = static_cast<int64_t>(region->address - first);
  return d;
}

// ---- Timeline ----------------------------------------------------------

void CudaDevice::sleep(uint64_t seen, int64_t still_ms) {
  using Clock = std::chrono::steady_clock;
  // Polls the word: for 200 microseconds at first, so that short work such
  // as a copy of a megabyte returns at once (a sleep costs the timer's
  // slack, some 50 microseconds, on top of its length), then with sleeps
  // that grow to a millisecond, checking the streams for a fault before
  // each.
  constexpr auto kSpin = std::chrono::microseconds(200);
  constexpr auto kLongestPause = std::chrono::milliseconds(1);
  Clock::time_point start = Clock::now(), deadline = start + std::chrono::milliseconds(still_ms);
  Clock::duration pause = std::chrono::microseconds(10);
  for (;;) {
    if (word_->load(std::memory_order_acquire) != seen) return;
    raise_recorded_fault();
    Clock::time_point now = Clock::now();
    if (now >= deadline) return;
    if (now - start < kSpin) {
      cpu_relax();
      continue;
    }
    if (cu::Result r = work_error(); r != cu::kSuccess) fail("the device's work", r);
    rig_unblock();
    std::this_thread::sleep_for(std::min(pause, deadline - now));
    rig_block();
    pause = std::min<Clock::duration>(pause * 2, kLongestPause);
  }
}

void CudaDevice::stop(const std::optional<std::string> &, uint64_t last) {
  std::lock_guard<std::mutex> g(queue_mu_);
  stopped_.store(true);
  if (context_->abandoned()) {
    word_->store(last, std::memory_order_release);
    return;
  }
  bool broken = faulted_.load();
  bool idle = false;
  {
    auto scope = current();
    cu::Result compute = api_.cuStreamQuery(compute_), copy = api_.cuStreamQuery(copy_);
    broken = broken || cu::breaks_context(compute) || cu::breaks_context(copy);
    idle = compute == cu::kSuccess && copy == cu::kSuccess;
    if (!broken && !idle) {
      // Work still runs: the compute stream writes last once the copy
      // stream's work has joined it.  Failing that, the context broke.
      std::lock_guard<std::mutex> gg(grown_mu_);
      cu::Event joined = all_events_.front();
      broken = api_.cuEventRecord(joined, copy_) != cu::kSuccess ||
               api_.cuStreamWaitEvent(compute_, joined, 0) != cu::kSuccess ||
               api_.cuStreamWriteValue64(compute_, word_region_->address, last, cu::kStreamWriteValueDefault) !=
                   cu::kSuccess;
    }
  }
  release_queues();
  if (broken) {
    // A broken context runs nothing more; releasing it lets a later open
    // of the device start afresh.
    cu::forget_host_pages(context_->handle());
    context_->broke();
    context_->abandon();
  } else if (idle && context_->own()) {
    // No work of the device runs: its hold on a context of rig's own goes,
    // so that the context and its memory go with their last device.
    context_->abandon();
  }
  if (broken || idle) word_->store(last, std::memory_order_release);
}

}  // namespace rig::cuda

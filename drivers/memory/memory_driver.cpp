// Memory devices (MEM:n): memory of their own in host memory this process
// addresses, a timeline of their own, and fills and copies that run before
// submit returns.  They stand for GPUs in tests.
#include "../../lib/driver.hpp"
#include "../../lib/host_facts.hpp"
#include "../common/host_memory.hpp"
#include "../common/options.hpp"

namespace rig {
namespace {

class MemoryDevice final : public DriverDevice {
 public:
  MemoryDevice(const Options &options, uint64_t start) : word_(start) {
    facts_.arch = "memory";
    facts_.cache_bytes = host_cache_bytes();
    facts_.alignment = 64;
    facts_.runs_on_host = true;
    facts_.host_addresses = true;
    facts_.maps_host = true;
    facts_.queues = {"COPY:0"};
    facts_.copy_engine = 0;
    facts_.budget = options.bytes("budget", INT64_MAX);
    facts_.word = &word_;
  }
  const Facts &facts() const override { return facts_; }
  // The host addresses all of it: no Pinned memory, and Mapped is Device.
  Region alloc(Memory m, int64_t n) override {
    return m == Memory::Device ? host_block_alloc(n, 64) : nullptr;
  }
  void free(Region r) override { host_block_free(static_cast<HostBlock *>(r)); }
  rig_edge_location_t locate(Region r) const override {
    return host_block_location(static_cast<HostBlock *>(r));
  }
  void submit(const rig_edge_work_t &w) override {
    for (uint32_t i = 0; i < w.part_count; i++) run_part_on_host(w.parts[i]);
    word_.store(w.value, std::memory_order_release);
  }
  void sleep(uint64_t, int64_t) override {}
  void stop(const std::optional<std::string> &, uint64_t last) override {
    // Its work ran before each submit returned: none runs now.
    word_.store(last, std::memory_order_release);
  }

 private:
  Facts facts_;
  std::atomic<uint64_t> word_;
};

class MemoryDriver final : public Driver {
 public:
  const char *prefix() const override { return "MEM"; }
  std::unique_ptr<DriverDevice> open(const std::string &, const std::string &config,
                                     uint64_t start) override {
    return std::make_unique<MemoryDevice>(Options(config), start);
  }
  void probe(const std::function<void(const std::string &, const std::string &)> &f) override {
    f("MEM:0", "");
    f("MEM:1", "");
  }
};

}  // namespace

RIG_REGISTER_DRIVER(MemoryDriver)

}  // namespace rig

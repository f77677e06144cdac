// The host: this process's device.  Its memory is the process's; its work
// is done before the call that submits it returns.
#include "../../lib/driver.hpp"
#include "../../lib/host_facts.hpp"
#include "../common/host_memory.hpp"

namespace rig {
namespace {

class HostDevice final : public DriverDevice {
 public:
  HostDevice() {
    facts_.arch = host_arch();
    facts_.cache_bytes = host_cache_bytes();
    facts_.alignment = 16;
    facts_.runs_on_host = true;
    facts_.host_addresses = true;
    facts_.maps_host = true;
    facts_.queues = {"COMPUTE:0"};
    facts_.word = &word_;
  }
  const Facts &facts() const override { return facts_; }
  Region alloc(Memory, int64_t n) override { return host_block_alloc(n, 16); }
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
    word_.store(last, std::memory_order_release);
  }

 private:
  Facts facts_;
  std::atomic<uint64_t> word_{0};
};

class HostDriver final : public Driver {
 public:
  const char *prefix() const override { return "CPU"; }
  std::unique_ptr<DriverDevice> open(const std::string &, const std::string &, uint64_t) override {
    return std::make_unique<HostDevice>();
  }
};

}  // namespace

Driver *host_driver() {
  static HostDriver driver;
  return &driver;
}

}  // namespace rig

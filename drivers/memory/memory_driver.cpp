// Memory devices (MEM:n): memory of their own in host memory this process
// addresses, a timeline of their own, and fills and copies that run before
// submit returns.  They stand for GPUs in tests.  Config: "budget=BYTES".
#include "../common/host_addressed.hpp"
#include "rig_internal/host_facts.hpp"
#include "rig_internal/options.hpp"

namespace rig {
namespace {

Facts memory_facts(const Options &options) {
  Facts f;
  f.arch = "memory";
  f.cache_bytes = host_cache_bytes();
  f.alignment = 64;
  f.runs_on_host = true;
  f.host_addresses = true;
  f.maps_host = true;
  f.queues = {"COPY:0"};
  f.copy_engine = 0;
  f.budget = options.bytes("budget", INT64_MAX);
  // Its submit copies and fills with memmove and memset, taking no lock.
  f.signal_safe = true;
  return f;
}

class MemoryDriver final : public Driver {
 public:
  const char *prefix() const override { return "MEM"; }
  std::unique_ptr<DriverDevice> open(const std::string &, const std::string &config, uint64_t start) override {
    return std::make_unique<HostAddressedDevice>(memory_facts(Options(config, {"budget"})), start);
  }
  void probe(const std::function<void(const std::string &, const std::string &)> &f) override {
    f("MEM:0", "");
    f("MEM:1", "");
  }
};

}  // namespace

RIG_REGISTER_DRIVER(MemoryDriver)

}  // namespace rig

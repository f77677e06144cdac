// The host: this process's device.  Its memory is the process's; its work
// is done before the call that submits it returns.
#include "../common/host_addressed.hpp"
#include "../common/host_code.hpp"
#include "host_pool.hpp"
#include "rig_internal/host_facts.hpp"

namespace rig {
namespace {

Facts host_facts() {
  Facts f;
  f.arch = host_arch();
  f.cache_bytes = host_cache_bytes();
  f.alignment = 16;
  f.runs_on_host = true;
  f.host_addresses = true;
  f.maps_host = true;
  f.queues = {"COMPUTE:0"};
  // Its submit takes the value of work already done, taking no lock.
  f.signal_safe = true;
  return f;
}

// The host runs code linked into this process.  Its launches never reach
// submit: rig runs them through launch_now, on the pool (host_pool.hpp),
// before submit returns.
class HostDevice final : public HostAddressedDevice {
 public:
  using HostAddressedDevice::HostAddressedDevice;
  std::variant<Image, std::string> image(const void *bytes, size_t n) override { return link_host_image(bytes, n); }
  int64_t image_bytes(Image image, size_t) override { return host_image_bytes(image); }
  EntryAnswer entry(Image image, const std::string &name) override { return host_image_entry(image, name); }
  void unload(Image image) override { unload_host_image(image); }
  void launch_now(HostFunction f, const void *params, uint64_t groups, uint64_t group_threads) override {
    host_launch(f, params, groups, group_threads);
  }
};

class HostDriver final : public Driver {
 public:
  const char *prefix() const override { return "CPU"; }
  std::unique_ptr<DriverDevice> open(const std::string &, const std::string &, uint64_t start) override {
    return std::make_unique<HostDevice>(host_facts(), start);
  }
};

}  // namespace

Driver *host_driver() {
  static HostDriver driver;
  return &driver;
}

}  // namespace rig
